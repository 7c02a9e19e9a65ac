// Whole models on the GPU targets: the fuzzers' seed models (tests/fuzz/corpus/model/: conv,
// pooling, dense, softmax, broadcasting, layer norm, reductions and arg max, batch norm and
// depthwise conv, compare/where/cast, pad/resize/conv-transpose, attention, shape folding,
// data movement) compiled for opencl and run on its device (PoCL here) against the same
// model compiled for llvm, on the same inputs; and compiled for cuda (every kernel through
// NVRTC), run where a GPU is.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "gpu_device.h"
#include "loom/frontend/onnx.h"
#include "loom/graph/compile.h"
#include "loom/runtime/graph_executor.h"

namespace loom {
namespace {

namespace fs = std::filesystem;
using runtime::NDArray;

std::vector<fs::path> SeedModels() {
  std::vector<fs::path> models;
  for (const auto& entry : fs::directory_iterator(LOOM_FUZZ_MODEL_CORPUS)) {
    if (entry.path().extension() == ".onnx") models.push_back(entry.path());
  }
  std::sort(models.begin(), models.end());
  return models;
}

// Seeded inputs of each input's type: floats in [-1, 1), integers and bools 0.
std::vector<NDArray> InputsOf(const runtime::GraphExecutor& executor) {
  std::vector<NDArray> inputs;
  uint32_t state = 7;
  for (int i = 0; i < executor.NumInputs(); ++i) {
    NDArray input = NDArray::Empty(executor.InputShape(i), executor.InputDtype(i));
    std::memset(input.data(), 0, input.NumBytes());
    if (executor.InputDtype(i) == DataType::Float(32)) {
      auto* data = static_cast<float*>(input.data());
      for (int64_t e = 0; e < input.NumElements(); ++e) {
        state = state * 1664525u + 1013904223u;
        data[e] = static_cast<float>(state >> 8) / 8388608.0f - 1.0f;
      }
    }
    inputs.push_back(input);
  }
  return inputs;
}

std::vector<NDArray> RunCompiled(const graph::CompiledModel& compiled, const std::vector<NDArray>& inputs) {
  runtime::GraphExecutor executor(graph::MakeGraphModel(compiled));
  for (int i = 0; i < executor.NumInputs(); ++i) executor.SetInput(i, inputs[i]);
  executor.Run();
  std::vector<NDArray> outputs;
  for (int i = 0; i < executor.NumOutputs(); ++i) {
    outputs.push_back(executor.GetOutput(i).CopyTo(DLDevice{kDLCPU, 0}));
  }
  return outputs;
}

void ExpectSame(const std::vector<NDArray>& got, const std::vector<NDArray>& want,
                const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t o = 0; o < got.size(); ++o) {
    ASSERT_EQ(got[o].Shape(), want[o].Shape()) << what << " output " << o;
    ASSERT_EQ(got[o].dtype(), want[o].dtype()) << what << " output " << o;
    if (got[o].dtype() != DataType::Float(32)) {
      EXPECT_EQ(std::memcmp(got[o].data(), want[o].data(), got[o].NumBytes()), 0)
          << what << " output " << o;
      continue;
    }
    const auto* g = static_cast<const float*>(got[o].data());
    const auto* w = static_cast<const float*>(want[o].data());
    for (int64_t e = 0; e < got[o].NumElements(); ++e) {
      ASSERT_NEAR(g[e], w[e], 1e-4 * (1 + std::fabs(w[e]))) << what << " output " << o << "[" << e << "]";
    }
  }
}

TEST(GpuModels, EverySeedModelOnOpenCLMatchesTheCpu) {
  LOOM_SKIP_WITHOUT_DEVICE(testing::kOpenCLDevice, "OpenCL");
  for (const fs::path& path : SeedModels()) {
    const std::string name = path.stem().string();
    frontend::onnx::ImportedModel model = frontend::onnx::ImportFile(path.string());
    graph::CompiledModel cpu = graph::Compile(model.module, {.target = "llvm"});
    graph::CompiledModel gpu = graph::Compile(model.module, {.target = "opencl"});
    std::vector<NDArray> inputs = InputsOf(runtime::GraphExecutor(graph::MakeGraphModel(cpu)));
    ExpectSame(RunCompiled(gpu, inputs), RunCompiled(cpu, inputs), name);
  }
}

// The host code through the c target: the intermediates its kernels pass (softmax's maximum
// and sum) must be the device's workspaces there too.
TEST(GpuModels, AHostInCKeepsIntermediatesOnTheDevice) {
  LOOM_SKIP_WITHOUT_DEVICE(testing::kOpenCLDevice, "OpenCL");
  const std::string path = std::string(LOOM_FUZZ_MODEL_CORPUS) + "/conv_relu_pool_gemm.onnx";
  frontend::onnx::ImportedModel model = frontend::onnx::ImportFile(path);
  graph::CompiledModel cpu = graph::Compile(model.module, {.target = "llvm"});
  graph::CompiledModel gpu = graph::Compile(model.module, {.target = "opencl -host=c"});
  std::vector<NDArray> inputs = InputsOf(runtime::GraphExecutor(graph::MakeGraphModel(cpu)));
  ExpectSame(RunCompiled(gpu, inputs), RunCompiled(cpu, inputs), "opencl -host=c");
}

TEST(GpuModels, EverySeedModelCompilesForCuda) {
  for (const fs::path& path : SeedModels()) {
    frontend::onnx::ImportedModel model = frontend::onnx::ImportFile(path.string());
    try {
      graph::Compile(model.module, {.target = "cuda"});
    } catch (const Error& error) {
      const std::string message = error.what();
      if (message.find("NVRTC, which is not installed") != std::string::npos) {
        GTEST_SKIP() << message;
      }
      FAIL() << path.stem().string() << ": " << message;
    }
  }
}

}  // namespace
}  // namespace loom
