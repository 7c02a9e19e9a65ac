#include "vta/runtime_insn_queue.h"

#include <cstdlib>

#include "loom/support/error.h"

namespace loom::vta::runtime_detail {

namespace {

const char* QueueName(int qid) {
  switch (qid) {
    case 1:
      return "load";
    case 2:
      return "compute";
    case 3:
      return "store";
    default:
      return "unknown";
  }
}

void CheckQueuePair(const char* api_name, int from_qid, int to_qid) {
  auto valid = [](int qid) { return qid >= 1 && qid <= 3; };
  LOOM_CHECK_USER(valid(from_qid) && valid(to_qid))
      << api_name << "(cmd, " << from_qid << ", " << to_qid
      << "): queue ids are 1 (load), 2 (compute) and 3 (store)";
  LOOM_CHECK_USER(std::abs(from_qid - to_qid) == 1)
      << api_name << "(cmd, " << from_qid << ", " << to_qid << "): " << QueueName(from_qid)
      << " and " << QueueName(to_qid)
      << (from_qid == to_qid ? " are the same stage"
                             : " are not neighbours; tokens flow only between load and "
                               "compute and between compute and store");
}

bool IsNoop(const Insn& insn) {
  const auto* mem = std::get_if<MemInsn>(&insn);
  return mem != nullptr && mem->x_size == 0;
}

}  // namespace

Stage StageOf(const Insn& insn) {
  if (const auto* mem = std::get_if<MemInsn>(&insn)) {
    if (mem->opcode == Opcode::kStore) return Stage::kStore;
    if (mem->memory_type == MemId::kUop || mem->memory_type == MemId::kAcc ||
        mem->memory_type == MemId::kAcc8) {
      return Stage::kCompute;
    }
    return Stage::kLoad;
  }
  return Stage::kCompute;
}

void InsnQueue::DepPop(int from_qid, int to_qid) {
  CheckQueuePair("VTADepPop", from_qid, to_qid);
  // The receiving stage executes the pop; the token comes from its prev or next neighbour.
  auto to = static_cast<Stage>(to_qid);
  auto& pending = from_qid < to_qid ? pending_pop_prev_ : pending_pop_next_;
  if (pending[to_qid]) CommitPendingPop(to);
  pending[to_qid] = true;
}

void InsnQueue::DepPush(int from_qid, int to_qid) {
  CheckQueuePair("VTADepPush", from_qid, to_qid);
  auto from = static_cast<Stage>(from_qid);
  CommitPendingPop(from);
  bool toward_next = from_qid < to_qid;
  if (!insns_.empty() && !IsNoop(insns_.back()) && StageOf(insns_.back()) == from) {
    DepFlags& deps = GetDeps(insns_.back());
    bool& flag = toward_next ? deps.push_next : deps.push_prev;
    if (!flag) {
      flag = true;
      return;
    }
  }
  DepFlags deps;
  (toward_next ? deps.push_next : deps.push_prev) = true;
  PushNoop(from, deps);
}

size_t InsnQueue::Append(Insn insn, Stage stage) {
  int slot = static_cast<int>(stage);
  DepFlags& deps = GetDeps(insn);
  deps.pop_prev = pending_pop_prev_[slot];
  deps.pop_next = pending_pop_next_[slot];
  pending_pop_prev_[slot] = false;
  pending_pop_next_[slot] = false;
  insns_.push_back(std::move(insn));
  return insns_.size() - 1;
}

void InsnQueue::CommitPendingPop(Stage stage) {
  int slot = static_cast<int>(stage);
  if (!pending_pop_prev_[slot] && !pending_pop_next_[slot]) return;
  DepFlags deps;
  deps.pop_prev = pending_pop_prev_[slot];
  deps.pop_next = pending_pop_next_[slot];
  pending_pop_prev_[slot] = false;
  pending_pop_next_[slot] = false;
  PushNoop(stage, deps);
}

bool InsnQueue::HasPendingPop() const {
  for (int slot = 1; slot <= 3; ++slot) {
    if (pending_pop_prev_[slot] || pending_pop_next_[slot]) return true;
  }
  return false;
}

void InsnQueue::Clear() {
  insns_.clear();
  pending_pop_prev_.fill(false);
  pending_pop_next_.fill(false);
}

void InsnQueue::PushNoop(Stage stage, const DepFlags& deps) {
  MemInsn noop;
  noop.opcode = stage == Stage::kStore ? Opcode::kStore : Opcode::kLoad;
  // The memory type only routes the no-op to its module: INP reaches load, UOP compute.
  noop.memory_type = stage == Stage::kLoad    ? MemId::kInp
                     : stage == Stage::kStore ? MemId::kOut
                                              : MemId::kUop;
  noop.deps = deps;
  insns_.push_back(noop);
}

}  // namespace loom::vta::runtime_detail
