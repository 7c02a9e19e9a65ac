#include "bench_common.h"

#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "loom/support/error.h"

extern char** environ;

namespace loom::bench {
namespace {

// Marks the children of RunPerThreadCount, whose thread environment is already set.
constexpr const char* kChildVariable = "LOOM_BENCH_THREAD_COUNT_CHILD";

// The untimed pause before each timed batch, so that each library's batch runs as it would
// alone: every library keeps its own threads' default behaviour (libgomp's idle threads,
// oneDNN's, spin about 4.5 ms before they sleep -- measured: 300000 rounds of load + pause
// -- and Loom's ~60 us), and the pause outlasts the longest of those spins, so no batch
// shares the cores with the previous library's spinning threads. On this machine, quiet,
// oneDNN's 2-thread MobileNetV2 layers ran 2.5x slower with its spin cut to nothing
// (GOMP_SPINCOUNT=0): the baseline must not be handicapped. The calling thread waits busy:
// sleeping let the core idle, and batches of 10 us kernels then started on a cold core
// (depthwise layers 2x slower for Loom, 1.3x for oneDNN, against back-to-back timing).
constexpr auto kSettleTime = std::chrono::microseconds(6000);

void WaitBusy(std::chrono::microseconds duration) {
  auto until = std::chrono::steady_clock::now() + duration;
  while (std::chrono::steady_clock::now() < until) {
  }
}

double SecondsOfBatch(const std::function<void()>& call, int64_t batch) {
  auto start = std::chrono::steady_clock::now();
  for (int64_t c = 0; c < batch; ++c) call();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The number of back-to-back calls that lasts `min_seconds`, found by timing growing batches
// (which also warms the caches up).
int64_t CallsPerSample(const std::function<void()>& call, double min_seconds) {
  int64_t batch = 1;
  for (double seconds = SecondsOfBatch(call, batch); seconds < min_seconds;
       seconds = SecondsOfBatch(call, batch)) {
    double wanted = seconds > 0 ? 1.2 * batch * min_seconds / seconds : 2.0 * batch;
    batch = std::max(2 * batch, static_cast<int64_t>(std::ceil(wanted)));
  }
  return batch;
}

}  // namespace

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  for (std::string part; std::getline(stream, part, ',');) parts.push_back(part);
  return parts;
}

std::string JoinCommas(const std::vector<std::string>& parts) {
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : ",") + part;
  return text;
}

std::string JoinCommas(const std::vector<int64_t>& values) {
  std::vector<std::string> parts;
  for (int64_t value : values) parts.push_back(std::to_string(value));
  return JoinCommas(parts);
}

int64_t ParsePositive(const std::string& text, const std::string& program, const std::string& flag,
                      int64_t max) {
  char* end = nullptr;
  errno = 0;
  long long value = std::strtoll(text.c_str(), &end, 10);
  // strtoll also takes leading spaces and signs.
  LOOM_CHECK_USER(!text.empty() && std::isdigit(static_cast<unsigned char>(text[0])) &&
                  *end == '\0' && value > 0)
      << program << ": " << flag << " takes positive integers, got '" << text << "'";
  LOOM_CHECK_USER(errno != ERANGE && value <= max)
      << program << ": " << flag << " takes positive integers up to " << max << ", got '" << text
      << "'";
  return value;
}

std::vector<int64_t> ParsePositiveList(const std::string& text, const std::string& program,
                                       const std::string& flag, int64_t max) {
  std::vector<int64_t> values;
  for (const std::string& part : SplitCommas(text))
    values.push_back(ParsePositive(part, program, flag, max));
  LOOM_CHECK_USER(!values.empty())
      << program << ": " << flag << " takes comma-separated positive integers, got nothing";
  return values;
}

void ParseFlags(int argc, char** argv, const std::string& program,
                const std::vector<FlagHandler>& handlers) {
  std::string accepted;
  for (const FlagHandler& handler : handlers)
    accepted += (accepted.empty() ? "" : "|") + handler.flag;
  for (int a = 1; a < argc; ++a) {
    std::string flag = argv[a];
    auto handler = std::find_if(handlers.begin(), handlers.end(),
                                [&](const FlagHandler& h) { return h.flag == flag; });
    LOOM_CHECK_USER(handler != handlers.end())
        << program << ": unknown option '" << flag << "' (accepted: " << accepted << ")";
    LOOM_CHECK_USER(a + 1 < argc) << program << ": option '" << flag
                                  << "' needs a value (accepted: " << accepted
                                  << ", each followed by its value)";
    handler->handle(argv[++a]);
  }
}

std::vector<double> MedianSeconds(const std::vector<std::function<void()>>& calls, int samples,
                                  double min_sample_seconds) {
  std::vector<int64_t> batches;
  for (const auto& call : calls) batches.push_back(CallsPerSample(call, min_sample_seconds));
  std::vector<std::vector<double>> times(calls.size());
  for (int r = 0; r < samples; ++r) {
    for (size_t c = 0; c < calls.size(); ++c) {
      WaitBusy(kSettleTime);
      times[c].push_back(SecondsOfBatch(calls[c], batches[c]) / static_cast<double>(batches[c]));
    }
  }
  std::vector<double> medians;
  for (auto& t : times) {
    std::sort(t.begin(), t.end());
    medians.push_back(t.size() % 2 ? t[t.size() / 2] : (t[t.size() / 2 - 1] + t[t.size() / 2]) / 2);
  }
  return medians;
}

FlagHandler ThreadCountsFlag(const std::string& program, std::vector<int>* threads) {
  return {"--threads", [program, threads](const std::string& value) {
            threads->clear();
            for (int64_t count : ParsePositiveList(value, program, "--threads",
                                                   std::numeric_limits<int>::max()))
              threads->push_back(static_cast<int>(count));
          }};
}

bool InThreadCountChild() { return std::getenv(kChildVariable) != nullptr; }

int RunPerThreadCount(const std::string& program, const std::vector<int>& threads,
                      const std::function<std::vector<std::string>(int threads)>& child_args,
                      const std::function<void(int threads)>& set_environment) {
  for (int count : threads) {
    std::string text = std::to_string(count);
    setenv("LOOM_NUM_THREADS", text.c_str(), 1);
    setenv("OMP_NUM_THREADS", text.c_str(), 1);
    if (set_environment) set_environment(count);
    setenv(kChildVariable, "1", 1);
    std::vector<std::string> args = child_args(count);
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    pid_t child = 0;
    LOOM_CHECK_USER(posix_spawn(&child, "/proc/self/exe", nullptr, nullptr, argv.data(), environ) ==
                    0)
        << program << ": cannot start the run with " << count << " threads";
    int status = 0;
    waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
  }
  return 0;
}

std::string Format(const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list copy;
  va_copy(copy, args);
  int size = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  std::string text(static_cast<size_t>(std::max(size, 0)) + 1, '\0');
  std::vsnprintf(text.data(), text.size(), format, args);
  va_end(args);
  text.resize(text.size() - 1);
  return text;
}

void PrintLine(const std::string& line) {
  std::fputs(line.c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

double GeometricMean(const std::vector<double>& ratios) {
  double log_sum = 0;
  for (double ratio : ratios) log_sum += std::log(ratio);
  return ratios.empty() ? 1.0 : std::exp(log_sum / static_cast<double>(ratios.size()));
}

}  // namespace loom::bench
