// The benchmark's float32 GEMM, compiled, against a naive double-precision reference: sizes
// that divide the tiles and sizes that do not (partial row tiles, a partial last panel,
// panel counts with no divisor near the block size), size-1 dimensions, and other tilings.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "gemm_f32.h"
#include "loom/runtime/ndarray.h"
#include "loom/support/error.h"
#include "loom/target/build.h"

namespace loom::bench {
namespace {

runtime::NDArray RandomMatrix(int64_t rows, int64_t columns, unsigned seed) {
  runtime::NDArray array = runtime::NDArray::Empty({rows, columns}, DataType::Float(32), {kDLCPU, 0});
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  float* data = static_cast<float*>(array.data());
  for (int64_t x = 0; x < rows * columns; ++x) data[x] = dist(rng);
  return array;
}

void ExpectGemmMatchesReference(int64_t M, int64_t N, int64_t K, const GemmF32Params& params) {
  std::string label = std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K) +
                      " " + params.str();
  runtime::Module module = build(MakeGemmF32(M, N, K, params), Target::Parse("llvm"));
  runtime::NDArray a = RandomMatrix(M, K, 1), b = RandomMatrix(K, N, 2);
  runtime::NDArray c = runtime::NDArray::Empty({M, N}, DataType::Float(32), {kDLCPU, 0});
  module.GetRequiredFunction("gemm_f32")(a, b, c);
  const float* pa = static_cast<const float*>(a.data());
  const float* pb = static_cast<const float*>(b.data());
  const float* pc = static_cast<const float*>(c.data());
  int mismatches = 0;
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      double want = 0, magnitude = 0;
      for (int64_t k = 0; k < K; ++k) {
        want += double(pa[i * K + k]) * pb[k * N + j];
        magnitude += std::abs(double(pa[i * K + k]) * pb[k * N + j]);
      }
      // float32 accumulation in any order: error below K * eps * sum |a*b|.
      double bound = 1e-7 * K * magnitude + 1e-30;
      if (std::abs(pc[i * N + j] - want) > bound && ++mismatches <= 5) {
        ADD_FAILURE() << label << ": C[" << i << ", " << j << "] = " << pc[i * N + j]
                      << ", reference " << want;
      }
    }
  }
  EXPECT_EQ(mismatches, 0) << label;
}

TEST(GemmF32, MatchesTheReferenceOnDividingAndRaggedSizes) {
  const GemmF32Params defaults;
  for (auto [M, N, K] : std::vector<std::array<int64_t, 3>>{
           {64, 64, 64}, {256, 256, 128}, {37, 53, 30}, {1, 1, 1}, {1, 100, 7}, {100, 1, 7},
           {9, 33, 1}, {200, 1000, 50}, {130, 704, 65}}) {
    ExpectGemmMatchesReference(M, N, K, defaults);
  }
}

TEST(GemmF32, OtherTilingsMatchTheReference) {
  // {tile_rows, tile_columns, block_columns, block_bytes, k_unroll}: block_columns = 0 with a
  // small budget puts one panel in a block; k_unroll = 3 does not divide K, 1 unrolls nothing.
  for (GemmF32Params params :
       {GemmF32Params{4, 64, 256}, GemmF32Params{6, 16, 64}, GemmF32Params{12, 32, 96},
        GemmF32Params{1, 16, 16}, GemmF32Params{8, 32, 0, 4096}, GemmF32Params{8, 32, 0, 1 << 20, 3},
        GemmF32Params{8, 32, 0, 1 << 20, 1}}) {
    ExpectGemmMatchesReference(50, 150, 40, params);
  }
}

TEST(GemmF32, RejectsBadSizesAndTiles) {
  auto message = [](auto make) {
    try {
      make();
    } catch (const Error& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([] { MakeGemmF32(0, 4, 4); }).find("sizes must be in [1, 2^24]"),
            std::string::npos);
  EXPECT_NE(message([] { MakeGemmF32(4, 4, 4, {8, 24, 48}); })
                .find("tile_columns a multiple of 16"),
            std::string::npos);
  EXPECT_NE(message([] { MakeGemmF32(4, 4, 4, {8, 32, 48}); })
                .find("block_columns of tile_columns"),
            std::string::npos);
}

}  // namespace
}  // namespace loom::bench
