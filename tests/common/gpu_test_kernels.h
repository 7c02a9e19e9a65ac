// The GPU kernels the GPU target tests build (tests/unit/target/gpu_codegen_test.cc) and
// scripts/gpu-check.sh runs on a lent GPU (bench/gpu/): TE computations with GPU schedules,
// each also buildable without thread bindings as the host's reference.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "loom/runtime/ndarray.h"
#include "loom/target/build.h"
#include "loom/te/lower.h"
#include "loom/te/operation.h"
#include "loom/te/schedule.h"
#include "loom/topi/gpu/matmul.h"

namespace loom::testing {

using runtime::NDArray;

// C[i] = exp(A[i] * 0.25) + B[i] * i over n elements, in blocks of `threads` threads.
inline PrimFunc Elementwise(int n, int threads, bool bind) {
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

// C = A x B, float32, A m x k and B k x n.
struct MatmulTensors {
  te::Tensor a, b, c;
};
inline MatmulTensors MatmulCompute(int m, int n, int k) {
  te::Tensor a = te::placeholder({m, k}, DataType::Float(32), "A");
  te::Tensor b = te::placeholder({k, n}, DataType::Float(32), "B");
  IterVar r = te::reduce_axis(Range(0, k), "r");
  te::Tensor c = te::compute(
      {m, n}, [&](Var i, Var j) { return te::sum(a(i, r->var) * b(r->var, j), {r}); }, "C");
  return {a, b, c};
}

// C = A x B: one thread per element of C in 8 x 8 blocks, the k loop serial inside it,
// accumulating in a private scalar.
inline PrimFunc Matmul(int m, int n, int k, bool bind) {
  auto [a, b, c] = MatmulCompute(m, n, k);
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

// topi's shared-memory matmul (topi::gpu::ScheduleSharedMatmul): blocks of ty x tx threads,
// each thread 4 x 4 elements of C, fetching tiles of `tile_k` along the reduction.
inline PrimFunc SharedMatmul(int m, int n, int k, int ty, int tx, int tile_k) {
  auto [a, b, c] = MatmulCompute(m, n, k);
  te::Schedule s = te::create_schedule({c.op()});
  topi::gpu::ScheduleSharedMatmul(s, c, a, b, {ty, tx, 4, 4, tile_k});
  return te::lower(s, {a, b, c}, "shared_matmul");
}

inline std::vector<NDArray> RandomInputs(const std::vector<std::vector<int64_t>>& shapes) {
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

inline NDArray RunOnHost(const PrimFunc& func, const std::string& name, const std::vector<NDArray>& inputs,
                  const std::vector<int64_t>& out_shape) {
  runtime::Module module = build(func, Target::Parse("llvm"));
  std::vector<NDArray> args = inputs;
  args.push_back(NDArray::Empty(out_shape, DataType::Float(32)));
  module.GetRequiredFunction(name).CallWithArrays(args);
  return args.back();
}

}  // namespace loom::testing
