// Generated code against the TIR interpreter on random data: every arithmetic node kind for
// every dtype, vector code, parallel loops, math calls, allocations and control flow.
#include "loom/ir/expr_ops.h"
#include "loom/ir/math.h"
#include "loom/te/lower.h"
#include "loom/te/operation.h"
#include "loom/te/schedule.h"
#include "loom/tir/transform.h"
#include "target/codegen/llvm/llvm_module.h"
#include "target_test_util.h"

namespace loom::target_test {
namespace {

using te::compute;
using te::placeholder;
using te::Tensor;

constexpr int64_t kN = 67;  // not a multiple of any vector width

// The second operand reads B one element further on: were A and B read at the same index,
// the simplifier would treat the two loads as equal (buffer data variables are compared as
// definitions) and fold a - b to 0, leaving nothing to test.

struct Binary {
  std::string name;
  std::function<PrimExpr(PrimExpr, PrimExpr)> fn;
  bool divides;  // the second operand must be nonzero
};

// Every target's code generator against the interpreter, bit for bit, on the same TIR: the
// llvm target, and the c target (portable C, vectors as loops over lanes).
class CodegenEveryTarget : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Targets, CodegenEveryTarget, ::testing::Values("llvm", "c"));

TEST_P(CodegenEveryTarget, EveryBinaryNodeForEveryDtypeMatchesTheInterpreter) {
  std::vector<Binary> ops = {
      {"add", [](PrimExpr a, PrimExpr b) { return Add(a, b); }, false},
      {"sub", [](PrimExpr a, PrimExpr b) { return Sub(a, b); }, false},
      {"mul", [](PrimExpr a, PrimExpr b) { return Mul(a, b); }, false},
      {"div", [](PrimExpr a, PrimExpr b) { return Div(a, b); }, true},
      {"mod", [](PrimExpr a, PrimExpr b) { return Mod(a, b); }, true},
      {"floordiv", [](PrimExpr a, PrimExpr b) { return FloorDiv(a, b); }, true},
      {"floormod", [](PrimExpr a, PrimExpr b) { return FloorMod(a, b); }, true},
      {"min", [](PrimExpr a, PrimExpr b) { return Min(a, b); }, false},
      {"max", [](PrimExpr a, PrimExpr b) { return Max(a, b); }, false},
      {"select(lt)", [](PrimExpr a, PrimExpr b) { return Select(LT(a, b), a, b); }, false},
      {"select(le|eq)",
       [](PrimExpr a, PrimExpr b) { return Select(Or(LE(a, b), EQ(a, b)), b, a); }, false},
      {"select(gt&ne)",
       [](PrimExpr a, PrimExpr b) { return Select(And(GT(a, b), NE(a, b)), a, b); }, false},
      {"select(!ge)", [](PrimExpr a, PrimExpr b) { return Select(Not(GE(a, b)), a, b); }, false},
  };
  std::vector<DataType> dtypes = {DataType::Int(8),   DataType::Int(16),  DataType::Int(32),
                                  DataType::Int(64),  DataType::UInt(8),  DataType::UInt(32),
                                  DataType::Float(16), DataType::BFloat16(),
                                  DataType::Float(32), DataType::Float(64)};
  for (DataType t : dtypes) {
    for (const Binary& op : ops) {
      if (t.is_float() && (op.name == "mod")) continue;  // fmod: covered by floormod's path
      Tensor A = placeholder({int(kN)}, t, "A");
      Tensor B = placeholder({int(kN + 1)}, t, "B");
      Tensor C = compute({int(kN)}, [&](Var i) { return op.fn(A(i), B(i + 1)); }, "C");
      te::Schedule s = te::create_schedule({C.op()});
      PrimFunc f = te::lower(s, {A, B, C}, "main");
      ExpectMatchesInterpreter(f, {RandomArray(t, {kN}, 1), RandomArray(t, {kN + 1}, 2, op.divides)},
                               {tir::HostArray(t, {kN})}, op.name + " " + t.str(), GetParam());
    }
  }
}

TEST_P(CodegenEveryTarget, CastsBetweenEveryPairOfDtypes) {
  std::vector<DataType> dtypes = {DataType::Int(8),    DataType::Int(32),  DataType::Int(64),
                                  DataType::UInt(8),   DataType::UInt(16), DataType::Float(16),
                                  DataType::BFloat16(), DataType::Float(32), DataType::Float(64),
                                  DataType::Bool()};
  for (DataType from : dtypes) {
    for (DataType to : dtypes) {
      // Floats out of an unsigned or narrow type's range are undefined: keep them in range.
      Tensor A = placeholder({int(kN)}, from, "A");
      Tensor C = compute({int(kN)}, [&](Var i) {
        PrimExpr x = A(i);
        if (from.is_float() && !to.is_float() && !to.is_bool()) x = Call(from, Op::Get("fabs"), {x});
        return cast(to, x);
      }, "C");
      PrimFunc f = te::lower(te::create_schedule({C.op()}), {A, C}, "main");
      ExpectMatchesInterpreter(f, {RandomArray(from, {kN}, 3)}, {tir::HostArray(to, {kN})},
                               from.str() + " -> " + to.str(), GetParam());
    }
  }
}

TEST_P(CodegenEveryTarget, VectorizedParallelScheduleMatches) {
  for (DataType t : {DataType::Float(32), DataType::Int(16), DataType::Float(16)}) {
    Tensor A = placeholder({16, int(kN)}, t, "A");
    Tensor B = placeholder({16, int(kN + 1)}, t, "B");
    Tensor C = compute({16, int(kN)}, [&](Var i, Var j) {
      return A(i, j) * B(i, j + 1) + Select(A(i, j) < B(i, j + 1), A(i, j), B(i, j + 1));
    }, "C");
    te::Schedule s = te::create_schedule({C.op()});
    te::Stage c = s[C];
    auto [outer, inner] = c.split(c->leaf_iter_vars[1], 8);
    c.vectorize(inner);
    c.parallel(c->leaf_iter_vars[0]);
    PrimFunc f = te::lower(s, {A, B, C}, "main");
    ExpectMatchesInterpreter(f, {RandomArray(t, {16, kN}, 4), RandomArray(t, {16, kN + 1}, 5)},
                             {tir::HostArray(t, {16, kN})}, "vector+parallel " + t.str(), GetParam());
    (void)outer;
  }
}

TEST_P(CodegenEveryTarget, ReductionWithLocalAllocationAndUnrolling) {
  Tensor A = placeholder({24, 32}, DataType::Float(32), "A");
  Tensor B = placeholder({32, 20}, DataType::Float(32), "B");
  IterVar k = te::reduce_axis(Range(0, 32), "k");
  Tensor C = compute({24, 20}, [&](Var i, Var j) { return te::sum(A(i, k->var) * B(k->var, j), {k}); }, "C");
  te::Schedule s = te::create_schedule({C.op()});
  te::Stage c = s[C];
  auto [jo, ji] = c.split(c->leaf_iter_vars[1], 4);
  c.parallel(c->leaf_iter_vars[0]);
  c.unroll(ji);
  PrimFunc f = te::lower(s, {A, B, C}, "main");
  ExpectMatchesInterpreter(f, {RandomArray(DataType::Float(32), {24, 32}, 6),
                               RandomArray(DataType::Float(32), {32, 20}, 7)},
                           {tir::HostArray(DataType::Float(32), {24, 20})}, "matmul", GetParam());
  (void)jo;
}

TEST_P(CodegenEveryTarget, MathIntrinsicsMatchTheInterpreter) {
  std::vector<std::pair<std::string, std::function<PrimExpr(PrimExpr)>>> fns = {
      {"exp", [](PrimExpr x) { return exp(x); }},
      {"log", [](PrimExpr x) { return log(fabs(x) + 1.0f); }},
      {"sqrt", [](PrimExpr x) { return sqrt(fabs(x)); }},
      {"rsqrt", [](PrimExpr x) { return rsqrt(fabs(x) + 1.0f); }},
      {"tanh", [](PrimExpr x) { return tanh(x); }},
      {"sigmoid", [](PrimExpr x) { return sigmoid(x); }},
      {"erf", [](PrimExpr x) { return erf(x); }},
      {"pow", [](PrimExpr x) { return pow(fabs(x), 1.5f); }},
      {"floor/ceil/round/trunc",
       [](PrimExpr x) { return floor(x) + ceil(x) * 2.0f + round(x * 3.0f) + trunc(x); }},
      {"isnan", [](PrimExpr x) { return Select(isnan(x), x, x + 1.0f); }},
  };
  for (DataType t : {DataType::Float(32), DataType::Float(64)}) {
    for (const auto& [name, fn] : fns) {
      Tensor A = placeholder({int(kN)}, t, "A");
      Tensor C = compute({int(kN)}, [&](Var i) {
        PrimExpr x = A(i);
        return fn(t.bits() == 64 ? x : x);
      }, "C");
      PrimFunc f = te::lower(te::create_schedule({C.op()}), {A, C}, "main");
      if (t.bits() == 64 && name != "exp" && name != "tanh" && name != "erf") continue;
      ExpectMatchesInterpreter(f, {RandomArray(t, {kN}, 8)}, {tir::HostArray(t, {kN})},
                               name + " " + t.str(), GetParam());
    }
  }
}

TEST_P(CodegenEveryTarget, IntegerBitwiseAndIfThenElse) {
  DataType t = DataType::Int(32);
  Tensor A = placeholder({int(kN)}, t, "A");
  Tensor B = placeholder({int(kN + 1)}, t, "B");
  Tensor C = compute({int(kN)}, [&](Var i) {
    PrimExpr a = A(i), b = B(i + 1);
    PrimExpr bits = call_intrin(t, "bitwise_xor", {call_intrin(t, "shift_left", {a, 3}),
                                                   call_intrin(t, "bitwise_and", {b, 0x5a})});
    PrimExpr shifted = call_intrin(t, "shift_right", {a, 2});
    PrimExpr safe = call_intrin(t, "if_then_else", {b != 0, truncdiv(a, b), shifted});
    return bits + safe + call_intrin(t, "popcount", {call_intrin(t, "bitwise_not", {a})});
  }, "C");
  PrimFunc f = te::lower(te::create_schedule({C.op()}), {A, B, C}, "main");
  ExpectMatchesInterpreter(f, {RandomArray(t, {kN}, 9), RandomArray(t, {kN + 1}, 10)},
                           {tir::HostArray(t, {kN})}, "bitwise", GetParam());
}

}  // namespace
}  // namespace loom::target_test

namespace loom::target_test {
namespace {

// The LLVM IR of a vectorized elementwise kernel: contiguous vector accesses with the
// alignment the buffers guarantee, noalias buffer pointers, fast-math only when asked.
TEST(CodegenLLVM, VectorAccessesAreAlignedAndBuffersNoalias) {
  Tensor A = placeholder({64}, DataType::Float(32), "A");
  Tensor B = placeholder({64}, DataType::Float(32), "B");
  Tensor C = compute({64}, [&](Var i) { return A(i) * 2.0f + B(i); }, "C");
  te::Schedule s = te::create_schedule({C.op()});
  auto [outer, inner] = s[C].split(s[C]->leaf_iter_vars[0], 16);
  s[C].vectorize(inner);
  (void)outer;
  PrimFunc f = te::lower(s, {A, B, C}, "axpy");
  IRModule module;
  module.Add("axpy", f);
  IRModule packed = tir::transform::MakePackedAPI()(module);
  Target haswell = Target::Parse("llvm -mcpu=haswell -opt-level=0");
  std::string ir = codegen::LLVMIRText(packed, haswell);
  EXPECT_NE(ir.find("load <16 x float>, ptr"), std::string::npos) << ir;
  EXPECT_NE(ir.find("align 64"), std::string::npos) << ir;
  EXPECT_NE(ir.find("ptr noalias %A"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("fast"), std::string::npos) << ir;
  std::string fast = codegen::LLVMIRText(packed, Target::Parse("llvm -mcpu=haswell -fast-math -opt-level=0"));
  EXPECT_NE(fast.find("fmul fast <16 x float>"), std::string::npos) << fast;
}

}  // namespace
}  // namespace loom::target_test
