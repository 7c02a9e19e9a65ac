// PlanMemory: one pass over the kernels in execution order, as a register allocator does
// over instructions: a kernel's outputs take slots, then the values that die at it free
// theirs for the kernels after it.
#include <algorithm>
#include <map>
#include <set>

#include "loom/graph/memory_plan.h"
#include "loom/support/error.h"

namespace loom::graph {
namespace {

using EntryKind = MemoryPlanProblem::EntryKind;

class Planner {
 public:
  explicit Planner(const MemoryPlanProblem& problem)
      : problem_(problem),
        def_(problem.entries.size(), -1),
        last_use_(problem.entries.size(), -1) {
    const int num_kernels = static_cast<int>(problem.kernels.size());
    for (int k = 0; k < num_kernels; ++k) {
      for (int out : problem.kernels[k].outputs) {
        CheckEntry(out);
        LOOM_ICHECK(def_[out] < 0 && Kind(out) != EntryKind::kInput &&
                    Kind(out) != EntryKind::kParam)
            << "memory plan: entry " << out << " is written twice, or is an input or parameter";
        def_[out] = last_use_[out] = k;
      }
      for (int in : problem.kernels[k].inputs) {
        CheckEntry(in);
        LOOM_ICHECK(def_[in] >= 0 || Kind(in) == EntryKind::kInput || Kind(in) == EntryKind::kParam)
            << "memory plan: kernel " << k << " reads entry " << in << " before it is written";
        last_use_[in] = std::max(last_use_[in], k);
      }
    }
  }

  MemoryPlan Run() {
    plan_.storage_of.assign(problem_.entries.size(), -1);
    // Inputs and outputs first: the executor hands them out, so no other value may be there.
    for (size_t e = 0; e < problem_.entries.size(); ++e) {
      EntryKind kind = problem_.entries[e].kind;
      if (kind == EntryKind::kInput || kind == EntryKind::kOutput) {
        plan_.storage_of[e] = NewSlot(problem_.entries[e].bytes);
      }
    }
    for (size_t k = 0; k < problem_.kernels.size(); ++k) PlanKernel(static_cast<int>(k));
    plan_.stats.planned_bytes = 0;
    for (int64_t bytes : plan_.storage_bytes) plan_.stats.planned_bytes += bytes;
    plan_.stats.num_storages = static_cast<int>(plan_.storage_bytes.size());
    plan_.stats.lower_bound_bytes = LowerBound();
    return plan_;
  }

 private:
  EntryKind Kind(int entry) const { return problem_.entries[entry].kind; }
  void CheckEntry(int entry) const {
    LOOM_ICHECK(entry >= 0 && entry < static_cast<int>(problem_.entries.size()))
        << "memory plan: entry id " << entry << " out of range";
  }

  void PlanKernel(int k) {
    const MemoryPlanProblem::Kernel& kernel = problem_.kernels[k];
    for (size_t j = 0; j < kernel.outputs.size(); ++j) {
      int out = kernel.outputs[j];
      if (Kind(out) != EntryKind::kIntermediate) continue;
      int donor = j == 0 ? InPlaceDonor(kernel, k) : -1;
      if (donor >= 0) {
        plan_.storage_of[out] = plan_.storage_of[donor];
        donated_.insert(donor);
      } else {
        plan_.storage_of[out] = TakeSlot(problem_.entries[out].bytes);
      }
    }
    // Values read here for the last time, and outputs nothing reads, free their slots.
    std::set<int> dying;
    for (int in : kernel.inputs) {
      if (last_use_[in] == k) dying.insert(in);
    }
    for (int out : kernel.outputs) {
      if (last_use_[out] == k) dying.insert(out);
    }
    for (int entry : dying) {
      if (Kind(entry) != EntryKind::kIntermediate || donated_.count(entry)) continue;
      int slot = plan_.storage_of[entry];
      free_.emplace(plan_.storage_bytes[slot], slot);
    }
  }

  // An intermediate input that dies at kernel k whose slot output 0 can take, or -1.
  int InPlaceDonor(const MemoryPlanProblem::Kernel& kernel, int k) const {
    for (int candidate : kernel.in_place_candidates) {
      if (Kind(candidate) == EntryKind::kIntermediate && last_use_[candidate] == k &&
          !donated_.count(candidate) &&
          problem_.entries[candidate].bytes >= problem_.entries[kernel.outputs[0]].bytes) {
        return candidate;
      }
    }
    return -1;
  }

  // Best fit: the smallest free slot that holds `bytes`; else the largest free slot, grown
  // (growing by the difference costs less than a new slot of `bytes`); else a new slot.
  int TakeSlot(int64_t bytes) {
    if (free_.empty()) return NewSlot(bytes);
    auto it = free_.lower_bound(bytes);
    if (it == free_.end()) it = std::prev(free_.end());
    int slot = it->second;
    free_.erase(it);
    plan_.storage_bytes[slot] = std::max(plan_.storage_bytes[slot], bytes);
    return slot;
  }

  int NewSlot(int64_t bytes) {
    plan_.storage_bytes.push_back(bytes);
    return static_cast<int>(plan_.storage_bytes.size()) - 1;
  }

  // Inputs and outputs are live throughout (their slots are theirs alone); an intermediate
  // from the kernel writing it to the last kernel reading it.
  int64_t LowerBound() const {
    std::vector<int64_t> live(problem_.kernels.size() + 1, 0);
    int64_t pinned = 0;
    for (size_t e = 0; e < problem_.entries.size(); ++e) {
      EntryKind kind = problem_.entries[e].kind;
      int64_t bytes = problem_.entries[e].bytes;
      if (kind == EntryKind::kInput || kind == EntryKind::kOutput) pinned += bytes;
      if (kind != EntryKind::kIntermediate || def_[e] < 0) continue;
      live[def_[e]] += bytes;
      live[last_use_[e] + 1] -= bytes;
    }
    int64_t running = 0, peak = 0;
    for (int64_t delta : live) {
      running += delta;
      peak = std::max(peak, running);
    }
    return pinned + peak;
  }

  const MemoryPlanProblem& problem_;
  std::vector<int> def_;       // the kernel writing each entry (-1: none)
  std::vector<int> last_use_;  // the last kernel reading (or writing) it
  MemoryPlan plan_;
  std::multimap<int64_t, int> free_;  // free slots by size
  std::set<int> donated_;             // entries whose slot an output took over
};

}  // namespace

MemoryPlan PlanMemory(const MemoryPlanProblem& problem) { return Planner(problem).Run(); }

}  // namespace loom::graph
