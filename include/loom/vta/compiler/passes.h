// The VTA lowering passes (libloom_vta_compiler), one per file in src/vta/compiler/, and the
// pipeline that runs them after the default TIR pipeline (tir/pipeline.h).
//
//   Environment env(VTAConfig::Default());
//   PrimFunc f = vta::lower(env, schedule, {A, B, C}, "gemm");
#pragma once

#include <string>

#include "loom/te/schedule.h"
#include "loom/tir/transform.h"
#include "loom/vta/compiler/environment.h"

namespace loom::vta {

// AttrStmt key PlanSram puts around each on-chip allocation: node = the allocation's data Var,
// value = the element of the buffer (in the scope's elements, MemoryInfo::lanes values each)
// where the allocation starts.
inline constexpr const char* kSramBase = "vta_sram_base";

// PlanSram: every allocation in an on-chip scope (input, weight, accumulator) gets a place in
// its buffer, in whole elements. An allocation starts where the allocations enclosing it in
// the same scope end; allocations that follow each other share space (StorageRewrite has
// hoisted those that live together to the top of their scope). The Allocate stays (its
// accesses still run on the host until the DMA and ALU passes replace them); an AttrStmt
// kSramBase records the place. User errors, naming the allocation: a size that is not a
// constant or not a whole number of elements, and allocations that do not fit the buffer
// (with the size they need and the buffer's depth), which a schedule's tiles cause.
tir::transform::Pass PlanSram(const Environment& env);

// ResolveSramAddresses: address_of(buffer[index]) of a placed on-chip buffer (how the GEMM
// intrinsic passes its tiles, so that virtual threads' copies of a buffer stay distinct)
// becomes the buffer's element: base + index / values per element. A user error when the
// index is not provably the start of an element.
tir::transform::Pass ResolveSramAddresses(const Environment& env);

// InjectDma: each copy under a dma_copy pragma between DRAM and an on-chip buffer placed by
// PlanSram becomes one LOAD or STORE: call_extern("VTALoadBuffer2D" / "VTAStoreBuffer2D",
// VTATLSCommandHandle(), ...) inside an AttrStmt Environment::kCoprocScope naming the queue
// that runs it (load for the input and weight buffers, compute for the accumulator, store for
// stores). The copy's loops must form a 2-D pattern: from the innermost loop outwards, loops
// contiguous on both sides make the row, a whole number of elements starting at a whole
// element; the remaining loops, merged where one continues the next, are at most one, the
// rows, which follow each other on chip and lie a whole number of elements apart in DRAM.
// LOADs copy values unchanged, except into the accumulator, where a cast may widen int8 values
// (an ACC_8BIT LOAD, memory type 5); STOREs go from the accumulator to values of the output
// type (a cast narrows them, as the hardware does). A LOAD may pad with zeros, as a pad stage
// inlined into the copy does (Select / if_then_else of a conjunction of comparisons, the
// copied value, 0): each comparison bounds one loop of the copy (coefficient 1 or -1) by an
// expression of the loops around it, so that a tile of rows is padded only where it meets
// the edge (the sizes, padding and DRAM start are then expressions of the tile); the read's
// clamps (max with 0, min with a constant) are the pad stage's and are dropped. Its innermost
// loops then copy exactly one element, and at most two loops of elements remain, the columns
// (contiguous on both sides) and the rows, each padded before and after where its condition
// leaves iterations out.
// Anything else is a user error that quotes the copy and says what does not fit.
tir::transform::Pass InjectDma(const Environment& env);

// AluInPlace: an alu-pragma'd stage that writes one accumulator tensor from another at the
// same element, dst[i] = op(src[i], ...), writes src instead (src[i] = op(src[i], ...), the
// ALU's in-place form), when src is not used after the stage, dst not before it, and dst's
// uses lie within src's allocation; dst's allocation goes. Runs before the default pipeline,
// while the stages' tensors are apart (StorageRewrite would give them shared slots).
tir::transform::Pass AluInPlace();

// InjectAlu: each alu-pragma'd update of a placed accumulator buffer in place, dst =
// op(dst, operand) with op add, subtract (an immediate), multiply, min, max, shift right or
// left (a negative right shift) and the operand an immediate (16 bits) or, for add, multiply,
// min and max, another accumulator element, becomes an ALU micro-op kernel:
// call_extern("VTAUopPush", 1, 0, dst element, src element, 0, opcode, use_imm, imm) under a
// coproc_uop_scope "VTAPushALUOp" under the compute queue's coproc_scope. The innermost loops
// must walk exactly one element (contiguous in every operand); the outer loops stay around the
// kernel, for FoldUopLoop. Anything else is a user error quoting the stage.
tir::transform::Pass InjectAlu(const Environment& env);

// LiftUopScope: a serial loop from 0 (constant extent) whose body is exactly one micro-op
// kernel (coproc_scope around coproc_uop_scope) moves into the kernel, inner loops first, when
// it can be a hardware loop (every micro-op's dst, src and wgt index linear in the variable,
// with the same non-negative factors in all micro-ops, the variable nowhere else) and the
// kernel's micro-ops, once FoldUopLoop has folded its two outermost loops, stay within an
// eighth of the micro-op buffer. Other loops stay around the kernel (one kernel push per
// iteration), which is correct, only slower.
tir::transform::Pass LiftUopScope(const Environment& env);

// FoldUopLoop: the outermost loops of a kernel's body, two at most, become its hardware loops,
// VTAUopLoopBegin(extent, dst_factor, src_factor, wgt_factor) ... VTAUopLoopEnd(), the
// micro-ops' indices those of iteration 0 (same conditions as LiftUopScope); the loops inside
// them stay in the body, which the generating function runs, pushing one micro-op per
// iteration.
tir::transform::Pass FoldUopLoop();

// LiftAllocToScopeBegin: allocations of constant size nested in a sequence move to the
// beginning of the loop body (or function) holding it, so that one iteration's statements form
// one flat sequence (schedules nest a stage's allocation around its consumers). Allocations
// inside attribute scopes (a virtual thread's, a co-processor scope) stay inside them.
tir::transform::Pass LiftAllocToScopeBegin();

// InjectCoprocSync: the dependency tokens between the load, compute and store queues, on one
// thread's program (before InjectVirtualThread). The co-processor work is the GEMM kernels'
// coproc_scopes and the dma_copy and alu pragma'd stages (a copy into the input or weight
// buffer on the load queue, into the accumulator on the compute queue, to DRAM on the store
// queue; ALU stages on the compute queue). Each maximal statement whose work runs on one queue
// becomes a coproc_scope; where program order passes from one queue to another, the earlier
// pushes a token (VTADepPush) at the end of its scope and the later pops it (VTADepPop) at the
// start of its own (through the compute queue between load and store); a loop whose body
// starts and ends on different queues carries a token from each iteration to the next (not
// popped by the first, nor pushed by the last). Scopes holding a loop's token stay outside the
// loop. Finally VTASynchronize. User errors: co-processor work under a condition, a while
// loop or an assert (the tokens could not pair up on every path), or in a non-serial loop (each
// thread would queue on its own command queue); host computation after co-processor work, or in
// a loop holding some (the device runs the work only at VTASynchronize).
tir::transform::Pass InjectCoprocSync();

// RemoveSramAllocations: the allocations in on-chip scopes and their kSramBase attributes go
// (the buffers are the device's). A user error names an on-chip buffer the host would still
// access (a stage in an on-chip scope without its pragma or intrinsic).
tir::transform::Pass RemoveSramAllocations(const Environment& env);

// The default TIR lowering pipeline, then the VTA passes in order.
tir::transform::Pass LoweringPipeline(const Environment& env);

// te::ScheduleToPrimFunc, then LoweringPipeline(env) under the current PassContext.
PrimFunc lower(const Environment& env, const te::Schedule& schedule, const Array<te::Tensor>& args,
               const std::string& name = "main");

}  // namespace loom::vta
