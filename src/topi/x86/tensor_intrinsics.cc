#include "loom/topi/x86/tensor_intrinsics.h"

#include <array>
#include <cstring>
#include <string>

#include "loom/arith/analyzer.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"
#include "loom/te/operation.h"

namespace loom::topi::x86 {

namespace {

// A dot-product instruction of AVX-512: per 32-bit lane, `depth` products of a's and b's
// elements added to the lane's sum; its LLVM intrinsic on 512-bit registers (16 lanes) and,
// with AVX-512 VL, on 256-bit ones (8 lanes).
struct DotInstruction {
  const char* llvm_name_512;
  const char* llvm_name_256;
  DataType a_dtype, b_dtype, sum_dtype;
  int depth;
};

const DotInstruction kVpdpbusd{"llvm.x86.avx512.vpdpbusd.512", "llvm.x86.avx512.vpdpbusd.256",
                               DataType::UInt(8), DataType::Int(8), DataType::Int(32),
                               kVnniDepth};
const DotInstruction kVdpbf16ps{"llvm.x86.avx512bf16.dpbf16ps.512",
                                "llvm.x86.avx512bf16.dpbf16ps.256", DataType::BFloat16(),
                                DataType::BFloat16(), DataType::Float(32), kDpbf16Depth};

// The statements of one dot-product instruction into c (`lanes` sums, 16 or 8) of `a_lanes`
// (`lanes` groups of `depth` elements, as <lanes x i32>) and b's lanes x depth elements, one
// 64- or 32-byte load: b's rows are contiguous (the packed layouts), so a ramp over its last
// dimension past its extent reads them all. LLVM 19 declares vpdpbusd on <lanes x i32>
// operands and vdpbf16ps on <2 lanes x bfloat> (codegen bitcasts the bits).
te::TensorIntrinStmts DotStmts(const DotInstruction& instruction, int lanes,
                               const PrimExpr& a_lanes, const Buffer& b, const Buffer& c) {
  const DataType i32 = DataType::Int(32), words = i32.with_lanes(lanes);
  const DataType sums = instruction.sum_dtype.with_lanes(lanes);
  const char* name = lanes == kVnniLanes ? instruction.llvm_name_512 : instruction.llvm_name_256;
  PrimExpr zero = make_zero(i32), one = make_const(i32, int64_t{1});
  PrimExpr b_elements = BufferLoad(b, {zero, Ramp(zero, one, lanes * instruction.depth)});
  PrimExpr b_lanes = call_intrin(words, "reinterpret", {b_elements});
  Array<PrimExpr> c_lanes{Ramp(zero, one, lanes)};
  auto accumulate = [&](PrimExpr acc) {
    return BufferStore(c, call_llvm_pure_intrin(sums, name, {std::move(acc), a_lanes, b_lanes}),
                       c_lanes);
  };
  PrimExpr no_sum = Broadcast(make_zero(instruction.sum_dtype), lanes);
  Stmt reset = BufferStore(c, no_sum, c_lanes);
  return te::TensorIntrinStmts{accumulate(no_sum), reset, accumulate(BufferLoad(c, c_lanes))};
}

// c[j] += sum_{k < depth} a[k] * b[j, k] for j < lanes (in the sum's type): a's group
// broadcast as one 32-bit value to every lane (vpbroadcastd), then the instruction.
te::TensorIntrin BroadcastDot(const DotInstruction& instruction, int lanes,
                              const std::string& name) {
  LOOM_CHECK_USER(lanes == kVnniLanes || lanes == kVnniLanes / 2)
      << name << ": a dot-product instruction sums into 16 or 8 lanes, not " << lanes;
  const int depth = instruction.depth;
  te::Tensor a = te::placeholder({depth}, instruction.a_dtype, "a");
  te::Tensor b = te::placeholder({lanes, depth}, instruction.b_dtype, "b");
  IterVar k = te::reduce_axis(Range(0, depth), "k");
  const DataType sum = instruction.sum_dtype;
  te::Tensor c = te::compute(
      {lanes},
      [&](Var j) { return te::sum(cast(sum, a(k->var)) * cast(sum, b(j, k->var)), {k}); }, "c");
  return te::decl_tensor_intrin(
      c.op(),
      [instruction, lanes](const Array<Buffer>& in, const Array<Buffer>& out) {
        const DataType i32 = DataType::Int(32);
        PrimExpr zero = make_zero(i32), one = make_const(i32, int64_t{1});
        PrimExpr a_group = BufferLoad(in[0], {Ramp(zero, one, instruction.depth)});
        PrimExpr a_lanes = Broadcast(call_intrin(i32, "reinterpret", {a_group}), lanes);
        return DotStmts(instruction, lanes, a_lanes, in[1], out[0]);
      },
      name + "_" + std::to_string(lanes));
}

}  // namespace

int DotProductDepth(DataType dtype) {
  if (dtype == DataType::UInt(8) || dtype == DataType::Int(8)) return kVnniDepth;
  LOOM_CHECK_USER(dtype == DataType::BFloat16())
      << "DotProductDepth: no dot-product instruction takes " << dtype.str()
             << " (uint8, int8 or bfloat16)";
  return kDpbf16Depth;
}

bool IsDotProductWeight(DataType dtype) {
  return dtype == DataType::Int(8) || dtype == DataType::BFloat16();
}

te::TensorIntrin VnniDot16x4() { return BroadcastDot(kVpdpbusd, kVnniLanes, "vnni_dot"); }

te::TensorIntrin Dpbf16Dot16x2() { return BroadcastDot(kVdpbf16ps, kVnniLanes, "dpbf16_dot"); }

te::TensorIntrin DotIntrinsicFor(DataType data_dtype, int lanes) {
  return data_dtype == DataType::BFloat16() ? BroadcastDot(kVdpbf16ps, lanes, "dpbf16_dot")
                                            : BroadcastDot(kVpdpbusd, lanes, "vnni_dot");
}

te::TensorIntrin VnniTapDot16x4(int64_t tap_stride) {
  LOOM_CHECK_USER(tap_stride >= kVnniLanes)
      << "VnniTapDot16x4: the taps must lie at least " << kVnniLanes
      << " bytes apart (a channel block), got " << tap_stride;
  const DataType u8 = DataType::UInt(8), i8 = DataType::Int(8), i32 = DataType::Int(32);
  te::Tensor a = te::placeholder({kVnniDepth, kVnniLanes}, u8, "a");
  te::Tensor b = te::placeholder({kVnniLanes, kVnniDepth}, i8, "b");
  IterVar k = te::reduce_axis(Range(0, kVnniDepth), "k");
  te::Tensor c = te::compute(
      {kVnniLanes},
      [&](Var i) { return te::sum(cast(i32, a(k->var, i)) * cast(i32, b(i, k->var)), {k}); },
      "c");
  return te::decl_tensor_intrin(
      c.op(),
      [i32, tap_stride](const Array<Buffer>& in, const Array<Buffer>& out) {
        PrimExpr zero = make_zero(i32), one = make_const(i32, int64_t{1});
        constexpr int kBytes = kVnniLanes * kVnniDepth;
        // a's taps as one 64-lane vector, tap-major; contiguous taps are one load.
        Array<PrimExpr> taps;
        if (tap_stride == kVnniLanes) {
          taps.push_back(BufferLoad(in[0], {zero, Ramp(zero, one, kBytes)}));
        } else {
          for (int j = 0; j < kVnniDepth; ++j) {
            taps.push_back(
                BufferLoad(in[0], {make_const(i32, int64_t{j}), Ramp(zero, one, kVnniLanes)}));
          }
        }
        // Channel-major: lane i of the result holds channel i's taps 0-3 (bytes 4i..4i+3).
        Array<PrimExpr> channel_major;
        for (int i = 0; i < kVnniLanes; ++i) {
          for (int j = 0; j < kVnniDepth; ++j) {
            channel_major.push_back(make_const(i32, int64_t{j * kVnniLanes + i}));
          }
        }
        PrimExpr a_lanes = call_intrin(i32.with_lanes(kVnniLanes), "reinterpret",
                                       {Shuffle(taps, channel_major)});
        return DotStmts(kVpdpbusd, kVnniLanes, a_lanes, in[1], out[0]);
      },
      "vnni_tap_dot_16x4");
}

namespace {

// The tiles of an AMX register block: accumulators 0-3 (row tile t, column half h at
// 2t + h), A's row tiles 4-5, B's column halves 6-7.
constexpr int kAccumulatorTile = 0, kATile = 4, kBTile = 6;

PrimExpr TileId(int tile) { return make_const(DataType::Int(8), int64_t{tile}); }

// Elements between two indices of a buffer (its strides are the intrinsic's variables,
// bound to the tensor's when tensorize places the block): sum of index differences times
// strides, the differences constant.
PrimExpr ElementDistance(const Buffer& buffer, const Array<PrimExpr>& from,
                         const Array<PrimExpr>& to, const std::string& what) {
  arith::Analyzer analyzer;
  PrimExpr distance = make_const(DataType::Int(64), int64_t{0});
  for (size_t d = 0; d < from.size(); ++d) {
    PrimExpr delta = analyzer.Simplify(to[d] - from[d]);
    int64_t value = 0;
    LOOM_ICHECK(IsConstInt(delta, &value))
        << what << ": the index difference " << ToScript(delta) << " along dimension " << d
        << " of buffer '" << buffer->name << "' is not a constant";
    if (value != 0) distance = distance + cast(DataType::Int(64), buffer->strides[d]) * value;
  }
  return distance;
}

PrimExpr AddressOf(const Buffer& buffer, const Array<PrimExpr>& index) {
  return call_intrin(DataType::Handle(), "address_of", {BufferLoad(buffer, index)});
}

Stmt TileCall(const std::string& intrinsic, Array<PrimExpr> args) {
  return Evaluate(call_llvm_intrin(DataType::Void(), intrinsic, std::move(args)));
}

// The 64-byte tile configuration (palette 1; per tile its bytes per row and rows) as eight
// little-endian int64 words. A's rows hold `depth` elements (32 bfloat16: 64 bytes; 32 or 64
// uint8); B has one row per group of them.
std::array<int64_t, 8> TileConfiguration(const AmxBlock& block) {
  std::array<uint8_t, 64> bytes{};
  bytes[0] = 1;
  auto set = [&](int tile, int64_t tile_rows, uint16_t row_bytes) {
    std::memcpy(&bytes[16 + 2 * tile], &row_bytes, sizeof row_bytes);
    bytes[48 + tile] = static_cast<uint8_t>(tile_rows);
  };
  const int group = AmxGroup(block.product);
  const auto a_row_bytes = static_cast<uint16_t>(block.depth * 4 / group);
  for (int t = 0; t < block.row_tiles; ++t) {
    set(kATile + t, block.rows, a_row_bytes);
    for (int h = 0; h < 2; ++h) set(kAccumulatorTile + 2 * t + h, block.rows, 64);
  }
  for (int h = 0; h < 2; ++h) set(kBTile + h, block.depth / group, 64);
  std::array<int64_t, 8> words{};
  std::memcpy(words.data(), bytes.data(), bytes.size());
  return words;
}

}  // namespace

te::TensorIntrin AmxTiles(const te::Operation& op, const AmxBlock& block) {
  const std::string what = "AmxTiles";
  const int group = AmxGroup(block.product);
  LOOM_CHECK_USER(block.rows >= 1 && block.rows <= kAmxMaxRows &&
                  (block.row_tiles == 1 || block.row_tiles == 2) && block.depth > 0 &&
                  block.depth % group == 0 && block.depth * 4 / group <= 64 && block.a_index &&
                  block.b_index && block.c_index)
      << what << ": a block takes 1 or 2 row tiles of 1-" << kAmxMaxRows
      << " rows, a depth of whole groups of at most 64 bytes, and its three index functions; "
      << "got " << block.row_tiles << " tiles of " << block.rows << " rows, depth "
      << block.depth;
  return te::decl_tensor_intrin(
      op,
      [block, what](const Array<Buffer>& in, const Array<Buffer>& out) {
        const Buffer &a = in[0], &b = in[1], &c = out[0];
        const bool bf16 = block.product == AmxProduct::kBf16;
        const DataType a_type = bf16 ? DataType::BFloat16() : DataType::UInt(8);
        const DataType b_type = bf16 ? DataType::BFloat16() : DataType::Int(8);
        const DataType c_type = bf16 ? DataType::Float(32) : DataType::Int(32);
        LOOM_CHECK_USER(a->dtype == a_type && b->dtype == b_type && c->dtype == c_type)
            << what << ": A, B and C must be " << a_type << ", " << b_type << " and " << c_type
            << ", got " << a->dtype << ", " << b->dtype << " and " << c->dtype;
        const PrimExpr zero = make_const(DataType::Int(32), int64_t{0});
        const PrimExpr one = make_const(DataType::Int(32), int64_t{1});
        // The reduction's outer loops: the statements' own.
        Array<Var> step_vars;
        Array<PrimExpr> step, first_step;
        for (size_t l = 0; l < block.steps.size(); ++l) {
          step_vars.push_back(Var("amx_step" + std::to_string(l), DataType::Int(32)));
          step.push_back(step_vars.back());
          first_step.push_back(zero);
        }
        auto bytes = [](const Buffer& buffer, PrimExpr elements) {
          return elements * int64_t{buffer->dtype.bytes()};
        };
        PrimExpr a_stride = bytes(a, ElementDistance(a, block.a_index(first_step, zero),
                                                     block.a_index(first_step, one), what));
        PrimExpr b_stride = bytes(b, ElementDistance(b, block.b_index(first_step, zero, zero),
                                                     block.b_index(first_step, one, zero), what));
        PrimExpr c_stride =
            bytes(c, ElementDistance(c, block.c_index(zero, zero), block.c_index(one, zero), what));
        const int tiles = static_cast<int>(block.row_tiles);
        auto row_of = [&](int t) { return make_const(DataType::Int(32), t * block.rows); };
        auto half_of = [&](int h) {
          return make_const(DataType::Int(32), int64_t{h * kAmxColumns});
        };

        // One step: the A row tiles and B halves loaded, then every product.
        Array<Stmt> step_body;
        for (int t = 0; t < tiles; ++t) {
          step_body.push_back(TileCall(
              "llvm.x86.tileloadd64",
              {TileId(kATile + t), AddressOf(a, block.a_index(step, row_of(t))), a_stride}));
        }
        for (int h = 0; h < 2; ++h) {
          step_body.push_back(TileCall(
              "llvm.x86.tileloadd64",
              {TileId(kBTile + h), AddressOf(b, block.b_index(step, zero, half_of(h))), b_stride}));
        }
        for (int t = 0; t < tiles; ++t) {
          for (int h = 0; h < 2; ++h) {
            step_body.push_back(TileCall(
                bf16 ? "llvm.x86.tdpbf16ps" : "llvm.x86.tdpbusd",
                {TileId(kAccumulatorTile + 2 * t + h), TileId(kATile + t), TileId(kBTile + h)}));
          }
        }
        Stmt reduction = SeqStmt(step_body);
        for (size_t l = block.steps.size(); l-- > 0;) {
          reduction = For(step_vars[l], zero, make_const(DataType::Int(32), block.steps[l]),
                          ForKind::kSerial, reduction, IterVar(), {});
        }

        // The configuration, per call: a thread's tile configuration is its own, and any
        // thread of the pool may run this block.
        Buffer config = DeclBuffer({8}, DataType::Int(64), "amx_tile_config", "local");
        Array<Stmt> body;
        std::array<int64_t, 8> words = TileConfiguration(block);
        for (int w = 0; w < 8; ++w) {
          body.push_back(BufferStore(config, make_const(DataType::Int(64), words[w]),
                                     Array<PrimExpr>{make_const(DataType::Int(32), int64_t{w})}));
        }
        body.push_back(TileCall("llvm.x86.ldtilecfg", {AddressOf(config, {zero})}));
        for (int t = 0; t < 2 * tiles; ++t) {
          body.push_back(TileCall("llvm.x86.tilezero", {TileId(kAccumulatorTile + t)}));
        }
        body.push_back(reduction);
        for (int t = 0; t < tiles; ++t) {
          for (int h = 0; h < 2; ++h) {
            body.push_back(
                TileCall("llvm.x86.tilestored64",
                         {TileId(kAccumulatorTile + 2 * t + h),
                          AddressOf(c, block.c_index(row_of(t), half_of(h))), c_stride}));
          }
        }
        Stmt stmt = Allocate(config->data, DataType::Int(64),
                             Array<PrimExpr>{make_const(DataType::Int(32), int64_t{8})},
                             const_true(), SeqStmt(body), std::string("local"));
        return te::TensorIntrinStmts{stmt, Stmt(), Stmt()};
      },
      block.product == AmxProduct::kBf16 ? "amx_bf16_tiles" : "amx_int8_tiles");
}

}  // namespace loom::topi::x86
