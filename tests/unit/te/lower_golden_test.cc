// The printed lowering of small schedules: the scheduled loop nest (N-d accesses, which reads
// like tvm.lower(simple_mode=True)) and the fully lowered function.
#include "te_test_util.h"

namespace loom::te::test {
namespace {

TEST(TeLowerGolden, NonDivisibleSplitWithVectorizedInnerLoop) {
  Tensor A = placeholder({10}, kF32, "A");
  Tensor B = compute({10}, [&](Var i) { return A(i) * 2.0f; }, "B");
  Schedule s = create_schedule({B.op()});
  auto [o, i] = s[B].split(s[B]->leaf_iter_vars[0], 4);
  s[B].vectorize(i);
  EXPECT_EQ(ToScript(ScheduleToPrimFunc(s, {A, B}, "scale")), R"(@T.prim_func
def scale(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
    for i.outer in range(3):
        for i.inner in T.vectorized(0, 4):
            if T.likely(i.outer * 4 + i.inner < 10):
                B[i.outer * 4 + i.inner] = A[i.outer * 4 + i.inner] * T.float32(2.0)
)");
}

TEST(TeLowerGolden, TiledMatmulWithReductionSplit) {
  Tensor X = placeholder({16, 8}, kF32, "X"), Y = placeholder({8, 12}, kF32, "Y");
  IterVar k = reduce_axis(Range(0, 8), "k");
  Tensor M = compute({16, 12}, [&](Var i, Var j) { return sum(X(i, k->var) * Y(k->var, j), {k}); }, "M");
  Schedule s = create_schedule({M.op()});
  auto [xo, yo, xi, yi] = s[M].tile(s[M]->leaf_iter_vars[0], s[M]->leaf_iter_vars[1], 4, 4);
  auto [ko, ki] = s[M].split(k, 2);
  s[M].reorder({xo, yo, ko, xi, ki, yi});
  s[M].vectorize(yi);
  s[M].parallel(xo);
  EXPECT_EQ(ToScript(ScheduleToPrimFunc(s, {X, Y, M}, "matmul")), R"(@T.prim_func
def matmul(X: T.Buffer((16, 8), "float32"), Y: T.Buffer((8, 12), "float32"), M: T.Buffer((16, 12), "float32")):
    for i.outer in T.parallel(0, 4):
        for j.outer in range(3):
            for i.inner.init in range(4):
                for j.inner.init in T.vectorized(0, 4):
                    M[i.outer * 4 + i.inner.init, j.outer * 4 + j.inner.init] = T.float32(0.0)
            for k.outer in range(4):
                for i.inner in range(4):
                    for k.inner in range(2):
                        for j.inner in T.vectorized(0, 4):
                            M[i.outer * 4 + i.inner, j.outer * 4 + j.inner] = M[i.outer * 4 + i.inner, j.outer * 4 + j.inner] + X[i.outer * 4 + i.inner, k.outer * 2 + k.inner] * Y[k.outer * 2 + k.inner, j.outer * 4 + j.inner]
)");
}

// Each tile of 4 rows of C reads 5 rows of B: B is allocated [5, 6] inside the tile loop and
// indexed relative to the tile's first row; no guard is needed as B has 13 rows.
TEST(TeLowerGolden, ProducerComputedAtTheConsumersOuterLoop) {
  Tensor A = placeholder({12, 6}, kF32, "A");
  Tensor B = compute({13, 6}, [&](Var i, Var j) { return A(min(i, 11), j) + 1.0f; }, "B");
  Tensor C = compute({12, 6}, [&](Var i, Var j) { return B(i, j) + B(i + 1, j); }, "C");
  Schedule s = create_schedule({C.op()});
  auto [o, i] = s[C].split(s[C]->leaf_iter_vars[0], 4);
  s[B].compute_at(s[C], o);
  EXPECT_EQ(ToScript(ScheduleToPrimFunc(s, {A, C}, "stencil")), R"(@T.prim_func
def stencil(A: T.Buffer((12, 6), "float32"), C: T.Buffer((12, 6), "float32")):
    for i.outer in range(3):
        B_data = T.allocate([5, 6], "float32", "global")
        for i in range(5):
            for j in range(6):
                B[i, j] = A[T.min(i.outer * 4 + i, 11), j] + T.float32(1.0)
        for i.inner in range(4):
            for j_1 in range(6):
                C[i.outer * 4 + i.inner, j_1] = B[i.inner, j_1] + B[i.inner + 1, j_1]
)");
}

// Fully lowered: LoopPartition peels the guard of the non-dividing split (two full vector
// iterations, then the scalar edge), VectorizeLoop turns the main part into vector code.
TEST(TeLowerGolden, NonDivisibleVectorizedSplitLowered) {
  Tensor A = placeholder({10}, kF32, "A");
  Tensor B = compute({10}, [&](Var i) { return A(i) * 2.0f; }, "B");
  Schedule s = create_schedule({B.op()});
  auto [o, i] = s[B].split(s[B]->leaf_iter_vars[0], 4);
  s[B].vectorize(i);
  EXPECT_EQ(ToScript(lower(s, {A, B}, "scale")), R"(@T.prim_func
def scale(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
    for i.outer in range(2):
        B[T.Ramp(i.outer * 4, 1, 4)] = A[T.Ramp(i.outer * 4, 1, 4)] * T.Broadcast(T.float32(2.0), 4)
    for i.inner in range(4):
        if i.inner < 2:
            B[i.inner + 8] = A[i.inner + 8] * T.float32(2.0)
)");
}

// Fully lowered zero-padded copy of 3-channel pixels, a row's pixels and channels one axis
// (as the x86 conv pads its input): LoopPartition peels the likely() bounds, the main part's
// if_then_else folds to its load, and (x // 3) * 3 + x % 3 folds to x before vectorizing,
// so the interior is one vector load per 16 floats, not a gather.
TEST(TeLowerGolden, PaddedCopyOfThreeChannelPixelsIsAVectorCopy) {
  Tensor A = placeholder({10, 3}, kF32, "A");
  auto likely = [](PrimExpr test) { return call_intrin(DataType::Bool(), "likely", {test}); };
  Tensor P = compute({36}, [&](Var x) {
    PrimExpr at = x - 3;
    return if_then_else(likely(at >= 0) && likely(at < 30), A(floordiv(at, 3), floormod(at, 3)),
                        FloatImm(kF32, 0.0));
  }, "P");
  Schedule s = create_schedule({P.op()});
  auto [o, i] = s[P].split(s[P]->leaf_iter_vars[0], 16);
  s[P].vectorize(i);
  EXPECT_EQ(ToScript(lower(s, {A, P}, "pad")), R"(@T.prim_func
def pad(A: T.Buffer((10, 3), "float32"), P: T.Buffer((36,), "float32")):
    for i.inner in range(16):
        P[i.inner] = T.if_then_else(3 <= i.inner, A_1[i.inner - 3], T.float32(0.0))
    P[T.Ramp(16, 1, 16)] = A_1[T.Ramp(13, 1, 16)]
    for i.inner in range(16):
        if i.inner < 4:
            P[i.inner + 32] = T.if_then_else(i.inner < 1, A_1[i.inner + 29], T.float32(0.0))
)");
}

// Fully lowered rfactor of a row sum: the partial sums are a flat allocation, the final
// reduction reads them back.
TEST(TeLowerGolden, RowSumRfactorLowered) {
  Tensor A = placeholder({4, 10}, kF32, "A");
  IterVar k = reduce_axis(Range(0, 10), "k");
  Tensor S = compute({4}, [&](Var i) { return sum(A(i, k->var), {k}); }, "S");
  Schedule s = create_schedule({S.op()});
  auto [ko, ki] = s[S].split(k, 4);
  s.rfactor(S, ki);
  EXPECT_EQ(ToScript(lower(s, {A, S}, "rowsum")), R"(@T.prim_func
def rowsum(A: T.Buffer((4, 10), "float32"), S: T.Buffer((4,), "float32")):
    S.rf_data = T.allocate([16], "float32", "global")
    for k.inner in range(4):
        for i in range(4):
            S.rf[k.inner * 4 + i] = T.float32(0.0)
            for k.outer in range(3):
                if k.outer * 4 + k.inner < 10:
                    S.rf[k.inner * 4 + i] = S.rf[k.inner * 4 + i] + A_1[i * 10 + k.outer * 4 + k.inner]
    for i_1 in range(4):
        S[i_1] = T.float32(0.0)
        for k.inner.v in range(4):
            S[i_1] = S[i_1] + S.rf[k.inner.v * 4 + i_1]
)");
}

}  // namespace
}  // namespace loom::te::test
