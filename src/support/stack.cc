// Stack space for deep recursion (loom/support/stack.h).
#include "loom/support/stack.h"

#include <pthread.h>

#include <cstdint>
#include <exception>

#include "loom/support/error.h"

namespace loom {
namespace {

constexpr size_t kReserveBytes = size_t{256} << 10;

// The lowest address of this thread's stack (it grows down), found once per thread.
uintptr_t StackLow() {
  thread_local uintptr_t low = [] {
    pthread_attr_t attr;
    void* address = nullptr;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) return uintptr_t{0};
    pthread_attr_getstack(&attr, &address, &size);
    pthread_attr_destroy(&attr);
    return reinterpret_cast<uintptr_t>(address);
  }();
  return low;
}

}  // namespace

void CheckStackSpace(const char* what) {
  char here;
  const uintptr_t at = reinterpret_cast<uintptr_t>(&here), low = StackLow();
  LOOM_CHECK_USER(low == 0 || at - low >= kReserveBytes)
      << what << ": the graph is too deep for this thread's stack (a chain of operators "
      << "longer than its recursion can follow here); run the compile on a thread with a "
      << "larger stack (the loom tool gives it " << (kCompilerStackBytes >> 20)
      << " MiB: loom::RunWithStack) or split the model";
}

void RunWithStack(size_t stack_bytes, const std::function<void()>& fn) {
  struct Job {
    const std::function<void()>* fn;
    std::exception_ptr error;
  } job{&fn, nullptr};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, stack_bytes);
  pthread_t thread;
  const int started = pthread_create(
      &thread, &attr,
      [](void* arg) -> void* {
        auto* j = static_cast<Job*>(arg);
        try {
          (*j->fn)();
        } catch (...) {
          j->error = std::current_exception();
        }
        return nullptr;
      },
      &job);
  pthread_attr_destroy(&attr);
  if (started != 0) {
    fn();  // no thread (a process limit): the caller's stack, checked as ever
    return;
  }
  pthread_join(thread, nullptr);
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace loom
