// PlanSram: where on-chip allocations go (nested ones after their parents, siblings reusing
// space), the lowering pipeline's placement of the tutorial's GEMM buffers, and the errors of
// allocations that cannot be placed.
#include <gtest/gtest.h>

#include <random>

#include "error_of.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"
#include "loom/te/lower.h"
#include "loom/te/schedule.h"
#include "loom/tir/interpreter.h"
#include "loom/vta/compiler/passes.h"
#include "prim_func.h"
#include "keep_sram_allocations.h"
#include "matrix_multiply.h"

namespace loom::vta {
namespace {

using loom::testing::ErrorOf;
using loom::testing::MakePrimFunc;

const DataType kI32 = DataType::Int(32);

class VtaPlanSram : public ::testing::Test {
 protected:
  // An accumulator allocation of `values` int32 values around `body`, whose first value it
  // writes.
  static Stmt Acc(const std::string& name, PrimExpr values, Stmt body) {
    Var data(name, DataType::Handle());
    Buffer buffer(data, kI32, {values}, {}, make_const(kI32, int64_t{0}), name,
                  Environment::kAccScope, 64, 1);
    return Allocate(data, kI32, {values}, const_true(),
                    SeqStmt({BufferStore(buffer, make_const(kI32, int64_t{1}), {0}), body}),
                    Environment::kAccScope);
  }
  std::string Plan(Stmt body) const {
    std::string text = ToScript(PlanSram(env)(MakePrimFunc({out}, {}, body)));
    return text.substr(text.find('\n', text.find("def ")) + 1);
  }

  Environment env{VTAConfig::Default()};
  Buffer out = DeclBuffer({1}, kI32, "out");
  Stmt nothing = BufferStore(out, make_const(kI32, int64_t{0}), {0});
};

// X (2 elements of 16 values) holds Y (3 elements) inside it; Z follows X and reuses its
// space.
TEST_F(VtaPlanSram, NestedAllocationsStackAndSiblingsShare) {
  Stmt body = SeqStmt({Acc("X", 32, Acc("Y", 48, nothing)), Acc("Z", 16, nothing)});
  EXPECT_EQ(Plan(body), R"(    with T.attr(X, "vta_sram_base", 0):
        X = T.allocate([32], "int32", "local.acc_buffer")
        X_1[0] = 1
        with T.attr(Y, "vta_sram_base", 2):
            Y = T.allocate([48], "int32", "local.acc_buffer")
            Y_1[0] = 1
            out[0] = 0
    with T.attr(Z, "vta_sram_base", 0):
        Z = T.allocate([16], "int32", "local.acc_buffer")
        Z_1[0] = 1
        out[0] = 0
)");
}

TEST_F(VtaPlanSram, AllocationsThatCannotBePlacedAreErrors) {
  EXPECT_EQ(ErrorOf([&] { Plan(Acc("Part", 24, nothing)); }),
            "VTA: 'Part' (scope local.acc_buffer) holds 24 values, not a whole number of the "
            "buffer's 16-value elements; make its shape a multiple of the element's");
  EXPECT_EQ(ErrorOf([&] { Plan(Acc("Sized", Var("n", kI32) * 16, nothing)); }),
            "VTA: the size of 'Sized' (scope local.acc_buffer) is not a constant; on-chip buffers "
            "are planned at compile time, so the tiles that size it need constant extents");
  // 2048 elements fill the accumulator buffer; one more inside them does not fit.
  EXPECT_NE(Plan(Acc("Whole", 2048 * 16, nothing)).find("\"vta_sram_base\", 0"), std::string::npos);
  EXPECT_EQ(ErrorOf([&] { Plan(Acc("Whole", 2048 * 16, Acc("More", 16, nothing))); }),
            "VTA: 'More' (scope local.acc_buffer) needs 1 elements at element 2048 of the "
            "accumulator buffer, whose depth is 2048 elements (16 values each): 2049 > 2048; "
            "split the loops that size its tile more finely");
}

// The tutorial's matrix multiply staged through the buffers, without tensorize and pragmas
// so that it runs on the host: each buffer starts at element 0 of its own; a weight tile of all
// 2048 output blocks needs twice the weight buffer.
TEST(VtaLoweringPipeline, PlacesTheTutorialsBuffers) {
  example::TutorialGemm g(4, 2);
  const Environment& env = g.env;
  const example::TutorialSteps staged{.dma = false, .tensorize = false};
  testing::KeepSramAllocations keep;
  std::string text = ToScript(lower(env, g.Scheduled(staged), {g.A, g.B, g.C}, "main"));
  for (const char* placed : {"with T.attr(A_buf_data, \"vta_sram_base\", 0)",
                             "with T.attr(B_buf_data, \"vta_sram_base\", 0)",
                             "with T.attr(C_buf_data, \"vta_sram_base\", 0)"}) {
    EXPECT_NE(text.find(placed), std::string::npos) << placed << " in\n" << text;
  }
  // The placement changes nothing the function computes.
  std::mt19937 rng(7);
  tir::HostArray a(DataType::Int(8), {1, 2, 1, 16}), b(DataType::Int(8), {4, 2, 16, 16});
  tir::HostArray c(DataType::Int(8), {1, 4, 1, 16});
  for (tir::HostArray* array : {&a, &b}) {
    for (int64_t i = 0; i < array->NumElements(); ++i) array->data<int8_t>()[i] = rng() % 256;
  }
  tir::Interpreter().Run(lower(env, g.Scheduled(staged), {g.A, g.B, g.C}, "main"), {a, b, c});
  for (int co = 0; co < 4; ++co) {
    for (int ci = 0; ci < 16; ++ci) {
      int32_t sum = 0;
      for (int k = 0; k < 32; ++k) {
        sum += int32_t{a.data<int8_t>()[k]} *
               b.data<int8_t>()[((co * 2 + k / 16) * 16 + ci) * 16 + k % 16];
      }
      ASSERT_EQ(c.data<int8_t>()[co * 16 + ci], static_cast<int8_t>(sum)) << co << "," << ci;
    }
  }

  example::TutorialGemm wide(2048, 1);
  EXPECT_EQ(ErrorOf([&] {
              lower(env, wide.Scheduled(staged), {wide.A, wide.B, wide.C}, "main");
            }),
            "VTA: 'B_buf_data' (scope local.wgt_buffer) needs 2048 elements at element 0 of the "
            "weight buffer, whose depth is 1024 elements (256 values each): 2048 > 1024; split "
            "the loops that size its tile more finely");
}

}  // namespace
}  // namespace loom::vta
