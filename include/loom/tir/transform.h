// Passes over TIR and the infrastructure that composes them.
//
//   using namespace loom::tir::transform;
//   PassContext ctx;
//   ctx.opt_level = 3;
//   ctx.config["tir.UnrollLoop.auto_max_step"] = int64_t{8};
//   PassContextScope scope(ctx);
//   IRModule out = Sequential({UnrollLoop(), Simplify(), RemoveNoOp()})(module);
//
// A Pass is a named object with one job that maps an IRModule to a new one (a PrimFunc pass
// maps each function). Running a pass consults the current PassContext (loom/ir/
// pass_context.h, shared with the graph passes): a pass whose opt_level exceeds the
// context's, or whose name is in disabled_passes, is skipped; the context's instruments see
// every pass run; LOOM_DUMP_IR=dir writes ToScript text, LOOM_TIME_PASSES=1 wall times.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "loom/ir/module.h"
#include "loom/ir/pass_context.h"

namespace loom::tir::builtin {

// Which field loom_struct_get(ptr, index, field) reads (see src/ir/op.cc).
enum class StructField : int {
  kArgValue = 0,     // ((LoomValue*)ptr)[index], as the call's dtype (int64, float64, handle)
  kInt32Element,     // ((int32_t*)ptr)[index]
  kInt64Element,     // ((int64_t*)ptr)[index]
  kTensorData,       // ((DLTensor*)ptr)[index].data, and so on for the DLTensor fields
  kTensorDeviceType,
  kTensorNDim,
  kTensorDTypeCode,
  kTensorDTypeBits,
  kTensorDTypeLanes,
  kTensorShape,
  kTensorStrides,
  kTensorByteOffset,
};

// Names of the attributes MakePackedAPI sets and codegen reads.
inline constexpr const char* kCallingConv = "calling_conv";
inline constexpr const char* kComputeScope = "compute_scope";
// The DLPack device type (IntImm) whose workspace a packed function's allocations come from,
// set by MakePackedAPI for a device the host cannot address (its kernels' buffers live there);
// absent: the host's.
inline constexpr const char* kWorkspaceDevice = "workspace_device_type";
// AttrStmt(value = StringImm naming a runtime function `int f(void** handle, int (*init)(void*),
// void* signature, int nbytes)`) around statements that generate something a co-processor's
// runtime caches (VTA's micro-op kernels: "VTAPushGEMMOp", "VTAPushALUOp"). Codegen outlines
// the body into `init`, which reads the body's free variables from `signature` (their values,
// packed), and calls f with a static slot of this call site: the runtime runs `init` only for a
// signature it has not cached.
inline constexpr const char* kCoprocUopScope = "coproc_uop_scope";
// What SplitHostDevice marks a device kernel with: kCallingConv = kDeviceKernel, and
// kThreadTags, the thread axes whose extents the launch passes ("blockIdx.x,threadIdx.x").
inline constexpr const char* kDeviceKernel = "device_kernel";
inline constexpr const char* kThreadTags = "thread_tags";
// The operator of a barrier of a GPU block's threads over its shared memory (ThreadSync
// inserts its calls; the GPU code generators lower them).
inline constexpr const char* kThreadSync = "loom_thread_sync";
// A reduction across the threads of a block, in place: loom_thread_allreduce(k, v_1, ..., v_k,
// r_1, ..., r_m), each v_i a BufferLoad of one element of a thread's own ("local") buffer,
// each r_j the variable of an enclosing loop bound to a threadIdx axis that the reduction
// runs over; afterwards every v_i of every thread holds the combination of that value over
// the threads that differ only in r_1..r_m. Always inside a kThreadAllreduce AttrStmt, which
// carries the combiner; LowerThreadAllreduce replaces both.
inline constexpr const char* kThreadAllreduce = "loom_thread_allreduce";
// Warp shuffles (CUDA's __shfl_down_sync, __shfl_sync over the whole warp):
// loom_warp_shuffle_down(value, offset, width) is `value` of the lane `offset` above this one
// within its group of `width` lanes (this lane's own past the group's end);
// loom_warp_shuffle(value, lane, width) is `value` of lane `lane` of this lane's group. Every
// lane of the warp must execute them. Only LowerThreadAllreduce emits them, for a target with
// a -thread-warp-size above 1.
inline constexpr const char* kWarpShuffleDown = "loom_warp_shuffle_down";
inline constexpr const char* kWarpShuffle = "loom_warp_shuffle";
// Warp matrix operations (tensor cores) on 16x16 tiles held in fragments: allocations of
// scope kMatrixA (16 rows x 16 depth), kMatrixB (16 depth x 16 columns) or kAccumulator
// (16 x 16), each a handle whose fragments are numbered from 0 (one per 256 elements).
// Every lane of a warp executes them, with the same operands:
//   loom_mma_fill(accumulator, index, value): every element of that fragment is `value`;
//   loom_mma_load(fragment, index, address_of(first element), stride): an A or B tile, rows
//     `stride` elements apart, into that fragment;
//   loom_mma_sync(d, d_index, a, a_index, b, b_index, c, c_index): d = a * b + c;
//   loom_mma_store(address_of(first element), accumulator, index, stride): the fragment's
//     tile into memory, rows `stride` elements apart.
// A target with the feature TensorCoreFeature(operand type) runs them as instructions
// (CodeGenCUDA: PTX wmma); on any other device EmulateMatrixOperations makes them loops.
// The tiles' side: kMatrixTile x kMatrixTile elements, one fragment each.
inline constexpr int kMatrixTile = 16;
inline constexpr const char* kMmaFill = "loom_mma_fill";
inline constexpr const char* kMmaLoad = "loom_mma_load";
inline constexpr const char* kMmaSync = "loom_mma_sync";
inline constexpr const char* kMmaStore = "loom_mma_store";
// The storage scopes of fragments: thread-private ("local...") as far as bound inference and
// the passes go, a warp's together on the device.
inline constexpr const char* kMatrixA = "local.matrix_a";
inline constexpr const char* kMatrixB = "local.matrix_b";
inline constexpr const char* kAccumulator = "local.accumulator";
// The target feature of targets whose devices run warp matrix operations on fragments of
// `operand` natively: "tensor-core-float16", "tensor-core-bfloat16"; empty for any other
// type (no device multiplies it so).
inline std::string TensorCoreFeature(DataType operand) {
  if (operand.lanes() != 1 || !operand.is_float() || operand.bits() != 16) return "";
  return operand.is_bfloat16() ? "tensor-core-bfloat16" : "tensor-core-float16";
}
// address_of's optional second argument: what the callee does through the pointer.
inline constexpr int kAccessRead = 1;
inline constexpr int kAccessWrite = 2;

}  // namespace loom::tir::builtin

namespace loom::tir::transform {

// The context is shared with the graph layer's passes (loom/ir/pass_context.h).
using ::loom::transform::ConfigValue;
using ::loom::transform::PassContext;
using ::loom::transform::PassContextScope;
using ::loom::transform::PassInfo;
using ::loom::transform::PassInstrument;

class Pass;
// Runs `passes` in order (each subject to the context on its own).
Pass Sequential(std::vector<Pass> passes, std::string name = "Sequential");

class Pass {
 public:
  using ModuleFunction = std::function<IRModule(const IRModule&, const PassContext&)>;

  Pass(PassInfo info, ModuleFunction function);

  const PassInfo& info() const;
  // Runs the pass under PassContext::Current().
  IRModule operator()(const IRModule& module) const;
  // Runs the pass on a module holding only `func` (as "main") and returns the result.
  PrimFunc operator()(const PrimFunc& func) const;

 private:
  friend Pass Sequential(std::vector<Pass> passes, std::string name);
  struct Impl;
  std::shared_ptr<const Impl> impl_;
};

Pass CreateModulePass(Pass::ModuleFunction function, int opt_level, std::string name);
// A pass that rewrites each function of the module independently.
Pass CreatePrimFuncPass(
    std::function<PrimFunc(const PrimFunc&, const IRModule&, const PassContext&)> function,
    int opt_level, std::string name);
// `func` with its body replaced; `func` itself when `body` is the same object (so a pass
// that changed nothing returns its input, and LOOM_DUMP_IR skips it).
PrimFunc WithBody(const PrimFunc& func, Stmt body);

// ---- passes

// Simplifies every expression with an arith::Analyzer that knows the loop ranges, the
// conditions of enclosing ifs and the values of pure let bindings; removes branches and
// loops that a constant condition or a zero extent makes dead; a loop of extent 1 becomes a
// substitution of its variable (or a LetStmt when the start reads memory).
Pass Simplify();
// Removes statements that do nothing: evaluations of side-effect-free expressions, stores
// of an element to itself, loops and branches whose bodies do nothing.
Pass RemoveNoOp();
// A vector load whose index, cut into runs of lanes (halves, then quarters, down to 4), is a
// stride-1 ramp in every run becomes one load per run joined by a Shuffle, not a gather of
// one load per lane (a layout transform between channel blocks of 16 and 8).
Pass SplitGathers();
// Unrolls loops of kind unroll (their extent must be a constant), and serial loops with a
// constant extent up to the config value "tir.UnrollLoop.auto_max_step" (default 0: none).
Pass UnrollLoop();
// StorageFlatten: every BufferLoad/BufferStore of an N-d buffer becomes a 1-D access of a
// flat Buffer over the same data variable, at elem_offset + sum(index[k] * stride[k]) (a Ramp
// index gives a Ramp), and every Allocate gets one extent. Strides are the buffer's own, or
// row-major from its shape. Parameter buffers keep their N-d declaration in buffer_map (the
// calling convention: callers pass N-d arrays); only the body changes.
// Alignment: AttrStmt(node = the Buffer the accesses use, attr_key = "buffer_dim_align",
// value = T.tvm_tuple(dim, factor, offset), constant integers) anywhere in the body pads the
// stride of dimension `dim` to the next value equal to offset modulo factor, and grows the
// buffer's Allocate to match; the attribute is removed. Only compact buffers the function
// allocates can be aligned (user error otherwise). Runs first among the TIR passes.
Pass StorageFlatten();
// The attribute key of those alignment requests, and the stride a request of (factor,
// offset) gives a dimension whose compact stride is `stride`: the smallest value at least
// `stride` equal to offset modulo factor. (Tensorize binds an intrinsic's strides with it
// before StorageFlatten runs.)
inline constexpr const char* kBufferDimAlign = "buffer_dim_align";
PrimExpr AlignStride(const PrimExpr& stride, int64_t factor, int64_t offset);
// StorageRewrite: allocations in one attach scope (the function body, or the body of a
// parallel, vectorized or thread-bound loop: never crossed, so per-thread storage stays per
// thread) are hoisted to the top of that scope, and two allocations of the same dtype and
// storage scope whose live ranges (first to last access, a loop inside the allocation's
// scope counting as a whole) do not overlap share one, of the larger size. Assumes no
// allocation is read before it is written (fresh storage has undefined contents). Left in
// place: allocations with a condition, with extents that use variables bound inside the
// scope, or whose data variable is bound to another name (their accesses cannot be seen).
// Precondition: StorageFlatten has run (merged allocations get one extent).
Pass StorageRewrite();
// The bytes all Allocate statements of `func` request together (each counted once); a user
// error when an extent is not a constant. Shows what StorageRewrite saved.
int64_t AllocatedBytes(const PrimFunc& func);


// Attribute keys of the AttrStmts that schedules emit for the two passes below.
namespace attr {
// AttrStmt(node = the IterVar of the virtual thread axis, whose var is the vthread variable
// (iter_type kVirtualThread, thread_tag "vthread" or "cthread"), value = the number of
// threads, a positive constant) around the statements the threads run.
inline constexpr const char* kVirtualThread = "virtual_thread";
// AttrStmt(node = the data Var of an allocated buffer B, value = 1) around the producer of B,
// as a leading statement of the body of the loop to pipeline; B is allocated outside it.
inline constexpr const char* kDoubleBufferScope = "double_buffer_scope";
// AttrStmt(node = the data Var of a shared buffer, value = the variable of the loop
// InjectDoubleBuffer pipelined over it) around the producer of the next iteration's tiles in
// the loop's body: what it writes of the buffer is the half that the rest of the iteration
// does not read, so ThreadSync needs no barrier between it and that rest (one at the end of
// the iteration). One per double-buffered shared buffer, nested.
inline constexpr const char* kDoubleBufferWrite = "double_buffer_write";
// AttrStmt(node = a tag, value = the id of the co-processor queue that runs the body) around
// one group of a co-processor's instructions with the dependency tokens that order them (VTA's
// load, compute and store queues). Under a "cthread" virtual thread the group is replicated
// whole, so that each thread's instructions keep their tokens.
inline constexpr const char* kCoprocScope = "coproc_scope";
// AttrStmt(node = the CommReducer, value = 0) around Evaluate(builtin::kThreadAllreduce(...)):
// what te lowering emits for a reduction whose reduction loops are bound to threadIdx axes.
inline constexpr const char* kThreadAllreduce = "thread_allreduce";
}  // namespace attr

// InjectVirtualThread: each virtual_thread scope becomes code one thread runs, with the
// virtual threads interleaved. A statement whose own expressions (a loop's bounds, an if's
// condition, a store's indices and value, ...) differ between threads is replicated where it
// stands: unrolled, the vthread variable replaced by 0..n-1, when it contains no loop and
// n <= 16; otherwise as a serial loop over the vthread variable. Other statements run once
// and are descended into, so at every loop level the threads' statements alternate
// (s1(0) s1(1) s2(0) s2(1)). Inside a "cthread" scope a kCoprocScope statement is replicated
// whole even when it does not vary (its instructions and their tokens are per thread).
// Allocations inside the scope whose contents differ per thread
// (every allocation inside a "cthread" scope: a co-processor's virtual threads never share
// buffers, so that their loads and computations can overlap) get one copy per thread (a flat allocation n times larger, thread t at offset t * size; an
// N-d one a leading dimension of n). A body that never uses the variable runs once.
// Preconditions (those of real threads): threads do not communicate through memory allocated
// outside the scope (no thread reads or writes what another writes there), and statements
// that do not depend on the thread are idempotent on such memory. User errors: a
// non-constant or non-positive thread count; a per-thread allocation whose handle is used
// other than by element accesses.
Pass InjectVirtualThread();
// InjectDoubleBuffer: software pipelining of a loop whose body starts with double_buffer_scope
// producers of buffers allocated outside it, followed by the consumer:
//   for i in [min, min+n): P(i); C(i)   becomes
//   P(min) -> half 0;  for i in [min, min+n-1): P(i+1) -> half (i+1-min)%2; C(i) <- half (i-min)%2;
//   C(min+n-1)
// (wrapped in `if n >= 1` unless that is provable). Each double-buffered allocation doubles
// (flat: 2*S with half h at offset h*S; N-d: a leading dimension of 2), so the load of the
// next tile can overlap the compute of this one. Preconditions, user errors naming the
// buffer when violated: B is allocated outside the loop and accessed only inside loops that
// double-buffer it; the consumer does not write B; the producer reads nothing the consumer
// writes, and writes nothing (besides the double-buffered buffers) the consumer accesses;
// the loop is serial or unrolled; B's handle is used only by element accesses. Not checked:
// each iteration's consumer reads only elements its own producer wrote (no state carried
// across iterations in B).
Pass InjectDoubleBuffer();
// VectorizeLoop: a loop of kind vectorized with constant extent n becomes straight-line
// vector code: the loop variable is Ramp(min, 1, n), expressions depending on it are widened
// lane by lane (scalars broadcast), loads and stores become vector accesses (Ramp indices;
// other vector indices gather and scatter). The loop stays a serial loop instead when the
// body has no vector form or vectorizing could change what it computes: a nested loop,
// Allocate, While or AttrStmt; an if/assert condition depending on the loop variable; an
// impure call; an external call depending on it; an if_then_else on it whose branches could
// fault; a loop-dependent vector already in the body (so of nested vectorized loops only the
// innermost is vectorized); a written buffer accessed through more than one index, or
// stored to where two lanes may hit one element. Extent 1 substitutes the variable, extent
// <= 0 removes the loop. User error: a non-constant extent, or one above 65535.
Pass VectorizeLoop();
// LoopPartition: peels the boundary checks of non-divisible splits. In a serial or parallel
// loop over v, if conditions of the form likely(a < b) (<=, >, >= too; conjuncts of an &&)
// that are linear in v and read no memory are relaxed over the inner loops to the range of v
// where they hold for every inner iteration; the loop is split into that main part, where
// they become true, and the parts before and after it, where they are simplified for the
// part's range and lose the likely tag (decided ones become constants). Extent-1 parts
// substitute v; empty or no-op parts are dropped; each part's body is partitioned in turn.
//   for io in range(3): for ii in range(4): if likely(io * 4 + ii < 10): S
//   -> for io in range(2): for ii in range(4): S;  for ii in range(4): if ii < 2: S[io := 2]
// Config "tir.LoopPartition.partition_const_loop" (bool, default false): conditions without
// the likely tag are partitioned on too. Assumes index arithmetic does not wrap.
Pass LoopPartition();

// MakePackedAPI: every function not yet in the packed calling convention (attribute
// "calling_conv" = "packed") gets the LoomBackendPackedCFunc signature of
// runtime/c_backend_api.h: params (args, type_codes, num_args, ret_value, ret_type_code,
// resource_handle), returning int32. Its body first checks the call -- argument count; per
// argument its type code; for a buffer parameter a non-null DLTensor of the declared rank,
// dtype on `device_type` (a DLDeviceType: the CPU, or the device whose memory the target's
// code addresses, VTA's DRAM), non-null data, data + byte_offset aligned to the buffer's
// data_alignment, each shape extent (a Var extent is bound from the tensor, other extents are
// compared after every Var is bound), compact strides (or NULL) unless the buffer declares
// strides -- each failure a loom_check naming the function, the argument, what was expected
// and what was passed. Then it binds each buffer's data variable to data + byte_offset and
// the scalar parameters, and runs the
// original body inside AttrStmt "compute_scope" (codegen compiles that part as a function
// whose buffer pointers are noalias: distinct buffer parameters must not overlap).
// With `opaque_memory` (a device whose memory handles the host cannot address, a GPU's), the
// data handle is passed on as it is: the tensor's byte_offset must be 0, and no alignment
// is checked (the device aligns its buffers); the function's own allocations (intermediate
// results its kernels pass between them) come from the device (kWorkspaceDevice).
Pass MakePackedAPI(int device_type = 1 /* kDLCPU */, bool opaque_memory = false);

// SplitHostDevice: for a device target (loom::build runs it then). Each outermost loop bound
// to a thread axis (blockIdx.*, threadIdx.*), with everything inside it, becomes a device
// kernel of its own, `<function>_kernel<i>`: its parameters are what it uses from outside
// (buffer data handles first, then scalars), its attributes kCallingConv = kDeviceKernel and
// kThreadTags. In the host function the loop becomes loom_call_packed(kernel, parameters...,
// the extent of each thread axis in kThreadTags order). A thread axis bound twice with
// different extents, or an extent that reads a variable of the kernel, is a loom::Error.
Pass SplitHostDevice();
// ThreadSync: for each device kernel with shared allocations, barriers (loom_thread_sync)
// between the block's threads wherever a thread may read shared memory written, or write
// shared memory read, since the last barrier, within a sequence of statements and across the
// iterations of a serial loop. A barrier needed inside a branch that depends on a thread index
// (which not every thread would reach) is a loom::Error naming the kernel and the buffer.
Pass ThreadSync();
// LowerThreadAllreduce: for each device kernel, each kThreadAllreduce becomes code over shared
// memory (each thread's values in a block-shared buffer, then a tree of halving steps, the
// result read back by every thread; ThreadSync places the barriers), or, on a target whose
// warps exchange registers (`warp_size` > 1, a power of two), warp shuffles: when the
// reduction runs over threadIdx.x alone, its extent is a power of two up to `warp_size` or a
// multiple of it up to warp_size^2, the block is whole warps, and the values are 32- or 64-bit
// scalars. Each thread axis of the kernel must enclose the reduction (else a loom::Error), as
// must every thread that takes part: the reduction must not sit in a branch on a thread
// index. Runs after SplitHostDevice, before ThreadSync.
Pass LowerThreadAllreduce(int warp_size);
// Whether SplitHostDevice made `func` a device kernel.
bool IsDeviceKernel(const PrimFunc& func);
// A device kernel's thread axes (its kThreadTags), in launch order; none for other functions.
std::vector<std::string> KernelThreadTags(const PrimFunc& func);

// ContractMultiplyAdd: float32 and float64 (scalar or vector) a * b + c and c + a * b become
// fma(a, b, c), a * b - c becomes fma(a, b, -c) and c - a * b becomes fma(-a, b, c): one
// rounding instead of two, and one instruction. Contraction is decided here, in TIR, and
// never by LLVM, so that the interpreter running this pass's output computes exactly what
// the compiled code does (loom::build runs it for targets with -fp-contract=fast, the
// default). Operands are rewritten first; where both operands are products, the left one
// is fused (a * b + c * d -> fma(a, b, c * d)). Only a product that is directly the
// operand is fused. Left alone: float16/bfloat16 (rounded after every operation by
// definition), integers, and Reduce nodes (lowering turns them into acc + source updates,
// which are contracted then). Running it twice changes nothing more.
Pass ContractMultiplyAdd();

// LowerMathIntrinsics: every float32 call (scalar or any number of lanes) to exp, exp2, log,
// log2, tanh, sigmoid, erf and pow becomes a branch-free expression of plain arithmetic,
// comparisons, Select, Let, casts and the intrinsics reinterpret, shift_left, shift_right,
// bitwise_and, fabs, floor and isnan (hardware instructions): range reduction on the
// exponent bits, a polynomial fitted by scripts/fit_math_polynomials.py, and special values
// (NaN, +-inf, overflow, underflow to 0 and subnormals, log of 0 or a negative, saturation)
// chosen per lane. pow computes in float64 lanes internally. Calls of other types (float64
// goes to LLVM intrinsics or libm) and other intrinsics (sqrt, fabs, floor, ...) are kept.
// Measured max error over the dense sweeps of tests/unit/tir/math_intrinsics_accuracy_test.cc
// (ctest label slow; table and method in docs/math.md), in float32 ulps of the exact result:
// exp 1.14, exp2 1.07, log 0.90, log2 1.35, tanh 1.29, sigmoid 2.27, erf 1.13, pow 0.50.
// Contract for codegen (loom::build runs this pass after ContractMultiplyAdd, so the
// polynomials are never contracted, as they were when their accuracy was measured):
// results are exactly the interpreter's only if every float operation is emitted as one
// IEEE operation rounded to nearest: no fma contraction of a * b + c, no fast-math flags
// (nnan/ninf would delete the special-value selects, reassociation would undo the
// rounding-constant and Cody-Waite tricks). reinterpret of float32/64 <-> int32/64 is a
// bitcast; shift_right is arithmetic. Under -fast-math, build leaves the calls to codegen,
// which emits these same expressions without fast-math flags.
// It may run before or after VectorizeLoop, and Simplify afterwards keeps the results.
Pass LowerMathIntrinsics();
// The same rewrite applied to one expression.
PrimExpr LowerMathIntrinsicsInExpr(const PrimExpr& expr);

// ScalarizeVectors: every vector store becomes one scalar store per lane, in lane order, and
// every vector LetStmt one scalar LetStmt per lane; lane k of an expression is a Ramp's
// base + k * stride, a Broadcast's value, the operation on lane k of its operands, a
// Shuffle's picked lane. For back ends without vector types (the C source target). A vector
// call_llvm_pure_intrin, or a reinterpret that regroups lanes, has no lane form: a
// loom::Error naming it.
// With `vector_access_bytes` (8 or 16: a GPU's widest load), a store's contiguous, aligned
// accesses of 32-bit elements stay vector loads and stores of that many bytes: each chunk a
// vector LetStmt of a load, whose lanes one-lane Shuffles read, and a store of a vector
// variable or of a Shuffle of scalars (the file's comment says when an access qualifies).
Pass ScalarizeVectors(int vector_access_bytes = 0);
// EmulateMatrixOperations: in a device kernel with a fragment of warp matrix operations
// (tir::builtin::kMmaLoad, ...) of an operand type for which `native` is false, each
// fragment becomes every thread's own float32 copy of its tiles ("local") and each operation
// loops over them: the same results, slowly, on a device without the instructions.
Pass EmulateMatrixOperations(std::function<bool(DataType operand)> native);

}  // namespace loom::tir::transform
