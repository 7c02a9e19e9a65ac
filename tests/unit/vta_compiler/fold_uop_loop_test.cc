// LiftUopScope and FoldUopLoop: loops around a micro-op kernel move into it and become its
// hardware loops (two at most, the outermost), the loops inside them stay in the generating
// function, and the loops that cannot be hardware loops stay around the kernel.
#include <gtest/gtest.h>

#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"
#include "loom/vta/compiler/passes.h"
#include "prim_func.h"

namespace loom::vta {
namespace {

using loom::testing::MakePrimFunc;

const DataType kI32 = DataType::Int(32);

class VtaFoldUopLoop : public ::testing::Test {
 protected:
  static PrimExpr I(int64_t v) { return make_const(kI32, v); }
  static Stmt Push(PrimExpr dst, PrimExpr src, PrimExpr wgt) {
    return Evaluate(call_extern(kI32, "VTAUopPush", {I(0), I(0), dst, src, wgt, I(0), I(0), I(0)}));
  }
  static Stmt Kernel(Stmt pushes) {
    return AttrStmt(StringImm("vta"), Environment::kCoprocScope, I(2),
                    AttrStmt(StringImm("vta"), Environment::kCoprocUopScope,
                             StringImm("VTAPushGEMMOp"), pushes));
  }
  static Stmt Loop(const Var& v, int64_t extent, Stmt body) {
    return For(v, I(0), I(extent), ForKind::kSerial, body, IterVar(), {});
  }
  static std::string Body(const PrimFunc& func) {
    std::string text = ToScript(func);
    return text.substr(text.find('\n', text.find("def ")) + 1);
  }
  // LiftUopScope moves the loops into the kernel, FoldUopLoop makes hardware loops of them.
  static std::string Fold(Stmt body) {
    const Environment env(VTAConfig::Default());
    return Body(
        tir::transform::Sequential({LiftUopScope(env), FoldUopLoop()})(MakePrimFunc({}, {}, body)));
  }
  static std::string Unfolded(Stmt body) { return Body(MakePrimFunc({}, {}, body)); }
  Var i{"i"}, j{"j"}, k{"k"};
};

// i and j move into the kernel and fold (i outer); k moves the micro-ops by different factors
// and stays a loop of kernel pushes.
TEST_F(VtaFoldUopLoop, LoopsThatCanBeHardwareLoopsMoveInAndFold) {
  Stmt body = Loop(k, 2,
                   Loop(i, 3,
                        Loop(j, 4,
                             Kernel(SeqStmt({Push(i * 4 + j + k * 12, i, j),
                                             Push(i * 4 + j + 100, i + 50, j)})))));
  EXPECT_EQ(Fold(body), R"(    for k in range(2):
        with T.attr("vta", "coproc_scope", 2):
            with T.attr("vta", "coproc_uop_scope", "VTAPushGEMMOp"):
                T.evaluate(T.call_extern("int32", "VTAUopLoopBegin", 3, 4, 1, 0))
                T.evaluate(T.call_extern("int32", "VTAUopLoopBegin", 4, 1, 0, 1))
                T.evaluate(T.call_extern("int32", "VTAUopPush", 0, 0, k * 12, 0, 0, 0, 0, 0))
                T.evaluate(T.call_extern("int32", "VTAUopPush", 0, 0, 100, 50, 0, 0, 0, 0))
                T.evaluate(T.call_extern("int32", "VTAUopLoopEnd"))
                T.evaluate(T.call_extern("int32", "VTAUopLoopEnd"))
)");
}

TEST_F(VtaFoldUopLoop, LoopsThatAreNoHardwareLoopStay) {
  // The micro-ops move by different factors.
  Stmt differing = Loop(j, 4, Kernel(SeqStmt({Push(j, I(0), j), Push(j * 2, I(0), j)})));
  EXPECT_EQ(Fold(differing), Unfolded(differing));
  // Not linear, or in an argument that is no index.
  Stmt squared = Loop(j, 4, Kernel(Push(j * j, I(0), I(0))));
  EXPECT_EQ(Fold(squared), Unfolded(squared));
  Stmt in_opcode = Loop(j, 4,
                        Kernel(Evaluate(call_extern(kI32, "VTAUopPush",
                                                    {I(0), I(0), j, I(0), I(0), j, I(0), I(0)}))));
  EXPECT_EQ(Fold(in_opcode), Unfolded(in_opcode));
  // The variable in a branch's condition or a let's value: the hardware would repeat the same
  // micro-ops instead.
  Stmt branch = Loop(j, 4, Kernel(IfThenElse(j < 2, Push(j, I(0), I(0)), Stmt())));
  EXPECT_EQ(Fold(branch), Unfolded(branch));
  Var x("x");
  Stmt let = Loop(j, 4, Kernel(LetStmt(x, j * 4, Push(x, I(0), I(0)))));
  EXPECT_EQ(Fold(let), Unfolded(let));
  // More than the kernel in the loop's body.
  Stmt busy = Loop(j, 4, SeqStmt({Kernel(Push(j, I(0), I(0))), Kernel(Push(j, I(0), I(0)))}));
  EXPECT_EQ(Fold(busy), Unfolded(busy));
}

// Three loops move in: the outer two fold, the inner one stays in the generating function,
// which pushes its micro-ops one per iteration (as the convolution's window does).
TEST_F(VtaFoldUopLoop, LoopsInsideTheHardwareLoopsPushOneMicroOpPerIteration) {
  Stmt body = Loop(k, 2, Loop(i, 3, Loop(j, 4, Kernel(Push(k * 12 + i * 4 + j, i + j, k)))));
  EXPECT_EQ(Fold(body), R"(    with T.attr("vta", "coproc_scope", 2):
        with T.attr("vta", "coproc_uop_scope", "VTAPushGEMMOp"):
            T.evaluate(T.call_extern("int32", "VTAUopLoopBegin", 2, 12, 0, 1))
            T.evaluate(T.call_extern("int32", "VTAUopLoopBegin", 3, 4, 1, 0))
            for j in range(4):
                T.evaluate(T.call_extern("int32", "VTAUopPush", 0, 0, j, j, 0, 0, 0, 0))
            T.evaluate(T.call_extern("int32", "VTAUopLoopEnd"))
            T.evaluate(T.call_extern("int32", "VTAUopLoopEnd"))
)");
}

// A kernel whose micro-ops would fill more than an eighth of the micro-op buffer (1024 of the
// default 8192) keeps the loop that would make it too big outside.
TEST_F(VtaFoldUopLoop, KernelsStayWithinTheirShareOfTheMicroOpBuffer) {
  Var l("l");
  Stmt body = Loop(l, 8, Loop(k, 2, Loop(i, 64, Loop(j, 64, Kernel(Push(j, i, k * 64 + l))))));
  const std::string folded = Fold(body);
  EXPECT_EQ(
      folded.find("    for l in range(8):\n        with T.attr(\"vta\", \"coproc_scope\", 2)"), 0u)
      << folded;
  EXPECT_NE(folded.find("VTAUopLoopBegin\", 2, 0, 0, 64))"), std::string::npos) << folded;
}

}  // namespace
}  // namespace loom::vta
