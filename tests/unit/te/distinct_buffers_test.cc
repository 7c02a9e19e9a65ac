// Loads of two distinct buffers of the same shape are different values: equality, hashing and
// the simplifier must not treat A[i] and B[i] alike (regression: A[i] - B[i] folded to 0).
#include "loom/ir/structural.h"
#include "te_test_util.h"

namespace loom::te::test {
namespace {

TEST(TeDistinctBuffers, LoadsOfDistinctBuffersAreNotStructurallyEqual) {
  Tensor A = placeholder({8}, kI32, "A");
  Tensor B = placeholder({8}, kI32, "B");
  Var i("i", kI32);
  EXPECT_FALSE(StructuralEqual(A(i), B(i)));
  EXPECT_TRUE(StructuralEqual(A(i), A(i)));
}

TEST(TeDistinctBuffers, ElementwiseOpsOfTwoInputsAreNotFolded) {
  constexpr int64_t kN = 16;
  Tensor A = placeholder({int(kN)}, kI32, "A");
  Tensor B = placeholder({int(kN)}, kI32, "B");
  Tensor C = compute(
      {int(kN)},
      [&](Var i) { return (A(i) - B(i)) * 1000 + floordiv(A(i), B(i)) * 10 + min(A(i), B(i)); },
      "C");
  PrimFunc f = lower(create_schedule({C.op()}), {A, B, C}, "two_inputs");
  tir::HostArray a = RandomArray(kI32, {kN}, 11), b(kI32, {kN});
  for (int64_t i = 0; i < kN; ++i) b.SetFloat(i, (i % 5) + 1);  // nonzero divisors
  tir::HostArray c = RunFunc(f, {a, b}, {{kI32, {kN}}})[0];
  for (int64_t i = 0; i < kN; ++i) {
    int64_t x = static_cast<int64_t>(a.GetFloat(i)), y = static_cast<int64_t>(b.GetFloat(i));
    int64_t floor_div = x / y - ((x % y != 0) && ((x < 0) != (y < 0)) ? 1 : 0);
    EXPECT_EQ(c.GetFloat(i), (x - y) * 1000 + floor_div * 10 + std::min(x, y)) << "i=" << i;
  }
}

}  // namespace
}  // namespace loom::te::test
