#include "loom/topi/x86/tensor_intrinsics.h"

#include "loom/ir/expr_ops.h"
#include "loom/te/operation.h"

namespace loom::topi::x86 {

te::TensorIntrin VnniDot16x4() {
  const DataType u8 = DataType::UInt(8), i8 = DataType::Int(8), i32 = DataType::Int(32);
  te::Tensor a = te::placeholder({kVnniDepth}, u8, "a");
  te::Tensor b = te::placeholder({kVnniLanes, kVnniDepth}, i8, "b");
  IterVar k = te::reduce_axis(Range(0, kVnniDepth), "k");
  te::Tensor c = te::compute(
      {kVnniLanes},
      [&](Var j) { return te::sum(cast(i32, a(k->var)) * cast(i32, b(j, k->var)), {k}); }, "c");
  return te::decl_tensor_intrin(
      c.op(),
      [i32](const Array<Buffer>& in, const Array<Buffer>& out) {
        const DataType vector = i32.with_lanes(kVnniLanes);
        PrimExpr zero = make_zero(i32), one = make_const(i32, int64_t{1});
        // a's 4 bytes as one int32 in every lane (vpbroadcastd); b's 16 x 4 bytes, one 64-byte
        // load: its rows are contiguous (the packed layout), so a ramp over the last dimension
        // past its extent reads them all. LLVM 19 declares vpdpbusd on <16 x i32> operands.
        PrimExpr a_bytes = BufferLoad(in[0], {Ramp(zero, one, kVnniDepth)});
        PrimExpr a_lanes = Broadcast(call_intrin(i32, "reinterpret", {a_bytes}), kVnniLanes);
        PrimExpr b_bytes = BufferLoad(in[1], {zero, Ramp(zero, one, kVnniLanes * kVnniDepth)});
        PrimExpr b_lanes = call_intrin(vector, "reinterpret", {b_bytes});
        Array<PrimExpr> c_lanes{Ramp(zero, one, kVnniLanes)};
        auto accumulate = [&](PrimExpr acc) {
          return BufferStore(out[0],
                             call_llvm_pure_intrin(vector, "llvm.x86.avx512.vpdpbusd.512",
                                                   {std::move(acc), a_lanes, b_lanes}),
                             c_lanes);
        };
        Stmt reset = BufferStore(out[0], Broadcast(zero, kVnniLanes), c_lanes);
        return te::TensorIntrinStmts{accumulate(Broadcast(zero, kVnniLanes)), reset,
                                     accumulate(BufferLoad(out[0], c_lanes))};
      },
      "vnni_dot_16x4");
}

}  // namespace loom::topi::x86
