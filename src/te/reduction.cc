// Reducers: sum, max, min, prod and user-defined (tuple) commutative reducers.
#include <cmath>
#include <limits>

#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"
#include "loom/ir/printer.h"
#include "loom/te/operation.h"

namespace loom::te {

PrimExpr min_value(DataType t) {
  LOOM_CHECK_USER(t.is_scalar()) << "min_value of vector type " << t;
  if (t.is_int()) {
    if (t.bits() == 64) return IntImm(t, std::numeric_limits<int64_t>::min());
    return IntImm(t, -(int64_t{1} << (t.bits() - 1)));
  }
  if (t.is_uint() || t.is_bool()) return IntImm(t, 0);
  LOOM_CHECK_USER(t.is_float()) << "min_value of type " << t << " is not defined";
  if (t.bits() == 16) return FloatImm(t, -65504.0);
  if (t.bits() == 32) return FloatImm(t, std::numeric_limits<float>::lowest());
  return FloatImm(t, std::numeric_limits<double>::lowest());
}

PrimExpr max_value(DataType t) {
  LOOM_CHECK_USER(t.is_scalar()) << "max_value of vector type " << t;
  if (t.is_int()) {
    if (t.bits() == 64) return IntImm(t, std::numeric_limits<int64_t>::max());
    return IntImm(t, (int64_t{1} << (t.bits() - 1)) - 1);
  }
  if (t.is_bool()) return IntImm(t, 1);
  if (t.is_uint()) {
    // A uint64 constant is kept as its bit pattern.
    if (t.bits() == 64) return IntImm(t, -1);
    return IntImm(t, static_cast<int64_t>((uint64_t{1} << t.bits()) - 1));
  }
  LOOM_CHECK_USER(t.is_float()) << "max_value of type " << t << " is not defined";
  if (t.bits() == 16) return FloatImm(t, 65504.0);
  if (t.bits() == 32) return FloatImm(t, std::numeric_limits<float>::max());
  return FloatImm(t, std::numeric_limits<double>::max());
}

Array<PrimExpr> CommReducerBuilder::operator()(const Array<PrimExpr>& sources,
                                               const Array<IterVar>& axes, PrimExpr where) const {
  LOOM_CHECK_USER(!sources.empty()) << "reducer '" << name_ << "' applied to no values";
  LOOM_CHECK_USER(!axes.empty()) << "reducer '" << name_ << "' needs at least one axis";
  for (const IterVar& iv : axes) {
    LOOM_CHECK_USER(iv.defined() && iv->iter_type == IterVarType::kCommReduce)
        << "reducer '" << name_ << "': reduce over axes made by reduce_axis";
  }
  Array<Var> lhs, rhs;
  Array<DataType> dtypes;
  for (size_t i = 0; i < sources.size(); ++i) {
    LOOM_CHECK_USER(sources[i].defined()) << "reducer '" << name_ << "': value " << i
                                          << " is undefined";
    dtypes.push_back(sources[i].dtype());
    lhs.push_back(Var("x" + std::to_string(i), sources[i].dtype()));
    rhs.push_back(Var("y" + std::to_string(i), sources[i].dtype()));
  }
  Array<PrimExpr> result = combine_(lhs, rhs);
  Array<PrimExpr> identity = identity_(dtypes);
  LOOM_CHECK_USER(result.size() == sources.size() && identity.size() == sources.size())
      << "reducer '" << name_ << "' reduces " << sources.size()
      << " values: its combine and identity must give as many (they give " << result.size()
      << " and " << identity.size() << ")";
  CommReducer combiner(lhs, rhs, result, identity);
  if (!where.defined()) where = const_true();
  Array<PrimExpr> reductions;
  for (size_t i = 0; i < sources.size(); ++i) {
    reductions.push_back(Reduce(combiner, sources, axes, where, static_cast<int>(i), {}));
  }
  return reductions;
}

PrimExpr CommReducerBuilder::operator()(const PrimExpr& source, const Array<IterVar>& axes,
                                        PrimExpr where) const {
  return (*this)(Array<PrimExpr>{source}, axes, std::move(where)).at(0);
}

CommReducerBuilder comm_reducer(CommReducerBuilder::Combine combine,
                                CommReducerBuilder::Identity identity, std::string name) {
  return CommReducerBuilder(std::move(combine), std::move(identity), std::move(name));
}

namespace {

using Combine2 = PrimExpr (*)(PrimExpr, PrimExpr);

PrimExpr Reduce1(const char* name, Combine2 combine, PrimExpr (*identity)(DataType),
                 const PrimExpr& source, const Array<IterVar>& axes, PrimExpr where) {
  CommReducerBuilder builder(
      [combine](const Array<Var>& l, const Array<Var>& r) {
        return Array<PrimExpr>{combine(l[0], r[0])};
      },
      [identity](const Array<DataType>& t) { return Array<PrimExpr>{identity(t[0])}; }, name);
  return builder(source, axes, std::move(where));
}

PrimExpr Add2(PrimExpr a, PrimExpr b) { return std::move(a) + std::move(b); }
PrimExpr Mul2(PrimExpr a, PrimExpr b) { return std::move(a) * std::move(b); }
PrimExpr Max2(PrimExpr a, PrimExpr b) { return loom::max(std::move(a), std::move(b)); }
PrimExpr Min2(PrimExpr a, PrimExpr b) { return loom::min(std::move(a), std::move(b)); }
PrimExpr Zero(DataType t) { return make_zero(t); }
PrimExpr One(DataType t) { return make_const(t, int64_t{1}); }

}  // namespace

PrimExpr sum(const PrimExpr& source, const Array<IterVar>& axes, PrimExpr where) {
  return Reduce1("sum", Add2, Zero, source, axes, std::move(where));
}
PrimExpr prod(const PrimExpr& source, const Array<IterVar>& axes, PrimExpr where) {
  return Reduce1("prod", Mul2, One, source, axes, std::move(where));
}
PrimExpr max(const PrimExpr& source, const Array<IterVar>& axes, PrimExpr where) {
  return Reduce1("max", Max2, min_value, source, axes, std::move(where));
}
PrimExpr min(const PrimExpr& source, const Array<IterVar>& axes, PrimExpr where) {
  return Reduce1("min", Min2, max_value, source, axes, std::move(where));
}

}  // namespace loom::te
