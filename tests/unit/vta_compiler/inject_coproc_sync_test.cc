// InjectCoprocSync on hand-written programs: tokens where program order passes from one queue to
// another, a token carried between the iterations of a loop that starts and ends on different
// queues, the hop through compute between store and load, nothing on one queue, and the error
// for co-processor work under a condition. LiftAllocToScopeBegin, which flattens the sequences
// the pass groups.
#include <gtest/gtest.h>

#include "error_of.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"
#include "loom/vta/compiler/passes.h"
#include "prim_func.h"

namespace loom::vta {
namespace {

using loom::testing::ErrorOf;
using loom::testing::MakePrimFunc;

const DataType kI32 = DataType::Int(32);

class VtaInjectCoprocSync : public ::testing::Test {
 protected:
  // One instruction on `queue`, named by the call it makes.
  static Stmt Work(int queue, const std::string& call) {
    return AttrStmt(StringImm("vta"), Environment::kCoprocScope, make_const(kI32, int64_t{queue}),
                    Evaluate(call_extern(kI32, call, {})));
  }
  static Stmt Loop(const Var& v, int64_t extent, Stmt body) {
    return For(v, make_const(kI32, int64_t{0}), make_const(kI32, extent), ForKind::kSerial, body,
               IterVar(), {});
  }
  // The body after the pass, without the synchronize and check it ends with.
  static std::string Synced(Stmt body) {
    std::string text = ToScript(InjectCoprocSync()(MakePrimFunc({}, {}, body)));
    size_t begin = text.find('\n', text.find("def ")) + 1;
    size_t end = text.find("    T.evaluate(T.call_extern(\"int32\", \"VTASynchronize\"");
    EXPECT_NE(end, std::string::npos) << text;
    return text.substr(begin, end - begin);
  }
  Var i{"i"};
};

constexpr const char* kHandle = "T.call_extern(\"handle\", \"VTATLSCommandHandle\")";

std::string Token(const char* call, int from, int to) {
  return std::string("T.evaluate(T.call_extern(\"int32\", \"") + call + "\", " + kHandle + ", " +
         std::to_string(from) + ", " + std::to_string(to) + "))";
}

// load -> compute -> store: each queue pushes to the next, which pops before its work; the
// loads share one scope and one token.
TEST_F(VtaInjectCoprocSync, TokensWhereProgramOrderCrossesQueues) {
  Stmt body = SeqStmt({Work(1, "load_a"), Work(1, "load_b"), Work(2, "gemm"), Work(3, "store")});
  EXPECT_EQ(Synced(body), std::string(R"(    with T.attr("vta", "coproc_scope", 1):
        with T.attr("vta", "coproc_scope", 1):
            T.evaluate(T.call_extern("int32", "load_a"))
        with T.attr("vta", "coproc_scope", 1):
            T.evaluate(T.call_extern("int32", "load_b"))
        )") + Token("VTADepPush", 1, 2) +
                              R"(
    with T.attr("vta", "coproc_scope", 2):
        )" + Token("VTADepPop", 1, 2) +
                              R"(
        T.evaluate(T.call_extern("int32", "gemm"))
        )" + Token("VTADepPush", 2, 3) +
                              R"(
    with T.attr("vta", "coproc_scope", 3):
        )" + Token("VTADepPop", 2, 3) +
                              R"(
        T.evaluate(T.call_extern("int32", "store"))
)");
}

// A loop that starts on load and ends on compute: iteration i's loads wait for iteration i-1's
// GEMM (not popped by the first iteration, not pushed by the last).
TEST_F(VtaInjectCoprocSync, ALoopCarriesATokenBetweenIterations) {
  std::string text = Synced(Loop(i, 4, SeqStmt({Work(1, "load"), Work(2, "gemm")})));
  EXPECT_NE(text.find("if i != 0:\n                " + Token("VTADepPop", 2, 1) +
                      "\n            T.evaluate(T.call_extern(\"int32\", \"load\"))"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("T.evaluate(T.call_extern(\"int32\", \"gemm\"))\n            if i != 3:\n"
                      "                " +
                      Token("VTADepPush", 2, 1)),
            std::string::npos)
      << text;
}

// Store and load are no neighbours: the token hops through the compute queue.
TEST_F(VtaInjectCoprocSync, ALoadAfterAStoreWaitsThroughCompute) {
  std::string text = Synced(SeqStmt({Work(3, "store"), Work(1, "load")}));
  for (const std::string& line :
       {Token("VTADepPush", 3, 2),
        "with T.attr(\"vta\", \"coproc_scope\", 2):\n        " + Token("VTADepPop", 3, 2) +
            "\n        " + Token("VTADepPush", 2, 1),
        Token("VTADepPop", 2, 1) + "\n        T.evaluate(T.call_extern(\"int32\", \"load\"))"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << " in\n" << text;
  }
}

// Work on one queue needs no token; the program still ends with the synchronize and its check.
TEST_F(VtaInjectCoprocSync, OneQueueNeedsNoToken) {
  PrimFunc synced =
      InjectCoprocSync()(MakePrimFunc({}, {}, SeqStmt({Work(2, "gemm"), Work(2, "alu")})));
  std::string text = ToScript(synced);
  EXPECT_EQ(text.find("VTADep"), std::string::npos) << text;
  EXPECT_NE(text.find("VTASynchronize"), std::string::npos) << text;
  EXPECT_NE(text.find("T.loom_check(T.loom_handle_is_null(vta_error), \"main: the VTA runtime "
                      "failed: %s\", vta_error)"),
            std::string::npos)
      << text;
  // A function without co-processor work is left alone.
  Stmt host = Evaluate(call_extern(kI32, "host", {}));
  EXPECT_EQ(ToScript(InjectCoprocSync()(MakePrimFunc({}, {}, host))),
            ToScript(MakePrimFunc({}, {}, host)));
}

// A token between work inside virtual threads and work outside them stays outside the threads'
// scope (inside, every thread would push it).
TEST_F(VtaInjectCoprocSync, TokensToWorkOutsideVirtualThreadsStayOutsideThem) {
  Var t("t");
  Stmt threads = AttrStmt(IterVar(Range(), t, IterVarType::kVirtualThread, "cthread"),
                          tir::transform::attr::kVirtualThread, make_const(kI32, int64_t{2}),
                          SeqStmt({Work(1, "load"), Work(2, "gemm")}));
  std::string text = Synced(SeqStmt({threads, Work(3, "store")}));
  EXPECT_NE(
      text.find("\n    with T.attr(\"vta\", \"coproc_scope\", 2):\n        " +
                Token("VTADepPush", 2, 3) + "\n    with T.attr(\"vta\", \"coproc_scope\", 3):"),
      std::string::npos)
      << text;
}

// Host computation before the VTA work is fine; after it (it would run before the device does,
// at VTASynchronize), an error.
TEST_F(VtaInjectCoprocSync, HostComputationAfterVtaWorkIsAnError) {
  Stmt host = Evaluate(call_extern(kI32, "host", {}));
  EXPECT_NO_THROW(Synced(SeqStmt({host, Work(1, "load"), Work(2, "gemm")})));
  std::string message = ErrorOf([&] {
    InjectCoprocSync()(MakePrimFunc({}, {}, SeqStmt({Work(2, "gemm"), host})));
  });
  EXPECT_NE(message.find("host computation T.evaluate(T.call_extern(\"int32\", \"host\"))\n "
                         "follows VTA work; the device runs"),
            std::string::npos)
      << message;
}

// Virtual threads whose work runs on one queue: that work is one scope inside the threads'
// scope (which InjectVirtualThread replicates per thread), and the tokens to the work outside
// them are outside.
TEST_F(VtaInjectCoprocSync, VirtualThreadsOnOneQueueGetAScopeInsideTheirs) {
  Var t("t");
  Stmt threads = AttrStmt(IterVar(Range(), t, IterVarType::kVirtualThread, "cthread"),
                          tir::transform::attr::kVirtualThread, make_const(kI32, int64_t{2}),
                          SeqStmt({Work(2, "gemm"), Work(2, "alu")}));
  std::string text = Synced(SeqStmt({Work(1, "load"), threads}));
  EXPECT_NE(text.find("\"virtual_thread\", 2):\n            with T.attr(\"vta\", \"coproc_scope\", "
                      "2):\n                with T.attr(\"vta\", \"coproc_scope\", 2):\n"
                      "                    T.evaluate(T.call_extern(\"int32\", \"gemm\"))"),
            std::string::npos)
      << text;
}

TEST_F(VtaInjectCoprocSync, WorkUnderAConditionIsAnError) {
  Stmt body = SeqStmt({Work(1, "load"), IfThenElse(i > 2, Work(2, "gemm"), Stmt())});
  std::string message = ErrorOf([&] { InjectCoprocSync()(MakePrimFunc({}, {i}, body)); });
  EXPECT_NE(message.find("VTA co-processor work under a condition cannot be synchronized (the "
                         "dependency tokens must pair up on every path)"),
            std::string::npos)
      << message;
}

// The weight buffer's allocation, nested inside the input buffer's scope, moves to the top of
// the loop body: the two copies become consecutive statements of one sequence.
TEST(VtaLiftAllocToScopeBegin, NestedAllocationsMoveToTheLoopBodysBeginning) {
  Var i("i"), a("a", DataType::Handle()), b("b", DataType::Handle());
  auto work = [](const char* name) { return Evaluate(call_extern(kI32, name, {})); };
  auto alloc = [](const Var& v, Stmt body) {
    return Allocate(v, DataType::Int(8), {make_const(kI32, int64_t{16})}, const_true(), body,
                    Environment::kInpScope);
  };
  Stmt body =
      For(i, make_const(kI32, int64_t{0}), make_const(kI32, int64_t{2}), ForKind::kSerial,
          alloc(a, SeqStmt({work("load_a"), alloc(b, SeqStmt({work("load_b"), work("gemm")}))})),
          IterVar(), {});
  std::string text = ToScript(LiftAllocToScopeBegin()(MakePrimFunc({}, {}, body)));
  EXPECT_NE(text.find(R"(    for i in range(2):
        a = T.allocate([16], "int8", "local.inp_buffer")
        b = T.allocate([16], "int8", "local.inp_buffer")
        T.evaluate(T.call_extern("int32", "load_a"))
        T.evaluate(T.call_extern("int32", "load_b"))
        T.evaluate(T.call_extern("int32", "gemm")))"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace loom::vta
