#include "loom/runtime/executor.h"

#include <chrono>

#include "loom/runtime/graph_executor.h"
#include "loom/runtime/vm.h"
#include "loom/support/error.h"
#include "runtime/artifact.h"

namespace loom::runtime {

std::vector<double> TimeRuns(Executor& executor, int warmup, int repeat) {
  for (int i = 0; i < warmup; ++i) executor.Run();
  std::vector<double> seconds;
  for (int i = 0; i < repeat; ++i) {
    const auto start = std::chrono::steady_clock::now();
    executor.Run();
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return seconds;
}

LoadedModel LoadedModel::Load(const std::string& path) {
  detail::ArtifactData data = detail::LoadArtifact(path, "LoadExecutor");
  try {
    if (IsVmProgram(data.program)) {
      return LoadedModel(detail::ParseVmModel(std::move(data.kernels), data.program, data.params,
                                              data.params_size, data.params_owner));
    }
    return LoadedModel(MakeGraphModel(std::move(data.kernels), data.program, data.params,
                                      data.params_size, data.params_owner));
  } catch (const Error& error) {
    throw Error("LoadExecutor('" + path + "'): " + error.what());
  }
}

std::unique_ptr<Executor> LoadedModel::NewExecutor() const {
  if (graph_) return std::make_unique<GraphExecutor>(graph_);
  return std::make_unique<VirtualMachine>(vm_);
}

std::unique_ptr<Executor> LoadExecutor(const std::string& path) {
  return LoadedModel::Load(path).NewExecutor();
}

}  // namespace loom::runtime
