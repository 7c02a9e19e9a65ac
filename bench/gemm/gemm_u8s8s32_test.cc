// The benchmark's uint8 x int8 -> int32 GEMM (tensorized onto AVX-512 VNNI), compiled, against
// a naive int32 reference, exactly: sizes that divide the tiles and sizes that do not (K not
// a multiple of 4, partial row tiles, a partial last panel), size-1 dimensions, other tilings.
// Skipped on hosts without avx512vnni, where the generated code cannot run.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gemm_u8s8s32.h"
#include "loom/runtime/ndarray.h"
#include "loom/support/error.h"
#include "loom/target/build.h"

namespace loom::bench {
namespace {

template <typename T>
runtime::NDArray RandomMatrix(int64_t rows, int64_t columns, DataType type, unsigned seed) {
  runtime::NDArray array = runtime::NDArray::Empty({rows, columns}, type, {kDLCPU, 0});
  std::mt19937 rng(seed);
  // The full range of the type: products of 255 and -128 and their sums are where an
  // unsigned/signed mix-up or an int16 intermediate would show.
  std::uniform_int_distribution<int> dist(std::numeric_limits<T>::min(),
                                          std::numeric_limits<T>::max());
  T* data = static_cast<T*>(array.data());
  for (int64_t x = 0; x < rows * columns; ++x) data[x] = static_cast<T>(dist(rng));
  return array;
}

bool HostHasVnni() { return Target::Parse("llvm").HasFeature("avx512vnni"); }

void ExpectGemmMatchesReference(int64_t M, int64_t N, int64_t K,
                                const GemmU8S8S32Params& params) {
  std::string label = std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K) +
                      " mr=" + std::to_string(params.mr) + " nr=" + std::to_string(params.nr) +
                      " nc=" + std::to_string(params.nc) +
                      " packed_b_block_bytes=" + std::to_string(params.packed_b_block_bytes) +
                      " k_unroll=" + std::to_string(params.k_unroll);
  runtime::Module module = build(MakeGemmU8S8S32(M, N, K, params), Target::Parse("llvm"));
  runtime::NDArray a = RandomMatrix<uint8_t>(M, K, DataType::UInt(8), 1);
  runtime::NDArray b = RandomMatrix<int8_t>(K, N, DataType::Int(8), 2);
  runtime::NDArray c = runtime::NDArray::Empty({M, N}, DataType::Int(32), {kDLCPU, 0});
  module.GetRequiredFunction("gemm_u8s8s32")(a, b, c);
  const auto* pa = static_cast<const uint8_t*>(a.data());
  const auto* pb = static_cast<const int8_t*>(b.data());
  const auto* pc = static_cast<const int32_t*>(c.data());
  std::vector<int32_t> want(static_cast<size_t>(M * N), 0);
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t k = 0; k < K; ++k) {
      int32_t a_ik = pa[i * K + k];
      for (int64_t j = 0; j < N; ++j) want[i * N + j] += a_ik * int32_t{pb[k * N + j]};
    }
  }
  int mismatches = 0;
  for (int64_t x = 0; x < M * N; ++x) {
    if (pc[x] != want[x] && ++mismatches <= 5) {
      ADD_FAILURE() << label << ": C[" << x / N << ", " << x % N << "] = " << pc[x]
                    << ", reference " << want[x];
    }
  }
  EXPECT_EQ(mismatches, 0) << label;
}

TEST(GemmU8S8S32, MatchesTheReferenceOnDividingAndRaggedSizes) {
  if (!HostHasVnni()) GTEST_SKIP() << "the host has no avx512vnni";
  const GemmU8S8S32Params defaults;
  for (auto [M, N, K] : std::vector<std::array<int64_t, 3>>{
           {64, 64, 64}, {37, 53, 30}, {1, 1, 1}, {1, 100, 7}, {100, 1, 9}, {5, 17, 1},
           {256, 320, 257}, {1000, 1000, 1000}, {1024, 1024, 1024}}) {
    ExpectGemmMatchesReference(M, N, K, defaults);
  }
}

TEST(GemmU8S8S32, MatchesTheReferenceWithOtherTilings) {
  if (!HostHasVnni()) GTEST_SKIP() << "the host has no avx512vnni";
  for (GemmU8S8S32Params params : {GemmU8S8S32Params{1, 16, 16}, GemmU8S8S32Params{6, 32, 96},
                                   GemmU8S8S32Params{8, 48, 48}, GemmU8S8S32Params{4, 64, 256}}) {
    ExpectGemmMatchesReference(70, 150, 43, params);
  }
}

// Blocks sized by packed_b_block_bytes (several blocks of one or more panels), k unrolling
// by factors that divide the k groups or not, on sizes where B's packing is vectorized (N a
// multiple of nr, K of 4) and where it is not.
TEST(GemmU8S8S32, MatchesTheReferenceWithOtherBlockingAndUnrolling) {
  if (!HostHasVnni()) GTEST_SKIP() << "the host has no avx512vnni";
  for (auto [block_bytes, k_unroll] : std::vector<std::array<int64_t, 2>>{
           {1, 1}, {4096, 3}, {8192, 5}, {int64_t{1} << 20, 8}}) {
    GemmU8S8S32Params params;
    params.packed_b_block_bytes = block_bytes;
    params.k_unroll = k_unroll;
    ExpectGemmMatchesReference(40, 128, 96, params);
    ExpectGemmMatchesReference(33, 100, 61, params);
  }
}

TEST(GemmU8S8S32, RejectsBadParameters) {
  EXPECT_THROW(MakeGemmU8S8S32(0, 4, 4), Error);
  EXPECT_THROW(MakeGemmU8S8S32(4, 4, 4, GemmU8S8S32Params{4, 24, 96}), Error);  // nr % 16
  EXPECT_THROW(MakeGemmU8S8S32(4, 4, 4, GemmU8S8S32Params{4, 32, 48}), Error);  // nc % nr
  EXPECT_THROW(MakeGemmU8S8S32(4, 4, 4, GemmU8S8S32Params{8, 32, 0, 0}), Error);  // bytes
  EXPECT_THROW(MakeGemmU8S8S32(4, 4, 4, GemmU8S8S32Params{8, 32, 0, 1024, 0}), Error);
}

}  // namespace
}  // namespace loom::bench
