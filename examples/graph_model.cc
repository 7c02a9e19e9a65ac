// A small model through the graph compiler, as README's tour shows it: a conv-bias-ReLU
// block built with the graph API, printed, compiled at -O3 into one shared library
// (kernels, execution graph and weights), loaded by the runtime alone and run. It checks
// the output against the same model compiled at -O0 (every operator its own kernel) and
// exits non-zero when they differ, so it doubles as a test.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <random>
#include <string>

#include "loom/graph/compile.h"
#include "loom/runtime/graph_executor.h"

namespace {

using namespace loom;

runtime::NDArray Random(const std::vector<int64_t>& shape, unsigned seed, float scale) {
  runtime::NDArray array = runtime::NDArray::Empty(shape, DataType::Float(32));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  float* data = static_cast<float*>(array.data());
  for (int64_t i = 0; i < array.NumElements(); ++i) data[i] = dist(rng);
  return array;
}

runtime::NDArray Run(std::shared_ptr<const runtime::GraphModel> model,
                     const runtime::NDArray& image) {
  runtime::GraphExecutor exec(std::move(model));
  exec.SetInput("data", image);  // checked: name, dtype, shape
  exec.Run();
  runtime::NDArray out = runtime::NDArray::Empty(exec.OutputShape(0), exec.OutputDtype(0));
  out.CopyFrom(exec.GetOutput(0));  // GetOutput is a view of the executor's memory
  return out;
}

}  // namespace

int main() {
  runtime::NDArray weights = Random({16, 3, 3, 3}, 1, 0.3f);
  runtime::NDArray bias = Random({16}, 2, 0.1f);
  runtime::NDArray image = Random({1, 3, 32, 32}, 3, 1.0f);

  graph::Var x = graph::MakeVar("data", graph::TensorType({1, 3, 32, 32}, DataType::Float(32)));
  graph::Expr y = graph::MakeCall("nn.conv2d", {x, graph::MakeConstant(weights, "conv1.w")},
                                  {{"padding", graph::Ints{1, 1, 1, 1}}}, "conv1");
  y = graph::MakeCall("nn.relu",
                      {graph::MakeCall("nn.bias_add", {y, graph::MakeConstant(bias)})});
  graph::Function main = graph::MakeFunction({x}, y);
  std::cout << main << "\n";

  graph::IRModule module = graph::IRModule::FromFunction(main);
  graph::CompiledModel model = graph::Compile(module, {.opt_level = 3});
  std::cout << "-O3 kernels:";
  for (const std::string& kernel : model.kernel_names) std::cout << " " << kernel;
  std::cout << "\nmemory plan: " << model.memory.planned_bytes << " bytes (lower bound "
            << model.memory.lower_bound_bytes << ")\n";

  std::string path = "/tmp/loom_graph_model_" + std::to_string(getpid()) + ".so";
  graph::ExportModel(model, path);
  runtime::NDArray fast = Run(runtime::LoadModel(path), image);
  std::remove(path.c_str());
  runtime::NDArray plain = Run(graph::MakeGraphModel(graph::Compile(module, {.opt_level = 0})),
                               image);

  const float* a = static_cast<const float*>(fast.data());
  const float* b = static_cast<const float*>(plain.data());
  double worst = 0;
  for (int64_t i = 0; i < fast.NumElements(); ++i) {
    worst = std::max(worst, std::fabs(double(a[i]) - b[i]));
  }
  std::cout << "max |O3 - O0| = " << worst << "\n";
  return worst <= 1e-4 ? 0 : 1;
}
