// A bound on how long a test body may run, for tests whose failure mode is a deadlock: a
// hang must fail the test run with a message instead of stalling CI until its timeout.
// Header-only and free of Loom dependencies, so the runtime tests can use it too.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <string>
#include <thread>

namespace loom::test {

// Generous on purpose: a slow, loaded machine must never trip it. The bound only tells a
// deadlock from progress; it never decides whether a body that finishes passed.
inline constexpr std::chrono::seconds kDeadlockBound{300};

// Runs `body` on a thread of its own and waits for it. If it has not finished within
// `bound`, it is taken to be deadlocked and the process aborts naming `what` (a blocked
// thread cannot be cancelled, and returning would leave it referring to the test's locals).
// An exception from `body` is rethrown here.
template <typename Body>
void RunWithDeadline(const std::string& what, Body body,
                     std::chrono::seconds bound = kDeadlockBound) {
  std::packaged_task<void()> task(std::move(body));
  std::future<void> finished = task.get_future();
  std::thread runner(std::move(task));
  if (finished.wait_for(bound) != std::future_status::ready) {
    std::fprintf(stderr, "%s did not finish within %lld s: it is deadlocked\n", what.c_str(),
                 static_cast<long long>(bound.count()));
    std::abort();
  }
  runner.join();
  finished.get();
}

}  // namespace loom::test
