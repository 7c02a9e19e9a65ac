// InjectDma (loom/vta/compiler/passes.h): each dma_copy copy nest between DRAM and an on-chip
// buffer becomes one 2-D LOAD or STORE, a call to the runtime's VTALoadBuffer2D or
// VTAStoreBuffer2D.
//
// The copy's indices are linear in its loops. From the innermost loop outwards, the loops
// along which both sides are contiguous form the row (x): a whole number of elements. At most
// one loop remains after merging loops that continue each other on both sides: the rows (y),
// consecutive on chip and x_stride elements apart in DRAM.
#include <algorithm>
#include <sstream>
#include <vector>

#include "loom/arith/analyzer.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"
#include "loom/ir/printer.h"
#include "loom/support/error.h"
#include "loom/tir/stmt_functor.h"
#include "loom/vta/compiler/passes.h"
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

// The interior of a loop of a padded copy: the iterations [lo, hi) that copy data; the others
// write the padding. [0, extent) without padding.
struct Interior {
  int64_t lo = 0, hi = 0;
};

// One LOAD or STORE: sizes, stride and padding in elements; the starts in values.
struct Pattern {
  int64_t x_size = 1, y_size = 1, x_stride = 1;
  int64_t x_pad_before = 0, y_pad_before = 0, x_pad_after = 0, y_pad_after = 0;
};

class DmaInjector : public StmtExprMutator {
 public:
  explicit DmaInjector(const Environment& env) : env_(env), places_(env) {}

  using StmtExprMutator::VisitStmt_;

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
    if (to_chip && cast != nullptr) {
      copy.Fail("a LOAD copies values unchanged; the cast to " + store->buffer->dtype.str() +
                " needs the ALU");
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
    for (const Loop& loop : loops) interior.push_back({0, loop.extent});
    if (inside.defined()) ParseInterior(copy, inside, loops, &interior);
    // Inside the interior the DRAM index is linear (a padded read clamps its indices only
    // outside it).
    arith::Analyzer bounded;
    for (size_t l = 0; l < loops.size(); ++l) {
      bounded.Bind(loops[l].var,
                   Range(make_const(loops[l].var.dtype(), interior[l].lo),
                         make_const(loops[l].var.dtype(), interior[l].hi - interior[l].lo)));
    }
    const PrimExpr dram_at = bounded.Simplify(to_chip ? load->indices[0] : store->indices[0]);
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
      dram_start =
          dram_start + make_const(dram_start.dtype(), dram_index.coefficients[l] * interior[l].lo);
    }
    PrimExpr sram_element = Elements(copy, sram_index.base, lanes, "on-chip");
    PrimExpr dram_element = Elements(copy, analyzer_.Simplify(dram_start), lanes, "DRAM");
    sram_element = analyzer_.Simplify(make_const(kI32, placed.base) + sram_element);
    PrimExpr cmd = call_extern(DataType::Handle(), "VTATLSCommandHandle", {});
    auto i32 = [](int64_t v) { return make_const(kI32, v); };
    Stmt call;
    const int queue = Environment::CopyQueue(memory.scope, to_chip);
    if (to_chip) {
      const int memory_type = memory.scope == Environment::kInpScope   ? 2
                              : memory.scope == Environment::kWgtScope ? 1
                                                                       : 3;
      call = Evaluate(call_extern(
          kI32, "VTALoadBuffer2D",
          {cmd, dram->data, dram_element, i32(pattern.x_size), i32(pattern.y_size),
           i32(pattern.x_stride), i32(pattern.x_pad_before), i32(pattern.y_pad_before),
           i32(pattern.x_pad_after), i32(pattern.y_pad_after), sram_element, i32(memory_type)}));
    } else {
      call =
          Evaluate(call_extern(kI32, "VTAStoreBuffer2D",
                               {cmd, sram_element, i32(4), dram->data, dram_element,
                                i32(pattern.x_size), i32(pattern.y_size), i32(pattern.x_stride)}));
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

  // The interior of each loop from `inside`, a conjunction of comparisons of one loop variable
  // with a constant (what a pad stage's condition simplifies to).
  void ParseInterior(const LoopNest& copy, const PrimExpr& inside, const std::vector<Loop>& loops,
                     std::vector<Interior>* interior) {
    if (const auto* both = inside.as<AndNode>()) {
      ParseInterior(copy, both->a, loops, interior);
      ParseInterior(copy, both->b, loops, interior);
      return;
    }
    // var < c, var <= c, c <= var, c < var (and their mirrored forms).
    PrimExpr a, b;
    bool strict = false, var_first = true;
    if (const auto* lt = inside.as<LTNode>())
      a = lt->a, b = lt->b, strict = true;
    else if (const auto* le = inside.as<LENode>())
      a = le->a, b = le->b;
    else if (const auto* gt = inside.as<GTNode>())
      a = gt->b, b = gt->a, strict = true;
    else if (const auto* ge = inside.as<GENode>())
      a = ge->b, b = ge->a;
    int64_t constant = 0;
    if (a.defined() && IsConstInt(a, &constant)) std::swap(a, b), var_first = false;
    if (!a.defined() || !IsConstInt(b, &constant)) {
      copy.Fail("the padding condition " + ToScript(inside) +
                " is not a comparison of a loop variable with a constant");
    }
    for (size_t l = 0; l < loops.size(); ++l) {
      if (!a.same_as(loops[l].var)) continue;
      Interior& range = (*interior)[l];
      if (var_first) {  // var < c or var <= c
        range.hi = std::min(range.hi, strict ? constant : constant + 1);
      } else {  // c < var or c <= var
        range.lo = std::max(range.lo, strict ? constant + 1 : constant);
      }
      return;
    }
    copy.Fail("the padding condition " + ToScript(inside) + " does not bound a loop of the copy");
  }

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
    pattern.x_size = row_values / lanes;
    pattern.x_stride = pattern.x_size;
    if (!dims.empty()) {
      CheckRows(copy, dims[0], row_values, lanes);
      pattern.y_size = dims[0].extent;
      pattern.x_stride = dims[0].dram / lanes;
    }
    return pattern;
  }

  // With padding: the innermost loops copy exactly one element; then at most two loops, the
  // columns (x, contiguous on both sides) and the rows (y), each padded where its interior
  // leaves iterations out.
  Pattern PaddedPattern(const LoopNest& copy, const std::vector<Loop>& loops,
                        const std::vector<Interior>& interior, const LinearIndex& sram_index,
                        const LinearIndex& dram_index, int64_t lanes) const {
    int64_t element_values = 1;
    size_t first = loops.size();
    while (first > 0 && element_values < lanes) {
      size_t l = first - 1;
      if (interior[l].lo != 0 || interior[l].hi != loops[l].extent ||
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
      pattern.x_pad_after = loops[x].extent - interior[x].hi;
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
      pattern.y_pad_after = loops[y].extent - interior[y].hi;
      pattern.x_stride = dram_index.coefficients[y] / lanes;
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
};

}  // namespace

tir::transform::Pass InjectDma(const Environment& env) {
  auto inject = [env](const PrimFunc& func, const IRModule&, const tir::transform::PassContext&) {
    return tir::transform::WithBody(func, DmaInjector(env).VisitStmt(func->body));
  };
  return tir::transform::CreatePrimFuncPass(inject, 0, "vta.InjectDma");
}

}  // namespace loom::vta
