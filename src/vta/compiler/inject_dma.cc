// InjectDma (loom/vta/compiler/passes.h): each dma_copy copy nest between DRAM and an on-chip
// buffer becomes one 2-D LOAD or STORE, a call to the runtime's VTALoadBuffer2D or
// VTAStoreBuffer2D.
//
// The copy's indices are linear in its loops. From the innermost loop outwards, the loops
// along which both sides are contiguous form the row (x): a whole number of elements. At most
// one loop remains after merging loops that continue each other on both sides: the rows (y),
// consecutive on chip and x_stride elements apart in DRAM.
#include <sstream>
#include <unordered_map>
#include <vector>

#include "loom/arith/analyzer.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"
#include "loom/ir/printer.h"
#include "loom/support/error.h"
#include "loom/tir/stmt_functor.h"
#include "loom/vta/compiler/passes.h"

namespace loom::vta {
namespace {

const DataType kI32 = DataType::Int(32);

struct Loop {
  Var var;
  int64_t extent = 0;
};

// An index as base + sum of coefficient * loop variable (coefficients constant, in values).
struct LinearIndex {
  PrimExpr base;
  std::vector<int64_t> coefficients;  // one per loop, outermost first
};

// A loop of the 2-D pattern: `extent` steps of `sram` and `dram` values.
struct Dim {
  int64_t extent, sram, dram;
};

class DmaInjector : public StmtExprMutator {
 public:
  explicit DmaInjector(const Environment& env) : env_(env) {}

  using StmtExprMutator::VisitStmt_;

  PrimExpr VisitExpr(const PrimExpr& e) override { return e; }

  Stmt VisitStmt_(const AttrStmtNode* op) override {
    if (op->attr_key == kSramBase) {
      const auto* allocate = op->body.as<AllocateNode>();
      Placed placed;
      LOOM_ICHECK(IsConstInt(op->value, &placed.base) && allocate != nullptr)
          << "vta_sram_base must be a constant around the Allocate it places";
      placed.scope = allocate->storage_scope;
      placed_[op->node.get()] = placed;
      return StmtExprMutator::VisitStmt_(op);
    }
    if (op->attr_key != std::string("pragma_") + Environment::kDmaCopy) {
      return StmtExprMutator::VisitStmt_(op);
    }
    return Inject(op->body);
  }

 private:
  [[noreturn]] void Fail(const Stmt& copy, const std::string& why) const {
    LOOM_THROW << "VTA dma_copy: " << why << "; in\n" << ToScript(copy);
  }

  Stmt Inject(const Stmt& copy) {
    std::vector<Loop> loops;
    Stmt body = copy;
    while (const auto* loop = body.as<ForNode>()) {
      int64_t min = -1, extent = 0;
      if (!IsConstInt(loop->min, &min) || min != 0 || !IsConstInt(loop->extent, &extent)) {
        Fail(copy,
             "loop '" + loop->loop_var.name() + "' must start at 0 and have a constant extent");
      }
      loops.push_back({loop->loop_var, extent});
      body = loop->body;
    }
    const auto* store = body.as<BufferStoreNode>();
    if (store == nullptr || store->indices.size() != 1) {
      Fail(copy, "expected a nest of loops around one store of a flat buffer");
    }
    PrimExpr value = store->value;
    if (const auto* call = value.as<CallNode>(); call && call->op.name() == "if_then_else") {
      Fail(copy,
           "the copy pads (its value is an if_then_else); LOADs with padding are not "
           "supported yet: pad in a stage of its own before the copy");
    }
    const auto* cast = value.as<CastNode>();
    if (cast != nullptr) value = cast->value;
    const auto* load = value.as<BufferLoadNode>();
    if (load == nullptr || load->indices.size() != 1) {
      Fail(copy,
           "the stored value must be an element of another buffer (a copy), at most "
           "narrowed by a cast on the way out");
    }
    const bool to_chip = placed_.count(store->buffer->data.get()) != 0;
    const bool from_chip = placed_.count(load->buffer->data.get()) != 0;
    if (to_chip == from_chip) {
      Fail(copy, to_chip ? "both buffers are on chip; a copy moves data between DRAM and one "
                           "on-chip buffer"
                         : "neither buffer is in an on-chip scope (set_scope the stage copied "
                           "into or out of)");
    }
    const Buffer& sram = to_chip ? store->buffer : load->buffer;
    const Buffer& dram = to_chip ? load->buffer : store->buffer;
    const Placed& placed = placed_.at(sram->data.get());
    const MemoryInfo& memory = env_.Memory(placed.scope);
    if (to_chip && cast != nullptr) {
      Fail(copy, "a LOAD copies values unchanged; the cast to " + store->buffer->dtype.str() +
                     " needs the ALU");
    }
    if (!to_chip) {
      if (memory.scope != Environment::kAccScope) {
        Fail(copy, "only the accumulator buffer can be stored to DRAM, not " + memory.scope);
      }
      if (store->buffer->dtype != env_.out_dtype()) {
        Fail(copy, "a STORE writes " + env_.out_dtype().str() + " values (the output width), not " +
                       store->buffer->dtype.str());
      }
    }
    LinearIndex sram_index = Linear(copy, to_chip ? store->indices[0] : load->indices[0], loops);
    LinearIndex dram_index = Linear(copy, to_chip ? load->indices[0] : store->indices[0], loops);

    const int64_t lanes = memory.lanes;
    // The row: the innermost loops contiguous on both sides.
    int64_t row_values = 1;
    size_t first_row_loop = loops.size();
    while (first_row_loop > 0) {
      size_t l = first_row_loop - 1;
      if (loops[l].extent != 1 &&
          (sram_index.coefficients[l] != row_values || dram_index.coefficients[l] != row_values)) {
        break;
      }
      row_values *= loops[l].extent;
      first_row_loop = l;
    }
    if (row_values % lanes != 0) {
      std::ostringstream why;
      why << "the innermost loops contiguous on both sides copy " << row_values
          << " values, not a whole number of " << memory.scope << " elements of " << lanes
          << " values";
      Fail(copy, why.str());
    }
    // The other loops, merged where one continues the next on both sides.
    std::vector<Dim> dims;
    for (size_t l = 0; l < first_row_loop; ++l) {
      Dim dim{loops[l].extent, sram_index.coefficients[l], dram_index.coefficients[l]};
      if (dim.extent == 1) continue;
      if (!dims.empty() && dims.back().sram == dim.sram * dim.extent &&
          dims.back().dram == dim.dram * dim.extent) {
        dims.back() = {dims.back().extent * dim.extent, dim.sram, dim.dram};
        continue;
      }
      dims.push_back(dim);
    }
    if (dims.size() > 1) {
      Fail(copy, "the copy is not a 2-D pattern: after the rows, " + std::to_string(dims.size()) +
                     " loops remain that do not continue each other");
    }
    int64_t y_size = 1, x_stride = row_values / lanes;
    if (!dims.empty()) {
      const Dim& rows = dims[0];
      if (rows.sram != row_values) {
        Fail(copy,
             "the rows must follow each other on chip (the on-chip side of a LOAD or "
             "STORE is contiguous)");
      }
      if (rows.dram % lanes != 0) {
        Fail(copy, "the rows start " + std::to_string(rows.dram) +
                       " values apart in DRAM, not a whole number of elements");
      }
      y_size = rows.extent;
      x_stride = rows.dram / lanes;
    }
    PrimExpr sram_element = Elements(copy, sram_index.base, lanes, "on-chip");
    PrimExpr dram_element = Elements(copy, dram_index.base, lanes, "DRAM");
    sram_element = analyzer_.Simplify(make_const(kI32, placed.base) + sram_element);
    PrimExpr cmd = call_extern(DataType::Handle(), "VTATLSCommandHandle", {});
    auto i32 = [](int64_t v) { return make_const(kI32, v); };
    PrimExpr x_size = i32(row_values / lanes);
    Stmt call;
    int queue = Environment::kStoreQueue;
    if (to_chip) {
      const int memory_type = memory.scope == Environment::kInpScope   ? 2
                              : memory.scope == Environment::kWgtScope ? 1
                                                                       : 3;
      queue = memory_type == 3 ? Environment::kComputeQueue : Environment::kLoadQueue;
      call =
          Evaluate(call_extern(kI32, "VTALoadBuffer2D",
                               {cmd, dram->data, dram_element, x_size, i32(y_size), i32(x_stride),
                                i32(0), i32(0), i32(0), i32(0), sram_element, i32(memory_type)}));
    } else {
      call = Evaluate(call_extern(kI32, "VTAStoreBuffer2D",
                                  {cmd, sram_element, i32(4), dram->data, dram_element, x_size,
                                   i32(y_size), i32(x_stride)}));
    }
    return AttrStmt(StringImm("vta"), Environment::kCoprocScope, i32(queue), call);
  }

  LinearIndex Linear(const Stmt& copy, const PrimExpr& index, const std::vector<Loop>& loops) {
    tir::VarMap zero;
    for (const Loop& loop : loops) zero[loop.var] = make_const(loop.var.dtype(), int64_t{0});
    LinearIndex linear;
    linear.base = analyzer_.Simplify(tir::Substitute(index, zero));
    PrimExpr rebuilt = linear.base;
    for (const Loop& loop : loops) {
      tir::VarMap one = zero;
      one[loop.var] = make_const(loop.var.dtype(), int64_t{1});
      int64_t coefficient = 0;
      if (!IsConstInt(analyzer_.Simplify(tir::Substitute(index, one) - linear.base),
                      &coefficient)) {
        Fail(copy, "index " + ToScript(index) + " is not linear in loop '" + loop.var.name() + "'");
      }
      linear.coefficients.push_back(coefficient);
      rebuilt = rebuilt + make_const(index.dtype(), coefficient) * loop.var;
    }
    if (!analyzer_.CanProveEqual(index, rebuilt)) {
      Fail(copy, "index " + ToScript(index) + " is not linear in the copy's loops");
    }
    return linear;
  }

  PrimExpr Elements(const Stmt& copy, const PrimExpr& values, int64_t lanes, const char* side) {
    if (!analyzer_.CanProve(floormod(values, make_const(values.dtype(), lanes)) == 0)) {
      Fail(copy, std::string("the copy starts at value ") + ToScript(values) + " on the " + side +
                     " side, which is not provably a whole number of " + std::to_string(lanes) +
                     "-value elements");
    }
    return analyzer_.Simplify(floordiv(values, make_const(values.dtype(), lanes)));
  }

  // An on-chip allocation's place (PlanSram's attribute) and scope, by its data Var.
  struct Placed {
    int64_t base = 0;
    std::string scope;
  };

  const Environment& env_;
  std::unordered_map<const Object*, Placed> placed_;
  arith::Analyzer analyzer_;
};

}  // namespace

tir::transform::Pass InjectDma(const Environment& env) {
  auto inject = [env](const PrimFunc& func, const IRModule&, const tir::transform::PassContext&) {
    return tir::transform::WithBody(func, DmaInjector(env).VisitStmt(func->body));
  };
  return tir::transform::CreatePrimFuncPass(inject, 0, "vta.InjectDma");
}

}  // namespace loom::vta
