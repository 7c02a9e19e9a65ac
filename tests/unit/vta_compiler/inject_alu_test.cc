// AluInPlace and InjectAlu: the tutorial's shift-and-clip stages on the accumulator become
// in-place ALU kernels (one instruction each, its loop folded), and the errors of stages the
// ALU cannot compute.
#include <gtest/gtest.h>

#include <functional>

#include "error_of.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"
#include "loom/te/schedule.h"
#include "loom/vta/compiler/passes.h"

namespace loom::vta {
namespace {

using loom::testing::ErrorOf;

const DataType kI8 = DataType::Int(8);
const DataType kI32 = DataType::Int(32);

// acc = A (loaded), then res = min(max(acc >> 8, 0), 127) on the accumulator, stored as int8:
// the tutorial's epilogue over 4 elements of 16 values.
struct ShiftAndClip {
  Environment env{VTAConfig::Default()};
  te::Tensor A, acc, shr, low, high, res;
  explicit ShiftAndClip(const std::function<PrimExpr(PrimExpr)>& last = [](PrimExpr x) {
    return min(x, 127);
  }) {
    A = te::placeholder({1, 4, 1, 16}, kI32, "A");
    acc = te::compute(
        {1, 4, 1, 16}, [&](const Array<Var>& i) { return A(i); }, "acc");
    shr = te::compute(
        {1, 4, 1, 16},
        [&](const Array<Var>& i) {
          return call_intrin(kI32, "shift_right", {acc(i), IntImm(kI32, 8)});
        },
        "shr");
    low = te::compute(
        {1, 4, 1, 16}, [&](const Array<Var>& i) { return max(shr(i), 0); }, "low");
    high = te::compute(
        {1, 4, 1, 16}, [&](const Array<Var>& i) { return last(low(i)); }, "high");
    res = te::compute(
        {1, 4, 1, 16}, [&](const Array<Var>& i) { return cast(kI8, high(i)); }, "res");
  }
  std::string Lowered() const {
    te::Schedule s = te::create_schedule({res.op()});
    for (const te::Tensor& t : {acc, shr, low, high}) s[t].set_scope(Environment::kAccScope);
    s[acc].pragma(s[acc]->leaf_iter_vars[0], Environment::kDmaCopy);
    for (const te::Tensor& t : {shr, low, high})
      s[t].pragma(s[t]->leaf_iter_vars[0], Environment::kAlu);
    s[res].pragma(s[res]->leaf_iter_vars[0], Environment::kDmaCopy);
    std::string text = ToScript(lower(env, s, {A, res}, "main"));
    return text.substr(text.find('\n', text.find("def ")) + 1);
  }
};

// One accumulator buffer: AluInPlace has made every stage update acc; each stage is one ALU
// instruction (SHR 3, MAX 1, MIN 0 with immediates) whose loop over the 4 elements is folded.
// The load into the accumulator and the ALU kernels share the compute queue, one co-processor
// scope; one token orders the STORE after them.
TEST(VtaInjectAlu, ShiftAndClipBecomeInPlaceAluKernels) {
  EXPECT_EQ(ShiftAndClip().Lowered(), R"(    with T.attr("vta", "coproc_scope", 2):
        with T.attr("vta", "coproc_scope", 2):
            T.evaluate(T.call_extern("int32", "VTALoadBuffer2D", T.call_extern("handle", "VTATLSCommandHandle"), A.data, 0, 4, 1, 4, 0, 0, 0, 0, 0, 3))
        with T.attr("vta", "coproc_scope", 2):
            with T.attr("vta", "coproc_uop_scope", "VTAPushALUOp"):
                T.evaluate(T.call_extern("int32", "VTAUopLoopBegin", 4, 1, 0, 0))
                T.evaluate(T.call_extern("int32", "VTAUopPush", 1, 0, 0, 0, 0, 3, 1, 8))
                T.evaluate(T.call_extern("int32", "VTAUopLoopEnd"))
        with T.attr("vta", "coproc_scope", 2):
            with T.attr("vta", "coproc_uop_scope", "VTAPushALUOp"):
                T.evaluate(T.call_extern("int32", "VTAUopLoopBegin", 4, 1, 0, 0))
                T.evaluate(T.call_extern("int32", "VTAUopPush", 1, 0, 0, 0, 0, 1, 1, 0))
                T.evaluate(T.call_extern("int32", "VTAUopLoopEnd"))
        with T.attr("vta", "coproc_scope", 2):
            with T.attr("vta", "coproc_uop_scope", "VTAPushALUOp"):
                T.evaluate(T.call_extern("int32", "VTAUopLoopBegin", 4, 1, 0, 0))
                T.evaluate(T.call_extern("int32", "VTAUopPush", 1, 0, 0, 0, 0, 0, 1, 127))
                T.evaluate(T.call_extern("int32", "VTAUopLoopEnd"))
        T.evaluate(T.call_extern("int32", "VTADepPush", T.call_extern("handle", "VTATLSCommandHandle"), 2, 3))
    with T.attr("vta", "coproc_scope", 3):
        T.evaluate(T.call_extern("int32", "VTADepPop", T.call_extern("handle", "VTATLSCommandHandle"), 2, 3))
        with T.attr("vta", "coproc_scope", 3):
            T.evaluate(T.call_extern("int32", "VTAStoreBuffer2D", T.call_extern("handle", "VTATLSCommandHandle"), 0, 4, res.data, 0, 4, 1, 4))
    T.evaluate(T.call_extern("int32", "VTASynchronize", T.call_extern("handle", "VTATLSCommandHandle"), 1073741824))
    vta_error: T.handle = T.call_extern("handle", "VTATakeLastError")
    T.evaluate(T.loom_check(T.loom_handle_is_null(vta_error), "main: the VTA runtime failed: %s", vta_error))
)");
}

TEST(VtaInjectAlu, StagesTheAluCannotComputeAreErrors) {
  auto error = [](const std::function<PrimExpr(PrimExpr)>& last) {
    std::string message = ErrorOf([&] { ShiftAndClip(last).Lowered(); });
    return message.substr(0, message.find("; in\n"));
  };
  EXPECT_EQ(error([](PrimExpr x) { return floormod(x, 3); }),
            "VTA alu: the ALU computes add, subtract (of an immediate), multiply, min, max and "
            "shifts; not acc[j * 16 + l] % 3");
  EXPECT_EQ(error([](PrimExpr x) { return min(x, 100000); }),
            "VTA alu: the immediate 100000 does not fit the ALU's 16 bits");
  EXPECT_EQ(error([](PrimExpr x) { return min(x, x * 2); }),
            "VTA alu: the second operand must be a constant or, for add, multiply, min and max, "
            "an accumulator element; not acc[j * 16 + l] * 2");
}

}  // namespace
}  // namespace loom::vta
