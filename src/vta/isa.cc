#include "loom/vta/isa.h"

#include <string>
#include <utility>
#include <vector>

#include "loom/support/error.h"
#include "vta/field_layout.h"

namespace loom::vta {
namespace detail {
namespace {

struct FieldSpec {
  std::string_view name;
  int width;
};

// Packs fields from bit 0 upwards the way the hardware's C structs of `unit_bits`-wide
// bit-fields are laid out: a field that would straddle a unit boundary starts at the next
// unit.
FieldLayout Place(std::string_view format, const std::vector<FieldSpec>& specs,
                  int unit_bits, int total_bits) {
  FieldLayout layout{format, {}};
  int next = 0;
  for (const FieldSpec& spec : specs) {
    LOOM_CHECK_USER(spec.width > 0 && spec.width <= unit_bits)
        << "VTA config: " << format << " field '" << spec.name << "' would be " << spec.width
        << " bits wide; the hardware needs 1 to " << unit_bits << " bits";
    int unit_end = (next / unit_bits + 1) * unit_bits;
    if (next + spec.width > unit_end) next = unit_end;
    LOOM_CHECK_USER(next + spec.width <= total_bits)
        << "VTA config: " << format << " field '" << spec.name << "' (" << spec.width
        << " bits) does not fit in " << total_bits << " bits; reduce the buffer sizes";
    layout.fields.push_back({spec.name, spec.width, next});
    next += spec.width;
  }
  return layout;
}

// Every instruction starts with the opcode and the four dependency flags.
FieldLayout PlaceInsn(std::string_view format, std::vector<FieldSpec> body) {
  std::vector<FieldSpec> all = {{"opcode", kOpcodeBits},
                                {"pop_prev", 1},
                                {"pop_next", 1},
                                {"push_prev", 1},
                                {"push_next", 1}};
  all.insert(all.end(), body.begin(), body.end());
  return Place(format, all, 64, kInsnBits);
}

// GEMM and ALU share the loop part of their encoding.
std::vector<FieldSpec> LoopSpecs(const VTAConfig& config) {
  return {{"reset", 1},
          {"uop_bgn", config.uop_bgn_bits()},
          {"uop_end", config.uop_end_bits()},
          {"iter_out", config.loop_iter_bits()},
          {"iter_in", config.loop_iter_bits()},
          {"dst_factor_out", config.acc_idx_bits()},
          {"dst_factor_in", config.acc_idx_bits()}};
}

}  // namespace

const PlacedField& FieldLayout::Field(std::string_view name) const {
  const PlacedField* found = nullptr;
  for (const PlacedField& field : fields) {
    if (field.name == name) found = &field;
  }
  LOOM_ICHECK(found != nullptr) << "VTA " << format << " has no field '" << name << "'";
  return *found;
}

FieldLayout MemLayout(const VTAConfig&) {
  return PlaceInsn("LOAD/STORE instruction", {{"memory_type", kMemIdBits},
                                  {"sram_base", kSramAddrBits},
                                  {"dram_base", kDramAddrBits},
                                  {"y_size", kMemSizeBits},
                                  {"x_size", kMemSizeBits},
                                  {"x_stride", kMemStrideBits},
                                  {"y_pad_0", kMemPadBits},
                                  {"y_pad_1", kMemPadBits},
                                  {"x_pad_0", kMemPadBits},
                                  {"x_pad_1", kMemPadBits}});
}

FieldLayout GemmLayout(const VTAConfig& config) {
  std::vector<FieldSpec> body = LoopSpecs(config);
  body.insert(body.end(), {{"src_factor_out", config.inp_idx_bits()},
                           {"src_factor_in", config.inp_idx_bits()},
                           {"wgt_factor_out", config.wgt_idx_bits()},
                           {"wgt_factor_in", config.wgt_idx_bits()}});
  return PlaceInsn("GEMM instruction", body);
}

FieldLayout AluLayout(const VTAConfig& config) {
  std::vector<FieldSpec> body = LoopSpecs(config);
  body.insert(body.end(), {{"src_factor_out", config.acc_idx_bits()},
                           {"src_factor_in", config.acc_idx_bits()},
                           {"alu_opcode", kAluOpcodeBits},
                           {"use_imm", 1},
                           {"imm", kAluImmBits}});
  return PlaceInsn("ALU instruction", body);
}

FieldLayout FinishLayout(const VTAConfig&) { return PlaceInsn("FINISH instruction", {}); }

FieldLayout UopLayout(const VTAConfig& config) {
  return Place("micro-op",
               {{"dst_idx", config.uop_dst_bits()},
                {"src_idx", config.uop_src_bits()},
                {"wgt_idx", config.uop_wgt_bits()}},
               kUopBits, kUopBits);
}

}  // namespace detail

namespace {

using detail::FieldLayout;
using detail::PlacedField;

uint64_t LowMask(int width) { return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1; }

// Fields never straddle a 64-bit word, so each lives in exactly one word.
class InsnWriter {
 public:
  explicit InsnWriter(FieldLayout layout) : layout_(std::move(layout)) {}

  void Put(std::string_view name, uint64_t value) {
    const PlacedField& field = layout_.Field(name);
    LOOM_CHECK_USER(value <= LowMask(field.width))
        << "VTA " << layout_.format << ": field '" << name << "' = " << value
        << " does not fit in " << field.width << " bits (maximum " << LowMask(field.width)
        << ")";
    word_[field.offset / 64] |= value << (field.offset % 64);
  }
  void PutSigned(std::string_view name, int64_t value) {
    const PlacedField& field = layout_.Field(name);
    int64_t limit = int64_t{1} << (field.width - 1);
    LOOM_CHECK_USER(value >= -limit && value < limit)
        << "VTA " << layout_.format << ": field '" << name << "' = " << value
        << " does not fit in " << field.width << " signed bits (range " << -limit << " to "
        << limit - 1 << ")";
    word_[field.offset / 64] |=
        (static_cast<uint64_t>(value) & LowMask(field.width)) << (field.offset % 64);
  }
  void PutHeader(Opcode opcode, const DepFlags& deps) {
    Put("opcode", static_cast<uint64_t>(opcode));
    Put("pop_prev", deps.pop_prev);
    Put("pop_next", deps.pop_next);
    Put("push_prev", deps.push_prev);
    Put("push_next", deps.push_next);
  }
  const InsnWord& word() const { return word_; }

 private:
  FieldLayout layout_;
  InsnWord word_{0, 0};
};

class InsnReader {
 public:
  InsnReader(FieldLayout layout, const InsnWord& word)
      : layout_(std::move(layout)), word_(word) {}

  uint32_t Get(std::string_view name) const {
    const PlacedField& field = layout_.Field(name);
    return static_cast<uint32_t>((word_[field.offset / 64] >> (field.offset % 64)) &
                                 LowMask(field.width));
  }
  int32_t GetSigned(std::string_view name) const {
    const PlacedField& field = layout_.Field(name);
    uint64_t raw = Get(name);
    uint64_t sign_bit = uint64_t{1} << (field.width - 1);
    return static_cast<int32_t>(static_cast<int64_t>(raw ^ sign_bit) -
                                static_cast<int64_t>(sign_bit));
  }
  bool GetBool(std::string_view name) const { return Get(name) != 0; }
  DepFlags GetDeps() const {
    return {GetBool("pop_prev"), GetBool("pop_next"), GetBool("push_prev"),
            GetBool("push_next")};
  }

 private:
  FieldLayout layout_;
  const InsnWord& word_;
};

InsnWord EncodeMem(const VTAConfig& config, const MemInsn& insn) {
  LOOM_CHECK_USER(insn.opcode == Opcode::kLoad || insn.opcode == Opcode::kStore)
      << "VTA LOAD/STORE instruction: opcode must be LOAD or STORE, got "
      << OpcodeName(insn.opcode);
  InsnWriter out(detail::MemLayout(config));
  out.PutHeader(insn.opcode, insn.deps);
  out.Put("memory_type", static_cast<uint64_t>(insn.memory_type));
  out.Put("sram_base", insn.sram_base);
  out.Put("dram_base", insn.dram_base);
  out.Put("y_size", insn.y_size);
  out.Put("x_size", insn.x_size);
  out.Put("x_stride", insn.x_stride);
  out.Put("y_pad_0", insn.y_pad_0);
  out.Put("y_pad_1", insn.y_pad_1);
  out.Put("x_pad_0", insn.x_pad_0);
  out.Put("x_pad_1", insn.x_pad_1);
  return out.word();
}

template <typename LoopInsn>
void PutLoop(InsnWriter& out, Opcode opcode, const LoopInsn& insn) {
  out.PutHeader(opcode, insn.deps);
  out.Put("reset", insn.reset);
  out.Put("uop_bgn", insn.uop_bgn);
  out.Put("uop_end", insn.uop_end);
  out.Put("iter_out", insn.iter_out);
  out.Put("iter_in", insn.iter_in);
  out.Put("dst_factor_out", insn.dst_factor_out);
  out.Put("dst_factor_in", insn.dst_factor_in);
  out.Put("src_factor_out", insn.src_factor_out);
  out.Put("src_factor_in", insn.src_factor_in);
}

template <typename LoopInsn>
void GetLoop(const InsnReader& in, LoopInsn& insn) {
  insn.deps = in.GetDeps();
  insn.reset = in.GetBool("reset");
  insn.uop_bgn = in.Get("uop_bgn");
  insn.uop_end = in.Get("uop_end");
  insn.iter_out = in.Get("iter_out");
  insn.iter_in = in.Get("iter_in");
  insn.dst_factor_out = in.Get("dst_factor_out");
  insn.dst_factor_in = in.Get("dst_factor_in");
  insn.src_factor_out = in.Get("src_factor_out");
  insn.src_factor_in = in.Get("src_factor_in");
}

InsnWord EncodeGemm(const VTAConfig& config, const GemmInsn& insn) {
  InsnWriter out(detail::GemmLayout(config));
  PutLoop(out, Opcode::kGemm, insn);
  out.Put("wgt_factor_out", insn.wgt_factor_out);
  out.Put("wgt_factor_in", insn.wgt_factor_in);
  return out.word();
}

InsnWord EncodeAlu(const VTAConfig& config, const AluInsn& insn) {
  InsnWriter out(detail::AluLayout(config));
  PutLoop(out, Opcode::kAlu, insn);
  out.Put("alu_opcode", static_cast<uint64_t>(insn.alu_opcode));
  out.Put("use_imm", insn.use_imm);
  out.PutSigned("imm", insn.imm);
  return out.word();
}

InsnWord EncodeFinish(const VTAConfig& config, const FinishInsn& insn) {
  InsnWriter out(detail::FinishLayout(config));
  out.PutHeader(Opcode::kFinish, insn.deps);
  return out.word();
}

}  // namespace

const char* OpcodeName(Opcode opcode) {
  switch (opcode) {
    case Opcode::kLoad: return "LOAD";
    case Opcode::kStore: return "STORE";
    case Opcode::kGemm: return "GEMM";
    case Opcode::kFinish: return "FINISH";
    case Opcode::kAlu: return "ALU";
  }
  return "<invalid opcode>";
}

const char* MemIdName(MemId memory_type) {
  switch (memory_type) {
    case MemId::kUop: return "UOP";
    case MemId::kWgt: return "WGT";
    case MemId::kInp: return "INP";
    case MemId::kAcc: return "ACC";
    case MemId::kOut: return "OUT";
    case MemId::kAcc8: return "ACC_8BIT";
  }
  return "<invalid memory type>";
}

const char* AluOpcodeName(AluOpcode alu_opcode) {
  switch (alu_opcode) {
    case AluOpcode::kMin: return "MIN";
    case AluOpcode::kMax: return "MAX";
    case AluOpcode::kAdd: return "ADD";
    case AluOpcode::kShr: return "SHR";
    case AluOpcode::kMul: return "MUL";
  }
  return "<invalid ALU opcode>";
}

Opcode GetOpcode(const Insn& insn) {
  if (const auto* mem = std::get_if<MemInsn>(&insn)) return mem->opcode;
  if (std::holds_alternative<GemmInsn>(insn)) return Opcode::kGemm;
  if (std::holds_alternative<AluInsn>(insn)) return Opcode::kAlu;
  return Opcode::kFinish;
}

const DepFlags& GetDeps(const Insn& insn) {
  return std::visit([](const auto& format) -> const DepFlags& { return format.deps; }, insn);
}

DepFlags& GetDeps(Insn& insn) {
  return std::visit([](auto& format) -> DepFlags& { return format.deps; }, insn);
}

InsnWord Encode(const VTAConfig& config, const Insn& insn) {
  if (const auto* mem = std::get_if<MemInsn>(&insn)) return EncodeMem(config, *mem);
  if (const auto* gemm = std::get_if<GemmInsn>(&insn)) return EncodeGemm(config, *gemm);
  if (const auto* alu = std::get_if<AluInsn>(&insn)) return EncodeAlu(config, *alu);
  return EncodeFinish(config, std::get<FinishInsn>(insn));
}

Insn Decode(const VTAConfig& config, const InsnWord& word) {
  uint64_t opcode = word[0] & LowMask(kOpcodeBits);
  switch (opcode) {
    case static_cast<uint64_t>(Opcode::kLoad):
    case static_cast<uint64_t>(Opcode::kStore): {
      InsnReader in(detail::MemLayout(config), word);
      uint32_t memory_type = in.Get("memory_type");
      LOOM_CHECK_USER(memory_type <= static_cast<uint32_t>(MemId::kAcc8))
          << "unknown VTA memory type " << memory_type << " in a "
          << OpcodeName(static_cast<Opcode>(opcode))
          << " instruction (valid: 0=UOP 1=WGT 2=INP 3=ACC 4=OUT 5=ACC_8BIT)";
      MemInsn insn;
      insn.opcode = static_cast<Opcode>(opcode);
      insn.deps = in.GetDeps();
      insn.memory_type = static_cast<MemId>(memory_type);
      insn.sram_base = in.Get("sram_base");
      insn.dram_base = in.Get("dram_base");
      insn.y_size = in.Get("y_size");
      insn.x_size = in.Get("x_size");
      insn.x_stride = in.Get("x_stride");
      insn.y_pad_0 = in.Get("y_pad_0");
      insn.y_pad_1 = in.Get("y_pad_1");
      insn.x_pad_0 = in.Get("x_pad_0");
      insn.x_pad_1 = in.Get("x_pad_1");
      return insn;
    }
    case static_cast<uint64_t>(Opcode::kGemm): {
      InsnReader in(detail::GemmLayout(config), word);
      GemmInsn insn;
      GetLoop(in, insn);
      insn.wgt_factor_out = in.Get("wgt_factor_out");
      insn.wgt_factor_in = in.Get("wgt_factor_in");
      return insn;
    }
    case static_cast<uint64_t>(Opcode::kAlu): {
      InsnReader in(detail::AluLayout(config), word);
      uint32_t alu_opcode = in.Get("alu_opcode");
      LOOM_CHECK_USER(alu_opcode <= static_cast<uint32_t>(AluOpcode::kMul))
          << "unknown VTA ALU opcode " << alu_opcode
          << " (valid: 0=MIN 1=MAX 2=ADD 3=SHR 4=MUL)";
      AluInsn insn;
      GetLoop(in, insn);
      insn.alu_opcode = static_cast<AluOpcode>(alu_opcode);
      insn.use_imm = in.GetBool("use_imm");
      insn.imm = in.GetSigned("imm");
      return insn;
    }
    case static_cast<uint64_t>(Opcode::kFinish): {
      InsnReader in(detail::FinishLayout(config), word);
      return FinishInsn{in.GetDeps()};
    }
    default:
      LOOM_THROW << "unknown VTA opcode " << opcode
                 << " (valid: 0=LOAD 1=STORE 2=GEMM 3=FINISH 4=ALU)";
  }
}

std::array<uint8_t, kInsnBytes> InsnToBytes(const InsnWord& word) {
  std::array<uint8_t, kInsnBytes> bytes{};
  for (int i = 0; i < kInsnBytes; ++i) {
    bytes[i] = static_cast<uint8_t>(word[i / 8] >> (8 * (i % 8)));
  }
  return bytes;
}

InsnWord InsnFromBytes(const uint8_t* bytes) {
  InsnWord word{0, 0};
  for (int i = 0; i < kInsnBytes; ++i) {
    word[i / 8] |= uint64_t{bytes[i]} << (8 * (i % 8));
  }
  return word;
}

uint32_t EncodeUop(const VTAConfig& config, const Uop& uop) {
  FieldLayout layout = detail::UopLayout(config);
  uint32_t word = 0;
  auto put = [&](std::string_view name, uint32_t value) {
    const PlacedField& field = layout.Field(name);
    LOOM_CHECK_USER(value <= LowMask(field.width))
        << "VTA micro-op: field '" << name << "' = " << value << " does not fit in "
        << field.width << " bits (maximum " << LowMask(field.width) << ")";
    word |= value << field.offset;
  };
  put("dst_idx", uop.dst_idx);
  put("src_idx", uop.src_idx);
  put("wgt_idx", uop.wgt_idx);
  return word;
}

Uop DecodeUop(const VTAConfig& config, uint32_t word) {
  FieldLayout layout = detail::UopLayout(config);
  auto get = [&](std::string_view name) {
    const PlacedField& field = layout.Field(name);
    return static_cast<uint32_t>((word >> field.offset) & LowMask(field.width));
  };
  return {get("dst_idx"), get("src_idx"), get("wgt_idx")};
}

}  // namespace loom::vta
