// Passes over TIR and the infrastructure that composes them.
//
//   using namespace loom::tir::transform;
//   PassContext ctx;
//   ctx.opt_level = 3;
//   ctx.config["tir.UnrollLoop.auto_max_step"] = int64_t{8};
//   PassContextScope scope(ctx);
//   IRModule out = Sequential({UnrollLoop(), Simplify(), RemoveNoOp()})(module);
//
// A Pass is a named object with one job that maps an IRModule to a new one (a PrimFunc pass
// maps each function). Running a pass consults the current PassContext: a pass whose
// opt_level exceeds the context's, or whose name is in disabled_passes, is skipped; the
// context's instruments see every pass run. Two environment variables help debugging:
//   LOOM_DUMP_IR=dir     writes the module before the first pass (000_input.txt) and after
//                        every pass that changed it (NNN_after_Name.txt, NNN counting the
//                        passes run in the current context) as ToScript text;
//   LOOM_TIME_PASSES=1   prints each pass's wall time to stderr.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "loom/ir/module.h"

namespace loom::tir::transform {

using ConfigValue = std::variant<bool, int64_t, double, std::string>;

struct PassInfo {
  std::string name;
  // The pass runs only when the context's opt_level is at least this.
  int opt_level = 0;
};

// Observes pass runs (timing, IR checks, counting); added to a PassContext.
class PassInstrument {
 public:
  virtual ~PassInstrument() = default;
  virtual void RunBeforePass(const IRModule& module, const PassInfo& info);
  virtual void RunAfterPass(const IRModule& module, const PassInfo& info, bool changed);
};

class PassContext {
 public:
  int opt_level = 2;
  std::map<std::string, ConfigValue> config;
  std::vector<std::string> disabled_passes;
  std::vector<std::shared_ptr<PassInstrument>> instruments;

  // The innermost context entered on this thread by a PassContextScope, or a default
  // context when there is none.
  static PassContext& Current();

  // config[key] as a T, or default_value when absent; a user error naming the key when it
  // holds another type.
  template <typename T>
  T GetConfig(const std::string& key, T default_value) const {
    auto it = config.find(key);
    if (it == config.end()) return default_value;
    if (const T* value = std::get_if<T>(&it->second)) return *value;
    ThrowConfigTypeError(key);
  }

  bool IsEnabled(const PassInfo& info) const;

 private:
  friend class Pass;
  [[noreturn]] void ThrowConfigTypeError(const std::string& key) const;
  // Passes run so far under this context (numbers the IR dump files).
  int passes_run_ = 0;
};

// Makes `context` the current one until the scope ends; scopes nest.
class PassContextScope {
 public:
  explicit PassContextScope(PassContext context);
  ~PassContextScope();
  PassContextScope(const PassContextScope&) = delete;
  PassContextScope& operator=(const PassContextScope&) = delete;
};

class Pass;
// Runs `passes` in order (each subject to the context on its own).
Pass Sequential(std::vector<Pass> passes, std::string name = "Sequential");

class Pass {
 public:
  using ModuleFunction = std::function<IRModule(const IRModule&, const PassContext&)>;

  Pass(PassInfo info, ModuleFunction function);

  const PassInfo& info() const;
  // Runs the pass under PassContext::Current().
  IRModule operator()(const IRModule& module) const;
  // Runs the pass on a module holding only `func` (as "main") and returns the result.
  PrimFunc operator()(const PrimFunc& func) const;

 private:
  friend Pass Sequential(std::vector<Pass> passes, std::string name);
  struct Impl;
  IRModule RunLeaf(const IRModule& module, PassContext& context) const;
  std::shared_ptr<const Impl> impl_;
};

Pass CreateModulePass(Pass::ModuleFunction function, int opt_level, std::string name);
// A pass that rewrites each function of the module independently.
Pass CreatePrimFuncPass(
    std::function<PrimFunc(const PrimFunc&, const IRModule&, const PassContext&)> function,
    int opt_level, std::string name);

// ---- passes

// Simplifies every expression with an arith::Analyzer that knows the loop ranges, the
// conditions of enclosing ifs and the values of pure let bindings; removes branches and
// loops that a constant condition or a zero extent makes dead; a loop of extent 1 becomes a
// substitution of its variable (or a LetStmt when the start reads memory).
Pass Simplify();
// Removes statements that do nothing: evaluations of side-effect-free expressions, stores
// of an element to itself, loops and branches whose bodies do nothing.
Pass RemoveNoOp();
// Unrolls loops of kind unroll (their extent must be a constant), and serial loops with a
// constant extent up to the config value "tir.UnrollLoop.auto_max_step" (default 0: none).
Pass UnrollLoop();

}  // namespace loom::tir::transform
