// The pass infrastructure: contexts, running passes with instruments, dumps and timing.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "loom/tir/transform.h"

namespace loom::tir::transform {

namespace {

// A deque: entering a scope inside a running pass must not move the contexts that running
// passes hold references to.
thread_local std::deque<PassContext> context_stack;

PassContext& DefaultContext() {
  thread_local PassContext context;
  return context;
}

const char* ConfigTypeName(const ConfigValue& value) {
  switch (value.index()) {
    case 0: return "bool";
    case 1: return "int64_t";
    case 2: return "double";
    default: return "string";
  }
}

bool SameFunctions(const IRModule& before, const IRModule& after) {
  if (before.size() != after.size()) return false;
  bool identical = true;
  for (const auto& [name, func] : before.functions()) {
    if (!after.Contains(name)) return false;
    identical &= after.Lookup(name).same_as(func);
  }
  return identical || StructuralEqual(before, after);
}

void WriteDump(const std::string& dir, const std::string& file, const IRModule& module) {
  std::filesystem::path path = std::filesystem::path(dir) / file;
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  std::ofstream out(path);
  LOOM_CHECK_USER(out.good()) << "LOOM_DUMP_IR: cannot write " << path.string()
                              << "; set LOOM_DUMP_IR to a writable directory";
  out << ToScript(module);
}

std::string DumpFileName(int number, const std::string& pass_name) {
  std::ostringstream name;
  name << std::setw(3) << std::setfill('0') << number << "_after_" << pass_name << ".txt";
  return name.str();
}

}  // namespace

void PassInstrument::RunBeforePass(const IRModule&, const PassInfo&) {}
void PassInstrument::RunAfterPass(const IRModule&, const PassInfo&, bool) {}

PassContext& PassContext::Current() {
  return context_stack.empty() ? DefaultContext() : context_stack.back();
}

bool PassContext::IsEnabled(const PassInfo& info) const {
  if (info.opt_level > opt_level) return false;
  for (const std::string& disabled : disabled_passes) {
    if (disabled == info.name) return false;
  }
  return true;
}

void PassContext::ThrowConfigTypeError(const std::string& key) const {
  LOOM_THROW << "pass config '" << key << "' holds a " << ConfigTypeName(config.at(key))
             << ", which is not the type the pass reads; set it with the documented type";
}

PassContextScope::PassContextScope(PassContext context) {
  context_stack.push_back(std::move(context));
}

PassContextScope::~PassContextScope() { context_stack.pop_back(); }

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
  return RunLeaf(module, context);
}

PrimFunc Pass::operator()(const PrimFunc& func) const {
  IRModule module;
  module.Add("main", func);
  return (*this)(module).Lookup("main");
}

IRModule Pass::RunLeaf(const IRModule& module, PassContext& context) const {
  const PassInfo& info = impl_->info;
  const char* dump_dir = std::getenv("LOOM_DUMP_IR");
  bool dumping = dump_dir && *dump_dir;
  if (dumping && context.passes_run_ == 0) WriteDump(dump_dir, "000_input.txt", module);
  int number = ++context.passes_run_;

  for (const auto& instrument : context.instruments) instrument->RunBeforePass(module, info);
  auto start = std::chrono::steady_clock::now();
  IRModule result = impl_->function(module, context);
  std::chrono::duration<double, std::milli> elapsed = std::chrono::steady_clock::now() - start;
  bool changed = !SameFunctions(module, result);
  for (const auto& instrument : context.instruments) {
    instrument->RunAfterPass(result, info, changed);
  }

  const char* time_passes = std::getenv("LOOM_TIME_PASSES");
  if (time_passes && std::string(time_passes) == "1") {
    std::fprintf(stderr, "[loom] pass %-28s %10.3f ms%s\n", info.name.c_str(), elapsed.count(),
                 changed ? "" : " (unchanged)");
  }
  if (dumping && changed) WriteDump(dump_dir, DumpFileName(number, info.name), result);
  return result;
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
