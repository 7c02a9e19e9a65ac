// LOAD and STORE: 2-D strided transfers between DRAM and the on-chip buffers, with padding
// on loads and narrowing of accumulators to the output width on stores.
#include "loom/support/error.h"
#include "vta/simulator_internal.h"

namespace loom::vta {
namespace {

// DRAM elements pack their lanes little-endian from bit 0. Value widths are 8, 16 or 32 bits
// (VTAConfig::Validate), so every lane is whole bytes.
int32_t ReadLane(const uint8_t* elem, int lane, int bits) {
  const uint8_t* bytes = elem + uint64_t(lane) * (bits / 8);
  uint32_t raw = 0;
  for (int b = 0; b < bits / 8; ++b) raw |= uint32_t{bytes[b]} << (8 * b);
  return WrapToWidth(raw, bits);
}

// Keeps the low `bits` bits of `value`: the narrowing a STORE applies.
void WriteLane(uint8_t* elem, int lane, int bits, int32_t value) {
  uint8_t* bytes = elem + uint64_t(lane) * (bits / 8);
  auto raw = static_cast<uint32_t>(value);
  for (int b = 0; b < bits / 8; ++b) bytes[b] = static_cast<uint8_t>(raw >> (8 * b));
}

uint64_t CeilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

}  // namespace

ProgramRunner::BufferView ProgramRunner::View(uint64_t index, const MemInsn& insn) const {
  const VTAConfig& c = config_;
  switch (insn.memory_type) {
    case MemId::kUop:
      return {"micro-op",
              nullptr,
              1,
              32,
              uint64_t(c.uop_elem_bytes()),
              uint64_t(c.uop_buff_depth()),
              &counters_->uop_load_nbytes};
    case MemId::kInp:
      return {"input",
              &buffers_.inp,
              c.batch() * c.block_in(),
              c.inp_width(),
              uint64_t(c.inp_elem_bytes()),
              uint64_t(c.inp_buff_depth()),
              &counters_->inp_load_nbytes};
    case MemId::kWgt:
      return {"weight",
              &buffers_.wgt,
              c.block_out() * c.block_in(),
              c.wgt_width(),
              uint64_t(c.wgt_elem_bytes()),
              uint64_t(c.wgt_buff_depth()),
              &counters_->wgt_load_nbytes};
    case MemId::kAcc:
      return {"accumulator",
              &buffers_.acc,
              c.batch() * c.block_out(),
              c.acc_width(),
              uint64_t(c.acc_elem_bytes()),
              uint64_t(c.acc_buff_depth()),
              &counters_->acc_load_nbytes};
    case MemId::kAcc8:
      // The accumulator buffer filled from one byte per value, sign-extended.
      return {"accumulator (8-bit)",
              &buffers_.acc,
              c.batch() * c.block_out(),
              8,
              uint64_t(c.acc8_elem_bytes()),
              uint64_t(c.acc_buff_depth()),
              &counters_->acc_load_nbytes};
    case MemId::kOut:
      // The output buffer is the accumulator buffer seen at the output width.
      return {"output",
              &buffers_.acc,
              c.batch() * c.block_out(),
              c.out_width(),
              uint64_t(c.out_elem_bytes()),
              uint64_t(c.out_buff_depth()),
              nullptr};
  }
  LOOM_THROW << InsnLabel(index, insn) << ": unknown memory_type "
             << static_cast<int>(insn.memory_type);
}

std::vector<uint8_t*> ProgramRunner::DramRows(uint64_t index, const MemInsn& insn,
                                              uint64_t elem_bytes) {
  std::string what = InsnLabel(index, insn) + ": dram_base/x_stride";
  std::vector<uint8_t*> rows(insn.y_size);
  for (uint64_t y = 0; y < insn.y_size; ++y) {
    uint64_t first_elem = uint64_t(insn.dram_base) + y * insn.x_stride;
    rows[y] = sim_->dram().Host(first_elem * elem_bytes, insn.x_size * elem_bytes, what);
  }
  return rows;
}

InsnCost ProgramRunner::ExecLoad(uint64_t index, const MemInsn& insn) {
  BufferView view = View(index, insn);
  LOOM_CHECK_USER(view.load_counter != nullptr)
      << InsnLabel(index, insn) << ": memory_type " << MemIdName(insn.memory_type)
      << " cannot be loaded (LOAD fills UOP, WGT, INP, ACC or ACC_8BIT)";
  if (insn.x_size == 0) return {kNoopCycles, 0};

  uint64_t row_elems = uint64_t(insn.x_pad_0) + insn.x_size + insn.x_pad_1;
  uint64_t rows = uint64_t(insn.y_pad_0) + insn.y_size + insn.y_pad_1;
  uint64_t footprint = row_elems * rows;
  LOOM_CHECK_USER(insn.sram_base <= view.depth && footprint <= view.depth - insn.sram_base)
      << InsnLabel(index, insn) << ": sram_base " << insn.sram_base << " + footprint " << footprint
      << " (" << rows << " rows of " << row_elems << " elements, padding included) exceeds the "
      << view.name << " buffer depth " << view.depth;

  // Every DRAM row is checked before anything is written, so a bad address leaves SRAM
  // untouched.
  std::vector<uint8_t*> sources = DramRows(index, insn, view.elem_bytes);

  const int hazard_buffer = HazardBufferOf(insn.memory_type);
  if (hazards_ != nullptr && hazard_buffer >= 0) {
    for (uint64_t elem = insn.sram_base; elem < insn.sram_base + footprint; ++elem) {
      hazards_->Write(static_cast<HazardChecker::Buffer>(hazard_buffer), elem);
    }
  }
  for (uint64_t row = 0; row < rows; ++row) {
    bool is_data_row = row >= insn.y_pad_0 && row < uint64_t(insn.y_pad_0) + insn.y_size;
    for (uint64_t x = 0; x < row_elems; ++x) {
      uint64_t elem = insn.sram_base + row * row_elems + x;
      bool is_data = is_data_row && x >= insn.x_pad_0 && x < uint64_t(insn.x_pad_0) + insn.x_size;
      const uint8_t* src =
          is_data ? sources[row - insn.y_pad_0] + (x - insn.x_pad_0) * view.elem_bytes : nullptr;
      if (view.values == nullptr) {
        buffers_.uop[elem] = src != nullptr ? static_cast<uint32_t>(ReadLane(src, 0, 32)) : 0;
        continue;
      }
      int32_t* dst = view.values->data() + elem * view.lanes;
      for (int lane = 0; lane < view.lanes; ++lane) {
        dst[lane] = src != nullptr ? ReadLane(src, lane, view.bits) : 0;
      }
    }
  }

  uint64_t bytes = uint64_t(insn.x_size) * insn.y_size * view.elem_bytes;
  *view.load_counter += bytes;
  uint64_t padding_elems = footprint - uint64_t(insn.x_size) * insn.y_size;
  return {kDramLatencyCycles + CeilDiv(bytes, uint64_t(config_.bus_bytes())) + padding_elems, 0};
}

InsnCost ProgramRunner::ExecStore(uint64_t index, const MemInsn& insn) {
  // A no-op moves nothing, whatever memory type it names (the reference runtime's carry
  // their dependency flags with other types).
  if (insn.x_size == 0) return {kNoopCycles, 0};
  LOOM_CHECK_USER(insn.memory_type == MemId::kOut)
      << InsnLabel(index, insn) << ": memory_type " << MemIdName(insn.memory_type)
      << " cannot be stored (STORE drains the OUT buffer)";
  LOOM_CHECK_USER(insn.y_pad_0 == 0 && insn.y_pad_1 == 0 && insn.x_pad_0 == 0 && insn.x_pad_1 == 0)
      << InsnLabel(index, insn) << ": STORE cannot pad (y_pad_0 " << insn.y_pad_0 << ", y_pad_1 "
      << insn.y_pad_1 << ", x_pad_0 " << insn.x_pad_0 << ", x_pad_1 " << insn.x_pad_1 << ")";
  BufferView view = View(index, insn);
  uint64_t elems = uint64_t(insn.x_size) * insn.y_size;
  LOOM_CHECK_USER(insn.sram_base <= view.depth && elems <= view.depth - insn.sram_base)
      << InsnLabel(index, insn) << ": sram_base " << insn.sram_base << " + size " << elems << " ("
      << insn.y_size << " rows of " << insn.x_size << " elements) exceeds the " << view.name
      << " buffer depth " << view.depth;

  std::vector<uint8_t*> targets = DramRows(index, insn, view.elem_bytes);
  if (hazards_ != nullptr) {
    for (uint64_t elem = insn.sram_base; elem < insn.sram_base + elems; ++elem) {
      hazards_->Read(HazardChecker::kAcc, elem);
    }
  }
  for (uint64_t y = 0; y < insn.y_size; ++y) {
    for (uint64_t x = 0; x < insn.x_size; ++x) {
      const int32_t* src =
          view.values->data() + (insn.sram_base + y * insn.x_size + x) * view.lanes;
      uint8_t* dst = targets[y] + x * view.elem_bytes;
      for (int lane = 0; lane < view.lanes; ++lane) WriteLane(dst, lane, view.bits, src[lane]);
    }
  }

  uint64_t bytes = elems * view.elem_bytes;
  counters_->out_store_nbytes += bytes;
  return {kDramLatencyCycles + CeilDiv(bytes, uint64_t(config_.bus_bytes())), 0};
}

}  // namespace loom::vta
