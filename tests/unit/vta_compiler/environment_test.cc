// The VTA environment: the memory of the on-chip scopes for the default and another
// configuration, and the GEMM intrinsic on the matrix multiply of the VTA tutorial (its
// tensorize step): micro-op kernels with buffer indices in whole elements, and the errors of
// tiles in the wrong scope.
#include "loom/vta/compiler/environment.h"

#include <gtest/gtest.h>

#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"
#include "loom/support/error.h"
#include "loom/te/lower.h"
#include "loom/te/schedule.h"
#include "matrix_multiply.h"
#include "vta_configs.h"

namespace loom::vta {
namespace {

using te::Schedule;
using te::Tensor;

TEST(VtaEnvironment, MemoryOfTheDefaultConfiguration) {
  Environment env(VTAConfig::Default());
  const MemoryInfo& inp = env.Memory(Environment::kInpScope);
  EXPECT_EQ(inp.dtype, DataType::Int(8));
  EXPECT_EQ(inp.lanes, 16);
  EXPECT_EQ(inp.unit_bits, 128);
  EXPECT_EQ(inp.depth, 2048);
  EXPECT_EQ(inp.bits(), 32 * 1024 * 8);
  const MemoryInfo& wgt = env.Memory(Environment::kWgtScope);
  EXPECT_EQ(wgt.lanes, 256);
  EXPECT_EQ(wgt.unit_bits, 2048);
  EXPECT_EQ(wgt.depth, 1024);
  const MemoryInfo& acc = env.Memory(Environment::kAccScope);
  EXPECT_EQ(acc.dtype, DataType::Int(32));
  EXPECT_EQ(acc.lanes, 16);
  EXPECT_EQ(acc.unit_bits, 512);
  EXPECT_EQ(acc.depth, 2048);
  const MemoryInfo& uop = env.Memory(Environment::kUopScope);
  EXPECT_EQ(uop.unit_bits, 32);
  EXPECT_EQ(uop.depth, 8192);
  EXPECT_EQ(env.memories().size(), 4u);
}

TEST(VtaEnvironment, MemoryFollowsTheConfiguration) {
  Environment env(loom::testing::Batch2Block8Config());
  EXPECT_EQ(env.batch(), 2);
  EXPECT_EQ(env.block_in(), 8);
  EXPECT_EQ(env.acc_dtype(), DataType::Int(16));
  const MemoryInfo& acc = env.Memory(Environment::kAccScope);
  EXPECT_EQ(acc.lanes, 16);
  EXPECT_EQ(acc.unit_bits, 16 * 16);
  EXPECT_EQ(acc.depth, (32 * 1024 * 8) / (16 * 16));
  EXPECT_EQ(env.Memory(Environment::kWgtScope).lanes, 64);
}

TEST(VtaEnvironment, UnknownScopeListsTheScopes) {
  Environment env(VTAConfig::Default());
  try {
    env.Memory("local.shared");
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_STREQ(error.what(),
                 "VTA has no on-chip buffer of scope 'local.shared' (its scopes: local.inp_buffer "
                 "local.wgt_buffer local.acc_buffer local.uop_buffer)");
  }
}

// The accumulator tile (0, co) (loop j) is reset before the reduction and updated at every ko;
// the micro-ops take the tiles' addresses (ResolveSramAddresses makes them buffer indices).
TEST(VtaEnvironment, GemmIntrinsicOnTheTutorialsMatrixMultiply) {
  example::TutorialGemm g(4, 2);
  std::string text = ToScript(te::ScheduleToPrimFunc(g.Scheduled(), {g.A, g.B, g.C}, "main"));
  EXPECT_EQ(text.substr(text.find("    C_buf_data")),
            R"(    C_buf_data = T.allocate([1, 4, 1, 16], "int32", "local.acc_buffer")
    for j.init in range(4):
        with T.attr("vta", "coproc_scope", 2):
            with T.attr("vta", "coproc_uop_scope", "VTAPushGEMMOp"):
                T.evaluate(T.call_extern("int32", "VTAUopPush", 0, 1, T.address_of(C_buf[0, j.init, 0, 0]), 0, 0, 0, 0, 0))
    for ko in range(2):
        A_buf_data = T.allocate([1, 1, 1, 16], "int8", "local.inp_buffer")
        with T.attr(i, "pragma_dma_copy", 1):
            for l in range(16):
                A_buf[0, 0, 0, l] = A[0, ko, 0, l]
        B_buf_data = T.allocate([4, 1, 16, 16], "int8", "local.wgt_buffer")
        with T.attr(i_1, "pragma_dma_copy", 1):
            for i_1 in range(4):
                for k in range(16):
                    for l_1 in range(16):
                        B_buf[i_1, 0, k, l_1] = B[i_1, ko, k, l_1]
        for j in range(4):
            with T.attr("vta", "coproc_scope", 2):
                with T.attr("vta", "coproc_uop_scope", "VTAPushGEMMOp"):
                    T.evaluate(T.call_extern("int32", "VTAUopPush", 0, 0, T.address_of(C_buf[0, j, 0, 0]), T.address_of(A_buf[0, 0, 0, 0]), T.address_of(B_buf[j, 0, 0, 0]), 0, 0, 0))
    with T.attr(i_2, "pragma_dma_copy", 1):
        for j_1 in range(4):
            for l_2 in range(16):
                C[0, j_1, 0, l_2] = T.Cast("int8", C_buf[0, j_1, 0, l_2])
)");
}

TEST(VtaEnvironment, GemmTilesMustLieInTheOnChipBuffers) {
  example::TutorialGemm g(4, 2);
  try {
    te::ScheduleToPrimFunc(g.Scheduled({.inp_scope = "global"}), {g.A, g.B, g.C}, "main");
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_STREQ(error.what(),
                 "tensorize: the intrinsic reads its tensor 'inp' from scope 'local.inp_buffer', "
                 "but the tile is in 'A_buf', of scope 'global'; set_scope(\"local.inp_buffer\") "
                 "on the stage of 'A_buf'");
  }
}

}  // namespace
}  // namespace loom::vta
