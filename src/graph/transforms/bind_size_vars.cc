// BindSizeVars: the model with some of its inputs' size variables fixed (seq = 128), every
// type after them recomputed by the operators' type relations. The compiler specializes a
// model of symbolic dimensions this way for each declared bucket (CompileOptions::
// dynamic_buckets): the bound model takes the static strategies, layouts and folding.
#include <map>
#include <set>

#include "loom/graph/functor.h"
#include "loom/graph/transform.h"
#include "loom/support/error.h"

namespace loom::graph {
namespace {

// The input's type with the named size variables replaced by their values.
// Undefined when it holds none of them.
Type BoundType(const Type& type, const std::map<std::string, int64_t>& sizes,
               std::set<std::string>* used) {
  std::vector<PrimExpr> shape;
  bool changed = false;
  for (const PrimExpr& dim : type.shape()) {
    const auto* var = dim.as<loom::VarNode>();
    auto it = var != nullptr ? sizes.find(var->name_hint) : sizes.end();
    if (it == sizes.end()) {
      shape.push_back(dim);
      continue;
    }
    shape.push_back(IntImm(dim.dtype(), it->second));
    used->insert(it->first);
    changed = true;
  }
  return changed ? TensorType(std::move(shape), type.dtype()) : Type();
}

// Rebuilds main over the bound inputs; ExprMutator retypes every call it rebuilds.
class SizeBinder : public ExprMutator {
 public:
  void Bind(const Var& input, const Var& bound) { memo_[input.get()] = bound; }
};

}  // namespace

Pass BindSizeVars(std::map<std::string, int64_t> sizes) {
  return {"BindSizeVars", [sizes](const IRModule& module) {
            for (const auto& [name, value] : sizes) {
              LOOM_CHECK_USER(value >= 1) << "BindSizeVars: size variable '" << name
                                          << "' must be at least 1, got " << value;
            }
            const Function& main = module.main();
            std::set<std::string> used;
            SizeBinder binder;
            std::vector<Var> params;
            for (const Var& input : main->params) {
              Type type = input.type().is_tensor() ? BoundType(input.type(), sizes, &used) : Type();
              params.push_back(type.defined() ? MakeVar(input->name_hint, type) : input);
              binder.Bind(input, params.back());
            }
            for (const auto& [name, value] : sizes) {
              LOOM_CHECK_USER(used.count(name))
                  << "BindSizeVars: '" << name << "' is no symbolic dimension of the model's "
                  << "inputs";
            }
            Expr body = binder.VisitExpr(main->body);
            IRModule result = module;
            result.Add("main", MakeFunction(params, body, main->attrs), /*replace=*/true);
            return result;
          }};
}

}  // namespace loom::graph
