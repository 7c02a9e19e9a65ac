// InjectDma (loom/vta/compiler/passes.h): each dma_copy copy nest between DRAM and an on-chip
// buffer becomes one 2-D LOAD or STORE, a call to the runtime's VTALoadBuffer2D or
// VTAStoreBuffer2D.
//
// The copy's indices are linear in its loops. From the innermost loop outwards, the loops
// along which both sides are contiguous form the row (x): a whole number of elements. At most
// one loop remains after merging loops that continue each other on both sides: the rows (y),
// consecutive on chip and x_stride elements apart in DRAM.
#include <algorithm>
#include <optional>
#include <sstream>
#include <vector>

#include "loom/arith/analyzer.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"
#include "loom/ir/printer.h"
#include "loom/support/error.h"
#include "loom/tir/stmt_functor.h"
#include "loom/vta/compiler/passes.h"
#include "loom/vta/isa.h"
#include "vta/compiler/loop_nest.h"
#include "vta/compiler/sram_places.h"

namespace loom::vta {
namespace {

const DataType kI32 = DataType::Int(32);

using detail::LinearIndex;
using detail::Loop;
using detail::LoopNest;
using detail::SramPlace;
using detail::SramPlaces;
using detail::WholeElements;

// A loop of the 2-D pattern: `extent` steps of `sram` and `dram` values.
struct Dim {
  int64_t extent, sram, dram;
};

PrimExpr I32(int64_t v) { return make_const(kI32, v); }

// The interior of a loop of a padded copy: the iterations [lo, hi) that copy data; the others
// write the padding. [0, extent) without padding. The bounds may depend on the loops around
// the copy (a tile of rows is padded where it meets the image's edge).
struct Interior {
  PrimExpr lo, hi;
};

// One LOAD or STORE: sizes, stride and padding in elements; the starts in values.
struct Pattern {
  PrimExpr x_size = I32(1), y_size = I32(1), x_stride = I32(1);
  PrimExpr x_pad_before = I32(0), y_pad_before = I32(0), x_pad_after = I32(0),
           y_pad_after = I32(0);
};

// A padded copy's read with the pad stage's clamps taken out: max(e, 0) and min(e, c) keep
// the reads of padding iterations inside the tensor. A clamp goes only where the copy's
// condition proves it idle: a conjunct `difference <= 0` with e - difference (for min) or
// e + difference (for max) a constant that keeps e within it. Any other clamp stays (and the
// read is then not linear: an error naming the copy).
class RemovePadClamps : public ExprMutator {
 public:
  RemovePadClamps(const std::vector<PrimExpr>& conditions, arith::Analyzer* analyzer)
      : conditions_(conditions), analyzer_(analyzer) {}

  using ExprMutator::VisitExpr_;
  // Inner clamps first: min(max(e, 0), c) is proven on e.
  PrimExpr VisitExpr_(const MinNode* op) override {
    const PrimExpr a = VisitExpr(op->a);
    int64_t high = 0;
    if (IsConstInt(op->b, &high) && Proves(a, /*upper=*/true, high)) return a;
    return min(a, VisitExpr(op->b));
  }
  PrimExpr VisitExpr_(const MaxNode* op) override {
    const PrimExpr a = VisitExpr(op->a);
    int64_t low = 0;
    if (IsConstInt(op->b, &low) && Proves(a, /*upper=*/false, low)) return a;
    return max(a, VisitExpr(op->b));
  }

 private:
  // Whether a condition `d <= 0` gives e <= bound (upper) or e >= bound.
  bool Proves(const PrimExpr& e, bool upper, int64_t bound) const {
    const PrimExpr e32 = cast(kI32, e);
    for (const PrimExpr& d : conditions_) {
      int64_t k = 0;
      // upper: d = e - k, so e <= k; lower: d = k - e, so e >= k.
      const PrimExpr rest = analyzer_->Simplify(upper ? e32 - d : e32 + d);
      if (IsConstInt(rest, &k) && (upper ? k <= bound : k >= bound)) return true;
    }
    return false;
  }

  const std::vector<PrimExpr>& conditions_;
  arith::Analyzer* analyzer_;
};

class DmaInjector : public StmtExprMutator {
 public:
  explicit DmaInjector(const Environment& env) : env_(env), places_(env) {}

  using StmtExprMutator::VisitStmt_;

  // The loops around a copy bound its padding's expressions.
  Stmt VisitStmt_(const ForNode* op) override {
    analyzer_.Bind(op->loop_var, Range(op->min, op->extent));
    return StmtExprMutator::VisitStmt_(op);
  }

  PrimExpr VisitExpr(const PrimExpr& e) override { return e; }

  Stmt VisitStmt_(const AttrStmtNode* op) override {
    places_.Record(op);
    if (op->attr_key != std::string("pragma_") + Environment::kDmaCopy) {
      return StmtExprMutator::VisitStmt_(op);
    }
    return Inject(op->body);
  }

 private:
  Stmt Inject(const Stmt& copy_nest) {
    const LoopNest copy("VTA dma_copy", copy_nest);
    std::vector<Stmt> nests = copy.Split(&analyzer_);
    if (nests.size() > 1) {
      std::vector<Stmt> copies;
      for (const Stmt& nest : nests) copies.push_back(Inject(nest));
      return SeqStmt(copies);
    }
    const std::vector<Loop>& loops = copy.loops();
    const auto* store = copy.innermost().as<BufferStoreNode>();
    if (store == nullptr || store->indices.size() != 1) {
      copy.Fail("expected a nest of loops around one store of a flat buffer");
    }
    // A padded copy: Select / if_then_else(inside, the copied value, 0).
    PrimExpr value = store->value;
    PrimExpr inside;
    if (const auto* select = value.as<SelectNode>()) {
      inside = select->condition;
      value = select->true_value;
      CheckZeroPadding(copy, select->false_value);
    } else if (const auto* call = value.as<CallNode>(); call && call->op.name() == "if_then_else") {
      inside = call->args[0];
      value = call->args[1];
      CheckZeroPadding(copy, call->args[2]);
    }
    const auto* cast = value.as<CastNode>();
    if (cast != nullptr) value = cast->value;
    const auto* load = value.as<BufferLoadNode>();
    if (load == nullptr || load->indices.size() != 1) {
      copy.Fail(
          "the stored value must be an element of another buffer (a copy), at most "
          "narrowed by a cast on the way out");
    }
    const bool to_chip = places_.Find(store->buffer) != nullptr;
    const bool from_chip = places_.Find(load->buffer) != nullptr;
    if (to_chip == from_chip) {
      copy.Fail(to_chip ? "both buffers are on chip; a copy moves data between DRAM and one "
                          "on-chip buffer"
                        : "neither buffer is in an on-chip scope (set_scope the stage copied "
                          "into or out of)");
    }
    const Buffer& sram = to_chip ? store->buffer : load->buffer;
    const Buffer& dram = to_chip ? load->buffer : store->buffer;
    const SramPlace& placed = *places_.Find(sram);
    const MemoryInfo& memory = env_.Memory(placed.scope);
    // A LOAD into the accumulator may widen 8-bit values (ACC_8BIT); others copy unchanged.
    const bool widening = to_chip && cast != nullptr &&
                          memory.scope == Environment::kAccScope && load->buffer->dtype.bits() == 8 &&
                          load->buffer->dtype.is_int() && store->buffer->dtype == env_.acc_dtype();
    if (to_chip && cast != nullptr && !widening) {
      copy.Fail("a LOAD copies values unchanged, or widens int8 values into the accumulator; "
                "the cast to " + store->buffer->dtype.str() + " needs the ALU");
    }
    if (!to_chip) {
      if (inside.defined()) copy.Fail("a STORE cannot pad");
      if (memory.scope != Environment::kAccScope) {
        copy.Fail("only the accumulator buffer can be stored to DRAM, not " + memory.scope);
      }
      if (store->buffer->dtype != env_.out_dtype()) {
        copy.Fail("a STORE writes " + env_.out_dtype().str() + " values (the output width), not " +
                  store->buffer->dtype.str());
      }
    }
    std::vector<Interior> interior;
    for (const Loop& loop : loops) interior.push_back({I32(0), I32(loop.extent)});
    if (inside.defined()) ParseInterior(copy, inside, loops, &interior);
    const PrimExpr dram_at =
        inside.defined() ? RemovePadClamps(conditions_, &analyzer_).VisitExpr(load->indices[0])
                         : (to_chip ? load->indices[0] : store->indices[0]);
    LinearIndex sram_index =
        copy.Linear(to_chip ? store->indices[0] : load->indices[0], &analyzer_);
    LinearIndex dram_index = copy.Linear(dram_at, &analyzer_);

    const int64_t lanes = memory.lanes;
    Pattern pattern = inside.defined()
                          ? PaddedPattern(copy, loops, interior, sram_index, dram_index, lanes)
                          : PlainPattern(copy, loops, sram_index, dram_index, lanes, memory.scope);
    // The data starts at the interior's first iteration in DRAM; on chip, padding included.
    PrimExpr dram_start = dram_index.base;
    for (size_t l = 0; l < loops.size(); ++l) {
      dram_start = dram_start + make_const(dram_start.dtype(), dram_index.coefficients[l]) *
                                    loom::cast(dram_start.dtype(), interior[l].lo);
    }
    PrimExpr sram_element = Elements(copy, sram_index.base, lanes, "on-chip");
    PrimExpr dram_element = Elements(copy, analyzer_.Simplify(dram_start), lanes, "DRAM");
    sram_element = analyzer_.Simplify(make_const(kI32, placed.base) + sram_element);
    PrimExpr cmd = call_extern(DataType::Handle(), "VTATLSCommandHandle", {});
    auto i32 = [](int64_t v) { return make_const(kI32, v); };
    Stmt call;
    const int queue = Environment::CopyQueue(memory.scope, to_chip);
    if (to_chip) {
      const MemId memory_type = memory.scope == Environment::kInpScope   ? MemId::kInp
                                : memory.scope == Environment::kWgtScope ? MemId::kWgt
                                : widening                               ? MemId::kAcc8
                                                                         : MemId::kAcc;
      call = Evaluate(call_extern(
          kI32, "VTALoadBuffer2D",
          {cmd, dram->data, dram_element, Simplified(pattern.x_size), Simplified(pattern.y_size),
           Simplified(pattern.x_stride), Simplified(pattern.x_pad_before),
           Simplified(pattern.y_pad_before), Simplified(pattern.x_pad_after),
           Simplified(pattern.y_pad_after), sram_element,
           i32(static_cast<int64_t>(memory_type))}));
    } else {
      call =
          Evaluate(call_extern(kI32, "VTAStoreBuffer2D",
                               {cmd, sram_element, i32(4), dram->data, dram_element,
                                Simplified(pattern.x_size), Simplified(pattern.y_size),
                                Simplified(pattern.x_stride)}));
    }
    return AttrStmt(StringImm("vta"), Environment::kCoprocScope, i32(queue), call);
  }

  void CheckZeroPadding(const LoopNest& copy, const PrimExpr& padding) const {
    int64_t value = 1;
    const auto* real = padding.as<FloatImmNode>();
    if (!(IsConstInt(padding, &value) && value == 0) && !(real != nullptr && real->value == 0)) {
      copy.Fail("VTA pads with zeros, not " + ToScript(padding));
    }
  }

  // The interior of each loop from `inside`, a conjunction of comparisons, each bounding one
  // loop variable of the copy (coefficient 1 or -1) by an expression of the loops around the
  // copy (what a pad stage's condition becomes).
  void ParseInterior(const LoopNest& copy, const PrimExpr& inside, const std::vector<Loop>& loops,
                     std::vector<Interior>* interior) {
    conditions_.clear();
    ParseConditions(copy, inside, loops, interior);
    for (size_t l = 0; l < loops.size(); ++l) {
      Interior& range = (*interior)[l];
      const PrimExpr extent = I32(loops[l].extent);
      range.lo = analyzer_.Simplify(min(max(range.lo, I32(0)), extent));
      range.hi = analyzer_.Simplify(max(min(range.hi, extent), range.lo));
    }
  }

  void ParseConditions(const LoopNest& copy, const PrimExpr& inside,
                       const std::vector<Loop>& loops, std::vector<Interior>* interior) {
    if (const auto* both = inside.as<AndNode>()) {
      ParseConditions(copy, both->a, loops, interior);
      ParseConditions(copy, both->b, loops, interior);
      return;
    }
    // As `difference <= 0` (over integers, a < b is a - b + 1 <= 0).
    PrimExpr difference;
    if (const auto* lt = inside.as<LTNode>()) difference = lt->a - lt->b + 1;
    if (const auto* le = inside.as<LENode>()) difference = le->a - le->b;
    if (const auto* gt = inside.as<GTNode>()) difference = gt->b - gt->a + 1;
    if (const auto* ge = inside.as<GENode>()) difference = ge->b - ge->a;
    auto fail = [&](const std::string& why) {
      copy.Fail("the padding condition " + ToScript(inside) + " " + why);
    };
    if (!difference.defined()) fail("is not a conjunction of comparisons");
    difference = analyzer_.Simplify(cast(kI32, difference));
    conditions_.push_back(difference);
    // difference = coefficient * var + rest, rest free of the copy's loops.
    tir::VarMap zero;
    for (const Loop& loop : loops) zero[loop.var] = I32(0);
    const PrimExpr rest = analyzer_.Simplify(tir::Substitute(difference, zero));
    std::optional<size_t> bounded;
    int64_t coefficient = 0;
    for (size_t l = 0; l < loops.size(); ++l) {
      tir::VarMap one = zero;
      one[loops[l].var] = I32(1);
      int64_t c = 0;
      if (!IsConstInt(analyzer_.Simplify(tir::Substitute(difference, one) - rest), &c)) {
        fail("is not linear in loop '" + loops[l].var.name() + "'");
      }
      if (c == 0) continue;
      if (bounded || (c != 1 && c != -1)) {
        fail("must bound one loop of the copy with a coefficient of 1 or -1");
      }
      bounded = l, coefficient = c;
    }
    if (!bounded) fail("does not bound a loop of the copy");
    const Var& var = loops[*bounded].var;
    if (!analyzer_.CanProveEqual(difference, I32(coefficient) * cast(kI32, var) + rest)) {
      fail("is not linear in loop '" + var.name() + "'");
    }
    Interior& range = (*interior)[*bounded];
    if (coefficient == 1) {  // var + rest <= 0: var < 1 - rest
      range.hi = min(range.hi, I32(1) - rest);
    } else {  // rest - var <= 0: var >= rest
      range.lo = max(range.lo, rest);
    }
  }

  // Whether every iteration of loop `l` copies data.
  bool Unpadded(const Interior& range, const Loop& loop) {
    return analyzer_.CanProveEqual(range.lo, I32(0)) &&
           analyzer_.CanProveEqual(range.hi, I32(loop.extent));
  }

  PrimExpr Simplified(const PrimExpr& e) { return analyzer_.Simplify(cast(kI32, e)); }

  // Without padding: from the innermost loop outwards, the loops contiguous on both sides make
  // the row; at most one loop of rows remains once loops continuing each other are merged.
  Pattern PlainPattern(const LoopNest& copy, const std::vector<Loop>& loops,
                       const LinearIndex& sram_index, const LinearIndex& dram_index, int64_t lanes,
                       const std::string& sram_scope) const {
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
    CheckWholeElements(copy, row_values, lanes, sram_scope);
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
      copy.Fail("the copy is not a 2-D pattern: after the rows, " + std::to_string(dims.size()) +
                " loops remain that do not continue each other");
    }
    Pattern pattern;
    pattern.x_size = I32(row_values / lanes);
    pattern.x_stride = pattern.x_size;
    if (!dims.empty()) {
      CheckRows(copy, dims[0], row_values, lanes);
      pattern.y_size = I32(dims[0].extent);
      pattern.x_stride = I32(dims[0].dram / lanes);
    }
    return pattern;
  }

  // With padding: the innermost loops copy exactly one element; then at most two loops, the
  // columns (x, contiguous on both sides) and the rows (y), each padded where its interior
  // leaves iterations out.
  Pattern PaddedPattern(const LoopNest& copy, const std::vector<Loop>& loops,
                        const std::vector<Interior>& interior, const LinearIndex& sram_index,
                        const LinearIndex& dram_index, int64_t lanes) {
    int64_t element_values = 1;
    size_t first = loops.size();
    while (first > 0 && element_values < lanes) {
      size_t l = first - 1;
      if (!Unpadded(interior[l], loops[l]) ||
          sram_index.coefficients[l] != element_values ||
          dram_index.coefficients[l] != element_values) {
        break;
      }
      element_values *= loops[l].extent;
      first = l;
    }
    if (element_values != lanes) {
      copy.Fail("a padded copy's innermost loops must copy exactly one " + std::to_string(lanes) +
                "-value element, unpadded and contiguous on both "
                "sides; padding applies to whole elements");
    }
    std::vector<size_t> outer;
    for (size_t l = 0; l < first; ++l) {
      if (loops[l].extent != 1) outer.push_back(l);
    }
    if (outer.size() > 2) {
      copy.Fail("a padded copy has at most two loops of elements (rows and columns), not " +
                std::to_string(outer.size()));
    }
    Pattern pattern;
    const bool has_columns = !outer.empty() && dram_index.coefficients[outer.back()] == lanes &&
                             sram_index.coefficients[outer.back()] == lanes;
    int64_t row_elements = 1;
    if (has_columns) {
      size_t x = outer.back();
      outer.pop_back();
      pattern.x_size = interior[x].hi - interior[x].lo;
      pattern.x_pad_before = interior[x].lo;
      pattern.x_pad_after = I32(loops[x].extent) - interior[x].hi;
      row_elements = loops[x].extent;
    }
    pattern.x_stride = pattern.x_size;
    if (outer.size() > 1) {
      copy.Fail("the innermost loop of elements must be contiguous on both sides");
    }
    if (!outer.empty()) {
      size_t y = outer.back();
      CheckRows(copy, {loops[y].extent, sram_index.coefficients[y], dram_index.coefficients[y]},
                row_elements * lanes, lanes);
      pattern.y_size = interior[y].hi - interior[y].lo;
      pattern.y_pad_before = interior[y].lo;
      pattern.y_pad_after = I32(loops[y].extent) - interior[y].hi;
      pattern.x_stride = I32(dram_index.coefficients[y] / lanes);
    }
    return pattern;
  }

  void CheckWholeElements(const LoopNest& copy, int64_t row_values, int64_t lanes,
                          const std::string& sram_scope) const {
    if (row_values % lanes == 0) return;
    std::ostringstream why;
    why << "the innermost loops contiguous on both sides copy " << row_values
        << " values, not a whole number of " << sram_scope << " elements of " << lanes << " values";
    copy.Fail(why.str());
  }

  // Rows follow each other on chip, and lie a whole number of elements apart in DRAM.
  void CheckRows(const LoopNest& copy, const Dim& rows, int64_t row_values, int64_t lanes) const {
    if (rows.sram != row_values) {
      copy.Fail(
          "the rows must follow each other on chip (the on-chip side of a LOAD or "
          "STORE is contiguous)");
    }
    if (rows.dram % lanes != 0) {
      copy.Fail("the rows start " + std::to_string(rows.dram) +
                " values apart in DRAM, not a whole number of elements");
    }
  }

  PrimExpr Elements(const LoopNest& copy, const PrimExpr& values, int64_t lanes, const char* side) {
    PrimExpr elements = WholeElements(values, lanes, &analyzer_);
    if (!elements.defined()) {
      copy.Fail(std::string("the copy starts at value ") + ToScript(values) + " on the " + side +
                " side, which is not provably a whole number of " + std::to_string(lanes) +
                "-value elements");
    }
    return elements;
  }

  const Environment& env_;
  SramPlaces places_;
  arith::Analyzer analyzer_;
  // The padding condition of the copy being injected, each conjunct as `difference <= 0`.
  std::vector<PrimExpr> conditions_;
};

}  // namespace

tir::transform::Pass InjectDma(const Environment& env) {
  auto inject = [env](const PrimFunc& func, const IRModule&, const tir::transform::PassContext&) {
    return tir::transform::WithBody(func, DmaInjector(env).VisitStmt(func->body));
  };
  return tir::transform::CreatePrimFuncPass(inject, 0, "vta.InjectDma");
}

}  // namespace loom::vta
