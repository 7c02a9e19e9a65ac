#include "kernel_check.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "loom/support/error.h"

namespace loom::autotune {

namespace {

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

}  // namespace

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

std::string CheckAndTime(KernelHost& host, const std::string& library,
                         const std::string& description, const std::string& reference,
                         bool write_reference, const MeasureOptions& options) {
  const Description d = ReadDescription(description);
  host.Load(library);
  for (size_t i = 0; i < d.buffers.size(); ++i) {
    runtime::NDArray initial = runtime::NDArray::Empty(d.buffers[i].shape, d.buffers[i].dtype);
    // Inputs random, the rest zeros: a run never depends on what the heap held before.
    if (d.buffers[i].input)
      FillRandom(initial, i + 1);
    else
      std::memset(initial.data(), 0, initial.NumBytes());
    host.Add(initial);
  }
  for (const auto& step : d.setup) host.Call(step.function, step.arguments);
  host.TakeSimulatedSeconds();  // the setup's
  host.Call(d.timed.function, d.timed.arguments);
  const std::optional<double> simulated = host.TakeSimulatedSeconds();
  for (const auto& step : d.finish) host.Call(step.function, step.arguments);

  const std::vector<double> got = ValuesOf(host.Read(d.result));
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
  runtime::TimeOptions timing;
  timing.repeat = options.repeat;
  timing.min_repeat_ms = options.min_repeat_ms;
  timing.flush_caches = options.flush_cache;
  for (size_t position = 0; position < d.timed.arguments.size(); ++position) {
    if (options.cold_weights && d.buffers[d.timed.arguments[position]].weight) {
      timing.cold_arguments.push_back(position);
    }
  }
  for (double seconds : host.Time(d.timed.function, d.timed.arguments, timing)) {
    text << " " << seconds;
  }
  return text.str();
}

MeasureResult ParseReport(const std::string& report) {
  MeasureResult result;
  std::istringstream line(report);
  std::string kind;
  line >> kind;
  if (kind != "ok") {
    result.error = MeasureErrorFromName(kind);
    std::getline(line >> std::ws, result.message);
    return result;
  }
  double number = 0;
  while (line >> number) result.costs.push_back(number);
  return result;
}

LocalKernelHost::LocalKernelHost(DLDevice device, const std::string& configuration)
    : device_(device), api_(runtime::GetDeviceAPI(static_cast<DLDeviceType>(device.device_type))) {
  if (!configuration.empty()) api_->SetConfiguration(configuration);
}

void LocalKernelHost::Load(const std::string& library) {
  module_ = runtime::LoadModuleFromFile(library);
}

void LocalKernelHost::Add(const runtime::NDArray& initial) {
  buffers_.push_back(device_.device_type == kDLCPU ? initial : initial.CopyTo(device_));
}

std::vector<runtime::NDArray> LocalKernelHost::Arguments(const std::vector<size_t>& buffers) const {
  std::vector<runtime::NDArray> args;
  for (size_t b : buffers) args.push_back(buffers_[b]);
  return args;
}

void LocalKernelHost::Call(const std::string& function, const std::vector<size_t>& buffers) {
  module_.GetRequiredFunction(function).CallWithArrays(Arguments(buffers));
  if (device_.device_type != kDLCPU) api_->StreamSync(device_);
}

runtime::NDArray LocalKernelHost::Read(size_t buffer) {
  return buffers_[buffer].CopyTo(runtime::kHostDevice);
}

std::vector<double> LocalKernelHost::Time(const std::string& function,
                                          const std::vector<size_t>& buffers,
                                          const runtime::TimeOptions& options) {
  return runtime::TimeFunction(module_.GetRequiredFunction(function), Arguments(buffers), options);
}

std::optional<double> LocalKernelHost::TakeSimulatedSeconds() {
  return api_->TakeSimulatedSeconds();
}

}  // namespace loom::autotune
