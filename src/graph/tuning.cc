#include "loom/graph/tuning.h"

#include <map>
#include <mutex>
#include <sstream>

#include "loom/support/error.h"

namespace loom::graph {

namespace {

std::map<std::string, TuningTemplate>& Templates() {
  static std::map<std::string, TuningTemplate> templates;
  return templates;
}

std::mutex& TemplatesMutex() {
  static std::mutex mutex;
  return mutex;
}

thread_local std::shared_ptr<ConfigDispatcher> current_dispatcher;

}  // namespace

std::string TuningWorkload::str() const {
  std::ostringstream text;
  text << template_name << "(";
  for (size_t i = 0; i < args.size(); ++i) text << (i ? ", " : "") << args[i];
  text << ")";
  return text.str();
}

void RegisterTuningTemplate(TuningTemplate tuning_template) {
  std::lock_guard<std::mutex> lock(TemplatesMutex());
  const std::string name = tuning_template.name;
  LOOM_ICHECK(Templates().emplace(name, std::move(tuning_template)).second)
      << "tuning template '" << name << "' registered twice";
}

const TuningTemplate& FindTuningTemplate(const std::string& name) {
  std::lock_guard<std::mutex> lock(TemplatesMutex());
  auto it = Templates().find(name);
  if (it != Templates().end()) return it->second;
  std::string known;
  for (const auto& entry : Templates()) known += (known.empty() ? "" : ", ") + entry.first;
  LOOM_THROW << "no tuning template '" << name << "' (this Loom has: " << known
             << "); the records were written by another version";
}

std::optional<topi::Config> QueryTunedConfig(const Target& target, const TuningWorkload& workload) {
  if (!current_dispatcher) return std::nullopt;
  return current_dispatcher->Query(target, workload);
}

ConfigDispatchScope::ConfigDispatchScope(std::shared_ptr<ConfigDispatcher> dispatcher)
    : previous_(std::move(current_dispatcher)) {
  current_dispatcher = std::move(dispatcher);
}

ConfigDispatchScope::~ConfigDispatchScope() { current_dispatcher = std::move(previous_); }

}  // namespace loom::graph
