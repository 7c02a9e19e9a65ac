// What the benchmark programs share: "--flag value" options, interleaved median timing, one
// child process per thread count, and result lines printed as they come.
#pragma once

#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "loom/support/error.h"

namespace loom::bench {

// "a,b,c" -> {"a", "b", "c"}; "" -> {}.
std::vector<std::string> SplitCommas(const std::string& text);
std::string JoinCommas(const std::vector<std::string>& parts);
std::string JoinCommas(const std::vector<int64_t>& values);

// A positive decimal integer up to `max`, or a loom::Error naming `program`, `flag`, the
// text and, for a value past `max` (or past int64_t), the largest accepted.
int64_t ParsePositive(const std::string& text, const std::string& program, const std::string& flag,
                      int64_t max = std::numeric_limits<int64_t>::max());
// Comma-separated positive integers up to `max` (at least one).
std::vector<int64_t> ParsePositiveList(const std::string& text, const std::string& program,
                                       const std::string& flag,
                                       int64_t max = std::numeric_limits<int64_t>::max());

struct FlagHandler {
  std::string flag;  // "--threads"
  std::function<void(const std::string& value)> handle;
};

// The --threads flag: a comma-separated list of positive thread counts, into `threads`.
FlagHandler ThreadCountsFlag(const std::string& program, std::vector<int>* threads);

// Reads argv[1..] as "--flag value" pairs and hands each value to its flag's handler (a
// flag given twice: the last value wins). A missing value or an unknown flag is a
// loom::Error naming `program` and the accepted flags; handlers throw their own.
void ParseFlags(int argc, char** argv, const std::string& program,
                const std::vector<FlagHandler>& handlers);

// Per-call seconds of each function. After a warm-up, each of `samples` rounds times every
// function in turn (round-robin, so a noisy neighbour slows them all alike) as one batch of
// back-to-back calls; a function's batch is as long as its calls need to last
// `min_sample_seconds` (one call when 0). Before each timed batch the caller waits, untimed
// and busy (a sleeping core starts the batch cold), long enough for the idle threads of
// every library's pool to stop spinning (see
// RunPerThreadCount), so that no batch shares the cores with the previous library's
// spinning threads. Returns each function's median over the rounds.
std::vector<double> MedianSeconds(const std::vector<std::function<void()>>& calls, int samples,
                                  double min_sample_seconds = 0);

// True in a child started by RunPerThreadCount.
bool InThreadCountChild();

// Runs this program (/proc/self/exe) once per thread count, in turn, each in a child process
// with the arguments `child_args(threads)` (argv[0] included) and an environment that fixes
// every library's thread count when it loads (LOOM_NUM_THREADS, OMP_NUM_THREADS), and adds
// what `set_environment(threads)` sets. Returns 0 when every child exited with 0, else 1 after the
// first that did not.
int RunPerThreadCount(const std::string& program, const std::vector<int>& threads,
                      const std::function<std::vector<std::string>(int threads)>& child_args,
                      const std::function<void(int threads)>& set_environment = {});

// printf into a string.
std::string Format(const char* format, ...) __attribute__((format(printf, 1, 2)));
// Prints `line` and a newline to stdout and flushes, so that a partial run, or one piped to a
// file, keeps every line it measured.
void PrintLine(const std::string& line);

// The geometric mean of positive ratios (1 for none).
double GeometricMean(const std::vector<double>& ratios);

// A benchmark program's main: `parse` reads the options (a loom::Error there is one line on
// stderr and exit code 2); a thread-count child (one count) then returns `run_child`, the
// parent `run_parent` (which starts the children); a failure is one line and exit code 1.
template <typename Options>
int BenchMain(int argc, char** argv, const std::function<Options(int, char**)>& parse,
              const std::function<int(const Options&)>& run_child,
              const std::function<int(const Options&)>& run_parent) {
  Options options;
  try {
    options = parse(argc, argv);
  } catch (const Error& error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 2;
  }
  try {
    if (InThreadCountChild()) {
      LOOM_ICHECK(options.threads.size() == 1) << "one thread count per child";
      return run_child(options);
    }
    return run_parent(options);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 1;
  }
}

}  // namespace loom::bench
