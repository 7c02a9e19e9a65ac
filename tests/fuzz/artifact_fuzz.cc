// libFuzzer harness of the artifact loader: an input is a model library (what `loom compile`
// writes), written to a scratch file and read the two ways the runtime reads one:
//   1. as given, through LoadModel's checks before the dynamic loader (CheckLibraryFile, the
//      digest): a changed byte must be refused there;
//   2. resealed (SealArtifact stores the digest of the changed file), through DescribeModel:
//      past the digest, into the ELF reader, the execution graph and the weights' checks,
//      which must refuse a corrupt one with a loom::Error as well.
// The library is never opened with dlopen here: a file that passes the digest yet was changed
// is a forgery, and the trust model (docs/security.md) leaves forgeries out -- an artifact is
// code, to be run only from trusted sources.
//
//   build/fuzz-build/tests/artifact_fuzz CORPUS_DIR SEED_ARTIFACTS   (libFuzzer)
//   build/tests/artifact_fuzz_replay FILE_OR_DIR...                 (each input once)
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "fuzz_target.h"
#include "loom/runtime/graph_executor.h"
#include "loom/runtime/module.h"

namespace {

// The file an input is written to (the loader takes a path), removed once the input is
// checked: libFuzzer ends a run with _Exit, so nothing at exit would remove it.
const std::string& ScratchFile() {
  static const std::string path = "/tmp/loom-artifact-fuzz-" + std::to_string(getpid()) + ".so";
  return path;
}

void WriteScratch(const uint8_t* data, size_t size) {
  std::ofstream out(ScratchFile(), std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out.good()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  WriteScratch(data, size);
  const std::string& path = ScratchFile();
  loom::fuzz::ExpectAcceptedOrRefused("checking an artifact before loading it", [&] {
    loom::runtime::CheckLibraryFile(path);
    loom::runtime::CheckArtifact(path);
  });
  loom::fuzz::ExpectAcceptedOrRefused("describing a resealed artifact", [&] {
    loom::runtime::SealArtifact(path);
    loom::runtime::DescribeModel(path);
  });
  std::remove(path.c_str());
  return 0;
}
