// Helpers for the VTA simulator tests: DRAM buffers, instruction builders and a C++
// reference for the arithmetic.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "loom/support/error.h"
#include "loom/vta/simulator.h"

// Checks that `text` contains `part`, printing `text` when it does not.
#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << "in: " << (text)

namespace loom::vta::testing {

inline DepFlags Deps(bool pop_prev, bool pop_next, bool push_prev, bool push_next) {
  DepFlags deps;
  deps.pop_prev = pop_prev;
  deps.pop_next = pop_next;
  deps.push_prev = push_prev;
  deps.push_next = push_next;
  return deps;
}

struct Pads {
  uint32_t y_0 = 0, y_1 = 0, x_0 = 0, x_1 = 0;
};

inline MemInsn Load(MemId type, uint32_t sram_base, uint32_t dram_base, uint32_t y_size,
                    uint32_t x_size, uint32_t x_stride, DepFlags deps = {}, Pads pads = {}) {
  MemInsn insn;
  insn.opcode = Opcode::kLoad;
  insn.deps = deps;
  insn.memory_type = type;
  insn.sram_base = sram_base;
  insn.dram_base = dram_base;
  insn.y_size = y_size;
  insn.x_size = x_size;
  insn.x_stride = x_stride;
  insn.y_pad_0 = pads.y_0;
  insn.y_pad_1 = pads.y_1;
  insn.x_pad_0 = pads.x_0;
  insn.x_pad_1 = pads.x_1;
  return insn;
}

inline MemInsn Store(uint32_t sram_base, uint32_t dram_base, uint32_t y_size, uint32_t x_size,
                     uint32_t x_stride, DepFlags deps = {}) {
  MemInsn insn = Load(MemId::kOut, sram_base, dram_base, y_size, x_size, x_stride, deps);
  insn.opcode = Opcode::kStore;
  return insn;
}

// A compute-module instruction that only carries dependency flags (TVM's runtime uses the
// same kind of empty micro-op load).
inline MemInsn ComputeNoop(DepFlags deps) { return Load(MemId::kUop, 0, 0, 0, 0, 0, deps); }

// Loop nest shared by GEMM and ALU: {iter, dst, src, wgt} factors for the outer and inner
// loop.
struct LoopNest {
  uint32_t iter_out = 1, dst_out = 0, src_out = 0, wgt_out = 0;
  uint32_t iter_in = 1, dst_in = 0, src_in = 0, wgt_in = 0;
};

inline GemmInsn Gemm(uint32_t uop_bgn, uint32_t uop_end, LoopNest loop, bool reset = false,
                     DepFlags deps = {}) {
  GemmInsn insn;
  insn.deps = deps;
  insn.reset = reset;
  insn.uop_bgn = uop_bgn;
  insn.uop_end = uop_end;
  insn.iter_out = loop.iter_out;
  insn.iter_in = loop.iter_in;
  insn.dst_factor_out = loop.dst_out;
  insn.dst_factor_in = loop.dst_in;
  insn.src_factor_out = loop.src_out;
  insn.src_factor_in = loop.src_in;
  insn.wgt_factor_out = loop.wgt_out;
  insn.wgt_factor_in = loop.wgt_in;
  return insn;
}

inline AluInsn Alu(AluOpcode op, uint32_t uop_bgn, uint32_t uop_end, LoopNest loop, bool use_imm,
                   int32_t imm, DepFlags deps = {}) {
  AluInsn insn;
  insn.deps = deps;
  insn.uop_bgn = uop_bgn;
  insn.uop_end = uop_end;
  insn.iter_out = loop.iter_out;
  insn.iter_in = loop.iter_in;
  insn.dst_factor_out = loop.dst_out;
  insn.dst_factor_in = loop.dst_in;
  insn.src_factor_out = loop.src_out;
  insn.src_factor_in = loop.src_in;
  insn.alu_opcode = op;
  insn.use_imm = use_imm;
  insn.imm = imm;
  return insn;
}

inline FinishInsn Finish(DepFlags deps = {}) { return FinishInsn{deps}; }

// Reference semantics, written independently of the simulator.
inline int32_t Wrap32(int64_t value) {
  return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(value)));
}
inline int32_t RefAlu(AluOpcode op, int32_t x, int32_t y) {
  switch (op) {
    case AluOpcode::kMin:
      return x < y ? x : y;
    case AluOpcode::kMax:
      return x > y ? x : y;
    case AluOpcode::kAdd:
      return Wrap32(int64_t{x} + y);
    case AluOpcode::kMul:
      return Wrap32(int64_t{x} * y);
    case AluOpcode::kShr: {
      int amount = ((y % 32) + 32) % 32;  // low 5 bits ...
      if (amount >= 16) amount -= 32;     // ... read as a signed number
      if (amount >= 0) return x >> amount;
      return Wrap32(int64_t{x} * (int64_t{1} << -amount));
    }
  }
  return 0;
}

// Owns a simulator with the default configuration and DRAM buffers for a test.
class SimFixture : public ::testing::Test {
 protected:
  VTAConfig config = VTAConfig::Default();
  Dram dram;
  Simulator sim{config, &dram};
  std::mt19937 rng{20260501};

  // A DRAM buffer holding `values`; returns its physical address.
  template <typename T>
  uint64_t Upload(const std::vector<T>& values, size_t extra_bytes = 0) {
    uint64_t addr = dram.Alloc(values.size() * sizeof(T) + extra_bytes);
    if (!values.empty())
      std::memcpy(dram.Host(addr, values.size() * sizeof(T)), values.data(),
                  values.size() * sizeof(T));
    return addr;
  }
  template <typename T>
  std::vector<T> Download(uint64_t addr, size_t count) {
    std::vector<T> values(count);
    std::memcpy(values.data(), dram.Host(addr, count * sizeof(T)), count * sizeof(T));
    return values;
  }
  // dram_base of a buffer for a memory type (addresses count elements of that type).
  uint32_t Elem(uint64_t addr, int64_t elem_bytes) {
    EXPECT_EQ(addr % elem_bytes, 0u);
    return static_cast<uint32_t>(addr / elem_bytes);
  }
  uint32_t UopBase(uint64_t addr) { return Elem(addr, config.uop_elem_bytes()); }
  uint32_t InpBase(uint64_t addr) { return Elem(addr, config.inp_elem_bytes()); }
  uint32_t WgtBase(uint64_t addr) { return Elem(addr, config.wgt_elem_bytes()); }
  uint32_t AccBase(uint64_t addr) { return Elem(addr, config.acc_elem_bytes()); }
  uint32_t OutBase(uint64_t addr) { return Elem(addr, config.out_elem_bytes()); }

  // A micro-op kernel in DRAM, loaded into the micro-op buffer at `sram_base` by the
  // returned instruction.
  MemInsn UopLoad(const std::vector<Uop>& uops, uint32_t sram_base = 0, DepFlags deps = {}) {
    std::vector<uint32_t> words;
    for (const Uop& uop : uops) words.push_back(EncodeUop(config, uop));
    uint64_t addr = Upload(words);
    return Load(MemId::kUop, sram_base, UopBase(addr), 1, uint32_t(uops.size()), 0, deps);
  }

  template <typename T>
  std::vector<T> Random(size_t count, int64_t low, int64_t high) {
    std::uniform_int_distribution<int64_t> dist(low, high);
    std::vector<T> values(count);
    for (T& v : values) v = static_cast<T>(dist(rng));
    return values;
  }

  // The message of the loom::Error that running `program` throws ("" if none).
  std::string RunError(const std::vector<Insn>& program) {
    try {
      sim.Run(program);
    } catch (const Error& error) {
      return error.what();
    }
    return "";
  }
};

}  // namespace loom::vta::testing
