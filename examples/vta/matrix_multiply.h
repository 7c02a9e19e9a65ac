// The matrix multiply of the VTA tutorial ("Simple Matrix Multiply", ../shared/seeds), staged
// through the on-chip buffers and tensorized onto the GEMM intrinsic: the algorithm and the
// schedule of vta_matrix_multiply (matrix_multiply.cc), which the VTA compiler's tests also
// lower step by step.
#pragma once

#include <string>

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

// The tutorial's matrix multiply: C[0, co, 0, ci] = sum over (ko, ki) of A[0, ko, 0, ki] *
// B[co, ko, ci, ki], in blocks of 16, with copies into the on-chip buffers at ko.
struct TutorialGemm {
  Environment env{VTAConfig::Default()};
  int m, n;
  te::Tensor A, B, A_buf, B_buf, C_buf, C;
  IterVar ko, ki;

  TutorialGemm(int out_blocks, int in_blocks) : m(out_blocks), n(in_blocks) {
    const DataType i8 = DataType::Int(8), i32 = DataType::Int(32);
    A = te::placeholder({1, n, 1, 16}, i8, "A");
    B = te::placeholder({m, n, 16, 16}, i8, "B");
    A_buf = te::compute(
        {1, n, 1, 16}, [&](const Array<Var>& i) { return A(i); }, "A_buf");
    B_buf = te::compute(
        {m, n, 16, 16}, [&](const Array<Var>& i) { return B(i); }, "B_buf");
    ko = te::reduce_axis(Range(0, n), "ko");
    ki = te::reduce_axis(Range(0, 16), "ki");
    C_buf = te::compute(
        {1, m, 1, 16},
        [&](Var bo, Var co, Var bi, Var ci) {
          return te::sum(cast(i32, A_buf(bo, ko->var, bi, ki->var)) *
                             cast(i32, B_buf(co, ko->var, ci, ki->var)),
                         {ko, ki});
        },
        "C_buf");
    C = te::compute(
        {1, m, 1, 16}, [&](const Array<Var>& i) { return cast(i8, C_buf(i)); }, "C");
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
