#include "loom/vta/disasm.h"

#include <algorithm>
#include <iomanip>
#include <sstream>
#include <vector>

#include "loom/support/error.h"

namespace loom::vta {
namespace {

std::string FormatDeps(const DepFlags& deps) {
  std::vector<const char*> set;
  if (deps.pop_prev) set.push_back("pop prev");
  if (deps.pop_next) set.push_back("pop next");
  if (deps.push_prev) set.push_back("push prev");
  if (deps.push_next) set.push_back("push next");
  if (set.empty()) return "";
  std::string text = "  [";
  for (size_t i = 0; i < set.size(); ++i) {
    if (i > 0) text += ", ";
    text += set[i];
  }
  return text + "]";
}

std::string Hex(uint32_t value, int digits) {
  std::ostringstream os;
  os << "0x" << std::hex << std::setw(digits) << std::setfill('0') << value;
  return os.str();
}

template <typename LoopInsn>
void FormatLoop(std::ostringstream& os, const LoopInsn& insn) {
  os << " uop=[" << insn.uop_bgn << "," << insn.uop_end << ") iter_out=" << insn.iter_out
     << " iter_in=" << insn.iter_in << " dst=(" << insn.dst_factor_out << ","
     << insn.dst_factor_in << ") src=(" << insn.src_factor_out << "," << insn.src_factor_in
     << ")";
}

// Width of the index column: at least 3, enough for the largest index.
int IndexWidth(size_t count) {
  int width = 1;
  for (size_t last = count > 0 ? count - 1 : 0; last >= 10; last /= 10) ++width;
  return std::max(width, 3);
}

}  // namespace

std::string FormatInsn(const Insn& insn) {
  std::ostringstream os;
  if (const auto* mem = std::get_if<MemInsn>(&insn)) {
    os << OpcodeName(mem->opcode) << " " << MemIdName(mem->memory_type)
       << " sram=" << Hex(mem->sram_base, 4) << " dram=" << Hex(mem->dram_base, 8)
       << " y=" << mem->y_size << " x=" << mem->x_size << " stride=" << mem->x_stride
       << " pad=(" << mem->y_pad_0 << "," << mem->y_pad_1 << "," << mem->x_pad_0 << ","
       << mem->x_pad_1 << ")";
  } else if (const auto* gemm = std::get_if<GemmInsn>(&insn)) {
    os << "GEMM" << (gemm->reset ? " reset" : "");
    FormatLoop(os, *gemm);
    os << " wgt=(" << gemm->wgt_factor_out << "," << gemm->wgt_factor_in << ")";
  } else if (const auto* alu = std::get_if<AluInsn>(&insn)) {
    os << "ALU " << AluOpcodeName(alu->alu_opcode) << (alu->reset ? " reset" : "");
    if (alu->use_imm) os << " imm=" << alu->imm;
    FormatLoop(os, *alu);
  } else {
    os << "FINISH";
  }
  os << FormatDeps(GetDeps(insn));
  return os.str();
}

std::string FormatUop(const Uop& uop) {
  std::ostringstream os;
  os << "dst=" << uop.dst_idx << " src=" << uop.src_idx << " wgt=" << uop.wgt_idx;
  return os.str();
}

std::string Disassemble(const VTAConfig& config, std::span<const InsnWord> words) {
  std::ostringstream os;
  int width = IndexWidth(words.size());
  for (size_t i = 0; i < words.size(); ++i) {
    Insn insn;
    try {
      insn = Decode(config, words[i]);
    } catch (const Error& error) {
      LOOM_THROW << "instruction " << i << ": " << error.what();
    }
    os << std::setw(width) << i << ": " << FormatInsn(insn) << "\n";
  }
  return os.str();
}

std::string DisassembleBytes(const VTAConfig& config, std::span<const uint8_t> bytes) {
  LOOM_CHECK_USER(bytes.size() % kInsnBytes == 0)
      << "a VTA instruction stream is a sequence of " << kInsnBytes
      << "-byte instructions, but its size " << bytes.size() << " is not a multiple of "
      << kInsnBytes;
  std::vector<InsnWord> words;
  words.reserve(bytes.size() / kInsnBytes);
  for (size_t offset = 0; offset < bytes.size(); offset += kInsnBytes) {
    words.push_back(InsnFromBytes(bytes.data() + offset));
  }
  return Disassemble(config, words);
}

std::string DisassembleUops(const VTAConfig& config, std::span<const uint32_t> words) {
  std::ostringstream os;
  int width = IndexWidth(words.size());
  for (size_t i = 0; i < words.size(); ++i) {
    os << std::setw(width) << i << ": " << FormatUop(DecodeUop(config, words[i])) << "\n";
  }
  return os.str();
}

}  // namespace loom::vta
