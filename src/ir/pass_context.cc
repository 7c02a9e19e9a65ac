// The pass context shared by every layer's passes: scopes, gating, instruments, dumps and
// timing (loom/ir/pass_context.h).
#include "loom/ir/pass_context.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "loom/support/error.h"

namespace loom::transform {

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

void WriteDump(const std::string& dir, const std::string& file, const std::string& text) {
  std::filesystem::path path = std::filesystem::path(dir) / file;
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  std::ofstream out(path);
  LOOM_CHECK_USER(out.good()) << "LOOM_DUMP_IR: cannot write " << path.string()
                              << "; set LOOM_DUMP_IR to a writable directory";
  out << text;
}

std::string DumpFileName(int number, const std::string& pass_name) {
  std::ostringstream name;
  name << std::setw(3) << std::setfill('0') << number << "_after_" << pass_name << ".txt";
  return name.str();
}

}  // namespace

void PassInstrument::RunBeforePass(const PassInfo&) {}
void PassInstrument::RunAfterPass(const PassInfo&, bool) {}

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

void PassContext::RunPass(const PassInfo& info, const std::function<bool()>& apply,
                          const std::function<std::string()>& text) {
  const char* dump_dir = std::getenv("LOOM_DUMP_IR");
  bool dumping = dump_dir && *dump_dir;
  if (dumping && passes_run_ == 0) WriteDump(dump_dir, "000_input.txt", text());
  int number = ++passes_run_;

  for (const auto& instrument : instruments) instrument->RunBeforePass(info);
  auto start = std::chrono::steady_clock::now();
  bool changed = apply();
  std::chrono::duration<double, std::milli> elapsed = std::chrono::steady_clock::now() - start;
  for (const auto& instrument : instruments) instrument->RunAfterPass(info, changed);

  const char* time_passes = std::getenv("LOOM_TIME_PASSES");
  if (time_passes && std::string(time_passes) == "1") {
    std::fprintf(stderr, "[loom] pass %-28s %10.3f ms%s\n", info.name.c_str(), elapsed.count(),
                 changed ? "" : " (unchanged)");
  }
  if (dumping && changed) WriteDump(dump_dir, DumpFileName(number, info.name), text());
}

PassContextScope::PassContextScope(PassContext context) {
  context_stack.push_back(std::move(context));
}

PassContextScope::~PassContextScope() { context_stack.pop_back(); }

}  // namespace loom::transform
