// The registry of built-in operators that Call nodes name. Ops are interned: one object per
// name, so identity and name equality agree.
#include <algorithm>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "loom/ir/node.h"

namespace loom {

namespace {

struct OpSpec {
  const char* name;
  CallEffect effect;
  int num_inputs;  // -1: variadic
};

// Math intrinsics are pure; codegen lowers them (LLVM intrinsics or polynomial expansions).
constexpr OpSpec kBuiltinOps[] = {
    {"call_extern", CallEffect::kOpaque, -1},
    {"call_pure_extern", CallEffect::kPure, -1},
    // call_llvm_pure_intrin("llvm.x86.avx512.vpdpbusd.512", args...): an LLVM intrinsic by
    // name, for instructions Loom has no operator for; only LLVM codegen can run it.
    {"call_llvm_pure_intrin", CallEffect::kPure, -1},
    // call_llvm_intrin: the same for an intrinsic with effects on state LLVM does not see as
    // values (AMX's tile registers: ldtilecfg, tileloadd, tdpbf16ps), kept in program order.
    {"call_llvm_intrin", CallEffect::kOpaque, -1},
    {"exp", CallEffect::kPure, 1},
    {"exp2", CallEffect::kPure, 1},
    {"log", CallEffect::kPure, 1},
    {"log2", CallEffect::kPure, 1},
    {"log10", CallEffect::kPure, 1},
    {"sqrt", CallEffect::kPure, 1},
    {"rsqrt", CallEffect::kPure, 1},
    {"tanh", CallEffect::kPure, 1},
    {"sigmoid", CallEffect::kPure, 1},
    {"erf", CallEffect::kPure, 1},
    {"pow", CallEffect::kPure, 2},
    {"fabs", CallEffect::kPure, 1},
    {"floor", CallEffect::kPure, 1},
    {"ceil", CallEffect::kPure, 1},
    {"round", CallEffect::kPure, 1},
    {"trunc", CallEffect::kPure, 1},
    {"sin", CallEffect::kPure, 1},
    {"cos", CallEffect::kPure, 1},
    {"isnan", CallEffect::kPure, 1},
    // fma(a, b, c): a * b + c with one rounding (tir::transform::ContractMultiplyAdd).
    {"fma", CallEffect::kPure, 3},
    {"popcount", CallEffect::kPure, 1},
    {"shift_left", CallEffect::kPure, 2},
    {"shift_right", CallEffect::kPure, 2},
    {"bitwise_and", CallEffect::kPure, 2},
    {"bitwise_or", CallEffect::kPure, 2},
    {"bitwise_xor", CallEffect::kPure, 2},
    {"bitwise_not", CallEffect::kPure, 1},
    {"reinterpret", CallEffect::kPure, 1},
    // if_then_else evaluates only the chosen branch (unlike Select, which may evaluate both).
    {"if_then_else", CallEffect::kPure, 3},
    // likely(cond): a hint that cond is usually true (loop partitioning peels on it).
    {"likely", CallEffect::kPure, 1},
    // tvm_tuple(a, b, ...): a constant record carried by an attribute, never evaluated
    // (buffer_dim_align's (dim, factor, offset); see tir/transform.h).
    {"tvm_tuple", CallEffect::kPure, -1},
    // address_of(buffer[indices]): a handle to that element, how a pointer into a buffer
    // (a tile of a tensor, say) is passed to an external function. The argument is a
    // BufferLoad that is never read, so passes that rewrite buffer accesses (StorageFlatten,
    // allocation regions) keep the address right.
    // An optional second argument, an int32 kAccessRead / kAccessWrite (tir/transform.h), says
    // what the callee does through the pointer; without it, a pass must assume both.
    {"address_of", CallEffect::kPure, -1},
    // The packed calling convention (tir::transform::MakePackedAPI, lowered by codegen):
    // loom_struct_get(ptr, index, field) reads one field of the runtime's C structs (an
    // argument slot, a DLTensor field, an element of an int32/int64 array; field is a
    // tir::builtin::StructField); loom_handle_is_null(h) tests a pointer;
    // loom_check(cond, format, int64 values...) makes the function fail, returning -1 with
    // the printf-formatted message as its last error, when cond is false.
    {"loom_struct_get", CallEffect::kReadState, 3},
    {"loom_handle_is_null", CallEffect::kPure, 1},
    {"loom_check", CallEffect::kOpaque, -1},
    // loom_call_packed("name", args...) calls the function `name` of the modules the
    // calling module imports (a device kernel, with its launch extents as the last
    // arguments; SplitHostDevice makes these) and fails the caller when it fails.
    {"loom_call_packed", CallEffect::kOpaque, -1},
    // loom_thread_sync(): every thread of a GPU block waits here until all have arrived and
    // their shared-memory writes before it are visible to all (tir::transform::ThreadSync).
    {"loom_thread_sync", CallEffect::kOpaque, 0},
    // loom_thread_allreduce(k, values..., thread variables...): a reduction across a block's
    // threads, in place (te lowering emits it, LowerThreadAllreduce lowers it);
    // loom_warp_shuffle_down(value, offset, width) and loom_warp_shuffle(value, lane, width):
    // a lane's value read by another lane of the warp, which every lane must execute (so the
    // shuffles are opaque: no pass may move one into a branch or drop it). See
    // tir::builtin in tir/transform.h.
    {"loom_thread_allreduce", CallEffect::kOpaque, -1},
    {"loom_warp_shuffle_down", CallEffect::kOpaque, 3},
    {"loom_warp_shuffle", CallEffect::kOpaque, 3},
    // Warp matrix operations on 16x16 tiles (tensor cores): loom_mma_fill, loom_mma_load,
    // loom_mma_sync, loom_mma_store. See tir::builtin in tir/transform.h.
    {"loom_mma_fill", CallEffect::kOpaque, 3},
    {"loom_mma_load", CallEffect::kOpaque, 4},
    {"loom_mma_sync", CallEffect::kOpaque, 8},
    {"loom_mma_store", CallEffect::kOpaque, 4},
};

class OpRegistry {
 public:
  static OpRegistry& Global() {
    static OpRegistry* registry = new OpRegistry();  // never destroyed: ops outlive statics
    return *registry;
  }

  Op Get(const std::string& name) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = ops_.find(name);
    if (it != ops_.end()) return it->second;
    std::string known;
    for (const OpSpec& spec : kBuiltinOps) {
      known += known.empty() ? "" : ", ";
      known += spec.name;
    }
    LOOM_THROW << "unknown operator '" << name << "'; the built-in operators are: " << known
               << " (an external function is called through call_extern)";
  }

 private:
  OpRegistry() {
    for (const OpSpec& spec : kBuiltinOps) {
      auto node = std::make_unique<OpNode>();
      node->name = spec.name;
      node->effect = spec.effect;
      node->num_inputs = spec.num_inputs;
      node->Validate();
      ops_.emplace(spec.name, Op(node.release()));
    }
  }

  std::mutex mutex_;
  std::unordered_map<std::string, Op> ops_;
};

}  // namespace

Op Op::Get(const std::string& name) { return OpRegistry::Global().Get(name); }

const std::string& Op::name() const { return get()->name; }

}  // namespace loom
