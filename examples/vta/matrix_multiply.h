// The matrix multiply of the VTA tutorial ("Simple Matrix Multiply", ../shared/seeds), staged
// through the on-chip buffers and tensorized onto the GEMM intrinsic: the algorithm and the
// schedule of vta_matrix_multiply (matrix_multiply.cc), which the VTA compiler's tests also
// lower step by step.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "loom/ir/expr_ops.h"
#include "loom/te/operation.h"
#include "loom/te/schedule.h"
#include "loom/vta/compiler/environment.h"

namespace loom::vta::example {

// How far TutorialGemm::Scheduled goes.
struct TutorialSteps {
  std::string inp_scope = Environment::kInpScope;  // of A's copy
  bool dma = true;                                 // dma_copy pragmas on the copies
  bool tensorize = true;                           // the GEMM intrinsic at bi
};

// The tutorial's matrix multiply: C[0, co, b, ci] = sum over (ko, ki) of A[0, ko, b, ki] *
// B[co, ko, ci, ki], in the configuration's blocks (batch b, block_in ki, block_out ci; 1, 16,
// 16 by default), accumulated in the accumulator's type and narrowed to the output's, with
// copies into the on-chip buffers at ko.
struct TutorialGemm {
  Environment env;
  int m, n;
  te::Tensor A, B, A_buf, B_buf, C_buf, C;
  IterVar ko, ki;

  TutorialGemm(int out_blocks, int in_blocks, const VTAConfig& config = VTAConfig::Default())
      : env(config), m(out_blocks), n(in_blocks) {
    const int batch = env.batch(), block_in = env.block_in(), block_out = env.block_out();
    const DataType acc = env.acc_dtype();
    A = te::placeholder({1, n, batch, block_in}, env.inp_dtype(), "A");
    B = te::placeholder({m, n, block_out, block_in}, env.wgt_dtype(), "B");
    A_buf = te::compute(
        {1, n, batch, block_in}, [&](const Array<Var>& i) { return A(i); }, "A_buf");
    B_buf = te::compute(
        {m, n, block_out, block_in}, [&](const Array<Var>& i) { return B(i); }, "B_buf");
    ko = te::reduce_axis(Range(0, n), "ko");
    ki = te::reduce_axis(Range(0, block_in), "ki");
    C_buf = te::compute(
        {1, m, batch, block_out},
        [&](Var bo, Var co, Var bi, Var ci) {
          return te::sum(cast(acc, A_buf(bo, ko->var, bi, ki->var)) *
                             cast(acc, B_buf(co, ko->var, ci, ki->var)),
                         {ko, ki});
        },
        "C_buf");
    C = te::compute(
        {1, m, batch, block_out},
        [&](const Array<Var>& i) { return cast(env.out_dtype(), C_buf(i)); }, "C");
  }

  // C computed on the CPU from A's and B's values. A STORE keeps the low bits of the
  // accumulator, so the exact sum narrowed to the output is what VTA stores, whatever the
  // accumulator's width.
  std::vector<int8_t> Reference(const int8_t* a, const int8_t* b) const {
    const int batch = env.batch(), block_in = env.block_in(), block_out = env.block_out();
    std::vector<int8_t> c(static_cast<size_t>(m) * batch * block_out);
    for (int co = 0; co < m; ++co) {
      for (int bi = 0; bi < batch; ++bi) {
        for (int ci = 0; ci < block_out; ++ci) {
          int64_t sum = 0;
          for (int ko = 0; ko < n; ++ko) {
            for (int ki = 0; ki < block_in; ++ki) {
              sum += a[(ko * batch + bi) * block_in + ki] *
                     b[((co * n + ko) * block_out + ci) * block_in + ki];
            }
          }
          c[(co * batch + bi) * block_out + ci] = static_cast<int8_t>(sum);
        }
      }
    }
    return c;
  }

  // The tutorial's schedule up to tensorize (without the pragmas and tensorize, it runs on the
  // host as it is).
  te::Schedule Scheduled(const TutorialSteps& steps = {}) const {
    te::Schedule s = te::create_schedule({C.op()});
    s[A_buf].set_scope(steps.inp_scope);
    s[B_buf].set_scope(Environment::kWgtScope);
    s[C_buf].set_scope(Environment::kAccScope);
    const Array<IterVar>& axis = s[C_buf]->leaf_iter_vars;
    IterVar bo = axis[0], co = axis[1], bi = axis[2], ci = axis[3];
    s[C_buf].reorder({ko, bo, co, bi, ci, ki});
    s[A_buf].compute_at(s[C_buf], ko);
    s[B_buf].compute_at(s[C_buf], ko);
    if (steps.dma) {
      s[A_buf].pragma(s[A_buf]->leaf_iter_vars[0], Environment::kDmaCopy);
      s[B_buf].pragma(s[B_buf]->leaf_iter_vars[0], Environment::kDmaCopy);
      s[C].pragma(s[C]->leaf_iter_vars[0], Environment::kDmaCopy);
    }
    if (steps.tensorize) s[C_buf].tensorize(bi, env.gemm());
    return s;
  }
};

}  // namespace loom::vta::example
