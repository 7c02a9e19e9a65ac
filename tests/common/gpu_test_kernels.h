// The GPU kernels the GPU target tests build (tests/unit/target/gpu_codegen_test.cc) and
// scripts/gpu-check.sh runs on a lent GPU (bench/gpu/): TE computations with GPU schedules,
// each also buildable without thread bindings as the host's reference.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "loom/runtime/ndarray.h"
#include "loom/target/build.h"
#include "loom/te/lower.h"
#include "loom/te/operation.h"
#include "loom/te/schedule.h"
#include "loom/topi/gpu/matmul.h"
#include "loom/topi/gpu/tensor_core.h"
#include "loom/topi/matmul.h"

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

// C = A x B (topi::matmul), float32, A m x k and B k x n.
struct MatmulTensors {
  te::Tensor a, b, c;
};
inline MatmulTensors MatmulCompute(int m, int n, int k) {
  te::Tensor a = te::placeholder({m, k}, DataType::Float(32), "A");
  te::Tensor b = te::placeholder({k, n}, DataType::Float(32), "B");
  return {a, b, topi::matmul(a, b)};
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

// topi's shared-memory matmul (topi::gpu::schedule_matmul_shared): blocks of ty x tx threads,
// each thread 4 x 4 elements of C (contiguous, or strided by the threads), fetching tiles of
// `tile_k` along the reduction (A's rows padded by one element with `pad_rows`, the tiles
// double-buffered with `double_buffer`, fetched and stored `vector_width` elements at once).
inline PrimFunc SharedMatmul(int m, int n, int k, int ty, int tx, int tile_k, bool strided = false,
                             bool pad_rows = false, bool double_buffer = false,
                             int vector_width = 1) {
  auto [a, b, c] = MatmulCompute(m, n, k);
  te::Schedule s = topi::gpu::schedule_matmul_shared(
      c, {ty, tx, 4, 4, tile_k, strided, pad_rows, double_buffer, vector_width});
  return te::lower(s, {a, b, c}, "shared_matmul");
}

// C [batch..., m, n] = A [batch..., m, k] x B [batch..., n, k]^T (B transposed as nn.dense's
// weight) summed in float32, then relu when `relu`; A and B are float32 inputs rounded to
// `operand` (float16 or bfloat16) by stages a schedule inlines, so the host's reference
// multiplies the same rounded operands.
struct TensorCoreCase {
  std::vector<int64_t> batch;
  int64_t m, n, k;
  DataType operand;
  bool relu;
  topi::gpu::TensorCoreTiling tiling;

  std::string Name() const {
    std::string name;
    for (int64_t d : batch) name += std::to_string(d) + "x";
    return name + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + "_" +
           operand.str() + (relu ? "_relu" : "");
  }
  std::vector<int64_t> Shape(int64_t rows, int64_t columns) const {
    std::vector<int64_t> shape = batch;
    shape.insert(shape.end(), {rows, columns});
    return shape;
  }
  // On tensor cores with `tiling` (`tensor_core`), or with the default schedule.
  PrimFunc Lower(bool tensor_core) const {
    auto dims = [&](int64_t rows, int64_t columns) {
      Array<PrimExpr> out;
      for (int64_t d : Shape(rows, columns)) out.push_back(make_const(DataType::Int(32), d));
      return out;
    };
    te::Tensor a = te::placeholder(dims(m, k), DataType::Float(32), "A");
    te::Tensor b = te::placeholder(dims(n, k), DataType::Float(32), "B");
    const size_t nd = batch.size() + 2;
    te::Tensor rounded_a = te::compute(
        dims(m, k),
        [&](const Array<Var>& i) { return cast(operand, a(Array<PrimExpr>(i.begin(), i.end()))); },
        "A_rounded", "elemwise");
    te::Tensor rounded_bt = te::compute(
        dims(k, n),
        [&](const Array<Var>& i) {
          Array<PrimExpr> index(i.begin(), i.end());
          std::swap(index[nd - 2], index[nd - 1]);
          return cast(operand, b(index));
        },
        "B_transposed", "injective");
    te::Tensor c = topi::matmul(rounded_a, rounded_bt, DataType::Float(32));
    if (relu) {
      te::Tensor product = c;
      c = te::compute(
          product.shape(),
          [&](const Array<Var>& i) {
            return max(product(Array<PrimExpr>(i.begin(), i.end())),
                       make_zero(DataType::Float(32)));
          },
          "relu", "elemwise");
    }
    te::Schedule s = tensor_core ? topi::gpu::schedule_matmul_tensor_core(c, tiling)
                                 : te::create_schedule({c.op()});
    return te::lower(s, {a, b, c}, tensor_core ? "tensor_core_product" : "host_product");
  }
};

// Sizes that divide into the tilings, with batch dimensions and an epilogue.
inline std::vector<TensorCoreCase> TensorCoreCases() {
  return {
      {{}, 128, 64, 64, DataType::Float(16), false, {}},
      {{}, 64, 128, 96, DataType::BFloat16(), true, {2, 2, 2, 2, 1}},
      {{3}, 32, 64, 48, DataType::Float(16), true, {1, 2, 2, 2, 3}},
      {{2, 2}, 64, 32, 32, DataType::BFloat16(), false, {2, 1, 2, 2, 2}},
  };
}

enum class RowReducer { kSum, kMax, kSumOfPositives };

// B[i] = the reduction of row i of A (m x n). Bound: blocks of `rows` rows (threadIdx.y) by
// `threads` threads along the row (threadIdx.x), each thread reducing every threads-th
// element before the block combines.
inline PrimFunc RowReduction(int m, int n, int rows, int threads, RowReducer op, bool bind) {
  te::Tensor a = te::placeholder({m, n}, DataType::Float(32), "A");
  IterVar k = te::reduce_axis(Range(0, n), "k");
  te::Tensor b = te::compute(
      {m},
      [&](Var i) {
        PrimExpr x = a(i, k->var);
        switch (op) {
          case RowReducer::kSum:
            return te::sum(x, {k});
          case RowReducer::kMax:
            return te::max(x, {k});
          case RowReducer::kSumOfPositives:
            return te::sum(x, {k}, x > 0.0f);
        }
        return PrimExpr();
      },
      "B");
  te::Schedule s = te::create_schedule({b.op()});
  if (bind) {
    te::Stage stage = s[b];
    auto [block, row] = stage.split(stage->leaf_iter_vars[0], rows);
    auto [serial, thread] = stage.split(k, threads);
    stage.bind(block, te::thread_axis("blockIdx.x"));
    stage.bind(row, te::thread_axis("threadIdx.y"));
    stage.bind(thread, te::thread_axis("threadIdx.x"));
  }
  return te::lower(s, {a, b}, "row_reduction");
}

// The sum of every element of A (n1 x n2) into a 0-d tensor, by one block of `threads`.
inline PrimFunc TotalSum(int n1, int n2, int threads, bool bind) {
  te::Tensor a = te::placeholder({n1, n2}, DataType::Float(32), "A");
  IterVar k1 = te::reduce_axis(Range(0, n1), "k1");
  IterVar k2 = te::reduce_axis(Range(0, n2), "k2");
  te::Tensor total = te::compute(
      Array<PrimExpr>{},
      [&](const Array<Var>&) {
        return te::sum(a(k1->var, k2->var), {k1, k2});
      },
      "total");
  te::Schedule s = te::create_schedule({total.op()});
  if (bind) {
    te::Stage stage = s[total];
    IterVar fused = stage.fuse(k1, k2);
    auto [serial, thread] = stage.split(fused, threads);
    stage.bind(thread, te::thread_axis("threadIdx.x"));
  }
  return te::lower(s, {a, total}, "total_sum");
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

// Runs `module`'s `name` on `device` with `inputs` (copied there) and outputs of the given
// shapes and types; the outputs, copied back to the host.
inline std::vector<NDArray> RunOn(
    DLDevice device, const runtime::Module& module, const std::string& name,
    const std::vector<NDArray>& inputs,
    const std::vector<std::pair<std::vector<int64_t>, DataType>>& outputs) {
  std::vector<NDArray> args;
  for (const NDArray& input : inputs) args.push_back(input.CopyTo(device));
  for (const auto& [shape, dtype] : outputs) args.push_back(NDArray::Empty(shape, dtype, device));
  module.GetRequiredFunction(name).CallWithArrays(args);
  std::vector<NDArray> results;
  for (size_t i = inputs.size(); i < args.size(); ++i)
    results.push_back(args[i].CopyTo({kDLCPU, 0}));
  return results;
}

// `func` built for llvm and run with `inputs`; its float32 output, of `out_shape`.
inline NDArray RunOnHost(const PrimFunc& func, const std::string& name,
                         const std::vector<NDArray>& inputs,
                         const std::vector<int64_t>& out_shape) {
  return RunOn({kDLCPU, 0}, build(func, Target::Parse("llvm")), name, inputs,
               {{out_shape, DataType::Float(32)}})[0];
}

}  // namespace loom::testing
