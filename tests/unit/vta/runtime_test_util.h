// Helpers for tests that drive VTA through its runtime C API only, the way compiled code
// does: device buffers, micro-kernels recorded by a generating function, and error checks.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "loom/vta/runtime.h"

namespace loom::vta::testing {

// A device buffer of `count` values of T, freed with the test.
template <typename T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t count) : count_(count) {
    data_ = static_cast<T*>(VTABufferAlloc(count * sizeof(T)));
    EXPECT_NE(data_, nullptr) << VTAGetLastError();
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { VTABufferFree(data_); }

  T* data() const { return data_; }
  T& operator[](size_t i) const { return data_[i]; }
  size_t size() const { return count_; }
  void CopyFrom(const std::vector<T>& host) {
    ASSERT_EQ(host.size(), count_);
    VTABufferCopy(host.data(), 0, data_, 0, count_ * sizeof(T), VTA_MEMCPY_H2D);
    ASSERT_STREQ(VTAGetLastError(), "");
  }
  std::vector<T> CopyToHost() const {
    std::vector<T> host(count_);
    VTABufferCopy(data_, 0, host.data(), 0, count_ * sizeof(T), VTA_MEMCPY_D2H);
    EXPECT_STREQ(VTAGetLastError(), "");
    return host;
  }

 private:
  size_t count_;
  T* data_ = nullptr;
};

// A micro-kernel as plain data. It doubles as the signature (closure bytes) that
// VTAPush*Op caches the kernel by, so it holds only 32-bit fields: no padding bytes.
struct KernelSpec {
  static constexpr int kMaxUops = 16;
  uint32_t mode = 0;  // 0 GEMM, 1 ALU
  uint32_t reset = 0;
  uint32_t opcode = 0;
  uint32_t use_imm = 0;
  int32_t imm = 0;
  uint32_t num_loops = 0;
  uint32_t loops[2][4] = {};  // extent, dst_factor, src_factor, wgt_factor
  uint32_t num_uops = 0;
  uint32_t uops[kMaxUops][3] = {};  // dst, src, wgt

  KernelSpec& Loop(uint32_t extent, uint32_t dst, uint32_t src, uint32_t wgt) {
    uint32_t* loop = loops[num_loops++];
    loop[0] = extent;
    loop[1] = dst;
    loop[2] = src;
    loop[3] = wgt;
    return *this;
  }
  KernelSpec& Uop(uint32_t dst, uint32_t src, uint32_t wgt) {
    uops[num_uops][0] = dst;
    uops[num_uops][1] = src;
    uops[num_uops][2] = wgt;
    ++num_uops;
    return *this;
  }
};

inline KernelSpec GemmKernel(bool reset = false) {
  KernelSpec spec;
  spec.reset = reset ? 1 : 0;
  return spec;
}

inline KernelSpec AluKernel(AluOpcode opcode, bool use_imm, int32_t imm = 0) {
  KernelSpec spec;
  spec.mode = 1;
  spec.opcode = static_cast<uint32_t>(opcode);
  spec.use_imm = use_imm ? 1 : 0;
  spec.imm = imm;
  return spec;
}

// The generating function: replays a KernelSpec through the recording API, as the
// function the compiler emits for a coproc_uop_scope does.
inline int RecordKernelSpec(void* signature) {
  KernelSpec spec;
  std::memcpy(&spec, signature, sizeof(spec));
  for (uint32_t i = 0; i < spec.num_loops; ++i) {
    VTAUopLoopBegin(spec.loops[i][0], spec.loops[i][1], spec.loops[i][2], spec.loops[i][3]);
  }
  for (uint32_t i = 0; i < spec.num_uops; ++i) {
    VTAUopPush(spec.mode, spec.reset, spec.uops[i][0], spec.uops[i][1], spec.uops[i][2],
               spec.opcode, spec.use_imm, spec.imm);
  }
  for (uint32_t i = 0; i < spec.num_loops; ++i) VTAUopLoopEnd();
  return 0;
}

// Pushes `spec` as a GEMM or ALU op from the call site `handle` (one static slot per site in
// compiled code). Returns what VTAPush*Op returns.
inline int PushKernel(void** handle, const KernelSpec& spec) {
  KernelSpec signature = spec;
  return spec.mode == 0 ? VTAPushGEMMOp(handle, RecordKernelSpec, &signature, sizeof(signature))
                        : VTAPushALUOp(handle, RecordKernelSpec, &signature, sizeof(signature));
}

inline std::vector<int8_t> RandomInt8(size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(-128, 127);
  std::vector<int8_t> values(count);
  for (auto& v : values) v = static_cast<int8_t>(dist(rng));
  return values;
}

inline std::vector<int32_t> RandomInt32(size_t count, uint32_t seed, int32_t lo, int32_t hi) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> dist(lo, hi);
  std::vector<int32_t> values(count);
  for (auto& v : values) v = dist(rng);
  return values;
}

// Expects the thread's last VTA error to contain every fragment, then clears it.
inline void ExpectLastError(const std::vector<std::string>& fragments) {
  std::string message = VTAGetLastError();
  EXPECT_FALSE(message.empty()) << "no VTA error was recorded";
  for (const auto& fragment : fragments) {
    EXPECT_NE(message.find(fragment), std::string::npos)
        << "missing \"" << fragment << "\" in: " << message;
  }
  VTAClearLastError();
}

inline constexpr uint32_t kNoCycleLimit = 0xFFFFFFFFu;

}  // namespace loom::vta::testing
