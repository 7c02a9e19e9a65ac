#include "loom/rpc/protocol.h"

#include <unistd.h>

#include <cstdio>
#include <sstream>
#include <thread>

#include "loom/runtime/cpu_features.h"
#include "loom/runtime/cpu_topology.h"
#include "loom/runtime/module.h"

namespace loom::rpc {

const char* OpName(Op op) {
  switch (op) {
    case Op::kHello:
      return "hello";
    case Op::kUpload:
      return "upload";
    case Op::kLoadModule:
      return "load module";
    case Op::kGetFunction:
      return "get function";
    case Op::kLoadExecutor:
      return "load executor";
    case Op::kAllocArray:
      return "allocate array";
    case Op::kWriteArray:
      return "write array";
    case Op::kReadArray:
      return "read array";
    case Op::kFree:
      return "free";
    case Op::kCallFunction:
      return "call function";
    case Op::kTimeFunction:
      return "time function";
    case Op::kSetInput:
      return "set input";
    case Op::kRun:
      return "run";
    case Op::kGetOutput:
      return "get output";
    case Op::kTimeRuns:
      return "time runs";
    case Op::kSetThreads:
      return "set threads";
    case Op::kClose:
      return "close";
  }
  return "unknown request";
}

void DeviceInfo::Write(Writer& w) const {
  w.Str(arch)
      .Str(device_key)
      .U32(static_cast<uint32_t>(physical_cores))
      .U32(static_cast<uint32_t>(logical_cpus))
      .U64(memory_bytes);
  w.U32(static_cast<uint32_t>(cpu_features.size()));
  for (const std::string& feature : cpu_features) w.Str(feature);
}

DeviceInfo DeviceInfo::Read(Reader& r) {
  DeviceInfo info;
  info.arch = r.Str(64);
  info.device_key = r.Str(256);
  info.physical_cores = static_cast<int>(r.U32());
  info.logical_cpus = static_cast<int>(r.U32());
  info.memory_bytes = r.U64();
  const uint32_t count = r.U32();
  if (count > 1024) r.Malformed("a list of " + std::to_string(count) + " CPU features");
  for (uint32_t i = 0; i < count; ++i) info.cpu_features.push_back(r.Str(64));
  return info;
}

std::string DeviceInfo::str() const {
  std::ostringstream text;
  char memory[32];
  std::snprintf(memory, sizeof memory, "%.1f GiB", static_cast<double>(memory_bytes) / (1 << 30));
  text << arch << ", " << physical_cores << " cores (" << logical_cpus << " CPUs), " << memory;
  if (!device_key.empty()) text << ", device key " << device_key;
  text << ", features:";
  if (cpu_features.empty()) text << " (none the runtime checks)";
  for (const std::string& feature : cpu_features) text << " " << feature;
  return text.str();
}

void TimeRequest::Write(Writer& w) const {
  w.U32(number).U32(repeat).F64(min_repeat_ms).U32(static_cast<uint32_t>(cold_arguments.size()));
  for (uint32_t position : cold_arguments) w.U32(position);
  w.U8(flush_caches ? 1 : 0);
}

TimeRequest TimeRequest::Read(Reader& r) {
  TimeRequest request;
  request.number = r.U32();
  request.repeat = r.U32();
  request.min_repeat_ms = r.F64();
  const uint32_t count = r.U32();
  if (count > 1024) r.Malformed(std::to_string(count) + " cold arguments");
  for (uint32_t i = 0; i < count; ++i) request.cold_arguments.push_back(r.U32());
  request.flush_caches = r.U8() != 0;
  return request;
}

TimeRequest TimeRequest::From(const runtime::TimeOptions& options) {
  TimeRequest request;
  request.number = static_cast<uint32_t>(options.number);
  request.repeat = static_cast<uint32_t>(options.repeat);
  request.min_repeat_ms = options.min_repeat_ms;
  request.cold_arguments.assign(options.cold_arguments.begin(), options.cold_arguments.end());
  request.flush_caches = options.flush_caches;
  return request;
}

runtime::TimeOptions TimeRequest::ToOptions() const {
  runtime::TimeOptions options;
  options.number = static_cast<int>(number);
  options.repeat = static_cast<int>(repeat);
  options.min_repeat_ms = min_repeat_ms;
  options.cold_arguments.assign(cold_arguments.begin(), cold_arguments.end());
  options.flush_caches = flush_caches;
  return options;
}

void ExecutorSignature::Write(Writer& w) const {
  w.Str(kind).U32(static_cast<uint32_t>(inputs.size()));
  for (const Input& input : inputs) {
    w.Str(input.name).Dtype(input.dtype).Shape(input.shape).Str(input.signature);
  }
  w.U32(static_cast<uint32_t>(outputs.size()));
  for (const std::string& output : outputs) w.Str(output);
}

ExecutorSignature ExecutorSignature::Read(Reader& r) {
  ExecutorSignature signature;
  signature.kind = r.Str(16);
  const uint32_t inputs = r.U32();
  if (inputs > 65536) r.Malformed(std::to_string(inputs) + " inputs");
  for (uint32_t i = 0; i < inputs; ++i) {
    Input input;
    input.name = r.Str();
    input.dtype = r.Dtype();
    input.shape = r.Shape(/*allow_unknown=*/true);
    input.signature = r.Str();
    signature.inputs.push_back(std::move(input));
  }
  const uint32_t outputs = r.U32();
  if (outputs > 65536) r.Malformed(std::to_string(outputs) + " outputs");
  for (uint32_t i = 0; i < outputs; ++i) signature.outputs.push_back(r.Str());
  return signature;
}

DeviceInfo HostDeviceInfo(const std::string& device_key) {
  DeviceInfo info;
  info.arch = runtime::HostArchitecture();
  info.device_key = device_key;
  info.physical_cores = runtime::PhysicalCoreCount();
  info.logical_cpus = static_cast<int>(std::thread::hardware_concurrency());
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
  info.memory_bytes = pages > 0 && page_size > 0 ? static_cast<uint64_t>(pages) * page_size : 0;
  info.cpu_features = runtime::HostCpuFeatures();
  return info;
}

}  // namespace loom::rpc
