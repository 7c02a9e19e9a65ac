// The VTA runtime's instruction queue (private to src/vta/runtime*.cc): the stream being
// built between two synchronizations, and the translation of dependency-token pushes and
// pops into instruction flags.
//
// A pop is executed by the receiving stage before its next instruction, so it is held as
// "pending" on that stage and lands on the next instruction created there; a second pop
// of the same direction first commits the held one as a no-op. A push is executed by the
// sending stage after its last instruction, so it sets the flag on the stream's last
// instruction when that one belongs to the sender and does not push that way yet;
// otherwise a no-op of the sender's stage carries it. No-ops are LOADs (load and compute
// stages) or STOREs (store stage) with x_size 0. The resulting streams are the ones TVM's
// VTA runtime produces for the same calls.
#pragma once

#include <array>
#include <vector>

#include "loom/vta/isa.h"

namespace loom::vta::runtime_detail {

enum class Stage : int { kLoad = 1, kCompute = 2, kStore = 3 };

// The stage whose module executes `insn` (no-ops included).
Stage StageOf(const Insn& insn);

class InsnQueue {
 public:
  // Validate the queue ids (1 load, 2 compute, 3 store; neighbours only) and throw
  // loom::Error naming the call otherwise.
  void DepPush(int from_qid, int to_qid);
  void DepPop(int from_qid, int to_qid);

  // Appends `insn`, executed by `stage`, giving it the stage's pending pops. Returns its
  // index in the stream.
  size_t Append(Insn insn, Stage stage);
  // Turns the stage's pending pops into a no-op that carries them.
  void CommitPendingPop(Stage stage);
  bool HasPendingPop() const;

  const std::vector<Insn>& insns() const { return insns_; }
  std::vector<Insn>& insns() { return insns_; }
  void Clear();

 private:
  void PushNoop(Stage stage, const DepFlags& deps);

  std::vector<Insn> insns_;
  // Indexed by Stage (slot 0 unused).
  std::array<bool, 4> pending_pop_prev_{};
  std::array<bool, 4> pending_pop_next_{};
};

}  // namespace loom::vta::runtime_detail
