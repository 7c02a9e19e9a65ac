// Structural equality and hashing: variables bound by the IR correspond one to one, free
// variables are compared by identity unless map_free_vars is set, names are ignored, equal
// trees hash equal, and StructuralEqualExplain names the first place two trees differ.
#include "loom/ir/structural.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <unordered_set>

#include "loom/ir/expr_ops.h"

namespace loom {
namespace {

const DataType kInt64 = DataType::Int(64);
const DataType kFloat32 = DataType::Float(32);

// Expects equality both ways and equal hashes. (Failures name the caller's line through
// the SCOPED_TRACE of the macros below.)
void ExpectEqualImpl(const ObjectRef& a, const ObjectRef& b, bool map_free_vars = false) {
  EXPECT_TRUE(StructuralEqual(a, b, map_free_vars));
  EXPECT_TRUE(StructuralEqual(b, a, map_free_vars));
  EXPECT_EQ(StructuralHash(a, map_free_vars), StructuralHash(b, map_free_vars));
}

void ExpectNotEqualImpl(const ObjectRef& a, const ObjectRef& b, bool map_free_vars = false) {
  EXPECT_FALSE(StructuralEqual(a, b, map_free_vars));
  EXPECT_FALSE(StructuralEqual(b, a, map_free_vars));
}

#define EXPECT_STRUCTURAL_EQ(...) \
  do {                            \
    SCOPED_TRACE("");             \
    ExpectEqualImpl(__VA_ARGS__); \
  } while (0)
#define EXPECT_STRUCTURAL_NE(...)    \
  do {                               \
    SCOPED_TRACE("");                \
    ExpectNotEqualImpl(__VA_ARGS__); \
  } while (0)

std::string Explain(const ObjectRef& a, const ObjectRef& b, bool map_free_vars = false) {
  std::string where;
  EXPECT_FALSE(StructuralEqualExplain(a, b, &where, map_free_vars));
  return where;
}

// for i in range(n): A[i] = A[i] * scale, with everything created fresh on each call.
PrimFunc ScaleFunc(float scale, const std::string& name_suffix = "") {
  Var n("n" + name_suffix), i("i" + name_suffix);
  Buffer a = DeclBuffer({n}, kFloat32, "A" + name_suffix);
  Stmt body =
      For(i, 0, n, ForKind::kSerial,
          BufferStore(a, Mul(BufferLoad(a, {i}), FloatImm(kFloat32, scale)), {i}), IterVar(), {});
  return PrimFunc({a->data, n}, {{a->data, a}}, body, DataType::Void(), {});
}

TEST(Structural, SameShapeSameFreeVariables) {
  Var x("x"), y("y");
  EXPECT_STRUCTURAL_EQ(Add(Mul(x, 4), y), Add(Mul(x, 4), y));
  EXPECT_STRUCTURAL_NE(Add(x, y), Add(y, x));
  EXPECT_STRUCTURAL_NE(Add(x, 1), Add(x, 2));
  EXPECT_STRUCTURAL_NE(Add(x, 1), Sub(x, 1));
  EXPECT_STRUCTURAL_NE(IntImm(DataType::Int(32), 1), IntImm(kInt64, 1));
  EXPECT_STRUCTURAL_EQ(PrimExpr(), PrimExpr());
  EXPECT_STRUCTURAL_NE(PrimExpr(), x);
}

TEST(Structural, FreeVariablesNeedIdentityUnlessMapped) {
  Var x("x"), y("y"), z("z"), w("w");
  EXPECT_STRUCTURAL_NE(Add(x, 1), Add(y, 1));
  // A name does not make two variables one.
  EXPECT_STRUCTURAL_NE(Add(x, 1), Add(Var("x"), 1));
  EXPECT_STRUCTURAL_EQ(Add(x, 1), Add(y, 1), /*map_free_vars=*/true);
  EXPECT_STRUCTURAL_EQ(Add(x, Mul(y, x)), Add(z, Mul(w, z)), true);
  // The correspondence is one to one.
  EXPECT_STRUCTURAL_NE(Add(x, y), Add(z, z), true);
  EXPECT_STRUCTURAL_NE(Add(x, x), Add(z, w), true);
  EXPECT_STRUCTURAL_NE(Add(x, 1), Add(Var("q", kInt64), IntImm(kInt64, 1)), true);
  EXPECT_STRUCTURAL_NE(x, SizeVar("n"), true);  // a size variable is not a plain variable
}

TEST(Structural, LetMapsItsVariable) {
  Var x("x"), z("z"), y("y");
  EXPECT_STRUCTURAL_EQ(Let(x, 1, Add(x, y)), Let(z, 1, Add(z, y)));
  EXPECT_STRUCTURAL_NE(Let(x, 1, Add(x, y)), Let(z, 1, Add(y, z)));
  EXPECT_STRUCTURAL_NE(Let(x, 1, Add(x, y)), Let(z, 2, Add(z, y)));
  // Bound variables must agree in type.
  EXPECT_STRUCTURAL_NE(Let(x, 1, y), Let(Var("v", kInt64), IntImm(kInt64, 1), y));
  // Bound variables map by position, however they are named.
  Var a("a"), b("b");
  EXPECT_STRUCTURAL_EQ(Let(a, 1, Let(b, 2, Sub(a, b))), Let(b, 1, Let(a, 2, Sub(b, a))));
  EXPECT_STRUCTURAL_NE(Let(a, 1, Let(b, 2, Sub(a, b))), Let(b, 1, Let(a, 2, Sub(a, b))));
}

TEST(Structural, StatementsMapLoopAndLetAndAllocationVariables) {
  Var n("n");
  auto loop = [&](const char* name, PrimExpr extent) {
    Var i(name);
    return For(i, 0, extent, ForKind::kSerial, Evaluate(Mul(i, 2)), IterVar(), {});
  };
  EXPECT_STRUCTURAL_EQ(loop("i", n), loop("j", n));
  EXPECT_STRUCTURAL_NE(loop("i", n), loop("i", 8));
  EXPECT_EQ(Explain(loop("i", n), loop("i", 8)), "extent: Var vs IntImm");

  auto let_stmt = [](const char* name) {
    Var v(name);
    return LetStmt(v, 3, Evaluate(v));
  };
  EXPECT_STRUCTURAL_EQ(let_stmt("v"), let_stmt("w"));

  auto alloc = [](const char* name, const char* scope) {
    Var data(name, DataType::Handle());
    return Allocate(data, kFloat32, {16}, PrimExpr(),
                    Evaluate(call_extern(DataType::Int(32), "use", {data})), scope);
  };
  EXPECT_STRUCTURAL_EQ(alloc("buf", "shared"), alloc("tmp", "shared"));
  EXPECT_STRUCTURAL_NE(alloc("buf", "shared"), alloc("buf", "local"));
  EXPECT_EQ(Explain(alloc("buf", "shared"), alloc("buf", "local")), "storage_scope: values differ");
}

TEST(Structural, ReduceMapsAxesAndReducerArguments) {
  Buffer a = DeclBuffer({16}, DataType::Int(32), "A");
  auto sum = [&](const char* axis_name, const char* lhs_name) {
    Var k(axis_name), l(lhs_name), r("r");
    CommReducer reducer({l}, {r}, {Add(l, r)}, {0});
    IterVar axis(Range(0, 16), k, IterVarType::kCommReduce, "");
    return Reduce(reducer, {BufferLoad(a, {k})}, {axis}, LT(k, 8), 0, {});
  };
  EXPECT_STRUCTURAL_EQ(sum("k", "l"), sum("m", "acc"));
  Var k("k"), l("l"), r("r");
  CommReducer product({l}, {r}, {Mul(l, r)}, {1});
  IterVar axis(Range(0, 16), k, IterVarType::kCommReduce, "");
  Reduce prod(product, {BufferLoad(a, {k})}, {axis}, LT(k, 8), 0, {});
  EXPECT_STRUCTURAL_NE(sum("k", "l"), prod);
  EXPECT_EQ(Explain(sum("k", "l"), prod), "combiner.result[0]: Add vs Mul");
}

TEST(Structural, PrimFuncsMapParametersAndBuffers) {
  EXPECT_STRUCTURAL_EQ(ScaleFunc(2.0f), ScaleFunc(2.0f, "_other_names"));
  EXPECT_STRUCTURAL_NE(ScaleFunc(2.0f), ScaleFunc(3.0f));
  EXPECT_EQ(Explain(ScaleFunc(2.0f), ScaleFunc(3.0f)), "body.body.value.b.value: values differ");
  PrimFunc f = ScaleFunc(2.0f);
  PrimFunc swapped({f->params[1], f->params[0]}, f->buffer_map, f->body, f->ret_type, {});
  EXPECT_STRUCTURAL_NE(f, swapped);
}

TEST(Structural, NamesAreIgnored) {
  Buffer a = DeclBuffer({4}, kFloat32, "A"), b = DeclBuffer({4}, kFloat32, "B");
  // A buffer uses its data variable (the function parameter or Allocate defines it), so two
  // free-standing buffers are equal only when free variables may be mapped.
  EXPECT_TRUE(StructuralEqual(a, b, /*map_free_vars=*/true));
  EXPECT_FALSE(StructuralEqual(a, b));
  EXPECT_STRUCTURAL_NE(a, DeclBuffer({4}, kFloat32, "A", "shared"));
  EXPECT_STRUCTURAL_NE(a, DeclBuffer({8}, kFloat32, "A"));
}

TEST(Structural, FloatConstants) {
  EXPECT_STRUCTURAL_EQ(FloatImm(kFloat32, 0.0), FloatImm(kFloat32, -0.0));
  EXPECT_STRUCTURAL_EQ(FloatImm(kFloat32, std::nan("")), FloatImm(kFloat32, std::nan("")));
  EXPECT_STRUCTURAL_NE(FloatImm(kFloat32, 1.0), FloatImm(kFloat32, std::nextafter(1.0f, 2.0f)));
  // Constants hold what their type can: 1 + 2^-52 is 1 in float32.
  EXPECT_STRUCTURAL_EQ(FloatImm(kFloat32, 1.0), FloatImm(kFloat32, std::nextafter(1.0, 2.0)));
  EXPECT_STRUCTURAL_NE(FloatImm(kFloat32, 1.0), FloatImm(DataType::Float(64), 1.0));
}

TEST(Structural, OpaqueObjectsInAnnotationsCompareByIdentity) {
  // An object outside the IR table, as a pass might attach to a loop.
  struct Note : Object {
    Note() : Object(NodeKind::kOther) {}
  };
  ObjectRef note(new Note());
  auto loop = [&](const ObjectRef& annotation) {
    Var i("i");
    return For(i, 0, 4, ForKind::kSerial, Evaluate(i), IterVar(), {{"note", annotation}});
  };
  EXPECT_STRUCTURAL_EQ(loop(note), loop(note));
  EXPECT_STRUCTURAL_NE(loop(note), loop(ObjectRef(new Note())));
}

TEST(Structural, EqualHashesForEqualTrees) {
  Var x("x"), y("y");
  // Two constructions of one tree, for many shapes.
  auto build = [&](int variant) -> PrimExpr {
    switch (variant) {
      case 0:
        return Add(x, 1);
      case 1:
        return Add(x, 2);
      case 2:
        return Sub(x, y);
      case 3:
        return Sub(y, x);
      case 4:
        return FloorDiv(Mul(x, 4), y);
      case 5:
        return Select(LT(x, y), x, y);
      case 6:
        return Min(x, y);
      case 7:
        return Max(x, y);
      case 8:
        return Cast(kInt64, x);
      case 9:
        return Ramp(x, 1, 4);
      default:
        return Broadcast(x, 4);
    }
  };
  std::unordered_set<size_t> hashes;
  for (int variant = 0; variant <= 10; ++variant) {
    EXPECT_EQ(StructuralHash(build(variant)), StructuralHash(build(variant))) << variant;
    hashes.insert(StructuralHash(build(variant)));
  }
  EXPECT_EQ(hashes.size(), 11u) << "distinct small trees should not collide";
  EXPECT_EQ(StructuralHash(Add(x, 1), true), StructuralHash(Add(y, 1), true));
  EXPECT_NE(StructuralHash(Add(x, 1)), StructuralHash(Add(y, 1)))
      << "unmapped free variables hash by identity";
  EXPECT_NE(StructuralHash(Add(x, y), true), StructuralHash(Add(x, x), true));
}

TEST(Structural, HashContainersDeduplicateByStructure) {
  Var x("x");
  std::unordered_set<PrimExpr, StructuralHashFn, StructuralEqualFn> set;
  set.insert(Add(x, 1));
  set.insert(Add(x, 1));
  set.insert(Add(x, 2));
  EXPECT_EQ(set.size(), 2u);
  Var a("a"), b("b");
  set.insert(Let(a, 1, a));
  set.insert(Let(b, 1, b));
  EXPECT_EQ(set.size(), 3u);
  set.insert(Let(Var("a"), 1, Var("a")));
  EXPECT_EQ(set.size(), 4u) << "a body using another variable named a is another tree";
}

TEST(Structural, ExplainNamesTheFirstDifference) {
  Var x("x"), y("y");
  std::string where;
  EXPECT_TRUE(StructuralEqualExplain(Add(x, 1), Add(x, 1), &where));
  EXPECT_EQ(Explain(Sub(x, Add(y, 1)), Sub(x, Add(y, 2))), "b.b.value: values differ");
  EXPECT_EQ(Explain(Add(x, 1), Add(y, 1)), "a: free variables differ");
  EXPECT_EQ(Explain(Add(x, y), Add(y, y), true), "b: variables differ");
  EXPECT_EQ(Explain(Add(x, 1), Sub(x, 1)), "Add vs Sub");
  EXPECT_EQ(Explain(Cast(kInt64, x), Cast(DataType::Int(16), x)), "dtype differs");
  EXPECT_EQ(Explain(SeqStmt({Evaluate(x), Evaluate(y)}), SeqStmt({Evaluate(x)})),
            "seq: array sizes differ");
  EXPECT_EQ(Explain(Shuffle({Ramp(x, 1, 4)}, {0, 1}), Shuffle({Ramp(x, 1, 4)}, {0, 2})),
            "indices[1].value: values differ");
  EXPECT_EQ(Explain(Let(x, 1, 0), Let(Var("v", kInt64), IntImm(kInt64, 1), 0)),
            "var: variable types differ");
  Var p("p", DataType::Bool());
  EXPECT_EQ(Explain(IfThenElse(p, Evaluate(0), Evaluate(1)), IfThenElse(p, Evaluate(0), Stmt())),
            "else_case: one side is undefined");
  Stmt lhs = SeqStmt({Evaluate(x), Evaluate(Add(x, 1))});
  Stmt rhs = SeqStmt({Evaluate(x), Evaluate(Add(x, 2))});
  EXPECT_EQ(Explain(lhs, rhs), "seq[1].value.b.value: values differ");
}

}  // namespace
}  // namespace loom
