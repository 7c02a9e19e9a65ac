// The tables of operator strategies (loom/graph/strategy.h).
#include "loom/graph/strategy.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <utility>

#include "loom/support/error.h"
#include "loom/topi/transform.h"

namespace loom::graph {

namespace {

struct Tables {
  std::mutex mutex;
  // (op, target key) -> entries, in registration order.
  std::map<std::pair<std::string, std::string>, std::vector<OpImplementation>> implementations;
  std::map<std::string, std::vector<OpImplementation>> fallbacks;  // target key -> entries
  struct Rewrite {
    LayoutRewriteFn fn;
    RewriteShapes shapes;
  };
  std::map<std::pair<std::string, std::string>, std::vector<Rewrite>> rewrites;
  // (target key, the operands' type) -> predicate
  std::map<std::pair<std::string, std::string>, TargetPredicate> half_precision_products;
  std::map<std::string, IntegerKernelPredicate> integer_kernels;  // target key -> predicate
  std::vector<std::pair<std::string, TargetGraphPassFn>> graph_passes;  // (target key, maker)
};

Tables& GlobalTables() {
  static Tables* tables = new Tables();  // never destroyed: entries outlive every user
  return *tables;
}

}  // namespace

void RegisterImplementation(const std::string& op, const std::string& target_key,
                            OpImplementation implementation) {
  LOOM_ICHECK(implementation.applies && implementation.schedule)
      << "implementation '" << implementation.name << "' of " << op << " needs applies and schedule";
  Tables& tables = GlobalTables();
  std::lock_guard<std::mutex> lock(tables.mutex);
  tables.implementations[{op, target_key}].push_back(std::move(implementation));
}

void RegisterFallbackImplementation(const std::string& target_key,
                                    OpImplementation implementation) {
  LOOM_ICHECK(implementation.applies && implementation.schedule)
      << "fallback implementation '" << implementation.name << "' needs applies and schedule";
  Tables& tables = GlobalTables();
  std::lock_guard<std::mutex> lock(tables.mutex);
  tables.fallbacks[target_key].push_back(std::move(implementation));
}

void RegisterTargetGraphPass(const std::string& target_key, TargetGraphPassFn make) {
  Tables& tables = GlobalTables();
  std::lock_guard<std::mutex> lock(tables.mutex);
  tables.graph_passes.emplace_back(target_key, std::move(make));
}

std::vector<Pass> TargetGraphPasses(const Target& target) {
  std::vector<TargetGraphPassFn> makers;
  {
    Tables& tables = GlobalTables();
    std::lock_guard<std::mutex> lock(tables.mutex);
    for (const auto& [key, make] : tables.graph_passes) {
      const std::vector<std::string>& keys = target.keys();
      if (std::find(keys.begin(), keys.end(), key) != keys.end()) makers.push_back(make);
    }
  }
  std::vector<Pass> passes;
  for (const TargetGraphPassFn& make : makers) passes.push_back(make(target));
  return passes;
}

namespace {
thread_local std::vector<LayerPlacement> recorded_placements;
}  // namespace

void RecordPlacement(LayerPlacement placement) {
  recorded_placements.push_back(std::move(placement));
}

std::vector<LayerPlacement> TakePlacements() { return std::exchange(recorded_placements, {}); }

void RegisterLayoutRewrite(const std::string& op, const std::string& target_key,
                           LayoutRewriteFn rewrite, RewriteShapes shapes) {
  Tables& tables = GlobalTables();
  std::lock_guard<std::mutex> lock(tables.mutex);
  tables.rewrites[{op, target_key}].push_back({std::move(rewrite), shapes});
}

const OpImplementation* SelectImplementation(const CallInfo& master,
                                             const std::vector<te::Tensor>& outputs,
                                             const Target& target) {
  std::vector<const OpImplementation*> candidates, fallbacks;
  {
    Tables& tables = GlobalTables();
    std::lock_guard<std::mutex> lock(tables.mutex);
    for (const std::string& key : target.keys()) {
      auto it = tables.implementations.find({master.op->name, key});
      if (it != tables.implementations.end()) {
        for (const OpImplementation& implementation : it->second) {
          candidates.push_back(&implementation);
        }
      }
      auto fallback = tables.fallbacks.find(key);
      if (fallback == tables.fallbacks.end()) continue;
      for (const OpImplementation& implementation : fallback->second) {
        fallbacks.push_back(&implementation);
      }
    }
  }
  // Outside the lock: a condition may compile or look up other operators.
  auto best_of = [&](const std::vector<const OpImplementation*>& entries) {
    const OpImplementation* best = nullptr;
    for (const OpImplementation* candidate : entries) {
      if ((best == nullptr || candidate->priority > best->priority) &&
          candidate->applies(master, outputs, target)) {
        best = candidate;
      }
    }
    return best;
  };
  const OpImplementation* best = best_of(candidates);
  return best != nullptr ? best : best_of(fallbacks);
}

std::vector<LayoutRewriteFn> LayoutRewrites(const std::string& op, const Target& target,
                                            bool symbolic) {
  Tables& tables = GlobalTables();
  std::lock_guard<std::mutex> lock(tables.mutex);
  std::vector<LayoutRewriteFn> found;
  for (const std::string& key : target.keys()) {
    auto it = tables.rewrites.find({op, key});
    if (it == tables.rewrites.end()) continue;
    for (const Tables::Rewrite& rewrite : it->second) {
      if (!symbolic || rewrite.shapes == RewriteShapes::kSymbolicToo) found.push_back(rewrite.fn);
    }
  }
  return found;
}

bool HasLayoutRewrites(const Target& target) {
  Tables& tables = GlobalTables();
  std::lock_guard<std::mutex> lock(tables.mutex);
  for (const auto& [op_and_key, rewrites] : tables.rewrites) {
    if (target.HasKey(op_and_key.second) && !rewrites.empty()) return true;
  }
  return false;
}

void RegisterHalfPrecisionProducts(const std::string& target_key, DataType half,
                                   TargetPredicate has_kernels) {
  Tables& tables = GlobalTables();
  std::lock_guard<std::mutex> lock(tables.mutex);
  tables.half_precision_products[{target_key, half.str()}] = std::move(has_kernels);
}

bool HasHalfPrecisionProducts(const Target& target, DataType half) {
  Tables& tables = GlobalTables();
  std::lock_guard<std::mutex> lock(tables.mutex);
  for (const std::string& key : target.keys()) {
    auto it = tables.half_precision_products.find({key, half.str()});
    if (it != tables.half_precision_products.end() && it->second(target)) return true;
  }
  return false;
}

void RegisterIntegerKernel(const std::string& target_key, IntegerKernelPredicate has_kernel) {
  Tables& tables = GlobalTables();
  std::lock_guard<std::mutex> lock(tables.mutex);
  tables.integer_kernels[target_key] = std::move(has_kernel);
}

bool HasIntegerKernel(const CallNode& product, const Target& target) {
  Tables& tables = GlobalTables();
  std::lock_guard<std::mutex> lock(tables.mutex);
  for (const std::string& key : target.keys()) {
    auto it = tables.integer_kernels.find(key);
    if (it != tables.integer_kernels.end() && it->second(product, target)) return true;
  }
  return false;
}

std::string BlockedDataLayout(int64_t block) {
  return block == 0 ? "NCHW" : "NCHW" + std::to_string(block) + "c";
}

std::optional<int64_t> DataLayoutBlock(const std::string& layout) {
  if (layout.rfind("NCHW", 0) != 0) return std::nullopt;
  return topi::ChannelBlock(layout, "a data layout");
}

}  // namespace loom::graph
