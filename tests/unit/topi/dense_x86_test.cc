// topi::x86 dense (pre-packed weights) and batch matmul, compiled with their schedules,
// against naive double-precision references: both weight orientations, M = 1, sizes that
// divide no tile, leading batch dimensions, epilogues on the register tile, broadcast
// batches; and the user errors.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "loom/ir/printer.h"
#include "loom/topi/elementwise.h"
#include "loom/topi/matmul.h"
#include "loom/topi/reduction.h"
#include "loom/topi/schedule.h"
#include "loom/topi/transform.h"
#include "loom/topi/x86/batch_matmul.h"
#include "loom/topi/x86/dense.h"
#include "topi_test_util.h"

namespace loom::topi::x86 {
namespace {

using target_test::RandomArray;

const DataType kF32 = DataType::Float(32);

std::string Label(const std::vector<int64_t>& shape) {
  std::string text;
  for (int64_t extent : shape) text += (text.empty() ? "[" : ", ") + std::to_string(extent);
  return text + "]";
}

DenseConfig Tile(int64_t rows, int64_t columns, int64_t block_columns = 0, int64_t k_unroll = 8) {
  DenseConfig c;
  c.tile_rows = rows;
  c.tile_columns = columns;
  c.block_columns = block_columns;
  c.k_unroll = k_unroll;
  return c;
}

struct DenseCase {
  std::vector<int64_t> data;  // [..., M, K]
  int64_t N;
  bool transposed;
  DenseConfig config;

  int64_t K() const { return data.back(); }
  int64_t rows() const {  // the leading dimensions fused
    int64_t count = 1;
    for (size_t d = 0; d + 1 < data.size(); ++d) count *= data[d];
    return count;
  }
  std::vector<int64_t> weight_shape() const {
    return transposed ? std::vector<int64_t>{N, K()} : std::vector<int64_t>{K(), N};
  }
};

// data [rows, K] x weight ([K, N], or [N, K] when transposed), row-major, in double.
std::vector<double> DenseReference(const tir::HostArray& x, const tir::HostArray& w, int64_t rows,
                                   int64_t N, int64_t K, bool transposed) {
  std::vector<double> out;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double total = 0;
      for (int64_t k = 0; k < K; ++k) {
        total += x.GetFloat(i * K + k) * w.GetFloat(transposed ? j * K + k : k * N + j);
      }
      out.push_back(total);
    }
  return out;
}

TEST(TopiDenseX86, MatchesTheReferenceInBothWeightOrientations) {
  std::vector<DenseCase> cases = {
      {{37, 20}, 100, false, DefaultDenseConfig(37, 100, 20)},  // partial row tile and panel
      {{37, 20}, 100, true, DefaultDenseConfig(37, 100, 20)},
      {{1, 70}, 45, false, DefaultDenseConfig(1, 45, 70)},  // M = 1
      {{1, 70}, 45, true, Tile(1, 64, 64, 3)},              // k_unroll dividing no K
      {{16, 33}, 64, false, Tile(8, 32)},                   // every tile whole
      {{5, 9}, 1, true, Tile(4, 16, 0, 1)},                 // N = 1
      {{2, 3, 11}, 40, false, Tile(4, 16, 32)},             // leading batch dimension
      {{1, 35, 12}, 70, true, Tile(4, 64, 64)},             // batch of one, 35 rows
      {{3, 7, 10}, 50, false, Tile(4, 16, 32)},             // tiles that would straddle entries
      {{2, 8, 10}, 20, true, Tile(4, 16, 32)},              // entries of two tiles
      {{6, 2, 10}, 20, true, Tile(4, 16, 32)},              // tiles of two entries
      {{6, 13}, 200, false, Tile(6, 16, 48)},               // blocks of 3 panels
  };
  for (const DenseCase& c : cases) {
    const int64_t K = c.K(), rows = c.rows();
    const std::vector<int64_t> weight_shape = c.weight_shape();
    te::Tensor x = te::placeholder(test::Exprs(c.data), kF32, "x");
    te::Tensor w = te::placeholder(test::Exprs(weight_shape), kF32, "w");
    te::Tensor y = dense_packed(x, pack_dense_weight(w, c.transposed, c.config), c.N);
    tir::HostArray in_x = RandomArray(kF32, c.data, 11), in_w = RandomArray(kF32, weight_shape, 12);
    std::vector<double> want = DenseReference(in_x, in_w, rows, c.N, K, c.transposed);
    tir::HostArray got =
        test::RunScheduled(schedule_dense_packed(y, c.config), {x, w}, {y}, {in_x, in_w})[0];
    std::vector<int64_t> want_shape(c.data.begin(), c.data.end() - 1);
    want_shape.push_back(c.N);
    EXPECT_EQ(got.shape(), want_shape);
    test::ExpectClose(got, [&](int64_t i) { return want[i]; }, 1e-4,
                      "dense " + Label(c.data) + " N=" + std::to_string(c.N) +
                          (c.transposed ? " transposed " : " ") + c.config.str());
  }
}

// A row tile of batched data [..., M, K] never spans two batch entries: were it to, bound
// inference would widen every tile to all M rows of an entry, computed once per tile.
TEST(TopiDenseX86, RowTilesOfBatchedDataHoldTheirOwnRowsOnly) {
  for (std::vector<int64_t> data :
       {std::vector<int64_t>{1, 35, 16}, {3, 7, 16}, {2, 8, 16}, {6, 2, 16}}) {
    te::Tensor x = te::placeholder(test::Exprs(data), kF32, "x");
    te::Tensor w = te::placeholder(test::Exprs({64, 16}), kF32, "w");
    DenseConfig config = Tile(4, 64, 64);
    te::Tensor y = dense_packed(x, pack_dense_weight(w, true, config), 64);
    std::string text = ToScript(te::lower(schedule_dense_packed(y, config), {x, w, y}, "op"));
    // 4 rows x 64 columns of float32 in registers.
    EXPECT_NE(text.find("dense_packed_tile_data = T.allocate([256], \"float32\", \"local\")"),
              std::string::npos)
        << Label(data) << ":\n"
        << text;
  }
}

// A dense layer on a dot-product instruction (CPU `feature`): `data_type` data x a
// `weight_type` weight, its operands from `values`, against the double reference within
// `tolerance` (0: exactly), in both weight orientations, with partial row tiles and panels, a
// batch dimension and other tilings. Lowered everywhere; run where the CPU has the feature.
void ExpectDotDenseMatches(
    DataType data_type, DataType weight_type, const char* feature,
    const std::function<tir::HostArray(DataType, std::vector<int64_t>, unsigned)>& values,
    double tolerance) {
  const bool runs = Target::Parse("llvm").HasFeature(feature);
  std::vector<DenseCase> cases = {
      {{37, 20}, 100, true, DefaultDenseConfig(37, 100, 20)},
      {{37, 20}, 100, false, DefaultDenseConfig(37, 100, 20)},
      {{1, 64}, 45, true, DefaultDenseConfig(1, 45, 64)},  // M = 1
      {{2, 3, 12}, 40, true, Tile(4, 16, 32, 2)},          // leading batch dimension
      {{16, 136}, 64, true, Tile(8, 32, 0, 3)},            // k_unroll dividing no K / 4 or K / 2
  };
  for (const DenseCase& c : cases) {
    SCOPED_TRACE(data_type.str() + " dense " + Label(c.data) + " N=" + std::to_string(c.N) + " " +
                 c.config.str());
    const int64_t K = c.K(), rows = c.rows();
    const std::vector<int64_t> weight_shape = c.weight_shape();
    te::Tensor x = te::placeholder(test::Exprs(c.data), data_type, "x");
    te::Tensor w = te::placeholder(test::Exprs(weight_shape), weight_type, "w");
    te::Tensor y = dense_packed(x, pack_dense_weight(w, c.transposed, c.config), c.N);
    ASSERT_EQ(y.dtype(), tolerance == 0 ? DataType::Int(32) : DataType::Float(32));
    PrimFunc func = te::lower(schedule_dense_packed(y, c.config), {x, w, y}, "op");
    if (!runs) continue;
    tir::HostArray in_x = values(data_type, c.data, 11);
    tir::HostArray in_w = values(weight_type, weight_shape, 12);
    std::vector<double> want = DenseReference(in_x, in_w, rows, c.N, K, c.transposed);
    tir::HostArray got = test::RunBuilt(func, "llvm", {y}, {in_x, in_w})[0];
    test::ExpectClose(got, [&](int64_t i) { return want[static_cast<size_t>(i)]; }, tolerance,
                      "dense");
  }
}

// uint8 data x an int8 weight -> int32 on vpdpbusd, exactly, over the full range of both
// types (AVX-512 VNNI).
TEST(TopiDenseX86, Int8MatchesTheIntegerReferenceExactly) {
  const DataType u8 = DataType::UInt(8), i8 = DataType::Int(8);
  ExpectDotDenseMatches(u8, i8, "avx512vnni", test::FullRangeArray, 0);
  // The int8 layout needs K in whole groups of 4, and uint8 data.
  te::Tensor odd_k = te::placeholder(test::Exprs({8, 6}), i8, "odd_k");
  EXPECT_NE(test::ErrorOf([&] { pack_dense_weight(odd_k, true, Tile(4, 16)); })
                .find("K a multiple of 4"),
            std::string::npos);
  te::Tensor packed = pack_dense_weight(te::placeholder(test::Exprs({8, 8}), i8, "w8"), true,
                                        Tile(4, 16));
  te::Tensor signed_data = te::placeholder(test::Exprs({2, 8}), i8, "signed_data");
  EXPECT_NE(test::ErrorOf([&] { dense_packed(signed_data, packed, 8); })
                .find("takes uint8 data"),
            std::string::npos);
}

// bfloat16 data x a bfloat16 weight -> float32 on vdpbf16ps (2 k per lane, AVX-512 BF16),
// against the reference over the same bfloat16 values (each product exact, only the float32
// summation differs).
TEST(TopiDenseX86, BFloat16MatchesTheReference) {
  const DataType bf16 = DataType::BFloat16();
  ExpectDotDenseMatches(bf16, bf16, "avx512bf16", test::BFloat16ValuedArray, 1e-4);
  // The bfloat16 layout needs K in whole pairs, and bfloat16 data.
  te::Tensor odd_k = te::placeholder(test::Exprs({8, 7}), bf16, "odd_k");
  EXPECT_NE(test::ErrorOf([&] { pack_dense_weight(odd_k, true, Tile(4, 16)); })
                .find("K a multiple of 2"),
            std::string::npos);
  te::Tensor packed = pack_dense_weight(te::placeholder(test::Exprs({8, 8}), bf16, "w16"), true,
                                        Tile(4, 16));
  te::Tensor float_data = te::placeholder(test::Exprs({2, 8}), DataType::Float(32), "float_data");
  EXPECT_NE(test::ErrorOf([&] { dense_packed(float_data, packed, 8); })
                .find("a bfloat16 one bfloat16 data"),
            std::string::npos);
  if (!Target::Parse("llvm").HasFeature("avx512bf16")) {
    GTEST_SKIP() << "the host has no avx512bf16 (the products are only lowered)";
  }
}

TEST(TopiDenseX86, PackedWeightIsColumnPanelsWithAZeroTail) {
  const DenseConfig config = Tile(2, 32);
  te::Tensor w = te::placeholder({5, 40}, kF32, "w");  // [K, N]
  te::Tensor packed = pack_dense_weight(w, false, config);
  tir::HostArray in_w = RandomArray(kF32, {5, 40}, 3);
  tir::HostArray got = test::RunScheduled(schedule_dense_pack(packed), {w}, {packed}, {in_w})[0];
  ASSERT_EQ(got.shape(), (std::vector<int64_t>{2, 5, 32}));
  test::ExpectClose(got, [&](int64_t i) {
    int64_t panel = i / (5 * 32), k = i / 32 % 5, column = panel * 32 + i % 32;
    return column < 40 ? in_w.GetFloat(k * 40 + column) : 0.0;
  }, 0, "packed weight");
}

TEST(TopiDenseX86, BiasAndReluEpilogueRunsOnTheTile) {
  const int64_t M = 13, N = 50, K = 24;
  for (bool packed_apart : {false, true}) {
    const DenseConfig config = DefaultDenseConfig(M, N, K);
    te::Tensor x = te::placeholder({int(M), int(K)}, kF32, "x");
    te::Tensor w = te::placeholder({int(N), int(K)}, kF32, "w");
    te::Tensor bias = te::placeholder({int(N)}, kF32, "bias");
    tir::HostArray in_x = RandomArray(kF32, {M, K}, 21), in_w = RandomArray(kF32, {N, K}, 22);
    tir::HostArray in_bias = RandomArray(kF32, {N}, 23);
    // The weight packed by a function of its own (as for a model's constants), or in the graph.
    te::Tensor packed = pack_dense_weight(w, true, config);
    te::Tensor weight_input = w;
    tir::HostArray weight_array = in_w;
    if (packed_apart) {
      weight_array = test::RunScheduled(schedule_dense_pack(packed), {w}, {packed}, {in_w})[0];
      packed = te::placeholder(packed.shape(), kF32, "packed");
      weight_input = packed;
    }
    te::Tensor y = relu(add(dense_packed(x, packed, N), bias));
    tir::HostArray got = test::RunScheduled(schedule_dense_packed(y, config),
                                            {x, weight_input, bias}, {y},
                                            {in_x, weight_array, in_bias})[0];
    std::vector<double> product = DenseReference(in_x, in_w, M, N, K, true);
    test::ExpectClose(got, [&](int64_t i) {
      return std::max(0.0, product[i] + in_bias.GetFloat(i % N));
    }, 1e-4, packed_apart ? "bias + relu, weight packed apart" : "bias + relu");
  }
}

TEST(TopiDenseX86, DefaultConfigsFitTheirShapes) {
  for (auto [M, N, K] : std::vector<std::array<int64_t, 3>>{
           {1, 1000, 512}, {1, 1000, 2048}, {7, 64, 64}, {64, 1024, 1024}, {128, 768, 768},
           {128, 3072, 768}, {128, 768, 3072}, {1000, 1000, 1000}, {2048, 2048, 2048}}) {
    DenseConfig c = DefaultDenseConfig(M, N, K);
    EXPECT_LE(c.tile_rows, M) << c.str();
    EXPECT_LE(c.tile_rows * c.tile_columns / 16, 28) << c.str();
    EXPECT_EQ(c.tile_columns % 16, 0) << c.str();
  }
  EXPECT_EQ(DefaultDenseConfig(1, 1000, 2048).str(),
            "tile_rows=1 tile_columns=64 block_columns=64 block_bytes=1048576 k_unroll=8");
  EXPECT_EQ(DefaultDenseConfig(128, 10, 64).tile_columns, 16);
  EXPECT_EQ(DefaultDenseConfig(1024, 1024, 1024).str(), DenseConfig{}.str());
  // BERT-base's FFN (a weight streamed from L3): 4 x 64 tiles, one panel per block.
  EXPECT_EQ(DefaultDenseConfig(128, 3072, 768).str(),
            "tile_rows=4 tile_columns=64 block_columns=64 block_bytes=1048576 k_unroll=8");
  EXPECT_EQ(DefaultDenseConfig(128, 768, 768).str(), DenseConfig{}.str());
}

TEST(TopiDenseX86, ConfigAndShapeErrorsAreExplained) {
  te::Tensor x = te::placeholder({4, 8}, kF32, "x");
  te::Tensor w = te::placeholder({8, 20}, kF32, "w");
  using test::ErrorOf;
  EXPECT_NE(ErrorOf([&] { pack_dense_weight(w, false, Tile(8, 64)); })
                .find("needs 32 vector registers (tile_rows * tile_columns / 16), more than "
                      "the 28"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { pack_dense_weight(w, false, Tile(4, 24)); })
                .find("tile_columns a multiple of 16"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { pack_dense_weight(w, false, Tile(4, 32, 48)); })
                .find("block_columns of tile_columns"),
            std::string::npos);
  te::Tensor packed = pack_dense_weight(w, false, Tile(4, 16));  // [2, 8, 16]
  EXPECT_NE(ErrorOf([&] { schedule_dense_packed(dense_packed(x, packed, 20), Tile(4, 32)); })
                .find("'w_packed' was packed in panels of 16 columns but config"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { dense_packed(x, packed, 33); })
                .find("N=33 does not match the packed weight 'w_packed' (2, 8, 16) (2 panels of "
                      "16 columns hold N in [17, 32])"),
            std::string::npos);
  te::Tensor x9 = te::placeholder({4, 9}, kF32, "x9");
  EXPECT_NE(ErrorOf([&] { dense_packed(x9, packed, 20); })
                .find("dense_packed: data 'x9' (4, 9) has K=9 but the packed weight 'w_packed' "
                      "(2, 8, 16) was packed from K=8 rows"),
            std::string::npos);
  te::Tensor xi = te::placeholder({4, 8}, DataType::Int(32), "xi");
  EXPECT_NE(ErrorOf([&] { dense_packed(xi, packed, 20); })
                .find("'xi' is int32; the operator takes float32"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { schedule_dense_packed(relu(x), Tile(4, 16)); })
                .find("schedule_dense_packed: 'relu' is neither the output of dense_packed nor an "
                      "elementwise epilogue of one (none of the elementwise stages it is "
                      "computed from reads the output of dense_packed)"),
            std::string::npos);
  te::Tensor summed = topi::sum(dense_packed(x, packed, 20), {1}, false);
  EXPECT_NE(ErrorOf([&] { schedule_dense_packed(summed, Tile(4, 16)); })
                .find("is neither the output of dense_packed nor an elementwise epilogue of one "
                      "(its stage 'sum' is not elementwise)"),
            std::string::npos);
  te::Tensor wide = topi::add(dense_packed(x, packed, 20), te::placeholder({3, 4, 20}, kF32, "b"));
  EXPECT_NE(ErrorOf([&] { schedule_dense_packed(wide, Tile(4, 16)); })
                .find("the epilogue 'add' (3, 4, 20) must keep the shape (4, 20) of 'dense_packed'"),
            std::string::npos);
}

TEST(TopiDenseX86, PanelsPerBlockRejectsWhatItCannotDivideBy) {
  using test::ErrorOf;
  EXPECT_EQ(PanelsPerBlock(6, 4096, Tile(4, 32, 96)), 3);
  EXPECT_NE(ErrorOf([&] { PanelsPerBlock(0, 4096, Tile(4, 32)); })
                .find("PanelsPerBlock: 0 panels of 4096 bytes with config tile_rows=4 "
                      "tile_columns=32 block_columns=0"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { PanelsPerBlock(4, 0, Tile(4, 32)); })
                .find("the panel count, the panel bytes and tile_columns must be positive"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { PanelsPerBlock(4, 4096, Tile(4, 32, 16)); })
                .find("block_columns a multiple of tile_columns"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { PanelsPerBlock(4, 4096, Tile(4, 0)); }).find("must be positive"),
            std::string::npos);
  // A register tile that only another GEMM's accumulators could hold is not its business.
  EXPECT_EQ(PanelsPerBlock(4, 4096, Tile(8, 64, 128)), 2);
}

// An epilogue whose first operand is an injective stage that does not lead to the product
// (a bias reshaped to a broadcast row): the search must go on to the other operand.
TEST(TopiDenseX86, BiasComputedByAnInjectiveStageIsAnEpilogue) {
  const int64_t M = 5, N = 20, K = 7;
  te::Tensor x = te::placeholder({int(M), int(K)}, kF32, "x");
  te::Tensor w = te::placeholder({int(K), int(N)}, kF32, "w");
  te::Tensor bias = te::placeholder({int(N)}, kF32, "bias");
  const DenseConfig config = DefaultDenseConfig(M, N, K);
  te::Tensor y = topi::add(reshape(bias, {1, N}), dense_packed(x, pack_dense_weight(w, false, config), N));
  tir::HostArray in_x = RandomArray(kF32, {M, K}, 51), in_w = RandomArray(kF32, {K, N}, 52);
  tir::HostArray in_bias = RandomArray(kF32, {N}, 53);
  tir::HostArray got = test::RunScheduled(schedule_dense_packed(y, config), {x, w, bias}, {y},
                                          {in_x, in_w, in_bias})[0];
  std::vector<double> product = DenseReference(in_x, in_w, M, N, K, false);
  test::ExpectClose(got, [&](int64_t i) { return product[i] + in_bias.GetFloat(i % N); }, 1e-4,
                    "reshaped bias + dense");
}

struct BatchCase {
  std::vector<int64_t> a, b;  // [..., M, K], [..., K, N]
  BatchMatmulConfig config;
};

TEST(TopiBatchMatmulX86, MatchesTheReferenceWithBroadcastBatches) {
  // Widths that are no multiple of 16 compile to scalar code for their last vector: kept
  // small (K, k_unroll) so that the test stays fast.
  std::vector<BatchCase> cases = {
      {{3, 9, 6}, {3, 6, 37}, BatchMatmulConfig{4, 32, 2}},
      {{1, 6, 11}, {11, 64}, DefaultBatchMatmulConfig(6, 64, 11)},  // batch broadcast
      {{2, 1, 5, 7}, {3, 7, 16}, BatchMatmulConfig{2, 32, 3}},      // [2, 1] with [3]
      {{4, 1, 13}, {1, 13, 48}, BatchMatmulConfig{1, 32, 4}},       // M = 1
      {{2, 17, 3}, {2, 3, 5}, DefaultBatchMatmulConfig(17, 5, 3)},  // N below a vector
      {{12, 16, 8}, {12, 8, 16}, DefaultBatchMatmulConfig(16, 16, 8)},
  };
  for (const BatchCase& c : cases) {
    te::Tensor a = te::placeholder(test::Exprs(c.a), kF32, "a");
    te::Tensor b = te::placeholder(test::Exprs(c.b), kF32, "b");
    te::Tensor y = matmul(a, b);
    std::vector<int64_t> shape;
    for (const PrimExpr& extent : y.shape()) {
      int64_t value = 0;
      ASSERT_TRUE(IsConstInt(extent, &value));
      shape.push_back(value);
    }
    tir::HostArray in_a = RandomArray(kF32, c.a, 31), in_b = RandomArray(kF32, c.b, 32);
    tir::HostArray got = test::RunScheduled(schedule_batch_matmul(y, c.config), {a, b}, {y},
                                            {in_a, in_b})[0];
    const int64_t M = c.a[c.a.size() - 2], K = c.a.back(), N = c.b.back();
    const size_t batch_dims = shape.size() - 2;
    // The flat offset of operand `dims`'s matrix for output batch index `batch` (numpy
    // broadcasting: right-aligned, size-1 dimensions read index 0).
    auto matrix_offset = [&](const std::vector<int64_t>& dims, const std::vector<int64_t>& batch) {
      int64_t offset = 0;
      size_t operand_batch = dims.size() - 2;
      for (size_t d = 0; d < operand_batch; ++d) {
        int64_t index = batch[batch_dims - operand_batch + d];
        offset = offset * dims[d] + (dims[d] == 1 ? 0 : index);
      }
      return offset * dims[dims.size() - 2] * dims.back();
    };
    test::ExpectClose(got, [&](int64_t flat) {
      int64_t j = flat % N, i = flat / N % M, rest = flat / (N * M);
      std::vector<int64_t> batch(batch_dims);
      for (size_t d = batch_dims; d-- > 0;) {
        batch[d] = rest % shape[d];
        rest /= shape[d];
      }
      int64_t a_base = matrix_offset(c.a, batch), b_base = matrix_offset(c.b, batch);
      double total = 0;
      for (int64_t k = 0; k < K; ++k) {
        total += in_a.GetFloat(a_base + i * K + k) * in_b.GetFloat(b_base + k * N + j);
      }
      return total;
    }, 1e-4, "batch matmul " + Label(c.a) + " x " + Label(c.b) + " " + c.config.str());
  }
}

TEST(TopiBatchMatmulX86, ScaleEpilogueRunsOnTheTile) {
  te::Tensor q = te::placeholder({2, 10, 8}, kF32, "q");
  te::Tensor k = te::placeholder({2, 8, 32}, kF32, "k");
  te::Tensor scale = te::placeholder({1}, kF32, "scale");
  te::Tensor y = multiply(matmul(q, k), scale);
  tir::HostArray in_q = RandomArray(kF32, {2, 10, 8}, 41), in_k = RandomArray(kF32, {2, 8, 32}, 42);
  tir::HostArray in_scale(kF32, {1});
  in_scale.SetFloat(0, 0.125);
  te::Schedule s = schedule_batch_matmul(y, DefaultBatchMatmulConfig(10, 32, 8));
  tir::HostArray got = test::RunScheduled(s, {q, k, scale}, {y}, {in_q, in_k, in_scale})[0];
  test::ExpectClose(got, [&](int64_t flat) {
    int64_t j = flat % 32, i = flat / 32 % 10, batch = flat / 320;
    double total = 0;
    for (int64_t x = 0; x < 8; ++x) {
      total += in_q.GetFloat((batch * 10 + i) * 8 + x) * in_k.GetFloat((batch * 8 + x) * 32 + j);
    }
    return total * 0.125;
  }, 1e-4, "scaled attention scores");
}

TEST(TopiBatchMatmulX86, Int8MatchesTheIntegerReferenceExactly) {
  // uint8 a [..., M, Ka] times int8 b [..., K, N] packed (K padded with zeros to a multiple
  // of 4; a's columns past K, whatever they hold, meet those zeros), on the full range of
  // both types. A partial row tile (M = 7 or 20 by 4- and 8-row tiles), one and two batch
  // dimensions, k groups that k_unroll does not divide (5 groups, unrolled by a divisor).
  const DataType u8 = DataType::UInt(8), i8 = DataType::Int(8);
  const bool vnni = Target::Parse("llvm").HasFeature("avx512vnni");
  struct Case {
    std::vector<int64_t> batch;
    int64_t M, K, N;
    BatchMatmulConfig config;
  };
  for (const Case& c : {Case{{2, 3}, 20, 12, 32, BatchMatmulConfig{8, 32, 4}},
                        Case{{4}, 7, 18, 16, BatchMatmulConfig{4, 16, 4}}}) {
    const int64_t Ka = (c.K + 3) / 4 * 4;
    std::vector<int64_t> a_shape = c.batch, b_shape = c.batch;
    a_shape.insert(a_shape.end(), {c.M, Ka});
    b_shape.insert(b_shape.end(), {c.K, c.N});
    SCOPED_TRACE("int8 batch matmul " + Label(a_shape) + " x " + Label(b_shape));
    // Packed by a kernel of its own, as the graph compiler runs it.
    te::Tensor a = te::placeholder(test::Exprs(a_shape), u8, "a");
    te::Tensor b = te::placeholder(test::Exprs(b_shape), i8, "b");
    te::Tensor packed = pack_batch_matmul_dot(b);
    te::Tensor packed_b = te::placeholder(packed.shape(), i8, "packed_b");
    te::Tensor y = batch_matmul_dot(a, packed_b);
    ASSERT_EQ(y.dtype(), DataType::Int(32));
    PrimFunc pack = te::lower(schedule_injective({packed}), {b, packed}, "op");
    PrimFunc func = te::lower(schedule_batch_matmul(y, c.config), {a, packed_b, y}, "op");
    if (!vnni) continue;
    tir::HostArray in_a = test::FullRangeArray(u8, a_shape, 21);
    tir::HostArray in_b = test::FullRangeArray(i8, b_shape, 22);
    tir::HostArray packed_array = test::RunBuilt(pack, "llvm", {packed}, {in_b})[0];
    tir::HostArray got = test::RunBuilt(func, "llvm", {y}, {in_a, packed_array})[0];
    int64_t batches = 1;
    for (int64_t d : c.batch) batches *= d;
    int mismatches = 0;
    for (int64_t t = 0; t < batches; ++t)
      for (int64_t i = 0; i < c.M; ++i)
        for (int64_t j = 0; j < c.N; ++j) {
          int64_t want = 0;
          for (int64_t k = 0; k < c.K; ++k)
            want += in_a.GetInt((t * c.M + i) * Ka + k) * in_b.GetInt((t * c.K + k) * c.N + j);
          const int64_t at = (t * c.M + i) * c.N + j;
          if (got.GetInt(at) != want && ++mismatches <= 5)
            ADD_FAILURE() << "element " << at << ": " << got.GetInt(at) << ", want " << want;
        }
  }
  te::Tensor b20 = te::placeholder(test::Exprs({2, 8, 20}), i8, "b20");
  EXPECT_NE(test::ErrorOf([&] { pack_batch_matmul_dot(b20); }).find("N a multiple of 16"),
            std::string::npos);
  te::Tensor packed = pack_batch_matmul_dot(te::placeholder(test::Exprs({2, 8, 16}), i8, "b"));
  te::Tensor signed_a = te::placeholder(test::Exprs({2, 4, 8}), i8, "signed_a");
  EXPECT_NE(test::ErrorOf([&] { batch_matmul_dot(signed_a, packed); })
                .find("must be uint8 (bfloat16) [..., M, K]"),
            std::string::npos);
  te::Tensor other_batch = te::placeholder(test::Exprs({3, 4, 8}), u8, "other_batch");
  EXPECT_NE(test::ErrorOf([&] { batch_matmul_dot(other_batch, packed); })
                .find("the same batch dimensions"),
            std::string::npos);
}

// bfloat16 a x b -> float32 on vdpbf16ps (b packed, 2 k per lane), against a double reference
// over the same bfloat16 values, with an odd K (the pack's zero k, a padded with zeros), a row
// count no tile divides and N of one and of several 16-column vectors. Lowered everywhere;
// run where the CPU has AVX-512 BF16.
TEST(TopiBatchMatmulX86, BFloat16MatchesTheReference) {
  const DataType bf16 = DataType::BFloat16();
  const bool avx512bf16 = Target::Parse("llvm").HasFeature("avx512bf16");
  struct Case {
    int64_t batch, M, K, N;
  };
  for (const Case& c : {Case{2, 7, 15, 16}, Case{3, 16, 64, 48}}) {
    SCOPED_TRACE("bf16 batch matmul " + std::to_string(c.batch) + "x" + std::to_string(c.M) +
                 "x" + std::to_string(c.K) + "x" + std::to_string(c.N));
    const int64_t Ka = (c.K + 1) / 2 * 2;
    te::Tensor a = te::placeholder(test::Exprs({c.batch, c.M, Ka}), bf16, "a");
    te::Tensor b = te::placeholder(test::Exprs({c.batch, c.K, c.N}), bf16, "b");
    te::Tensor packed = pack_batch_matmul_dot(b);
    te::Tensor packed_b = te::placeholder(packed.shape(), bf16, "packed_b");
    te::Tensor y = batch_matmul_dot(a, packed_b);
    ASSERT_EQ(y.dtype(), DataType::Float(32));
    PrimFunc pack = te::lower(schedule_injective({packed}), {b, packed}, "op");
    PrimFunc func = te::lower(schedule_batch_matmul(y, DefaultBatchMatmulConfig(c.M, c.N, Ka)),
                              {a, packed_b, y}, "op");
    if (!avx512bf16) continue;
    tir::HostArray in_a = test::BFloat16ValuedArray(bf16, {c.batch, c.M, Ka}, 15);
    for (int64_t t = 0; t < c.batch * c.M; ++t) {
      for (int64_t k = c.K; k < Ka; ++k) in_a.SetFloat(t * Ka + k, 0);  // a's padding
    }
    tir::HostArray in_b = test::BFloat16ValuedArray(bf16, {c.batch, c.K, c.N}, 16);
    tir::HostArray packed_in = test::RunBuilt(pack, "llvm", {packed}, {in_b})[0];
    tir::HostArray got = test::RunBuilt(func, "llvm", {y}, {in_a, packed_in})[0];
    test::ExpectClose(
        got,
        [&](int64_t at) {
          const int64_t t = at / (c.M * c.N), i = at / c.N % c.M, j = at % c.N;
          double want = 0;
          for (int64_t k = 0; k < c.K; ++k) {
            want += in_a.GetFloat((t * c.M + i) * Ka + k) * in_b.GetFloat((t * c.K + k) * c.N + j);
          }
          return want;
        },
        1e-4, "bf16 batch matmul");
  }
  if (!avx512bf16) GTEST_SKIP() << "the host has no avx512bf16 (the products are only lowered)";
}

TEST(TopiBatchMatmulX86, ErrorsAreExplained) {
  te::Tensor a = te::placeholder({2, 4, 8}, kF32, "a");
  te::Tensor b = te::placeholder({2, 8, 16}, kF32, "b");
  te::Tensor v = te::placeholder({8}, kF32, "v");
  using test::ErrorOf;
  EXPECT_NE(ErrorOf([&] { schedule_batch_matmul(matmul(a, b), BatchMatmulConfig{8, 64, 4}); })
                .find("needs 32 vector registers (tile_rows * tile_columns / 16), more than "
                      "the 28"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { schedule_batch_matmul(matmul(a, b), BatchMatmulConfig{4, 20, 4}); })
                .find("tile_columns a multiple of 16"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { schedule_batch_matmul(matmul(a, v), BatchMatmulConfig{}); })
                .find("operand 'v' (8) of matmul 'matmul' is a vector"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { schedule_batch_matmul(relu(a), BatchMatmulConfig{}); })
                .find("schedule_batch_matmul: 'relu' is neither the output of matmul or "
                      "batch_matmul_dot nor an elementwise epilogue of one (none of the "
                      "elementwise stages"),
            std::string::npos);
}

TEST(TopiBatchMatmulX86, BiasComputedByAnInjectiveStageIsAnEpilogue) {
  te::Tensor a = te::placeholder({2, 6, 5}, kF32, "a");
  te::Tensor b = te::placeholder({2, 5, 32}, kF32, "b");
  te::Tensor bias = te::placeholder({32}, kF32, "bias");
  te::Tensor y = topi::add(reshape(bias, {1, 1, 32}), matmul(a, b));
  tir::HostArray in_a = RandomArray(kF32, {2, 6, 5}, 61), in_b = RandomArray(kF32, {2, 5, 32}, 62);
  tir::HostArray in_bias = RandomArray(kF32, {32}, 63);
  tir::HostArray got = test::RunScheduled(schedule_batch_matmul(y, BatchMatmulConfig{4, 32, 2}),
                                          {a, b, bias}, {y}, {in_a, in_b, in_bias})[0];
  test::ExpectClose(got, [&](int64_t flat) {
    int64_t j = flat % 32, i = flat / 32 % 6, batch = flat / 192;
    double total = in_bias.GetFloat(j);
    for (int64_t k = 0; k < 5; ++k) {
      total += in_a.GetFloat((batch * 6 + i) * 5 + k) * in_b.GetFloat((batch * 5 + k) * 32 + j);
    }
    return total;
  }, 1e-4, "reshaped bias + batch matmul");
}

// Products with a zero extent compile to kernels that run and write nothing; a product over
// an empty K is zeros.
TEST(TopiBatchMatmulX86, EmptyProductsCompileAndRun) {
  struct EmptyCase {
    std::vector<int64_t> a, b, out;
  };
  std::vector<EmptyCase> cases = {
      {{2, 0, 8}, {2, 8, 16}, {2, 0, 16}},
      {{2, 4, 8}, {2, 8, 0}, {2, 4, 0}},
      {{0, 4, 8}, {0, 8, 16}, {0, 4, 16}},
      {{2, 4, 0}, {2, 0, 16}, {2, 4, 16}},
  };
  for (const EmptyCase& c : cases) {
    te::Tensor a = te::placeholder(test::Exprs(c.a), kF32, "a");
    te::Tensor b = te::placeholder(test::Exprs(c.b), kF32, "b");
    te::Tensor y = matmul(a, b);
    tir::HostArray got = test::RunScheduled(schedule_batch_matmul(y, BatchMatmulConfig{}), {a, b},
                                            {y}, {tir::HostArray(kF32, c.a), tir::HostArray(kF32, c.b)})[0];
    EXPECT_EQ(got.shape(), c.out) << Label(c.a) << " x " << Label(c.b);
    test::ExpectClose(got, [](int64_t) { return 0.0; }, 0, Label(c.a) + " x " + Label(c.b));
  }
}

}  // namespace
}  // namespace loom::topi::x86
