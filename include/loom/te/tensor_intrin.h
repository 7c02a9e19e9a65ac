// Tensor intrinsics: a computation a piece of hardware or a micro-kernel performs in one
// step, declared as a TE compute plus the statements that invoke it. Stage::tensorize
// replaces a stage's inner loops by those statements when the loops compute the same thing.
//
//   Tensor a = placeholder({16, 16}, DataType::Int(8), "a");
//   Tensor b = placeholder({16, 16}, DataType::Int(8), "b");
//   IterVar k = reduce_axis(Range(0, 16), "k");
//   Tensor c = compute({16, 16}, [&](Var i, Var j) {
//     DataType acc = DataType::Int(32);
//     return sum(cast(acc, a(i, k->var)) * cast(acc, b(j, k->var)), {k});
//   }, "c");
//   TensorIntrin gemm = decl_tensor_intrin(c.op(), [](const Array<Buffer>& in,
//                                                     const Array<Buffer>& out) {
//     auto call = [&](const char* fn) {
//       return Evaluate(call_extern(DataType::Int(32), fn,
//           {access_ptr(out[0]), access_ptr(in[0]), access_ptr(in[1]),
//            out[0]->strides[0], in[0]->strides[0], in[1]->strides[0]}));
//     };
//     return TensorIntrinStmts{call("gemm_reset_update"), call("gemm_reset"), call("gemm_update")};
//   }, "gemm");
//
// The buffers handed to the builder have symbolic strides and element offset (variables),
// so they can stand for a tile of a larger tensor: tensorize binds them to the tile's
// buffer, its offset and its strides.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "loom/te/operation.h"

namespace loom::te {

// What an intrinsic's builder returns. `body` computes the outputs from scratch. For a
// reduction whose loops tensorize leaves partly outside the intrinsic, `reduce_init` sets
// the outputs to the reduction's identity and `reduce_update` accumulates into them; both
// are optional (without reduce_init, body runs at the first outer reduction iteration and
// reduce_update at the others).
struct TensorIntrinStmts {
  Stmt body;
  Stmt reduce_init;
  Stmt reduce_update;
};

struct TensorIntrinNode {
  std::string name;
  // The compute the intrinsic performs, over placeholders.
  Operation op;
  // op's input tensors (placeholders), in order of first use.
  Array<Tensor> inputs;
  // The buffers the statements use: one per input, then one per output of op.
  Array<Buffer> input_buffers;
  Array<Buffer> output_buffers;
  TensorIntrinStmts stmts;
};
using TensorIntrin = std::shared_ptr<const TensorIntrinNode>;

using TensorIntrinBuilder =
    std::function<TensorIntrinStmts(const Array<Buffer>& inputs, const Array<Buffer>& outputs)>;

// Where an intrinsic finds one of its tensors. A non-global `scope` (an accelerator's buffer,
// "local.inp_buffer") makes tensorize refuse a tile stored elsewhere; an `offset_factor` above
// 1 makes it refuse a tile whose first element it cannot prove to lie at a multiple of that
// many elements, so that the statements may divide the offset by it (a buffer index counted
// in whole tiles).
struct TensorIntrinBuffer {
  std::string scope = "global";
  int offset_factor = 1;
};

// Declares the intrinsic computing `op` (a compute reading only placeholders). `buffers`
// gives some of op's tensors (inputs or outputs, by name) a scope or an offset factor.
// loom::Error naming the intrinsic when op is not such a compute, the builder gives no body,
// or `buffers` names a tensor op does not have.
TensorIntrin decl_tensor_intrin(const Operation& op, const TensorIntrinBuilder& builder,
                                std::string name = "tensor_intrin",
                                const std::map<std::string, TensorIntrinBuffer>& buffers = {});

// The address of the element `load` reads (a BufferLoad), as a handle: the builtin
// "address_of". Passing it to call_extern hands the callee a pointer into the buffer.
// `access` (tir::builtin::kAccessRead, kAccessWrite, or both or'ed) says what the callee does
// through it, for the passes that order memory accesses (ThreadSync); 0: unknown, so both.
PrimExpr address_of(const PrimExpr& load, int access = 0);
// The address of `buffer`'s first element (index 0 in every dimension).
PrimExpr access_ptr(const Buffer& buffer, int access = 0);

}  // namespace loom::te
