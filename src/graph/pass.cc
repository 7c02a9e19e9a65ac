// Running graph passes under the shared PassContext (loom/ir/pass_context.h).
#include "loom/graph/transform.h"

#include "loom/ir/pass_context.h"

namespace loom::graph {

namespace {

bool SameFunctions(const IRModule& a, const IRModule& b) {
  if (a.functions().size() != b.functions().size()) return false;
  for (const auto& [name, func] : a.functions()) {
    if (!b.Contains(name) || !b.Lookup(name).same_as(func)) return false;
  }
  return true;
}

}  // namespace

Pass AtLevel(int opt_level, Pass pass) {
  pass.opt_level = opt_level;
  return pass;
}

IRModule RunPasses(const IRModule& module, const std::vector<Pass>& passes) {
  transform::PassContext& context = transform::PassContext::Current();
  IRModule current = module;
  for (const Pass& pass : passes) {
    transform::PassInfo info{pass.name, pass.opt_level};
    if (!context.IsEnabled(info)) continue;
    context.RunPass(
        info,
        [&] {
          IRModule result = pass.run(current);
          bool changed = !SameFunctions(current, result);
          current = std::move(result);
          return changed;
        },
        [&] { return ToText(current); });
  }
  return current;
}

}  // namespace loom::graph
