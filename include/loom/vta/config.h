// VTAConfig: the parameters of one VTA hardware instance and everything derived from them.
//
// VTA is parameterized by a handful of log2 values and its clock (the same keys as TVM's
// vta_config.json).
// Every size the simulator, the runtime and the instruction encoder need is derived here, in
// one place, so that they cannot disagree.
//
// Vocabulary: an "element" (or tile) is one row of a buffer, the unit all SRAM and DRAM
// addresses in instructions count in:
//   input  element: BATCH x BLOCK_IN  values of INP_WIDTH bits
//   weight element: BLOCK_OUT x BLOCK_IN values of WGT_WIDTH bits
//   acc    element: BATCH x BLOCK_OUT values of ACC_WIDTH bits
//   output element: BATCH x BLOCK_OUT values of OUT_WIDTH (= INP_WIDTH) bits
//   micro-op element: one 32-bit micro-op
// A buffer's depth is its size in bytes divided by its element size.
//
// A VTAConfig obtained from Default(), FromJson() or FromFile() is valid (Validate() passed);
// one assembled field by field must be validated before use.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace loom::vta {

// Instruction field widths fixed by the hardware specification (independent of the config).
inline constexpr int kInsnBits = 128;
inline constexpr int kInsnBytes = kInsnBits / 8;
inline constexpr int kUopBits = 32;
inline constexpr int kUopBytes = kUopBits / 8;
inline constexpr int kOpcodeBits = 3;
inline constexpr int kMemIdBits = 3;
inline constexpr int kSramAddrBits = 16;
inline constexpr int kDramAddrBits = 32;
inline constexpr int kMemSizeBits = 16;
inline constexpr int kMemStrideBits = 16;
inline constexpr int kMemPadBits = 4;
inline constexpr int kLoopIterBits = 14;
inline constexpr int kAluOpcodeBits = 3;
inline constexpr int kAluImmBits = 16;

struct VTAConfig {
  // ---- Parameters (JSON keys in capitals: "LOG_INP_WIDTH", ...). Defaults: the standard
  // simulator configuration (int8 x int8 -> int32, 1x16x16 GEMM core, 32 KiB uop, 32 KiB
  // input, 256 KiB weight, 128 KiB accumulator buffers, 64-bit memory bus).
  int log_inp_width = 3;
  int log_wgt_width = 3;
  int log_acc_width = 5;
  int log_batch = 0;
  int log_block = 4;  // BLOCK_IN == BLOCK_OUT == 1 << log_block
  int log_uop_buff_size = 15;  // bytes
  int log_inp_buff_size = 15;
  int log_wgt_buff_size = 18;
  int log_acc_buff_size = 17;
  int log_bus_width = 6;  // bits of the DRAM bus; optional in JSON
  // The clock in MHz ("HW_FREQ", TVM's key; optional in JSON, 100 as on the PYNQ board): what
  // turns the simulator's cycles into the seconds a tuner compares.
  int hw_freq_mhz = 100;

  // The standard simulator configuration (the defaults above).
  static VTAConfig Default();
  // Parses a JSON object with the keys above ("LOG_BUS_WIDTH" optional; TVM's "TARGET",
  // "HW_VER" and "ACC_DEP_DISTANCE" accepted and ignored) and validates it. Throws
  // loom::Error naming the missing, mistyped or unknown key, or the impossible parameter.
  static VTAConfig FromJson(const std::string& text);
  // FromJson on the contents of a file; the error also names the file.
  static VTAConfig FromFile(const std::string& path);
  // JSON with every parameter; FromJson(ToJson()) == *this.
  std::string ToJson() const;
  // Every parameter as integers, in a fixed order (a tuning workload's description of the
  // hardware), and back; FromParameters validates and names what is wrong.
  std::vector<int64_t> Parameters() const;
  static VTAConfig FromParameters(const std::vector<int64_t>& parameters);
  // Seconds of `cycles` at the clock.
  double SecondsOf(int64_t cycles) const {
    return static_cast<double>(cycles) / (hw_freq_mhz * 1e6);
  }

  // Throws loom::Error when this configuration cannot exist: parameters out of range, a
  // buffer smaller than one element, a buffer deeper than the 16-bit SRAM address reaches,
  // micro-op fields wider than 32 bits, instruction fields that no longer fit 128 bits.
  void Validate() const;

  bool operator==(const VTAConfig&) const = default;

  // ---- GEMM core shape: (BATCH x BLOCK_IN) * (BLOCK_IN x BLOCK_OUT)^T.
  int batch() const { return 1 << log_batch; }
  int block_in() const { return 1 << log_block; }
  int block_out() const { return 1 << log_block; }

  // ---- Value widths in bits. Outputs have the input type (stores narrow accumulators).
  int log_out_width() const { return log_inp_width; }
  int inp_width() const { return 1 << log_inp_width; }
  int wgt_width() const { return 1 << log_wgt_width; }
  int acc_width() const { return 1 << log_acc_width; }
  int out_width() const { return 1 << log_out_width(); }
  int bus_width() const { return 1 << log_bus_width; }
  int bus_bytes() const { return bus_width() / 8; }

  // ---- Bytes of one element (tile) of each buffer.
  int64_t inp_elem_bytes() const { return int64_t{batch()} * block_in() * inp_width() / 8; }
  int64_t wgt_elem_bytes() const { return int64_t{block_out()} * block_in() * wgt_width() / 8; }
  int64_t acc_elem_bytes() const { return int64_t{batch()} * block_out() * acc_width() / 8; }
  int64_t out_elem_bytes() const { return int64_t{batch()} * block_out() * out_width() / 8; }
  // An accumulator element loaded from 8-bit values (memory type ACC_8BIT): a byte per value.
  int64_t acc8_elem_bytes() const { return int64_t{batch()} * block_out(); }
  int64_t uop_elem_bytes() const { return kUopBytes; }

  // ---- Buffer sizes in bytes. The output buffer mirrors the accumulator buffer element for
  // element at the narrower output width.
  int64_t uop_buff_bytes() const { return int64_t{1} << log_uop_buff_size; }
  int64_t inp_buff_bytes() const { return int64_t{1} << log_inp_buff_size; }
  int64_t wgt_buff_bytes() const { return int64_t{1} << log_wgt_buff_size; }
  int64_t acc_buff_bytes() const { return int64_t{1} << log_acc_buff_size; }
  int64_t out_buff_bytes() const { return acc_buff_depth() * out_elem_bytes(); }

  // ---- Buffer depths in elements (log2 and value).
  int log_uop_buff_depth() const { return log_uop_buff_size + 3 - 5; }
  int log_inp_buff_depth() const {
    return log_inp_buff_size + 3 - log_batch - log_block - log_inp_width;
  }
  int log_wgt_buff_depth() const {
    return log_wgt_buff_size + 3 - 2 * log_block - log_wgt_width;
  }
  int log_acc_buff_depth() const {
    return log_acc_buff_size + 3 - log_batch - log_block - log_acc_width;
  }
  int log_out_buff_depth() const { return log_acc_buff_depth(); }
  int64_t uop_buff_depth() const { return int64_t{1} << log_uop_buff_depth(); }
  int64_t inp_buff_depth() const { return int64_t{1} << log_inp_buff_depth(); }
  int64_t wgt_buff_depth() const { return int64_t{1} << log_wgt_buff_depth(); }
  int64_t acc_buff_depth() const { return int64_t{1} << log_acc_buff_depth(); }
  int64_t out_buff_depth() const { return acc_buff_depth(); }

  // ---- Config-dependent instruction field widths (bits), as the hardware spec derives them.
  // GEMM/ALU: uop_bgn indexes the micro-op buffer; uop_end is one wider so that it can say
  // "the whole buffer".
  int uop_bgn_bits() const { return log_uop_buff_depth(); }
  int uop_end_bits() const { return log_uop_buff_depth() + 1; }
  int loop_iter_bits() const { return kLoopIterBits; }
  // Index / affine-factor widths: accumulator (dst), input (GEMM src), weight.
  int acc_idx_bits() const { return log_acc_buff_depth(); }
  int inp_idx_bits() const { return log_inp_buff_depth(); }
  int wgt_idx_bits() const { return log_wgt_buff_depth(); }
  // Micro-op fields: dst_idx is accumulator-index wide; src_idx indexes the input buffer for
  // GEMM and the accumulator for ALU, so it is as wide as the wider of the two (the reference
  // places GEMM's and ALU's source fields by the input depth, its struct by the accumulator
  // depth); wgt_idx is weight-index wide.
  int uop_dst_bits() const { return acc_idx_bits(); }
  int uop_src_bits() const { return std::max(acc_idx_bits(), inp_idx_bits()); }
  int uop_wgt_bits() const { return wgt_idx_bits(); }
};

}  // namespace loom::vta
