// storage_align and double_buffer: the attributes the scheduled form carries, what the TIR
// pipeline makes of them, results equal to the reference, and the user errors.
#include "te_test_util.h"

namespace loom::te::test {
namespace {

// C[i, j] = sum_k A[i, k] * 2 over a staged copy AS of A, one row block at a time.
struct Staged {
  Tensor A = placeholder({8, 6}, kF32, "A");
  Tensor AS = compute({8, 6}, [&](Var i, Var j) { return A(i, j) * 2.0f; }, "AS");
  IterVar k = reduce_axis(Range(0, 6), "k");
  Tensor C = compute({8}, [&](Var i) { return sum(AS(i, k->var), {k}); }, "C");
  tir::HostArray a = RandomArray(kF32, {8, 6}, 5);

  tir::HostArray Reference() const {
    tir::HostArray out(kF32, {8});
    for (int i = 0; i < 8; ++i) {
      double acc = 0;
      for (int j = 0; j < 6; ++j) acc += a.GetFloat(i * 6 + j) * 2;
      out.SetFloat(i, acc);
    }
    return out;
  }
  // Both forms (see RunFunc).
  void ExpectBothFormsMatch(const Schedule& s, const std::string& what) const {
    ExpectSame(RunFunc(ScheduleToPrimFunc(s, {A, C}, "f"), {a}, {{kF32, {8}}})[0], Reference(),
               what);
  }
};

// Rows of AS padded from 6 to 8 elements (offset 0 modulo 8): the allocation grows to
// 2 rows x 8, and row r starts at r * 8.
TEST(TeStorageAlign, PadsTheRowStrideOfAnAttachedStage) {
  Staged t;
  Schedule s = create_schedule({t.C.op()});
  auto [io, ii] = s[t.C].split(OpAxis(t.C, 0), 2);
  s[t.AS].compute_at(s[t.C], io);
  s[t.AS].storage_align(OpAxis(t.AS, 0), 8, 0);
  EXPECT_EQ(ToScript(ScheduleToPrimFunc(s, {t.A, t.C}, "f")), R"(@T.prim_func
def f(A: T.Buffer((8, 6), "float32"), C: T.Buffer((8,), "float32")):
    for i.outer in range(4):
        AS_data = T.allocate([2, 6], "float32", "global")
        with T.attr(T.Buffer((2, 6), "float32"), "buffer_dim_align", T.tvm_tuple(0, 8, 0)):
            for i in range(2):
                for j in range(6):
                    AS[i, j] = A[i.outer * 2 + i, j] * T.float32(2.0)
            for i.inner in range(2):
                C[i.outer * 2 + i.inner] = T.float32(0.0)
                for k in range(6):
                    C[i.outer * 2 + i.inner] = C[i.outer * 2 + i.inner] + AS[i.inner, k]
)");
  EXPECT_EQ(ToScript(lower(s, {t.A, t.C}, "f")), R"(@T.prim_func
def f(A: T.Buffer((8, 6), "float32"), C: T.Buffer((8,), "float32")):
    AS_data = T.allocate([16], "float32", "global")
    for i.outer in range(4):
        for i in range(2):
            for j in range(6):
                AS[i * 8 + j] = A_1[i.outer * 12 + i * 6 + j] * T.float32(2.0)
        for i.inner in range(2):
            C[i.outer * 2 + i.inner] = T.float32(0.0)
            for k in range(6):
                C[i.outer * 2 + i.inner] = C[i.outer * 2 + i.inner] + AS[i.inner * 8 + k]
)");
  t.ExpectBothFormsMatch(s, "storage_align");
}

TEST(TeStorageAlign, AnyFactorAndOffsetComputesTheSame) {
  Staged t;
  for (int64_t factor : {1, 3, 7, 16}) {
    for (int64_t offset : {int64_t{0}, factor - 1}) {
      Schedule s = create_schedule({t.C.op()});
      auto [io, ii] = s[t.C].split(OpAxis(t.C, 0), 3);
      s[t.AS].compute_at(s[t.C], io);
      s[t.AS].storage_align(OpAxis(t.AS, 0), factor, offset);
      t.ExpectBothFormsMatch(s, "factor " + std::to_string(factor) + " offset " +
                                    std::to_string(offset));
    }
  }
}

TEST(TeStorageAlign, InvalidRequestsNameTheStageAndPrimitive) {
  Staged t;
  Schedule s = create_schedule({t.C.op()});
  EXPECT_EQ(ErrorOf([&] { s[t.AS].storage_align(t.k, 8, 0); }),
            "storage_align of stage 'AS': 'k' is not an axis of the stage's operation (its axes "
            "are i, j); pass one of op->axis");
  EXPECT_EQ(ErrorOf([&] { s[t.AS].storage_align(OpAxis(t.AS, 0), 0, 0); }),
            "storage_align of stage 'AS': factor 0 and offset 0 are invalid: need factor > 0 "
            "and 0 <= offset < factor");
  EXPECT_EQ(ErrorOf([&] { s[t.AS].storage_align(OpAxis(t.AS, 0), 4, 4); }),
            "storage_align of stage 'AS': factor 4 and offset 4 are invalid: need factor > 0 "
            "and 0 <= offset < factor");
  EXPECT_EQ(ErrorOf([&] { s[t.C].storage_align(OpAxis(t.C, 0), 4, 0); }),
            "storage_align of stage 'C': an output of the schedule lives in the function's "
            "argument buffer, whose layout the caller decides; align a cache_write stage "
            "instead");
  EXPECT_EQ(ErrorOf([&] { s[t.A].storage_align(OpAxis(t.AS, 0), 4, 0); }),
            "storage_align of stage 'A': a placeholder is an argument of the function, whose "
            "layout the caller decides");
  s[t.AS].storage_align(OpAxis(t.AS, 1), 4, 1);
  EXPECT_EQ(ErrorOf([&] { s[t.AS].storage_align(OpAxis(t.AS, 1), 8, 1); }),
            "storage_align of stage 'AS': axis 'j' is already aligned");
  EXPECT_EQ(ErrorOf([&] { lower(s, {t.A, t.AS, t.C}, "f"); }),
            "storage_align of stage 'AS': the tensor is an argument of 'f', whose layout the "
            "caller decides; align a cache stage instead");
}

// The copy of each block of 2 rows is double-buffered across the block loop: the scheduled
// form marks the producer, the lowered one has the prologue, the pipelined loop and the
// epilogue over an allocation of two halves.
TEST(TeDoubleBuffer, PipelinesTheCopyAcrossTheAttachLoop) {
  Staged t;
  Schedule s = create_schedule({t.C.op()});
  auto [io, ii] = s[t.C].split(OpAxis(t.C, 0), 2);
  s[t.AS].compute_at(s[t.C], io);
  s[t.AS].double_buffer();
  EXPECT_EQ(ToScript(ScheduleToPrimFunc(s, {t.A, t.C}, "f")), R"(@T.prim_func
def f(A: T.Buffer((8, 6), "float32"), C: T.Buffer((8,), "float32")):
    AS_data = T.allocate([2, 6], "float32", "global")
    for i.outer in range(4):
        with T.attr(AS_data, "double_buffer_scope", 1):
            for i in range(2):
                for j in range(6):
                    AS[i, j] = A[i.outer * 2 + i, j] * T.float32(2.0)
        for i.inner in range(2):
            C[i.outer * 2 + i.inner] = T.float32(0.0)
            for k in range(6):
                C[i.outer * 2 + i.inner] = C[i.outer * 2 + i.inner] + AS[i.inner, k]
)");
  EXPECT_EQ(ToScript(lower(s, {t.A, t.C}, "f")), R"(@T.prim_func
def f(A: T.Buffer((8, 6), "float32"), C: T.Buffer((8,), "float32")):
    AS_data = T.allocate([24], "float32", "global")
    for i in range(2):
        for j in range(6):
            AS[i * 6 + j] = A_1[i * 6 + j] * T.float32(2.0)
    for i.outer in range(3):
        for i in range(2):
            for j in range(6):
                AS[(i.outer + 1) % 2 * 12 + i * 6 + j] = A_1[i.outer * 12 + i * 6 + j + 12] * T.float32(2.0)
        for i.inner in range(2):
            C[i.outer * 2 + i.inner] = T.float32(0.0)
            for k in range(6):
                C[i.outer * 2 + i.inner] = C[i.outer * 2 + i.inner] + AS[i.outer % 2 * 12 + i.inner * 6 + k]
    for i.inner in range(2):
        C[i.inner + 6] = T.float32(0.0)
        for k in range(6):
            C[i.inner + 6] = C[i.inner + 6] + AS[i.inner * 6 + k + 12]
)");
  t.ExpectBothFormsMatch(s, "double_buffer");
}

TEST(TeDoubleBuffer, ComposesWithSplitsAndAlignment) {
  Staged t;
  for (int block : {1, 2, 3, 8}) {
    Schedule s = create_schedule({t.C.op()});
    auto [io, ii] = s[t.C].split(OpAxis(t.C, 0), block);
    auto [ko, ki] = s[t.C].split(t.k, 4);
    s[t.C].reorder({io, ko, ii, ki});
    s[t.AS].compute_at(s[t.C], ko);
    s[t.AS].double_buffer();
    if (block % 2 == 0) s[t.AS].storage_align(OpAxis(t.AS, 0), 4, 1);
    t.ExpectBothFormsMatch(s, "block " + std::to_string(block));
  }
}

TEST(TeDoubleBuffer, InvalidUsesNameTheStageAndPrimitive) {
  Staged t;
  Schedule s = create_schedule({t.C.op()});
  EXPECT_EQ(ErrorOf([&] { s[t.C].double_buffer(); }),
            "double_buffer of stage 'C': an output of the schedule lives in the function's "
            "argument buffer and is computed at the root; double-buffer a stage attached with "
            "compute_at");
  EXPECT_EQ(ErrorOf([&] { s[t.A].double_buffer(); }),
            "double_buffer of stage 'A': a placeholder is not computed by the schedule");
  s[t.AS].double_buffer();
  EXPECT_EQ(ErrorOf([&] { lower(s, {t.A, t.C}, "f"); }),
            "double_buffer of stage 'AS': the stage is computed at the root, not attached inside "
            "a loop; compute_at it into the loop whose iterations should overlap its production");
  s[t.AS].compute_inline();
  EXPECT_EQ(ErrorOf([&] { lower(s, {t.A, t.C}, "f"); }),
            "double_buffer of stage 'AS': the stage is inlined, not attached inside a loop; "
            "compute_at it into the loop whose iterations should overlap its production");
}

// A tile whose size changes with the attach loop cannot live in one allocation outside it.
TEST(TeDoubleBuffer, RegionSizeVaryingWithTheLoopIsAUserError) {
  Tensor A = placeholder({8}, kF32, "A");
  Tensor B = compute({8}, [&](Var i) { return A(i) + 1.0f; }, "B");
  IterVar k = reduce_axis(Range(0, 8), "k");
  Tensor C = compute({8}, [&](Var i) { return sum(B(min(k->var, i)), {k}); },
                     "C");
  Schedule s = create_schedule({C.op()});
  s[B].compute_at(s[C], OpAxis(C, 0));
  s[B].double_buffer();
  std::string error = ErrorOf([&] { lower(s, {A, C}, "f"); });
  EXPECT_NE(error.find("double_buffer of stage 'B': the size of its region"), std::string::npos)
      << error;
}

}  // namespace
}  // namespace loom::te::test
