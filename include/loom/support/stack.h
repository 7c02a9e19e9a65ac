// A model's graph is walked recursively, as deep as its longest chain of operators (a chain of
// 100,000 nodes takes about 200 MB of stack). These keep a deep graph from overflowing a
// thread's stack: a walk checks the space left and stops with a loom::Error, and a tool runs
// its compile on a thread with a stack large enough for any practical model.
//
//   CheckStackSpace("a graph walk");            // in a recursive visitor
//   RunWithStack(kCompilerStackBytes, [&] { graph::Compile(...); });
#pragma once

#include <cstddef>
#include <functional>

namespace loom {

// The stack the `loom` tool gives the compiler: room for a chain of about 500,000 operators.
// Only the pages a compile touches take memory.
inline constexpr size_t kCompilerStackBytes = size_t{1} << 30;

// A loom::Error naming `what` when less than 256 KiB of this thread's stack are left.
void CheckStackSpace(const char* what);

// Runs `fn` on a new thread with a stack of `stack_bytes` and waits for it; what `fn` throws
// is rethrown here.
void RunWithStack(size_t stack_bytes, const std::function<void()>& fn);

}  // namespace loom
