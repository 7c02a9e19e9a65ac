// The opencl target: TE schedules with thread bindings built into OpenCL C kernels and an llvm
// host that launches them, run on this machine's OpenCL device (PoCL, on the CPU) and
// compared with the same computation built for llvm. Without an OpenCL driver the tests that
// run kernels say so and skip; the ones that only generate code run everywhere.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <string>
#include <vector>

#include "error_of.h"
#include "loom/runtime/module.h"
#include "loom/runtime/ndarray.h"
#include "loom/runtime/opencl_module.h"
#include "loom/target/build.h"
#include "loom/te/lower.h"
#include "loom/te/operation.h"
#include "loom/te/schedule.h"
#include "opencl_device.h"

namespace loom {
namespace {

using runtime::NDArray;
using testing::ErrorOf;

constexpr DLDevice kOpenCL = testing::kOpenCLDevice;

// C[i] = exp(A[i] * 0.25) + B[i] * i over n elements, in groups of `threads` work-items.
PrimFunc Elementwise(int n, int threads, bool bind) {
  te::Tensor a = te::placeholder({n}, DataType::Float(32), "A");
  te::Tensor b = te::placeholder({n}, DataType::Float(32), "B");
  te::Tensor c = te::compute(
      {n}, [&](Var i) { return exp(a(i) * 0.25f) + b(i) * cast(DataType::Float(32), i); }, "C");
  te::Schedule s = te::create_schedule({c.op()});
  if (bind) {
    auto [block, thread] = s[c].split(s[c]->leaf_iter_vars[0], threads);
    s[c].bind(block, te::thread_axis("blockIdx.x"));
    s[c].bind(thread, te::thread_axis("threadIdx.x"));
  }
  return te::lower(s, {a, b, c}, "elementwise");
}

// C = A x B (m x k times k x n): one work-item per element of C in 8 x 8 work-groups, the k
// loop serial inside it, accumulating in a private scalar.
PrimFunc Matmul(int m, int n, int k, bool bind) {
  te::Tensor a = te::placeholder({m, k}, DataType::Float(32), "A");
  te::Tensor b = te::placeholder({k, n}, DataType::Float(32), "B");
  IterVar r = te::reduce_axis(Range(0, k), "r");
  te::Tensor c = te::compute(
      {m, n}, [&](Var i, Var j) { return te::sum(a(i, r->var) * b(r->var, j), {r}); }, "C");
  te::Schedule s = te::create_schedule({c.op()});
  if (bind) {
    te::Tensor local = s.cache_write(c, "local");
    auto [io, ii] = s[c].split(s[c]->leaf_iter_vars[0], 8);
    auto [jo, ji] = s[c].split(s[c]->leaf_iter_vars[2], 8);
    s[c].reorder({io, jo, ii, ji});
    s[c].bind(io, te::thread_axis("blockIdx.y"));
    s[c].bind(jo, te::thread_axis("blockIdx.x"));
    s[c].bind(ii, te::thread_axis("threadIdx.y"));
    s[c].bind(ji, te::thread_axis("threadIdx.x"));
    s[local].compute_at(s[c], ji);
  }
  return te::lower(s, {a, b, c}, "matmul");
}

std::vector<NDArray> RandomInputs(const std::vector<std::vector<int64_t>>& shapes) {
  std::vector<NDArray> arrays;
  uint32_t state = 12345;
  for (const auto& shape : shapes) {
    NDArray array = NDArray::Empty(shape, DataType::Float(32));
    int64_t size = 1;
    for (int64_t d : shape) size *= d;
    for (int64_t i = 0; i < size; ++i) {
      state = state * 1664525u + 1013904223u;
      static_cast<float*>(array->data)[i] = static_cast<float>(state >> 8) / 16777216.0f - 0.5f;
    }
    arrays.push_back(array);
  }
  return arrays;
}

// Runs `module`'s `name` on the OpenCL device with `inputs` and an output of `out_shape`
// (copied there and back); the output on the host.
NDArray RunOnDevice(const runtime::Module& module, const std::string& name,
                    const std::vector<NDArray>& inputs, const std::vector<int64_t>& out_shape) {
  std::vector<NDArray> args;
  for (const NDArray& input : inputs) args.push_back(input.CopyTo(kOpenCL));
  args.push_back(NDArray::Empty(out_shape, DataType::Float(32), kOpenCL));
  module.GetRequiredFunction(name).CallWithArrays(args);
  return args.back().CopyTo(DLDevice{kDLCPU, 0});
}

NDArray RunOnHost(const PrimFunc& func, const std::string& name, const std::vector<NDArray>& inputs,
                  const std::vector<int64_t>& out_shape) {
  runtime::Module module = build(func, Target::Parse("llvm"));
  std::vector<NDArray> args = inputs;
  args.push_back(NDArray::Empty(out_shape, DataType::Float(32)));
  module.GetRequiredFunction(name).CallWithArrays(args);
  return args.back();
}

void ExpectNear(const NDArray& got, const NDArray& want, int64_t size, float tolerance) {
  for (int64_t i = 0; i < size; ++i) {
    const float g = static_cast<const float*>(got->data)[i];
    const float w = static_cast<const float*>(want->data)[i];
    ASSERT_NEAR(g, w, tolerance * (1 + std::fabs(w))) << "element " << i;
  }
}

TEST(OpenCLTarget, ElementwiseKernelsMatchTheCpu) {
  LOOM_SKIP_WITHOUT_OPENCL();
  for (int n : {1, 200, 4096}) {  // 200: the last group is partly outside the tensor
    std::vector<NDArray> inputs = RandomInputs({{n}, {n}});
    runtime::Module module = build(Elementwise(n, 64, true), Target::Parse("opencl"));
    EXPECT_EQ(module->type_key(), "llvm");  // the host, which imports the OpenCL module
    NDArray got = RunOnDevice(module, "elementwise", inputs, {n});
    NDArray want = RunOnHost(Elementwise(n, 64, false), "elementwise", inputs, {n});
    ExpectNear(got, want, n, 1e-6f);
  }
}

TEST(OpenCLTarget, TwoDimensionalGroupsWithAPrivateAccumulator) {
  LOOM_SKIP_WITHOUT_OPENCL();
  const int m = 24, n = 40, k = 33;
  std::vector<NDArray> inputs = RandomInputs({{m, k}, {k, n}});
  runtime::Module module = build(Matmul(m, n, k, true), Target::Parse("opencl"));
  const std::string& source = runtime::OpenCLModuleSource(module->imports()[0]);
  EXPECT_NE(source.find("get_group_id(1)"), std::string::npos) << source;
  EXPECT_NE(source.find("get_local_id(0)"), std::string::npos) << source;
  // The accumulator (cache_write "local", attached inside the thread loops) is a private
  // array of each work-item, not a buffer the host allocates.
  EXPECT_NE(source.find("__kernel void matmul_kernel0(__global void* "), std::string::npos)
      << source;
  EXPECT_NE(source.find("_storage[1];"), std::string::npos) << source;
  NDArray got = RunOnDevice(module, "matmul", inputs, {m, n});
  NDArray want = RunOnHost(Matmul(m, n, k, false), "matmul", inputs, {m, n});
  ExpectNear(got, want, m * n, 1e-5f);
}

TEST(OpenCLTarget, AnExportedLibraryCarriesItsKernels) {
  LOOM_SKIP_WITHOUT_OPENCL();
  const int n = 300;
  std::vector<NDArray> inputs = RandomInputs({{n}, {n}});
  runtime::Module built = build(Elementwise(n, 32, true), Target::Parse("opencl"));
  const std::string path = "/tmp/loom_opencl_test_" + std::to_string(getpid()) + ".so";
  ExportLibrary(built, path);
  runtime::Module loaded = runtime::LoadModuleFromFile(path);
  std::remove(path.c_str());
  ASSERT_EQ(loaded->imports().size(), 1u);
  EXPECT_EQ(loaded->imports()[0]->type_key(), "opencl");
  NDArray got = RunOnDevice(loaded, "elementwise", inputs, {n});
  NDArray want = RunOnDevice(built, "elementwise", inputs, {n});
  ExpectNear(got, want, n, 0.0f);
}

TEST(OpenCLTarget, TensorsMustBeWholeBuffersOnTheDevice) {
  LOOM_SKIP_WITHOUT_OPENCL();
  runtime::Module module = build(Elementwise(16, 16, true), Target::Parse("opencl"));
  std::vector<NDArray> host = RandomInputs({{16}, {16}, {16}});
  std::string message =
      ErrorOf([&] { module.GetRequiredFunction("elementwise").CallWithArrays(host); });
  EXPECT_NE(message.find("must be on device 'opencl'"), std::string::npos) << message;
}

TEST(OpenCLTarget, AWorkGroupOverTheTargetsLimitIsABuildError) {
  // Code generation only: no device needed.
  EXPECT_EQ(ErrorOf([] { build(Elementwise(4096, 512, true), Target::Parse("opencl")); }),
            "kernel 'elementwise_kernel0': a work-group of 512 work-items (threadIdx.x 512) is "
            "more than the target's -max-threads-per-block=256; bind smaller thread extents");
  build(Elementwise(4096, 512, true), Target::Parse("opencl -max-threads-per-block=512"));
}

}  // namespace
}  // namespace loom
