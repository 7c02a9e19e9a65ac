// The builder and the runner, each in child processes (fork), so that a candidate that crashes or
// hangs costs a measurement and not the tuner. A child reports one line through a pipe: "ok ..." or
// "<error kind> <message>".
#include "loom/autotune/measure.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <sstream>
#include <thread>

#include "kernel_check.h"
#include "loom/runtime/device_api.h"
#include "loom/support/error.h"
#include "loom/target/build.h"
#include "loom/target/target_kind.h"
#include "remote_measure.h"

namespace loom::autotune {

namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A child process running `work`, whose returned line comes back through a pipe.
struct Child {
  pid_t pid = -1;
  int fd = -1;
  Clock::time_point start;
  std::string output;
  bool done = false;
  int status = 0;
  bool timed_out = false;
};

Child StartChild(const std::function<std::string()>& work) {
  int fds[2];
  LOOM_CHECK_USER(pipe(fds) == 0) << "measure: cannot make a pipe: " << std::strerror(errno);
  std::fflush(nullptr);  // nothing buffered is written twice
  pid_t pid = fork();
  LOOM_CHECK_USER(pid >= 0) << "measure: cannot fork: " << std::strerror(errno);
  if (pid == 0) {
    close(fds[0]);
    std::string line;
    try {
      line = work();
    } catch (const std::exception& e) {
      line = std::string("runtime_error ") + e.what();
    }
    size_t written = 0;
    while (written < line.size()) {
      ssize_t n = write(fds[1], line.data() + written, line.size() - written);
      if (n <= 0) break;
      written += static_cast<size_t>(n);
    }
    close(fds[1]);
    _exit(0);  // no exit handlers: they belong to the parent
  }
  close(fds[1]);
  fcntl(fds[0], F_SETFL, O_NONBLOCK);
  Child child;
  child.pid = pid;
  child.fd = fds[0];
  child.start = Clock::now();
  return child;
}

void Drain(Child& child) {
  char buffer[4096];
  while (true) {
    ssize_t n = read(child.fd, buffer, sizeof buffer);
    if (n <= 0) break;
    child.output.append(buffer, static_cast<size_t>(n));
  }
}

// Waits until every child has exited or passed `timeout_s` (then it is killed).
void WaitAll(std::vector<Child*> children, double timeout_s) {
  while (true) {
    bool running = false;
    for (Child* child : children) {
      if (child->done) continue;
      Drain(*child);
      pid_t got = waitpid(child->pid, &child->status, WNOHANG);
      if (got == child->pid) {
        Drain(*child);
        close(child->fd);
        child->done = true;
        continue;
      }
      if (SecondsSince(child->start) > timeout_s) {
        kill(child->pid, SIGKILL);
        waitpid(child->pid, &child->status, 0);
        close(child->fd);
        child->done = child->timed_out = true;
        continue;
      }
      running = true;
    }
    if (!running) return;
    std::vector<pollfd> fds;
    for (Child* child : children) {
      if (!child->done) fds.push_back({child->fd, POLLIN, 0});
    }
    poll(fds.data(), fds.size(), 5);
  }
}

// How a child ended: a failure, or its report parsed.
MeasureResult Outcome(const Child& child, double timeout_s, const char* what) {
  MeasureResult result;
  if (child.timed_out) {
    result.error = MeasureError::kTimeout;
    result.message = std::string(what) + " took longer than " + std::to_string(timeout_s) + " s";
  } else if (WIFSIGNALED(child.status)) {
    result.error = MeasureError::kRuntimeError;
    result.message = std::string(what) + " was killed by signal " +
                     std::to_string(WTERMSIG(child.status)) + " (" +
                     strsignal(WTERMSIG(child.status)) + ")";
  } else if (child.output.empty()) {
    result.error = MeasureError::kRuntimeError;
    result.message = std::string(what) + " exited without a report";
  } else {
    result = ParseReport(child.output);
  }
  return result;
}

}  // namespace

const char* MeasureErrorName(MeasureError error) {
  switch (error) {
    case MeasureError::kNone:
      return "none";
    case MeasureError::kCompileError:
      return "compile_error";
    case MeasureError::kRuntimeError:
      return "runtime_error";
    case MeasureError::kTimeout:
      return "timeout";
    case MeasureError::kWrongResult:
      return "wrong_result";
  }
  return "?";
}

MeasureError MeasureErrorFromName(const std::string& name) {
  for (MeasureError e :
       {MeasureError::kNone, MeasureError::kCompileError, MeasureError::kRuntimeError,
        MeasureError::kTimeout, MeasureError::kWrongResult}) {
    if (name == MeasureErrorName(e)) return e;
  }
  LOOM_THROW << "unknown measurement error kind '" << name
             << "' (expected none, compile_error, runtime_error, timeout or "
                "wrong_result)";
}

double MeasureResult::cost() const {
  if (error != MeasureError::kNone || costs.empty()) return std::numeric_limits<double>::infinity();
  std::vector<double> sorted = costs;
  std::sort(sorted.begin(), sorted.end());
  return sorted[sorted.size() / 2];
}

struct Measurer::Built {
  MeasureResult failure;  // a build failure, else error kNone
  std::string library, description;
};

Measurer::Measurer(graph::TuningWorkload workload, Target target, MeasureOptions options)
    : workload_(std::move(workload)), target_(std::move(target)), options_(options) {
  graph::FindTuningTemplate(workload_.template_name);
  LOOM_CHECK_USER(options_.repeat >= 1 && options_.min_repeat_ms >= 0 &&
                  options_.build_timeout_s > 0 && options_.run_timeout_s > 0 &&
                  options_.tolerance >= 0 && options_.build_parallel >= 0)
      << "Measurer: repeat must be at least 1, the timeouts positive and "
         "min_repeat_ms, "
      << "tolerance and build_parallel not negative";
  if (options_.build_parallel == 0) {
    options_.build_parallel = std::max(1u, std::thread::hardware_concurrency());
  }
  std::string pattern = (std::filesystem::temp_directory_path() / "loom-measure-XXXXXX").string();
  LOOM_CHECK_USER(mkdtemp(pattern.data()) != nullptr)
      << "Measurer: cannot make a temporary folder: " << std::strerror(errno);
  folder_ = pattern;
  const TargetKind& kind = target_.kind_def();
  device_ = DLDevice{static_cast<DLDeviceType>(kind.device_type), 0};
  if (kind.device_configuration) configuration_ = kind.device_configuration(target_);
  LOOM_CHECK_USER(!options_.remote.enabled() || device_.device_type == kDLCPU)
      << "Measurer: remote devices measure CPU kernels; " << target_.str()
      << " runs its kernels on another device: tune it on a machine that has the device";
  LOOM_CHECK_USER(!options_.remote.enabled() || !options_.remote.device_key.empty())
      << "Measurer: measuring on a tracker's devices needs their device key";
}

Measurer::~Measurer() {
  std::error_code ignored;
  std::filesystem::remove_all(folder_, ignored);
}

std::vector<Measurer::Built> Measurer::Build(const std::vector<topi::Config>& configs) {
  std::vector<Built> built(configs.size());
  std::vector<Child> children(configs.size());
  for (size_t first = 0; first < configs.size(); first += options_.build_parallel) {
    const size_t last = std::min(configs.size(), first + options_.build_parallel);
    std::vector<Child*> batch;
    for (size_t i = first; i < last; ++i) {
      const std::string stem = folder_ + "/c" + std::to_string(serial_++);
      built[i].library = stem + ".so";
      built[i].description = stem + ".txt";
      children[i] = StartChild([&, i] {
        Clock::time_point start = Clock::now();
        try {
          const graph::TuningTemplate& t = graph::FindTuningTemplate(workload_.template_name);
          graph::MeasurableKernel kernel = t.instantiate(workload_.args, configs[i]);
          ExportLibrary(build(kernel.module, target_), built[i].library);
          WriteDescription(kernel, built[i].description);
        } catch (const std::exception& e) {
          std::string message = e.what();
          std::replace(message.begin(), message.end(), '\n', ' ');
          return "compile_error " + message;
        }
        return "ok " + std::to_string(SecondsSince(start));
      });
      batch.push_back(&children[i]);
    }
    WaitAll(batch, options_.build_timeout_s);
    for (size_t i = first; i < last; ++i) {
      built[i].failure = Outcome(children[i], options_.build_timeout_s, "building");
      if (built[i].failure.error == MeasureError::kRuntimeError) {
        // A crash while building is the compiler's failure on this point.
        built[i].failure.error = MeasureError::kCompileError;
      }
      if (built[i].failure.error == MeasureError::kNone) {
        // The builder reports its seconds.
        built[i].failure.build_seconds = built[i].failure.costs.at(0);
        built[i].failure.costs.clear();
      }
    }
  }
  return built;
}

MeasureResult Measurer::Run(const Built& built, bool reference) {
  const std::string reference_path = folder_ + "/reference.bin";
  Child child = StartChild([&] {
    try {
      LocalKernelHost host(device_, configuration_);
      return CheckAndTime(host, built.library, built.description, reference_path, reference,
                          options_);
    } catch (const std::exception& e) {
      std::string message = e.what();
      std::replace(message.begin(), message.end(), '\n', ' ');
      return "runtime_error " + message;
    }
  });
  WaitAll({&child}, options_.run_timeout_s);
  MeasureResult result = Outcome(child, options_.run_timeout_s, "running");
  result.build_seconds = built.failure.build_seconds;
  return result;
}

void Measurer::Discard(const Built& built) {
  std::error_code ignored;
  std::filesystem::remove(built.library, ignored);
  std::filesystem::remove(built.description, ignored);
}

std::vector<MeasureResult> Measurer::RunAll(const std::vector<const Built*>& built,
                                            bool reference) {
  std::vector<MeasureResult> results(built.size());
  std::vector<KernelFiles> remote_kernels;
  std::vector<size_t> remote_positions;
  for (size_t i = 0; i < built.size(); ++i) {
    if (built[i]->failure.error != MeasureError::kNone) {
      results[i] = built[i]->failure;
    } else if (options_.remote.enabled()) {
      remote_kernels.push_back({built[i]->library, built[i]->description});
      remote_positions.push_back(i);
    } else {
      results[i] = Run(*built[i], reference);
    }
  }
  if (remote_kernels.empty()) return results;
  std::vector<MeasureResult> measured =
      MeasureOnRemoteDevices(remote_kernels, folder_ + "/reference.bin", reference, options_);
  for (size_t k = 0; k < measured.size(); ++k) {
    const size_t i = remote_positions[k];
    results[i] = std::move(measured[k]);
    results[i].build_seconds = built[i]->failure.build_seconds;
  }
  return results;
}

void Measurer::MeasureReference() {
  if (have_reference_) return;
  const topi::Config fallback =
      graph::FindTuningTemplate(workload_.template_name).default_config(workload_.args);
  std::vector<Built> built = Build({fallback});
  MeasureResult result = RunAll({&built[0]}, /*reference=*/true)[0];
  Discard(built[0]);
  LOOM_CHECK_USER(result.error == MeasureError::kNone)
      << "cannot tune " << workload_.str() << ": its default point {" << fallback.str()
      << "} failed (" << MeasureErrorName(result.error) << ": " << result.message << ")";
  reference_ = result;
  have_reference_ = true;
}

std::vector<MeasureResult> Measurer::Measure(const std::vector<topi::Config>& configs) {
  std::vector<std::vector<MeasureResult>> rounds = MeasureRounds(configs, 1);
  std::vector<MeasureResult> results;
  for (std::vector<MeasureResult>& config_results : rounds) results.push_back(config_results[0]);
  return results;
}

std::vector<std::vector<MeasureResult>> Measurer::MeasureRounds(
    const std::vector<topi::Config>& configs, int rounds) {
  LOOM_CHECK_USER(rounds >= 1) << "MeasureRounds: rounds must be at least 1, got " << rounds;
  MeasureReference();
  std::vector<Built> built = Build(configs);
  // Round r runs the configs in turn from the r-th on (on remote devices, several at once).
  std::vector<const Built*> order;
  std::vector<size_t> config_of;
  for (int round = 0; round < rounds; ++round) {
    for (size_t k = 0; k < built.size(); ++k) {
      const size_t i = (k + static_cast<size_t>(round)) % built.size();
      order.push_back(&built[i]);
      config_of.push_back(i);
    }
  }
  std::vector<MeasureResult> measured = RunAll(order, /*reference=*/false);
  std::vector<std::vector<MeasureResult>> results(configs.size());
  for (size_t k = 0; k < measured.size(); ++k) results[config_of[k]].push_back(measured[k]);
  for (const Built& b : built) Discard(b);
  return results;
}

}  // namespace loom::autotune
