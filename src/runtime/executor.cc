#include "loom/runtime/executor.h"

#include "loom/runtime/graph_executor.h"
#include "loom/runtime/vm.h"
#include "loom/support/error.h"
#include "runtime/artifact.h"

namespace loom::runtime {

std::unique_ptr<Executor> LoadExecutor(const std::string& path) {
  detail::ArtifactData data = detail::LoadArtifact(path, "LoadExecutor");
  try {
    if (IsVmProgram(data.program)) {
      return std::make_unique<VirtualMachine>(detail::ParseVmModel(
          std::move(data.kernels), data.program, data.params, data.params_size, data.params_owner));
    }
    return std::make_unique<GraphExecutor>(MakeGraphModel(
        std::move(data.kernels), data.program, data.params, data.params_size, data.params_owner));
  } catch (const Error& error) {
    LOOM_THROW << "LoadExecutor('" << path << "'): " << error.what();
  }
}

}  // namespace loom::runtime
