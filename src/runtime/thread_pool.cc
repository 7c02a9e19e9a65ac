#include "loom/runtime/thread_pool.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <thread>

#include "loom/runtime/device_api.h"
#include "loom/support/error.h"

namespace loom::runtime {

namespace {

// How long a waiting worker polls before it sleeps: about 60 us on this machine's CPU
// (measured), enough to catch back-to-back parallel loops without burning a core while idle.
constexpr int kSpinIterations = 1 << 12;
// How long the launcher polls for its workers to finish before it sleeps: short, because
// generated loops hand out their iterations in chunks (codegen_llvm.cc), so a worker still
// busy after the launcher ran out of chunks is either on its last chunk or has not started;
// in the second case it needs a core, and a spinning launcher may be holding the only one.
constexpr int kLauncherSpinIterations = 1 << 9;

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Returns the first value of `word` that differs from `seen`: spin, then sleep on a futex.
uint32_t WaitForChange(const std::atomic<uint32_t>& word, uint32_t seen,
                       int spin_iterations = kSpinIterations) {
  for (int i = 0; i < spin_iterations; ++i) {
    uint32_t now = word.load(std::memory_order_acquire);
    if (now != seen) return now;
    CpuRelax();
  }
  while (true) {
    word.wait(seen, std::memory_order_acquire);
    uint32_t now = word.load(std::memory_order_acquire);
    if (now != seen) return now;
  }
}

// Set while this thread runs a task, so that a nested launch runs serially.
thread_local bool tls_inside_task = false;
// The cap a ScopedTaskLimit puts on this thread's launches (0: none).
thread_local int tls_task_limit = 0;

}  // namespace

// One launch: lives on the launching thread's stack until every task has finished. Its
// address is the sync_handle generated code passes back to the barrier.
struct ParallelJob {
  ParallelJob(LoomParallelLambda lambda, void* data, int32_t tasks)
      : flambda(lambda), cdata(data), num_task(tasks) {}

  void RunTask(int32_t task_id) {
    LoomParallelGroupEnv env{this, num_task};
    bool was_inside = tls_inside_task;
    tls_inside_task = true;
    // A stale message from an earlier task on this thread must not be mistaken for this one's.
    LoomAPISetLastError("");
    int32_t status = 0;
    // Lambdas are C code, but one written in C++ must not take the process down by
    // throwing across a worker thread.
    try {
      status = flambda(task_id, &env, cdata);
    } catch (const std::exception& error) {
      LoomAPISetLastError(error.what());
      status = -1;
    } catch (...) {
      LoomAPISetLastError("a parallel task threw a non-standard exception");
      status = -1;
    }
    tls_inside_task = was_inside;
    LeaveBarrierGroup();
    if (status != 0) RecordFailure(task_id, status);
  }

  void RecordFailure(int32_t task_id, int32_t status) {
    std::string message = LoomGetLastError();
    if (message.empty()) {
      message = "parallel task " + std::to_string(task_id) + " of " + std::to_string(num_task) +
                " failed with status " + std::to_string(status) + " without recording a message";
    }
    std::lock_guard<std::mutex> lock(error_mutex);
    if (!failed) {
      failed = true;
      error = std::move(message);
    }
  }

  // Hands the first failure to the launching thread.
  int32_t Finish() {
    if (!failed) return 0;
    LoomAPISetLastError(error.c_str());
    return -1;
  }

  // Waits for every task that is still running to arrive. A task that has returned -- done,
  // failed, or thrown -- no longer counts, so a sibling that fails before a barrier releases
  // the others instead of leaving them waiting forever.
  void Barrier() {
    if (num_task <= 1) return;
    uint32_t phase = barrier_phase.load(std::memory_order_acquire);
    uint64_t state = barrier_state.fetch_add(1, std::memory_order_acq_rel) + 1;
    if (Arrived(state) == Running(state)) {
      ReleaseBarrier();
    } else {
      WaitForChange(barrier_phase, phase);
    }
  }

  void LeaveBarrierGroup() {
    if (num_task <= 1) return;
    uint64_t state =
        barrier_state.fetch_sub(kOneRunning, std::memory_order_acq_rel) - kOneRunning;
    if (Arrived(state) != 0 && Arrived(state) == Running(state)) ReleaseBarrier();
  }

  // Called by whoever completed the count. Every running task is now waiting, so nothing
  // else changes barrier_state until the phase moves on.
  void ReleaseBarrier() {
    barrier_state.fetch_and(~kArrivedMask, std::memory_order_relaxed);
    barrier_phase.fetch_add(1, std::memory_order_release);
    barrier_phase.notify_all();
  }

  // barrier_state packs two counts into one word so that arriving and leaving are totally
  // ordered: the high half counts running tasks, the low half those waiting at the barrier.
  static constexpr uint64_t kOneRunning = uint64_t{1} << 32;
  static constexpr uint64_t kArrivedMask = kOneRunning - 1;
  static uint64_t Arrived(uint64_t state) { return state & kArrivedMask; }
  static uint64_t Running(uint64_t state) { return state >> 32; }

  const LoomParallelLambda flambda;
  void* const cdata;
  const int32_t num_task;
  std::atomic<uint64_t> barrier_state{static_cast<uint64_t>(num_task) * kOneRunning};
  std::atomic<uint32_t> barrier_phase{0};
  std::mutex error_mutex;
  bool failed = false;
  std::string error;
};

namespace {

// A worker's mailbox. The launcher stores `job` and `claim` = the new sequence number, then
// bumps `sequence` (release); the worker sees the new sequence (acquire), reads `job`, and
// takes the job by moving `claim` from that sequence number to "running". A launcher that
// drops a job it no longer needs moves `claim` to "dropped" first, so the worker skips it;
// a worker that read a newer job than the sequence it saw fails the claim and looks again.
// A null job tells the worker to exit. When a task is done the worker bumps `completed`
// (release), which the launcher waits on: the slot outlives every job, so the worker may
// wake the launcher after the job is gone.
struct alignas(64) WorkerSlot {
  static constexpr uint64_t kRunning = uint64_t{1} << 63;
  static constexpr uint64_t kDropped = uint64_t{1} << 62;
  std::atomic<uint32_t> sequence{0};
  // Atomic because a worker late on an old sequence may read it while the next post writes
  // it; the claim decides whether what it read is its job.
  std::atomic<ParallelJob*> job{nullptr};
  std::atomic<uint64_t> claim{0};
  std::atomic<uint32_t> completed{0};
  // The launcher's own notes about its current job.
  uint32_t posted_sequence = 0;
  uint32_t completed_before_job = 0;
  std::thread thread;
};

void WorkerLoop(WorkerSlot* slot, int32_t task_id) {
  uint32_t seen = 0;
  while (true) {
    seen = WaitForChange(slot->sequence, seen);
    ParallelJob* job = slot->job.load(std::memory_order_relaxed);
    if (job == nullptr) return;
    uint64_t posted = seen;
    if (!slot->claim.compare_exchange_strong(posted, posted | WorkerSlot::kRunning,
                                             std::memory_order_acq_rel)) {
      continue;  // dropped, or a newer job is being posted: its sequence bump follows
    }
    job->RunTask(task_id);
    // After this the launcher may return and free the job.
    slot->completed.fetch_add(1, std::memory_order_release);
    slot->completed.notify_one();
  }
}

// Only the thread holding the pool's launch mutex (or its destructor) posts.
void Post(WorkerSlot& slot, ParallelJob* job) {
  slot.job.store(job, std::memory_order_relaxed);
  slot.posted_sequence = slot.sequence.load(std::memory_order_relaxed) + 1;
  slot.claim.store(slot.posted_sequence, std::memory_order_relaxed);
  slot.sequence.store(slot.posted_sequence, std::memory_order_release);
  slot.sequence.notify_one();
}

// Whether the launcher took back a job the worker has not started.
bool DropIfNotStarted(WorkerSlot& slot) {
  uint64_t posted = slot.posted_sequence;
  return slot.claim.compare_exchange_strong(posted, posted | WorkerSlot::kDropped,
                                            std::memory_order_acq_rel);
}

void PinToCpu(std::thread& thread, int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  // Pinning is a performance hint: a CPU that disappeared since start-up is not an error.
  pthread_setaffinity_np(thread.native_handle(), sizeof(set), &set);
}

}  // namespace

struct ThreadPool::Impl {
  int num_threads = 1;
  std::unique_ptr<WorkerSlot[]> workers;
  // Held for the duration of a parallel launch; a launcher that cannot take it runs serially.
  std::mutex launch_mutex;
  std::atomic<int64_t> dropped_tasks{0};
};

ThreadPool::ThreadPool(int num_threads, bool bind_threads) : impl_(std::make_unique<Impl>()) {
  LOOM_CHECK_USER(num_threads >= 1)
      << "ThreadPool: the number of threads must be at least 1, got " << num_threads;
  impl_->num_threads = num_threads;
  // Workers free their cached workspaces (backend_api.cc) through the CPU device API when
  // they exit, in this destructor: the device registry must be made first so that it is
  // destroyed after the pool.
  GetDeviceAPI(kDLCPU);
  impl_->workers = std::make_unique<WorkerSlot[]>(num_threads - 1);
  std::vector<int> cores = bind_threads ? PhysicalCoreRepresentatives() : std::vector<int>{};
  for (int w = 0; w + 1 < num_threads; ++w) {
    WorkerSlot& slot = impl_->workers[w];
    slot.thread = std::thread(WorkerLoop, &slot, w + 1);
    if (!cores.empty()) PinToCpu(slot.thread, cores[(w + 1) % cores.size()]);
  }
}

ThreadPool::~ThreadPool() {
  // A launch still running on another thread keeps its slots until it returns.
  std::lock_guard<std::mutex> lock(impl_->launch_mutex);
  for (int w = 0; w + 1 < impl_->num_threads; ++w) Post(impl_->workers[w], nullptr);
  for (int w = 0; w + 1 < impl_->num_threads; ++w) impl_->workers[w].thread.join();
}

namespace {
std::mutex g_global_mutex;
int g_global_threads = 0;        // SetGlobalThreads' count, 0: none asked
std::atomic<bool> g_global_made{false};
std::atomic<ThreadPool*> g_global_pool{nullptr};

// A child made by fork() has only the thread that forked: the pool's workers are not there.
// It drops the parent's pool (without destroying it: there are no threads to join) and makes
// its own on first use, so that a forked process (the auto-tuner's measurements) can run
// parallel kernels.
void ForgetPoolInForkedChild() {
  g_global_pool.store(nullptr);
  g_global_made = false;
  new (&g_global_mutex) std::mutex();  // whatever another thread held at fork time
}
}  // namespace

ThreadPool& ThreadPool::Global() {
  if (ThreadPool* pool = g_global_pool.load(std::memory_order_acquire)) return *pool;
  std::lock_guard<std::mutex> lock(g_global_mutex);
  if (ThreadPool* pool = g_global_pool.load()) return *pool;
  static const bool kForkHandled = [] {
    pthread_atfork(nullptr, nullptr, ForgetPoolInForkedChild);
    return true;
  }();
  (void)kForkHandled;
  g_global_made = true;
  const int threads = g_global_threads > 0
                          ? g_global_threads
                          : NumThreadsFromEnvironment(std::getenv("LOOM_NUM_THREADS"));
  const char* bind = std::getenv("LOOM_BIND_THREADS");
  // Never destroyed: workers sleeping at exit are ended with the process.
  auto* pool = new ThreadPool(threads, bind != nullptr && std::string(bind) == "1");
  g_global_pool.store(pool, std::memory_order_release);
  return *pool;
}

void ThreadPool::SetGlobalThreads(int num_threads) {
  LOOM_CHECK_USER(num_threads >= 1 && num_threads <= 4096)
      << "the thread count must be 1 to 4096, got " << num_threads;
  {
    std::lock_guard<std::mutex> lock(g_global_mutex);
    if (!g_global_made) {
      g_global_threads = num_threads;
      return;
    }
  }
  int existing = Global().num_threads();
  LOOM_CHECK_USER(existing == num_threads)
      << "the runtime's thread pool already runs " << existing << " threads, so it cannot be "
      << "made " << num_threads << "; set the count before the first kernel runs, or give each "
      << "executor a count up to " << existing << " (GraphExecutor::SetNumThreads)";
}

ScopedTaskLimit::ScopedTaskLimit(int max_tasks) : previous_(tls_task_limit) {
  tls_task_limit = max_tasks;
}

ScopedTaskLimit::~ScopedTaskLimit() { tls_task_limit = previous_; }

int ThreadPool::num_threads() const { return impl_->num_threads; }

int64_t ThreadPool::dropped_tasks() const {
  return impl_->dropped_tasks.load(std::memory_order_relaxed);
}

int32_t ThreadPool::Launch(LoomParallelLambda flambda, void* cdata, int32_t num_task,
                           bool shared_work) {
  int32_t tasks = num_task <= 0 ? impl_->num_threads : std::min(num_task, impl_->num_threads);
  if (tls_task_limit > 0) tasks = std::min(tasks, tls_task_limit);
  std::unique_lock<std::mutex> lock(impl_->launch_mutex, std::defer_lock);
  if (tasks == 1 || tls_inside_task || !lock.try_lock()) {
    ParallelJob job(flambda, cdata, 1);
    job.RunTask(0);
    return job.Finish();
  }
  ParallelJob job(flambda, cdata, tasks);
  // Only the launcher holding launch_mutex posts, so each posted worker's count of completed
  // tasks moves from its value now to one more.
  for (int32_t task = 1; task < tasks; ++task) {
    WorkerSlot& slot = impl_->workers[task - 1];
    slot.completed_before_job = slot.completed.load(std::memory_order_relaxed);
    Post(slot, &job);
  }
  job.RunTask(0);
  for (int32_t task = 1; task < tasks; ++task) {
    WorkerSlot& slot = impl_->workers[task - 1];
    if (shared_work && DropIfNotStarted(slot)) {
      // The dropped task never runs: it leaves the barrier group as a finished one would, so
      // a lambda that does use the barrier cannot wait for it forever.
      job.LeaveBarrierGroup();
      impl_->dropped_tasks.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    uint32_t seen = slot.completed_before_job;
    while (seen == slot.completed_before_job) {
      seen = WaitForChange(slot.completed, seen, kLauncherSpinIterations);
    }
  }
  return job.Finish();
}

std::vector<double> ThreadPool::WorkerCpuSeconds() const {
  std::vector<double> seconds;
  for (int w = 0; w + 1 < impl_->num_threads; ++w) {
    clockid_t clock;
    timespec ts{};
    if (pthread_getcpuclockid(impl_->workers[w].thread.native_handle(), &clock) != 0 ||
        clock_gettime(clock, &ts) != 0) {
      seconds.push_back(-1.0);
      continue;
    }
    seconds.push_back(static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9);
  }
  return seconds;
}

int NumThreadsFromEnvironment(const char* env_value) {
  if (env_value == nullptr || env_value[0] == '\0') return PhysicalCoreCount();
  char* end = nullptr;
  errno = 0;
  long value = std::strtol(env_value, &end, 10);
  LOOM_CHECK_USER(errno == 0 && *end == '\0' && value >= 1 && value <= 4096)
      << "LOOM_NUM_THREADS='" << env_value
      << "' is not a positive integer up to 4096; set it to the number of threads to use, or "
         "unset it to use one per physical core ("
      << PhysicalCoreCount() << " here)";
  return static_cast<int>(value);
}

}  // namespace loom::runtime

extern "C" {

int32_t LoomBackendParallelLaunch(LoomParallelLambda flambda, void* cdata, int32_t num_task) {
  if (flambda == nullptr) {
    LoomAPISetLastError("LoomBackendParallelLaunch: the task function is null");
    return -1;
  }
  try {
    return loom::runtime::ThreadPool::Global().Launch(flambda, cdata, num_task);
  } catch (const std::exception& error) {
    LoomAPISetLastError(error.what());
    return -1;
  }
}

int32_t LoomBackendParallelLaunchShared(LoomParallelLambda flambda, void* cdata,
                                        int32_t num_task) {
  if (flambda == nullptr) {
    LoomAPISetLastError("LoomBackendParallelLaunchShared: the task function is null");
    return -1;
  }
  try {
    return loom::runtime::ThreadPool::Global().Launch(flambda, cdata, num_task, true);
  } catch (const std::exception& error) {
    LoomAPISetLastError(error.what());
    return -1;
  }
}

int32_t LoomBackendParallelBarrier(int32_t task_id, LoomParallelGroupEnv* penv) {
  if (penv == nullptr || penv->sync_handle == nullptr) {
    LoomAPISetLastError(("LoomBackendParallelBarrier: task " + std::to_string(task_id) +
                         " passed no parallel group; call it only from a parallel task")
                            .c_str());
    return -1;
  }
  static_cast<loom::runtime::ParallelJob*>(penv->sync_handle)->Barrier();
  return 0;
}

}  // extern "C"
