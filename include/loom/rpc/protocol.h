// The messages of Loom's RPC (docs/rpc.md is their reference). A client opens a session on a
// server with kHello, then sends requests one at a time; each gets one reply: kReplyOk and
// the request's results, or kReplyError and a message (the session goes on). Trackers speak
// the same framing with their own requests (tracker.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "loom/rpc/wire.h"
#include "loom/runtime/time_evaluator.h"

namespace loom::rpc {

// Bumped whenever a message changes; both sides refuse a peer of another version.
inline constexpr uint32_t kProtocolVersion = 1;
// "LOOM" in the first field of every hello, so that a stray client is told apart from an
// old Loom.
inline constexpr uint32_t kMagic = 0x4d4f4f4c;

enum class Reply : uint8_t { kOk = 0, kError = 1 };

// A session's requests, in the order a client usually sends them.
enum class Op : uint8_t {
  kHello = 1,          // u32 magic, u32 version, str key, f64 call limit in s (0: the
                       // server's) -> u32 version, u64 max message bytes, DeviceInfo
  kUpload = 2,         // str name, u64 offset, blob -> (appends; offset 0 starts the file)
  kLoadModule = 3,     // str name -> u32 module
  kGetFunction = 4,    // u32 module, str name -> u32 function
  kLoadExecutor = 5,   // str name -> u32 executor, ExecutorSignature
  kAllocArray = 6,     // dtype, shape -> u32 array
  kWriteArray = 7,     // u32 array, u64 offset, blob
  kReadArray = 8,      // u32 array, u64 offset, u64 size -> blob
  kFree = 9,           // u8 HandleKind, u32 handle
  kCallFunction = 10,  // u32 function, u32 n, n x u32 array
  kTimeFunction = 11,  // u32 function, u32 n, n x u32 array, TimeRequest -> u32 n, n x f64 s
  kSetInput = 12,      // u32 executor, u32 input, u32 array
  kRun = 13,           // u32 executor
  kGetOutput = 14,     // u32 executor, u32 output -> u32 array, dtype, shape
  kTimeRuns = 15,      // u32 executor, u32 warmup, u32 repeat -> u32 n, n x f64 s
  kSetThreads = 16,    // u32 threads (0: one per physical core) -> u32 threads
  kClose = 17,         // -> (then the server ends the session)
};
const char* OpName(Op op);

enum class HandleKind : uint8_t { kModule = 1, kFunction = 2, kExecutor = 3, kArray = 4 };

// What a server tells a client about its device when a session opens.
struct DeviceInfo {
  std::string arch;        // "x86_64", "aarch64": the machine the server was built for
  std::string device_key;  // the key it registered with a tracker, or ""
  int physical_cores = 0;
  int logical_cpus = 0;
  uint64_t memory_bytes = 0;
  std::vector<std::string> cpu_features;  // the runtime's names ("avx512f", "neon", ...)

  void Write(Writer& w) const;
  static DeviceInfo Read(Reader& r);
  // "aarch64, 4 cores (4 CPUs), 7.6 GiB, features: neon asimd ..."
  std::string str() const;
};

// How a function is timed (time_evaluator): `repeat` timings, each the mean of `number`
// calls (0: as many as fill min_repeat_ms, found from a first call); arguments at the
// positions in cold_arguments are evicted from every cache before each call, which is then
// timed alone.
struct TimeRequest {
  uint32_t number = 0;
  uint32_t repeat = 3;
  double min_repeat_ms = 40;
  std::vector<uint32_t> cold_arguments;
  bool flush_caches = false;  // write over a buffer larger than the caches before each timing

  void Write(Writer& w) const;
  static TimeRequest Read(Reader& r);
  // The same request as the runtime's time evaluator takes it, and back.
  static TimeRequest From(const runtime::TimeOptions& options);
  runtime::TimeOptions ToOptions() const;
};

// A model's inputs and outputs, as a client needs them to set inputs.
struct ExecutorSignature {
  struct Input {
    std::string name;
    DataType dtype = DataType::Float(32);
    std::vector<int64_t> shape;  // -1 where only a run knows the size
    std::string signature;       // "(1, seq, 768)"
  };
  std::string kind;  // "graph" or "vm"
  std::vector<Input> inputs;
  std::vector<std::string> outputs;

  void Write(Writer& w) const;
  static ExecutorSignature Read(Reader& r);
};

// The machine this process runs on (what a server reports).
DeviceInfo HostDeviceInfo(const std::string& device_key);

}  // namespace loom::rpc
