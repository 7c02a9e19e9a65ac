// What a model library (graph::ExportModel's artifact) holds, read for either executor:
// the program text (the graph executor's execution graph or the VM's program, told apart by
// its "format") and the weights.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "loom/runtime/module.h"

namespace loom::runtime::detail {

struct ArtifactData {
  Module kernels;       // undefined when the file was only read (ReadArtifactData)
  std::string program;  // loom_graph_json
  const void* params = nullptr;
  uint64_t params_size = 0;
  std::shared_ptr<const void> params_owner;  // keeps `params` alive
};

// A parameters blob as executors take it: present when it has bytes, 64-byte aligned (what
// kernels require of every tensor); else an error naming `api`.
void CheckParamsBlob(const char* api, const void* params, size_t params_size);

// The library at `path` loaded (its file and digest checked first); `api` names the call in
// errors ("LoadModel").
ArtifactData LoadArtifact(const std::string& path, const std::string& api);
// The same read from the file alone, nothing loaded (the weights copied, 64-byte aligned,
// unless `with_params` is false).
ArtifactData ReadArtifactData(const std::string& path, const std::string& api,
                              bool with_params = true);

}  // namespace loom::runtime::detail
