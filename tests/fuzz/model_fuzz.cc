// libFuzzer harness of the compiler: an input is a serialized ONNX ModelProto, taken through
// everything `loom compile` does in process -- import, the graph passes, lowering, the memory
// plan, LLVM code generation -- and the reading of the execution graph it produced. Each
// input must compile or be refused with a loom::Error (fuzz_target.h).
//
// The compiled model is not run: a mutated shape can ask for hours of arithmetic, and the
// kernels' behaviour is what the differential and conformance tests check. Tensors are capped
// (kMemoryLimitBytes) so that no input makes the compiler fold or allocate gigabytes.
//
//   build/fuzz-build/tests/model_fuzz CORPUS_DIR tests/fuzz/corpus/model   (libFuzzer)
//   build/tests/model_fuzz_replay FILE_OR_DIR...                            (each input once)
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fuzz_target.h"
#include "loom/frontend/onnx.h"
#include "loom/graph/compile.h"
#include "loom/runtime/graph_executor.h"

namespace {

constexpr int64_t kMemoryLimitBytes = int64_t{32} << 20;

// An empty folder for external data: a mutated model that names external files reads none.
const std::string& EmptyFolder() {
  static const std::string folder = [] {
    char name[] = "/tmp/loom-model-fuzz-XXXXXX";
    if (mkdtemp(name) == nullptr) std::abort();
    return std::string(name);
  }();
  return folder;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  loom::fuzz::ExpectAcceptedOrRefused("compiling an ONNX model", [&] {
    loom::frontend::onnx::ImportedModel model =
        loom::frontend::onnx::ImportBytes(bytes, EmptyFolder());
    loom::graph::CompileOptions options;
    options.memory_limit_bytes = kMemoryLimitBytes;
    loom::graph::CompiledModel compiled = loom::graph::Compile(model.module, options);
    loom::runtime::GraphExecutor executor(loom::graph::MakeGraphModel(compiled));
  });
  return 0;
}
