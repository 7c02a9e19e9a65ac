// matmul compiled with schedule_matmul against a reference written here: 2-D, batched,
// broadcast batch dimensions, 1-D operands, sizes that do not divide the 4 x 16 tile,
// integers (exact), an injective producer inlined into the product, and the user errors.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "loom/topi/elementwise.h"
#include "loom/topi/matmul.h"
#include "loom/topi/transform.h"
#include "topi_test_util.h"

namespace loom::topi {
namespace {

using target_test::RandomArray;

// The reference: both operands as batches of matrices (1-D ones with a unit dimension),
// batch dimensions broadcast from the right.
std::vector<double> Reference(const tir::HostArray& a, const tir::HostArray& b) {
  std::vector<int64_t> sa = a.shape(), sb = b.shape();
  bool a_vector = sa.size() == 1, b_vector = sb.size() == 1;
  if (a_vector) sa.insert(sa.begin(), 1);
  if (b_vector) sb.push_back(1);
  int64_t M = sa[sa.size() - 2], K = sa.back(), N = sb.back();
  std::vector<int64_t> ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  size_t rank = std::max(ba.size(), bb.size());
  std::vector<int64_t> batch(rank);
  auto dim = [&](const std::vector<int64_t>& s, size_t d) {
    return d + s.size() >= rank ? s[d + s.size() - rank] : int64_t{1};
  };
  int64_t batches = 1;
  for (size_t d = 0; d < rank; ++d) batches *= batch[d] = std::max(dim(ba, d), dim(bb, d));
  auto offset = [&](const std::vector<int64_t>& s, int64_t flat) {
    int64_t index = 0, stride = 1;
    for (size_t d = rank; d-- > 0;) {
      int64_t i = flat % batch[d];
      flat /= batch[d];
      if (d + s.size() >= rank) {
        int64_t extent = s[d + s.size() - rank];
        if (extent != 1) index += i * stride;
        stride *= extent;
      }
    }
    return index;
  };
  auto get = [](const tir::HostArray& h, int64_t i) {
    return h.dtype().is_float() ? h.GetFloat(i) : double(h.GetInt(i));
  };
  std::vector<double> out;
  for (int64_t n = 0; n < batches; ++n) {
    int64_t a0 = offset(ba, n) * M * K, b0 = offset(bb, n) * K * N;
    for (int64_t i = 0; i < M; ++i) {
      for (int64_t j = 0; j < N; ++j) {
        double total = 0;
        for (int64_t k = 0; k < K; ++k) total += get(a, a0 + i * K + k) * get(b, b0 + k * N + j);
        out.push_back(total);
      }
    }
  }
  return out;
}

void ExpectMatmul(const std::vector<int64_t>& shape_a, const std::vector<int64_t>& shape_b,
                  DataType t, int tile_rows = 4) {
  te::Tensor a = te::placeholder(test::Exprs(shape_a), t, "a");
  te::Tensor b = te::placeholder(test::Exprs(shape_b), t, "b");
  te::Tensor c = matmul(a, b);
  tir::HostArray in_a = RandomArray(t, shape_a, 31), in_b = RandomArray(t, shape_b, 32);
  tir::HostArray got = test::RunScheduled(schedule_matmul(c, tile_rows), {a, b}, {c}, {in_a, in_b})[0];
  std::vector<double> want = Reference(in_a, in_b);
  std::string label = "matmul " + std::to_string(shape_a.size()) + "-d x " +
                      std::to_string(shape_b.size()) + "-d " + t.str();
  ASSERT_EQ(got.NumElements(), static_cast<int64_t>(want.size())) << label;
  // float32 sums of up to 64 products below 16 in magnitude: within 64 * 16 * 2^-23.
  test::ExpectClose(got, [&](int64_t i) { return want[i]; }, t.is_float() ? 1.5e-4 : 0, label);
}

TEST(TopiMatmul, TwoDimensionalAndRaggedSizes) {
  ExpectMatmul({32, 64}, {64, 48}, DataType::Float(32));
  ExpectMatmul({37, 19}, {19, 53}, DataType::Float(32));
  ExpectMatmul({1, 7}, {7, 1}, DataType::Float(32));
  ExpectMatmul({37, 19}, {19, 53}, DataType::Float(32), 3);
  ExpectMatmul({9, 30}, {30, 17}, DataType::Int(32));
}

TEST(TopiMatmul, BatchedWithBroadcastBatchDimensions) {
  ExpectMatmul({2, 3, 5, 7}, {2, 3, 7, 18}, DataType::Float(32));
  ExpectMatmul({2, 1, 5, 7}, {3, 7, 18}, DataType::Float(32));
  ExpectMatmul({5, 7}, {4, 7, 20}, DataType::Float(32));
  ExpectMatmul({3, 5, 7}, {7, 20}, DataType::Float(32));
}

TEST(TopiMatmul, OneDimensionalOperandsDropTheirUnitDimension) {
  ExpectMatmul({7}, {7, 20}, DataType::Float(32));
  ExpectMatmul({3, 5, 7}, {7}, DataType::Float(32));
  ExpectMatmul({7}, {7}, DataType::Float(32));
  te::Tensor v = te::placeholder({7}, DataType::Float(32), "v");
  te::Tensor m = te::placeholder({2, 7, 20}, DataType::Float(32), "m");
  EXPECT_EQ(matmul(v, m).ndim(), 2);
  EXPECT_EQ(matmul(m, te::placeholder({20}, DataType::Float(32), "w")).ndim(), 2);
}

TEST(TopiMatmul, AnInjectiveProducerIsInlined) {
  te::Tensor a = te::placeholder({8, 24}, DataType::Float(32), "a");
  te::Tensor b = te::placeholder({24, 32}, DataType::Float(32), "b");
  te::Tensor c = matmul(relu(a), b);
  tir::HostArray in_a = RandomArray(DataType::Float(32), {8, 24}, 1);
  tir::HostArray in_b = RandomArray(DataType::Float(32), {24, 32}, 2);
  tir::HostArray rectified(DataType::Float(32), {8, 24});
  for (int64_t i = 0; i < 8 * 24; ++i) rectified.SetFloat(i, std::max(0.0, in_a.GetFloat(i)));
  std::vector<double> want = Reference(rectified, in_b);
  te::Schedule s = schedule_matmul(c);
  EXPECT_EQ(s.stages().size(), 5u);  // a, relu (inlined), b, the product and its tile
  tir::HostArray got = test::RunScheduled(s, {a, b}, {c}, {in_a, in_b})[0];
  test::ExpectClose(got, [&](int64_t i) { return want[i]; }, 1.5e-4, "relu then matmul");
}

// An elementwise epilogue (a bias, a ReLU) runs on each register tile as it is stored; one
// that changes the product's shape is refused.
TEST(TopiMatmul, AnElementwiseEpilogueRunsOnEachTile) {
  const DataType f32 = DataType::Float(32);
  te::Tensor a = te::placeholder({37, 19}, f32, "a");
  te::Tensor b = te::placeholder({19, 53}, f32, "b");
  te::Tensor bias = te::placeholder({53}, f32, "bias");
  te::Tensor out = relu(add(matmul(a, b), bias));
  tir::HostArray in_a = RandomArray(f32, {37, 19}, 3), in_b = RandomArray(f32, {19, 53}, 4);
  tir::HostArray in_bias = RandomArray(f32, {53}, 5);
  std::vector<double> want = Reference(in_a, in_b);
  for (size_t i = 0; i < want.size(); ++i) {
    want[i] = std::max(0.0, want[i] + in_bias.GetFloat(static_cast<int64_t>(i % 53)));
  }
  te::Schedule s = schedule_matmul(out);
  EXPECT_EQ(s.stages().size(), 6u);  // a, b, bias, the product (the tile), add (inlined), relu
  tir::HostArray got = test::RunScheduled(s, {a, b, bias}, {out}, {in_a, in_b, in_bias})[0];
  test::ExpectClose(
      got, [&](int64_t i) { return want[i]; }, 1.5e-4, "matmul, bias, relu");
  EXPECT_NE(test::ErrorOf([&] {
              schedule_matmul(transpose(matmul(a, b)));
            }).find("schedule_matmul: the epilogue"),
            std::string::npos);
}

TEST(TopiMatmul, MismatchedOperandsAreUserErrors) {
  te::Tensor a = te::placeholder({4, 3}, DataType::Float(32), "a");
  te::Tensor b = te::placeholder({4, 5}, DataType::Float(32), "b");
  te::Tensor i = te::placeholder({3, 5}, DataType::Int(32), "i");
  te::Tensor batch_a = te::placeholder({2, 4, 3}, DataType::Float(32), "batch_a");
  te::Tensor batch_b = te::placeholder({3, 3, 5}, DataType::Float(32), "batch_b");
  EXPECT_NE(test::ErrorOf([&] { matmul(a, b); }).find("the inner dimensions differ"), std::string::npos);
  EXPECT_NE(test::ErrorOf([&] { matmul(a, i); }).find("operand types differ ('a' is float32, 'i' is int32)"),
            std::string::npos);
  EXPECT_NE(test::ErrorOf([&] { matmul(batch_a, batch_b); }).find("do not broadcast"), std::string::npos);
  EXPECT_NE(test::ErrorOf([&] {
              schedule_matmul(a);
            }).find("is neither the output of matmul nor an elementwise epilogue of one"),
            std::string::npos);
}

}  // namespace
}  // namespace loom::topi
