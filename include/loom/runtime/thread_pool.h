// The thread pool behind LoomBackendParallelLaunch / LoomBackendParallelBarrier.
//
// Workers are created once and each owns one task slot; the launching thread runs task 0
// itself, so a pool of N threads has N - 1 workers. Between launches a worker spins briefly
// (a kernel's parallel loops usually follow each other closely) and then sleeps on a futex,
// so an idle pool uses no CPU.
//
// Oversubscription is avoided rather than queued: a launch made while another thread's
// launch holds the pool, and a launch nested inside a running task, run serially on the
// calling thread as a single task (penv->num_task == 1). Generated code hands out its
// iterations in chunks of a size derived from penv->num_task, so the result is the same,
// only not parallel.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "loom/runtime/c_backend_api.h"
#include "loom/runtime/cpu_topology.h"

namespace loom::runtime {

class ThreadPool {
 public:
  // A pool of `num_threads` threads including the caller (at least 1). `bind_threads` pins
  // worker i to the (i+1)-th physical core the process may run on, leaving the first to the
  // launching thread.
  explicit ThreadPool(int num_threads, bool bind_threads = false);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // The pool LoomBackendParallelLaunch uses, created on first use with the threads
  // SetGlobalThreads asked for, else NumThreadsFromEnvironment(), and LOOM_BIND_THREADS=1
  // pinning.
  static ThreadPool& Global();
  // The number of threads Global() is created with: before its first use, any count from 1;
  // after, only the count it has (a loom::Error naming both otherwise: the pool's threads
  // exist already).
  static void SetGlobalThreads(int num_threads);

  int num_threads() const;

  // Runs `flambda` as min(num_task, num_threads()) tasks (num_task <= 0: num_threads()) and
  // waits for all of them. Returns 0, or -1 after setting the caller's last error to the
  // first failing task's message. With `shared_work` (the tasks share the work, as
  // LoomBackendParallelLaunchShared says), tasks that have not started when the caller has
  // finished its own are dropped instead.
  int32_t Launch(LoomParallelLambda flambda, void* cdata, int32_t num_task,
                 bool shared_work = false);

  // Tasks of shared launches dropped so far because their worker had not started.
  int64_t dropped_tasks() const;

  // CPU time each worker thread has consumed so far, in seconds (for diagnostics and tests).
  std::vector<double> WorkerCpuSeconds() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Caps the tasks of every launch the calling thread makes while it lives (an executor's
// thread count, GraphExecutor::SetNumThreads); 0 lifts the cap. Scopes nest, restoring the
// cap before them.
class ScopedTaskLimit {
 public:
  explicit ScopedTaskLimit(int max_tasks);
  ~ScopedTaskLimit();
  ScopedTaskLimit(const ScopedTaskLimit&) = delete;
  ScopedTaskLimit& operator=(const ScopedTaskLimit&) = delete;

 private:
  int previous_;
};

// The number of threads LOOM_NUM_THREADS asks for: `env_value` null or empty means the
// default, PhysicalCoreCount(). Anything but a positive integer is a loom::Error.
int NumThreadsFromEnvironment(const char* env_value);

}  // namespace loom::runtime
