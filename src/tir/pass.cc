// TIR passes: leaf passes run through the shared PassContext (loom/ir/pass_context.h);
// Sequential and the pass constructors.

#include "loom/tir/transform.h"

namespace loom::tir::transform {

namespace {

bool SameFunctions(const IRModule& before, const IRModule& after) {
  if (before.size() != after.size()) return false;
  bool identical = true;
  for (const auto& [name, func] : before.functions()) {
    if (!after.Contains(name)) return false;
    identical &= after.Lookup(name).same_as(func);
  }
  return identical || StructuralEqual(before, after);
}

}  // namespace

struct Pass::Impl {
  PassInfo info;
  ModuleFunction function;
  // Set for a Sequential: its passes run (and are instrumented) one by one.
  std::vector<Pass> children;
};

Pass::Pass(PassInfo info, ModuleFunction function)
    : impl_(std::make_shared<Impl>(Impl{std::move(info), std::move(function), {}})) {}

const PassInfo& Pass::info() const { return impl_->info; }

IRModule Pass::operator()(const IRModule& module) const {
  PassContext& context = PassContext::Current();
  if (!context.IsEnabled(impl_->info)) return module;
  if (!impl_->function) {
    IRModule current = module;
    for (const Pass& pass : impl_->children) current = pass(current);
    return current;
  }
  IRModule result = module;
  context.RunPass(
      impl_->info,
      [&] {
        result = impl_->function(module, context);
        return !SameFunctions(module, result);
      },
      [&] { return ToScript(result); });
  return result;
}

PrimFunc Pass::operator()(const PrimFunc& func) const {
  IRModule module;
  module.Add("main", func);
  return (*this)(module).Lookup("main");
}

Pass CreateModulePass(Pass::ModuleFunction function, int opt_level, std::string name) {
  return Pass(PassInfo{std::move(name), opt_level}, std::move(function));
}

PrimFunc WithBody(const PrimFunc& func, Stmt body) {
  if (body.same_as(func->body)) return func;
  return PrimFunc(func->params, func->buffer_map, std::move(body), func->ret_type, func->attrs);
}

Pass CreatePrimFuncPass(
    std::function<PrimFunc(const PrimFunc&, const IRModule&, const PassContext&)> function,
    int opt_level, std::string name) {
  auto per_function = [function = std::move(function)](const IRModule& module,
                                                       const PassContext& context) {
    IRModule result = module;
    for (const auto& [name, func] : module.functions()) {
      PrimFunc rewritten = function(func, module, context);
      if (!rewritten.same_as(func)) result.Add(name, rewritten, /*replace=*/true);
    }
    return result;
  };
  return CreateModulePass(std::move(per_function), opt_level, std::move(name));
}

Pass Sequential(std::vector<Pass> passes, std::string name) {
  Pass sequential(PassInfo{std::move(name), 0}, nullptr);
  auto impl = std::make_shared<Pass::Impl>(*sequential.impl_);
  impl->children = std::move(passes);
  sequential.impl_ = std::move(impl);
  return sequential;
}

}  // namespace loom::tir::transform
