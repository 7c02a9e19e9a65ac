// The builder and the runner, each in child processes (fork), so that a candidate that crashes or
// hangs costs a measurement and not the tuner. A child reports one line through a pipe: "ok ..." or
// "<error kind> <message>".
#include "loom/autotune/measure.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <limits>
#include <sstream>
#include <thread>

#include "loom/runtime/device_api.h"
#include "loom/runtime/module.h"
#include "loom/runtime/ndarray.h"
#include "loom/runtime/thread_pool.h"
#include "loom/support/error.h"
#include "loom/target/build.h"
#include "loom/target/target_kind.h"

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

// How a child ended, as a failure (kNone when it reported a line).
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
    std::istringstream line(child.output);
    std::string kind;
    line >> kind;
    if (kind != "ok") {
      result.error = MeasureErrorFromName(kind);
      std::getline(line >> std::ws, result.message);
    }
  }
  return result;
}

// The kernel's description, beside its library, for the runner.
void WriteDescription(const graph::MeasurableKernel& kernel, const std::string& path) {
  std::ofstream out(path);
  auto step = [&](const graph::MeasurableKernel::Step& s) {
    out << s.function << " " << s.arguments.size();
    for (size_t a : s.arguments) out << " " << a;
    out << "\n";
  };
  out << kernel.buffers.size() << "\n";
  for (const auto& buffer : kernel.buffers) {
    out << buffer.dtype.str() << " " << buffer.input << " " << buffer.weight << " "
        << buffer.shape.size();
    for (int64_t extent : buffer.shape) out << " " << extent;
    out << "\n";
  }
  out << kernel.setup.size() << "\n";
  for (const auto& s : kernel.setup) step(s);
  step(kernel.timed);
  out << kernel.finish.size() << "\n";
  for (const auto& s : kernel.finish) step(s);
  out << kernel.result << "\n";
}

struct Description {
  struct Buffer {
    DataType dtype = DataType::Float(32);
    bool input = false, weight = false;
    std::vector<int64_t> shape;
  };
  std::vector<Buffer> buffers;
  std::vector<graph::MeasurableKernel::Step> setup, finish;
  graph::MeasurableKernel::Step timed;
  size_t result = 0;
};

Description ReadDescription(const std::string& path) {
  std::ifstream in(path);
  Description d;
  auto step = [&] {
    graph::MeasurableKernel::Step s;
    size_t count = 0;
    in >> s.function >> count;
    s.arguments.resize(count);
    for (size_t& a : s.arguments) in >> a;
    return s;
  };
  size_t count = 0;
  in >> count;
  for (size_t i = 0; i < count; ++i) {
    Description::Buffer buffer;
    std::string dtype;
    size_t rank = 0;
    in >> dtype >> buffer.input >> buffer.weight >> rank;
    buffer.dtype = DataType::Parse(dtype);
    buffer.shape.resize(rank);
    for (int64_t& extent : buffer.shape) in >> extent;
    d.buffers.push_back(std::move(buffer));
  }
  in >> count;
  for (size_t i = 0; i < count; ++i) d.setup.push_back(step());
  d.timed = step();
  in >> count;
  for (size_t i = 0; i < count; ++i) d.finish.push_back(step());
  in >> d.result;
  LOOM_ICHECK(in) << "the kernel description " << path << " is incomplete";
  return d;
}

// Values from a fixed sequence, so that every candidate sees the same inputs: in [-1, 1] for
// float32, integers in [-128, 127] (int8's range) for an integer type.
void FillRandom(const runtime::NDArray& array, uint64_t seed) {
  const DataType dtype = array.dtype();
  const int64_t n = array.NumElements();
  uint64_t state = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (int64_t i = 0; i < n; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const double unit = static_cast<double>(state >> 40) / double(1 << 23) - 1.0;  // [-1, 1)
    const int64_t integer = static_cast<int64_t>(std::floor(unit * 128));
    if (dtype == DataType::Float(32))
      static_cast<float*>(array.data())[i] = float(unit);
    else if (dtype == DataType::Int(8))
      static_cast<int8_t*>(array.data())[i] = int8_t(integer);
    else if (dtype == DataType::Int(32))
      static_cast<int32_t*>(array.data())[i] = int32_t(integer);
    else
      LOOM_THROW << "a measured kernel's input is " << dtype.str() << "; float32, int8 or int32";
  }
}

// The values of a host array of a type FillRandom fills, as doubles (to compare results).
std::vector<double> ValuesOf(const runtime::NDArray& array) {
  const DataType dtype = array.dtype();
  std::vector<double> values(static_cast<size_t>(array.NumElements()));
  auto read = [&](const auto* data) { std::copy(data, data + values.size(), values.begin()); };
  if (dtype == DataType::Float(32))
    read(static_cast<const float*>(array.data()));
  else if (dtype == DataType::Int(8))
    read(static_cast<const int8_t*>(array.data()));
  else if (dtype == DataType::Int(32))
    read(static_cast<const int32_t*>(array.data()));
  else
    LOOM_THROW << "a measured kernel's result is " << dtype.str() << "; float32, int8 or int32";
  return values;
}

std::vector<runtime::NDArray> Arguments(const std::vector<runtime::NDArray>& buffers,
                                        const graph::MeasurableKernel::Step& step) {
  std::vector<runtime::NDArray> args;
  for (size_t a : step.arguments) args.push_back(buffers[a]);
  return args;
}

// Writes over a buffer larger than the last-level cache, so that the next call starts cold.
void FlushCaches() {
  static std::vector<char> buffer(size_t{256} << 20);
  static char value = 0;
  std::memset(buffer.data(), ++value, buffer.size());
}

// Writes back and drops every cache line of `arrays` from every cache level, so that their next
// reads come from memory. The runtime's pool does it, each thread a share of the lines: the work
// is quicker, and the workers are awake, not asleep, when the timed call starts (a kernel timed
// after an eviction on the calling thread alone paid the workers' wake-up).
void EvictFromCaches(const std::vector<const runtime::NDArray*>& arrays) {
  struct Ranges {
    std::vector<std::pair<const char*, size_t>> bytes;
  } ranges;
  for (const runtime::NDArray* array : arrays) {
    ranges.bytes.emplace_back(static_cast<const char*>(array->data()),
                              static_cast<size_t>(array->NumElements()) * array->dtype().bytes());
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
  LOOM_ICHECK(runtime::ThreadPool::Global().Launch(evict, &ranges, 0) == 0)
      << "evicting the weights from the caches failed";
}

// The runner's child: loads the library, runs the kernel, checks and times it. The kernel's
// tensors live on `device` (configured as `configuration` when it comes in several); a
// simulated device's modelled time replaces the host's wall time.
std::string RunKernel(const std::string& library, const std::string& description,
                      const std::string& reference, bool write_reference,
                      const MeasureOptions& options, DLDevice device,
                      const std::string& configuration) {
  const Description d = ReadDescription(description);
  runtime::DeviceAPI* api = runtime::GetDeviceAPI(static_cast<DLDeviceType>(device.device_type));
  if (!configuration.empty()) api->SetConfiguration(configuration);
  runtime::Module module = runtime::LoadModuleFromFile(library);
  std::vector<runtime::NDArray> buffers;
  for (size_t i = 0; i < d.buffers.size(); ++i) {
    runtime::NDArray host = runtime::NDArray::Empty(d.buffers[i].shape, d.buffers[i].dtype);
    // Inputs random, the rest zeros: a run never depends on what the heap held before.
    if (d.buffers[i].input)
      FillRandom(host, i + 1);
    else
      std::memset(host.data(), 0, host.NumBytes());
    buffers.push_back(device.device_type == kDLCPU ? host : host.CopyTo(device));
  }
  auto call = [&](const graph::MeasurableKernel::Step& step) {
    module.GetRequiredFunction(step.function).CallWithArrays(Arguments(buffers, step));
    if (device.device_type != kDLCPU) api->StreamSync(device);
  };
  for (const auto& step : d.setup) call(step);
  api->TakeSimulatedSeconds();  // the setup's
  Clock::time_point first = Clock::now();
  call(d.timed);
  const double first_seconds = SecondsSince(first);
  const std::optional<double> simulated = api->TakeSimulatedSeconds();
  for (const auto& step : d.finish) call(step);

  const std::vector<double> got = ValuesOf(buffers[d.result].CopyTo(runtime::kHostDevice));
  const size_t n = got.size();
  if (write_reference) {
    std::ofstream(reference, std::ios::binary)
        .write(reinterpret_cast<const char*>(got.data()),
               static_cast<std::streamsize>(n * sizeof(double)));
  } else {
    std::vector<double> want(n);
    std::ifstream(reference, std::ios::binary)
        .read(reinterpret_cast<char*>(want.data()),
              static_cast<std::streamsize>(n * sizeof(double)));
    double largest = 0, worst = 0;
    size_t worst_at = 0;
    for (size_t i = 0; i < n; ++i) largest = std::max(largest, std::fabs(want[i]));
    for (size_t i = 0; i < n; ++i) {
      const double diff = std::fabs(got[i] - want[i]);
      if (!(diff <= worst)) worst = diff, worst_at = i;  // NaN counts as the worst
    }
    if (!(worst <= options.tolerance * std::max(largest, 1.0))) {
      std::ostringstream text;
      text << "wrong_result element " << worst_at << " is " << got[worst_at] << ", the default "
           << "point computes " << want[worst_at] << " (|diff| " << worst << ")";
      return text.str();
    }
  }
  std::ostringstream text;
  text << std::setprecision(17) << "ok";
  if (simulated) {
    // The model's time is the same on every run: one is the measurement.
    for (int r = 0; r < options.repeat; ++r) text << " " << *simulated;
    return text.str();
  }
  // Enough calls per timing to last min_repeat_ms.
  const int64_t number = std::max<int64_t>(
      1,
      static_cast<int64_t>(std::ceil(options.min_repeat_ms / 1e3 / std::max(first_seconds, 1e-9))));
  std::vector<const runtime::NDArray*> weights;
  for (size_t a : d.timed.arguments) {
    if (d.buffers[a].weight && options.cold_weights) weights.push_back(&buffers[a]);
  }
  runtime::PackedFunc timed = module.GetRequiredFunction(d.timed.function);
  const std::vector<runtime::NDArray> timed_arguments = Arguments(buffers, d.timed);
  for (int r = 0; r < options.repeat; ++r) {
    if (options.flush_cache) FlushCaches();
    double seconds = 0;
    if (weights.empty()) {
      Clock::time_point start = Clock::now();
      for (int64_t i = 0; i < number; ++i) timed.CallWithArrays(timed_arguments);
      seconds = SecondsSince(start);
    } else {
      for (int64_t i = 0; i < number; ++i) {
        EvictFromCaches(weights);
        Clock::time_point start = Clock::now();
        timed.CallWithArrays(timed_arguments);
        seconds += SecondsSince(start);
      }
    }
    text << " " << seconds / static_cast<double>(number);
  }
  return text.str();
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
        std::istringstream(children[i].output.substr(3)) >> built[i].failure.build_seconds;
      }
    }
  }
  return built;
}

MeasureResult Measurer::Run(const Built& built, bool reference) {
  const std::string reference_path = folder_ + "/reference.bin";
  Child child = StartChild([&] {
    try {
      return RunKernel(built.library, built.description, reference_path, reference, options_,
                       device_, configuration_);
    } catch (const std::exception& e) {
      std::string message = e.what();
      std::replace(message.begin(), message.end(), '\n', ' ');
      return "runtime_error " + message;
    }
  });
  WaitAll({&child}, options_.run_timeout_s);
  MeasureResult result = Outcome(child, options_.run_timeout_s, "running");
  result.build_seconds = built.failure.build_seconds;
  if (result.error == MeasureError::kNone) {
    std::istringstream line(child.output.substr(3));
    double cost = 0;
    while (line >> cost) result.costs.push_back(cost);
  }
  return result;
}

void Measurer::Discard(const Built& built) {
  std::error_code ignored;
  std::filesystem::remove(built.library, ignored);
  std::filesystem::remove(built.description, ignored);
}

void Measurer::MeasureReference() {
  if (have_reference_) return;
  const topi::Config fallback =
      graph::FindTuningTemplate(workload_.template_name).default_config(workload_.args);
  std::vector<Built> built = Build({fallback});
  MeasureResult result = built[0].failure;
  if (result.error == MeasureError::kNone) result = Run(built[0], /*reference=*/true);
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
  std::vector<std::vector<MeasureResult>> results(configs.size());
  for (int round = 0; round < rounds; ++round) {
    for (size_t k = 0; k < built.size(); ++k) {
      const size_t i = (k + static_cast<size_t>(round)) % built.size();
      const Built& b = built[i];
      results[i].push_back(b.failure.error == MeasureError::kNone ? Run(b, /*reference=*/false)
                                                                  : b.failure);
    }
  }
  for (const Built& b : built) Discard(b);
  return results;
}

}  // namespace loom::autotune
