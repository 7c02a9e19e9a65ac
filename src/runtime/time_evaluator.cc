#include "loom/runtime/time_evaluator.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>

#include "loom/runtime/thread_pool.h"
#include "loom/support/error.h"

namespace loom::runtime {

namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Writes over a buffer larger than the last-level cache, so that the next call starts cold.
void FlushCaches() {
  static std::vector<char> buffer(size_t{256} << 20);
  static char value = 0;
  std::memset(buffer.data(), ++value, buffer.size());
}

// Writes back and drops every cache line of `arrays` (host memory) from every cache level, so
// that their next reads come from memory. The runtime's pool does it, each thread a share of
// the lines: the work is quicker, and the workers are awake, not asleep, when the timed call
// starts (a kernel timed after an eviction on the calling thread alone paid the workers'
// wake-up).
void EvictFromCaches(const std::vector<const NDArray*>& arrays) {
  struct Ranges {
    std::vector<std::pair<const char*, size_t>> bytes;
  } ranges;
  for (const NDArray* array : arrays) {
    ranges.bytes.emplace_back(static_cast<const char*>(array->data()), array->NumBytes());
  }
  auto evict = [](int32_t task, LoomParallelGroupEnv* env, void* data) -> int32_t {
    constexpr size_t kLine = 64;  // a line is at least this long on the hosts below
    for (const auto& [begin, size] : static_cast<Ranges*>(data)->bytes) {
      const size_t lines = (size + kLine - 1) / kLine;
      const size_t share = (lines + env->num_task - 1) / env->num_task;
      const size_t first = share * task, last = std::min(lines, first + share);
      for (size_t line = first; line < last; ++line) {
        const char* address = begin + line * kLine;
#if defined(__x86_64__) || defined(__i386__)
        _mm_clflush(address);
#elif defined(__aarch64__)
        asm volatile("dc civac, %0" : : "r"(address) : "memory");
#else
        (void)address;
#endif
      }
    }
#if defined(__x86_64__) || defined(__i386__)
    _mm_mfence();
#elif defined(__aarch64__)
    asm volatile("dsb ish" : : : "memory");
#endif
    return 0;
  };
#if !defined(__x86_64__) && !defined(__i386__) && !defined(__aarch64__)
  FlushCaches();  // no instruction to evict a line: write over the caches instead
#endif
  LOOM_ICHECK(ThreadPool::Global().Launch(evict, &ranges, 0) == 0)
      << "evicting arrays from the caches failed";
}

}  // namespace

std::vector<double> TimeFunction(const PackedFunc& function, const std::vector<NDArray>& arguments,
                                 const TimeOptions& options) {
  LOOM_CHECK_USER(options.repeat >= 1 && options.number >= 0 && options.min_repeat_ms >= 0)
      << "timing a function: repeat must be at least 1 and number and min_repeat_ms not "
         "negative (got repeat "
      << options.repeat << ", number " << options.number << ", min_repeat_ms "
      << options.min_repeat_ms << ")";
  std::vector<const NDArray*> cold;
  for (size_t position : options.cold_arguments) {
    LOOM_CHECK_USER(position < arguments.size())
        << "timing a function: cold argument " << position << " is past its " << arguments.size()
        << " arguments";
    LOOM_CHECK_USER(arguments[position]->device.device_type == kDLCPU)
        << "timing a function: cold argument " << position
        << " is not in host memory; only host arrays can be evicted from the caches";
    cold.push_back(&arguments[position]);
  }
  int64_t number = options.number;
  if (number == 0) {
    // One untimed call says how many fill min_repeat_ms. With cold arguments the eviction
    // before each call takes time too: counted, or a tiny kernel with large weights would be
    // called (and its weights evicted) a hundred thousand times for 40 ms of calls.
    Clock::time_point start = Clock::now();
    if (!cold.empty()) EvictFromCaches(cold);
    function.CallWithArrays(arguments);
    const double first = SecondsSince(start);
    number = std::max<int64_t>(
        1, static_cast<int64_t>(std::ceil(options.min_repeat_ms / 1e3 / std::max(first, 1e-9))));
  }
  std::vector<double> seconds_per_call;
  for (int r = 0; r < options.repeat; ++r) {
    if (options.flush_caches) FlushCaches();
    double seconds = 0;
    if (cold.empty()) {
      Clock::time_point start = Clock::now();
      for (int64_t i = 0; i < number; ++i) function.CallWithArrays(arguments);
      seconds = SecondsSince(start);
    } else {
      for (int64_t i = 0; i < number; ++i) {
        EvictFromCaches(cold);
        Clock::time_point start = Clock::now();
        function.CallWithArrays(arguments);
        seconds += SecondsSince(start);
      }
    }
    seconds_per_call.push_back(seconds / static_cast<double>(number));
  }
  return seconds_per_call;
}

}  // namespace loom::runtime
