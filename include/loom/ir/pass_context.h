// The context every pass runs in, at every layer: graph passes (graph/transform.h) and TIR
// passes (tir/transform.h) consult the same current PassContext, so one context decides for
// a whole compile what runs and who watches.
//
//   PassContext context;
//   context.opt_level = 1;                       // passes above level 1 are skipped
//   context.disabled_passes = {"FoldConstant"};  // by name, at any layer
//   context.instruments.push_back(recorder);     // sees every pass that runs
//   PassContextScope scope(context);             // current on this thread until the scope ends
//
// A pass runs through PassContext::RunPass, which also honours two environment variables:
//   LOOM_DUMP_IR=dir     the module before the first pass (000_input.txt) and after every
//                        pass that changed it (NNN_after_Name.txt, NNN counting the passes run
//                        in the context, graph and TIR alike), each as its layer prints it;
//   LOOM_TIME_PASSES=1   each pass's wall time on stderr.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace loom::transform {

using ConfigValue = std::variant<bool, int64_t, double, std::string>;

struct PassInfo {
  std::string name;
  // The pass runs only when the context's opt_level is at least this.
  int opt_level = 0;
};

// Observes pass runs (timing, counting, checks); added to a PassContext.
class PassInstrument {
 public:
  virtual ~PassInstrument() = default;
  virtual void RunBeforePass(const PassInfo& info);
  virtual void RunAfterPass(const PassInfo& info, bool changed);
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

  // Runs one pass under this context: `apply` runs it and says whether it changed the
  // module; `text` prints the module as it is when called (for the dumps: the input before
  // the first pass, the result after each). The caller checks IsEnabled first.
  void RunPass(const PassInfo& info, const std::function<bool()>& apply,
               const std::function<std::string()>& text);

 private:
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

}  // namespace loom::transform
