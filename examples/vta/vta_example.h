// What the VTA example programs share: the command line (--print-ir, --no-virtual-threads),
// compiling a schedule for the vta target (timed), running on the simulator with the hazard
// checker on, and printing the simulator's counters and cycles.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "loom/ir/printer.h"
#include "loom/runtime/ndarray.h"
#include "loom/target/build.h"
#include "loom/vta/compiler/passes.h"
#include "loom/vta/runtime.h"

namespace loom::vta::example {

struct Options {
  bool print_ir = false;        // print the lowered function
  bool print_insn = false;      // print the instruction stream the runtime runs (stderr)
  bool virtual_threads = true;  // --no-virtual-threads: one thread (to compare)
  std::string config;           // --config FILE: the VTA configuration (JSON); empty: default
};

// The flags a program takes besides --print-ir and --print-insn.
enum Flag : unsigned { kNoVirtualThreadsFlag = 1, kConfigFlag = 2 };

inline Options ParseOptions(int argc, char** argv, unsigned accepted) {
  Options options;
  auto usage = [&] {
    std::cerr << "usage: " << argv[0] << " [--print-ir] [--print-insn]"
              << ((accepted & kNoVirtualThreadsFlag) ? " [--no-virtual-threads]" : "")
              << ((accepted & kConfigFlag) ? " [--config FILE]" : "") << "\n";
    std::exit(2);
  };
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--print-ir") == 0) {
      options.print_ir = true;
    } else if (std::strcmp(argv[i], "--print-insn") == 0) {
      options.print_insn = true;
    } else if ((accepted & kConfigFlag) && std::strcmp(argv[i], "--config") == 0 && i + 1 < argc) {
      options.config = argv[++i];
    } else if ((accepted & kNoVirtualThreadsFlag) &&
               std::strcmp(argv[i], "--no-virtual-threads") == 0) {
      options.virtual_threads = false;
    } else {
      usage();
    }
  }
  return options;
}

// A program's main: parses the command line (the flags `accepted` takes besides the printing
// ones), runs `body`, and turns an error into a message on stderr and exit status 1.
template <typename Body>
int Main(int argc, char** argv, unsigned accepted, Body body) {
  const Options options = ParseOptions(argc, argv, accepted);
  try {
    return body(options);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "error: %s\n", error.what());
    return 1;
  }
}

// The configuration --config names (the default without it), which the runtime's device then
// has too: the compiler and the device must agree on it.
inline VTAConfig Configure(const Options& options) {
  VTAConfig config =
      options.config.empty() ? VTAConfig::Default() : VTAConfig::FromFile(options.config);
  SetRuntimeConfig(config);
  return config;
}

inline double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// vta::lower, then build for the vta target; prints the lowered function when asked and the
// time each step took.
inline runtime::Module Compile(const Environment& env, const te::Schedule& schedule,
                               const Array<te::Tensor>& args, const std::string& name,
                               const Options& options) {
  auto start = std::chrono::steady_clock::now();
  PrimFunc lowered = lower(env, schedule, args, name);
  const double lower_ms = MillisecondsSince(start);
  if (options.print_ir) std::cout << ToScript(lowered) << "\n";
  start = std::chrono::steady_clock::now();
  runtime::Module module = build(lowered, Target::Parse("vta"));
  const double build_ms = MillisecondsSince(start);
  std::printf("compile lower_ms=%.1f build_ms=%.1f\n", lower_ms, build_ms);
  return module;
}

inline const DLDevice kVta{kDLExtDev, 0};
inline const DLDevice kCpu{kDLCPU, 0};

// Random int8 values in [low, high] on the host.
inline runtime::NDArray RandomInt8(const std::vector<int64_t>& shape, int low, int high,
                                   unsigned seed) {
  runtime::NDArray host = runtime::NDArray::Empty(shape, DataType::Int(8), kCpu);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> value(low, high);
  auto* data = static_cast<int8_t*>(host->data);
  for (int64_t i = 0; i < host.NumElements(); ++i) data[i] = static_cast<int8_t>(value(rng));
  return host;
}

// A tensor's shape, its extents constants.
inline std::vector<int64_t> ShapeOf(const te::Tensor& tensor) {
  std::vector<int64_t> shape;
  for (const PrimExpr& extent : tensor.shape()) shape.push_back(extent.as<IntImmNode>()->value);
  return shape;
}

// The int8 values of a host array.
inline const int8_t* Values(const runtime::NDArray& host) {
  return static_cast<const int8_t*>(host->data);
}

inline runtime::NDArray ToDevice(const runtime::NDArray& host) {
  runtime::NDArray device = runtime::NDArray::Empty(host.Shape(), host.dtype(), kVta);
  device.CopyFrom(host);
  return device;
}

inline runtime::NDArray ToHost(const runtime::NDArray& device) {
  runtime::NDArray host = runtime::NDArray::Empty(device.Shape(), device.dtype(), kCpu);
  host.CopyFrom(device);
  return host;
}

// Runs `function` on the simulator with the hazard checker on (a missing token is an error; with
// --print-insn the program's listing goes to stderr), then prints one line per counter and the
// cycle line of the run.
template <typename... Args>
void RunAndReport(const runtime::Module& module, const std::string& name, const Options& options,
                  Args&&... args) {
  VTACommandHandle cmd = VTATLSCommandHandle();
  VTASetDebugMode(cmd, VTA_DEBUG_CHECK_HAZARDS | (options.print_insn ? VTA_DEBUG_DUMP_INSN : 0));
  module.GetFunction(name)(std::forward<Args>(args)...);
  ThrowIfLastError();
  const SimReport& report = LastRun(cmd).report;
  std::fputs(CounterLines(report.counters, report.timing).c_str(), stdout);
}

// Compares the result with the reference; prints the first mismatch. The exit status.
inline int Check(const runtime::NDArray& result, const std::vector<int8_t>& expected) {
  runtime::NDArray host = ToHost(result);
  const int8_t* got = Values(host);
  for (size_t i = 0; i < expected.size(); ++i) {
    if (got[i] != expected[i]) {
      std::printf("MISMATCH at element %zu: VTA %d, reference %d\n", i, got[i], expected[i]);
      return 1;
    }
  }
  std::printf("result matches the CPU reference bit for bit (%zu values)\n", expected.size());
  return 0;
}

}  // namespace loom::vta::example
