// LLVM plumbing shared by the target layer's .cc files: one-time initialization of LLVM's
// backends, and the TargetMachine a Target describes. Private to src/target.
#pragma once

#include <llvm/Target/TargetMachine.h>

#include <memory>

#include "loom/target/target.h"

namespace loom::target_detail {

// Registers every backend LLVM was built with and their asm printers; safe to call from
// many threads.
void InitializeLLVM();

// The machine `target` names (triple, CPU, features, opt level; fast-math in its options),
// with position-independent code so its objects can go into shared libraries.
std::unique_ptr<llvm::TargetMachine> CreateTargetMachine(const Target& target);

}  // namespace loom::target_detail
