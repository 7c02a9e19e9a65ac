// GEMM and ALU: micro-op kernels run inside the two-level affine loop nest.
#include <algorithm>

#include "loom/support/error.h"
#include "vta/simulator_internal.h"

namespace loom::vta {

std::vector<Uop> ProgramRunner::ReadUops(uint64_t index, const Insn& insn, uint32_t uop_bgn,
                                         uint32_t uop_end) const {
  uint64_t depth = buffers_.uop.size();
  LOOM_CHECK_USER(uop_bgn <= uop_end && uop_end <= depth)
      << InsnLabel(index, insn) << ": micro-op range uop_bgn " << uop_bgn << " .. uop_end "
      << uop_end << " is not inside the micro-op buffer (depth " << depth << ") or is reversed";
  std::vector<Uop> uops;
  uops.reserve(uop_end - uop_bgn);
  for (uint32_t u = uop_bgn; u < uop_end; ++u) uops.push_back(DecodeUop(config_, buffers_.uop[u]));
  return uops;
}

void ProgramRunner::CheckLoopIndex(uint64_t index, const Insn& insn, const std::vector<Uop>& uops,
                                   uint32_t uop_bgn, uint32_t Uop::*field, const char* field_name,
                                   uint64_t iter_out, uint64_t iter_in, uint64_t factor_out,
                                   uint64_t factor_in, const char* factor_name, uint64_t depth,
                                   const char* buffer_name) const {
  if (iter_out == 0 || iter_in == 0) return;
  // Factors are unsigned, so the last iteration reaches the largest index.
  uint64_t loop_offset = (iter_out - 1) * factor_out + (iter_in - 1) * factor_in;
  for (size_t u = 0; u < uops.size(); ++u) {
    uint64_t largest = uops[u].*field + loop_offset;
    LOOM_CHECK_USER(largest < depth)
        << InsnLabel(index, insn) << ": " << buffer_name << " index " << largest
        << " out of range (" << buffer_name << " buffer depth " << depth << ") at micro-op "
        << uop_bgn + u << " (" << field_name << " " << uops[u].*field << ") + (iter_out-1) * "
        << factor_name << "_out " << factor_out << " + (iter_in-1) * " << factor_name << "_in "
        << factor_in;
  }
}

InsnCost ProgramRunner::ExecGemm(uint64_t index, const GemmInsn& insn) {
  const VTAConfig& c = config_;
  Insn whole = insn;
  std::vector<Uop> uops = ReadUops(index, whole, insn.uop_bgn, insn.uop_end);
  CheckLoopIndex(index, whole, uops, insn.uop_bgn, &Uop::dst_idx, "dst_idx", insn.iter_out,
                 insn.iter_in, insn.dst_factor_out, insn.dst_factor_in, "dst_factor",
                 uint64_t(c.acc_buff_depth()), "accumulator");
  if (!insn.reset) {
    CheckLoopIndex(index, whole, uops, insn.uop_bgn, &Uop::src_idx, "src_idx", insn.iter_out,
                   insn.iter_in, insn.src_factor_out, insn.src_factor_in, "src_factor",
                   uint64_t(c.inp_buff_depth()), "input");
    CheckLoopIndex(index, whole, uops, insn.uop_bgn, &Uop::wgt_idx, "wgt_idx", insn.iter_out,
                   insn.iter_in, insn.wgt_factor_out, insn.wgt_factor_in, "wgt_factor",
                   uint64_t(c.wgt_buff_depth()), "weight");
  }

  const int batch = c.batch(), block_in = c.block_in(), block_out = c.block_out();
  const int acc_lanes = batch * block_out;
  uint64_t iterations = uint64_t(insn.iter_out) * insn.iter_in * uops.size();
  for (uint64_t i_out = 0; i_out < insn.iter_out; ++i_out) {
    for (uint64_t i_in = 0; i_in < insn.iter_in; ++i_in) {
      for (const Uop& uop : uops) {
        uint64_t acc_idx = uop.dst_idx + i_out * insn.dst_factor_out + i_in * insn.dst_factor_in;
        int32_t* acc = buffers_.acc.data() + acc_idx * acc_lanes;
        if (insn.reset) {
          if (hazards_ != nullptr) hazards_->Write(HazardChecker::kAcc, acc_idx);
          std::fill(acc, acc + acc_lanes, 0);
          continue;
        }
        uint64_t inp_idx = uop.src_idx + i_out * insn.src_factor_out + i_in * insn.src_factor_in;
        uint64_t wgt_idx = uop.wgt_idx + i_out * insn.wgt_factor_out + i_in * insn.wgt_factor_in;
        if (hazards_ != nullptr) {
          hazards_->Read(HazardChecker::kInp, inp_idx);
          hazards_->Read(HazardChecker::kWgt, wgt_idx);
          hazards_->Read(HazardChecker::kAcc, acc_idx);
          hazards_->Write(HazardChecker::kAcc, acc_idx);
        }
        const int32_t* inp = buffers_.inp.data() + inp_idx * batch * block_in;
        const int32_t* wgt = buffers_.wgt.data() + wgt_idx * block_out * block_in;
        for (int b = 0; b < batch; ++b) {
          for (int o = 0; o < block_out; ++o) {
            // Unsigned arithmetic wraps like the hardware's fixed-width accumulator.
            auto sum = static_cast<uint64_t>(int64_t{acc[b * block_out + o]});
            for (int k = 0; k < block_in; ++k) {
              sum += static_cast<uint64_t>(int64_t{inp[b * block_in + k]} * wgt[o * block_in + k]);
            }
            acc[b * block_out + o] = WrapToWidth(sum, c.acc_width());
          }
        }
      }
    }
  }
  if (insn.reset) return {kComputePipelineCycles + iterations, 0};
  counters_->gemm_counter += iterations;
  return {kComputePipelineCycles + iterations, iterations};
}

namespace {

int32_t ApplyAlu(AluOpcode op, int32_t dst, int32_t src, int acc_width, int log_acc_width) {
  switch (op) {
    case AluOpcode::kMin:
      return std::min(dst, src);
    case AluOpcode::kMax:
      return std::max(dst, src);
    case AluOpcode::kAdd:
      return WrapToWidth(uint64_t(int64_t{dst}) + uint64_t(int64_t{src}), acc_width);
    case AluOpcode::kShr: {
      // The hardware reads the shift amount as a signed log2(ACC_WIDTH)-bit number.
      int32_t amount = WrapToWidth(static_cast<uint32_t>(src), log_acc_width);
      if (amount >= 0) return dst >> amount;
      return WrapToWidth(uint64_t(static_cast<uint32_t>(dst)) << -amount, acc_width);
    }
    case AluOpcode::kMul:
      return WrapToWidth(uint64_t(int64_t{dst} * int64_t{src}), acc_width);
  }
  return dst;  // unreachable: ExecAlu validates the opcode first
}

}  // namespace

InsnCost ProgramRunner::ExecAlu(uint64_t index, const AluInsn& insn) {
  const VTAConfig& c = config_;
  Insn whole = insn;
  switch (insn.alu_opcode) {
    case AluOpcode::kMin:
    case AluOpcode::kMax:
    case AluOpcode::kAdd:
    case AluOpcode::kShr:
    case AluOpcode::kMul:
      break;
    default:
      LOOM_THROW << InsnLabel(index, whole) << ": unknown alu_opcode "
                 << static_cast<int>(insn.alu_opcode);
  }
  std::vector<Uop> uops = ReadUops(index, whole, insn.uop_bgn, insn.uop_end);
  uint64_t depth = uint64_t(c.acc_buff_depth());
  CheckLoopIndex(index, whole, uops, insn.uop_bgn, &Uop::dst_idx, "dst_idx", insn.iter_out,
                 insn.iter_in, insn.dst_factor_out, insn.dst_factor_in, "dst_factor", depth,
                 "accumulator");
  if (!insn.use_imm) {
    CheckLoopIndex(index, whole, uops, insn.uop_bgn, &Uop::src_idx, "src_idx", insn.iter_out,
                   insn.iter_in, insn.src_factor_out, insn.src_factor_in, "src_factor", depth,
                   "accumulator");
  }

  const int lanes = c.batch() * c.block_out();
  const int32_t imm = WrapToWidth(static_cast<uint32_t>(insn.imm), c.acc_width());
  for (uint64_t i_out = 0; i_out < insn.iter_out; ++i_out) {
    for (uint64_t i_in = 0; i_in < insn.iter_in; ++i_in) {
      for (const Uop& uop : uops) {
        uint64_t dst_idx = uop.dst_idx + i_out * insn.dst_factor_out + i_in * insn.dst_factor_in;
        int32_t* dst = buffers_.acc.data() + dst_idx * lanes;
        const int32_t* src = nullptr;
        if (!insn.use_imm) {
          uint64_t src_idx = uop.src_idx + i_out * insn.src_factor_out + i_in * insn.src_factor_in;
          src = buffers_.acc.data() + src_idx * lanes;
          if (hazards_ != nullptr) hazards_->Read(HazardChecker::kAcc, src_idx);
        }
        if (hazards_ != nullptr) {
          hazards_->Read(HazardChecker::kAcc, dst_idx);
          hazards_->Write(HazardChecker::kAcc, dst_idx);
        }
        for (int lane = 0; lane < lanes; ++lane) {
          dst[lane] = ApplyAlu(insn.alu_opcode, dst[lane], src != nullptr ? src[lane] : imm,
                               c.acc_width(), c.log_acc_width);
        }
      }
    }
  }
  uint64_t iterations = uint64_t(insn.iter_out) * insn.iter_in * uops.size();
  counters_->alu_counter += iterations;
  return {kComputePipelineCycles + iterations, 0};
}

}  // namespace loom::vta
