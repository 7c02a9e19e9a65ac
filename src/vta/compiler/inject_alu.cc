// InjectAlu (loom/vta/compiler/passes.h): each alu-pragma'd element-wise update of the
// accumulator becomes an ALU micro-op kernel: the loops over one element's values collapse
// into one micro-op, the loops over elements stay around the kernel (FoldUopLoop makes them
// the kernel's loops).
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

using detail::Loop;
using detail::LoopNest;
using detail::SramPlace;
using detail::SramPlaces;
using detail::WholeElements;

// dst = op(dst, operand): the operand an accumulator element or an immediate.
struct AluUpdate {
  AluOpcode opcode = AluOpcode::kAdd;
  const BufferLoadNode* updated = nullptr;
  const BufferLoadNode* source = nullptr;  // null: the immediate
  int64_t immediate = 0;
};

class AluInjector : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitStmt_;

  PrimExpr VisitExpr(const PrimExpr& e) override { return e; }

  Stmt VisitStmt_(const AttrStmtNode* op) override {
    places_.Record(op);
    if (op->attr_key != std::string("pragma_") + Environment::kAlu) {
      return StmtExprMutator::VisitStmt_(op);
    }
    return Inject(op->body);
  }

  explicit AluInjector(const Environment& env) : env_(env), places_(env) {}

 private:
  Stmt Inject(const Stmt& stage_nest) {
    const LoopNest stage("VTA alu", stage_nest);
    std::vector<Stmt> nests = stage.Split(&analyzer_);
    if (nests.size() > 1) {
      std::vector<Stmt> updates;
      for (const Stmt& nest : nests) updates.push_back(Inject(nest));
      return SeqStmt(updates);
    }
    const std::vector<Loop>& loops = stage.loops();
    const auto* store = stage.innermost().as<BufferStoreNode>();
    if (store == nullptr || store->indices.size() != 1) {
      stage.Fail("expected a nest of loops around one store of a flat buffer");
    }
    const AluUpdate update = Match(stage, store->value);
    if (!update.updated->buffer->data.same_as(store->buffer->data) ||
        !analyzer_.CanProveEqual(update.updated->indices[0], store->indices[0])) {
      stage.Fail(
          "the ALU updates an accumulator element in place (dst = op(dst, src or "
          "immediate)); the stage writes another element than its first operand");
    }
    const int64_t lanes = env_.Memory(Environment::kAccScope).lanes;
    // The innermost loops walk one element's values.
    std::vector<int64_t> dst_coefficients =
        stage.Linear(store->indices[0], &analyzer_).coefficients;
    std::vector<int64_t> src_coefficients =
        update.source ? stage.Linear(update.source->indices[0], &analyzer_).coefficients
                      : dst_coefficients;
    int64_t values = 1;
    size_t first_lane_loop = loops.size();
    while (first_lane_loop > 0 && values < lanes) {
      size_t l = first_lane_loop - 1;
      if (dst_coefficients[l] != values || src_coefficients[l] != values) break;
      values *= loops[l].extent;
      first_lane_loop = l;
    }
    if (values != lanes) {
      stage.Fail("the innermost loops must walk exactly one accumulator element (" +
                 std::to_string(lanes) + " values), contiguous in every operand");
    }
    tir::VarMap lanes_zero;
    for (size_t l = first_lane_loop; l < loops.size(); ++l) {
      lanes_zero[loops[l].var] = make_const(loops[l].var.dtype(), int64_t{0});
    }
    auto element = [&](const BufferLoadNode* load, const PrimExpr& index) {
      const SramPlace* place = places_.Find(load->buffer);
      if (place == nullptr || place->scope != Environment::kAccScope) {
        stage.Fail("'" + load->buffer->name + "' is not in the accumulator buffer");
      }
      PrimExpr start = analyzer_.Simplify(tir::Substitute(index, lanes_zero));
      PrimExpr elements = WholeElements(start, lanes, &analyzer_);
      if (!elements.defined()) {
        stage.Fail("the element of '" + load->buffer->name + "' starts at value " +
                   ToScript(start) + ", not a whole element");
      }
      return analyzer_.Simplify(make_const(kI32, place->base) + elements);
    };
    PrimExpr dst = element(update.updated, store->indices[0]);
    PrimExpr src = update.source ? element(update.source, update.source->indices[0])
                                 : make_const(kI32, int64_t{0});
    auto i32 = [](int64_t v) { return make_const(kI32, v); };
    Stmt kernel = Evaluate(
        call_extern(kI32, "VTAUopPush",
                    {i32(1), i32(0), dst, src, i32(0), i32(static_cast<int64_t>(update.opcode)),
                     i32(update.source ? 0 : 1), i32(update.source ? 0 : update.immediate)}));
    kernel = AttrStmt(StringImm("vta"), Environment::kCoprocScope, i32(Environment::kComputeQueue),
                      AttrStmt(StringImm("vta"), Environment::kCoprocUopScope,
                               StringImm("VTAPushALUOp"), kernel));
    for (size_t l = first_lane_loop; l-- > 0;) {
      kernel = For(loops[l].var, make_const(loops[l].var.dtype(), int64_t{0}),
                   make_const(loops[l].var.dtype(), loops[l].extent), ForKind::kSerial, kernel,
                   IterVar(), {});
    }
    return kernel;
  }

  // The operation of `value` as an ALU update, or a user error.
  AluUpdate Match(const LoopNest& stage, const PrimExpr& value) {
    PrimExpr a, b;
    AluUpdate update;
    bool commutative = true, negate = false;
    if (const auto* n = value.as<AddNode>()) a = n->a, b = n->b, update.opcode = AluOpcode::kAdd;
    if (const auto* n = value.as<SubNode>()) {
      a = n->a, b = n->b, update.opcode = AluOpcode::kAdd, commutative = false, negate = true;
    }
    if (const auto* n = value.as<MulNode>()) a = n->a, b = n->b, update.opcode = AluOpcode::kMul;
    if (const auto* n = value.as<MinNode>()) a = n->a, b = n->b, update.opcode = AluOpcode::kMin;
    if (const auto* n = value.as<MaxNode>()) a = n->a, b = n->b, update.opcode = AluOpcode::kMax;
    if (const auto* n = value.as<CallNode>()) {
      const std::string& name = n->op.name();
      if ((name == "shift_right" || name == "shift_left") && n->args.size() == 2) {
        a = n->args[0], b = n->args[1], update.opcode = AluOpcode::kShr, commutative = false;
        negate = name == "shift_left";  // a negative right shift shifts left
      }
    }
    if (!a.defined()) {
      stage.Fail(
          "the ALU computes add, subtract (of an immediate), multiply, min, max and "
          "shifts; not " +
          ToScript(value));
    }
    if (commutative && !a.as<BufferLoadNode>() && b.as<BufferLoadNode>()) std::swap(a, b);
    update.updated = a.as<BufferLoadNode>();
    if (update.updated == nullptr) stage.Fail("the first operand must be an accumulator element");
    if (IsConstInt(b, &update.immediate)) {
      if (negate) update.immediate = -update.immediate;
      if (!env_.AluImmediateFits(update.opcode, update.immediate)) {
        stage.Fail("the immediate " + std::to_string(update.immediate) +
                   (update.opcode == AluOpcode::kShr
                        ? " is no shift amount the ALU takes (a signed " +
                              std::to_string(env_.config().log_acc_width) + "-bit number)"
                        : " does not fit the ALU's 16 bits"));
      }
      return update;
    }
    update.source = b.as<BufferLoadNode>();
    if (update.source == nullptr || negate) {
      stage.Fail(
          "the second operand must be a constant or, for add, multiply, min and max, "
          "an accumulator element; not " +
          ToScript(b));
    }
    return update;
  }

  const Environment& env_;
  SramPlaces places_;
  arith::Analyzer analyzer_;
};

}  // namespace

tir::transform::Pass InjectAlu(const Environment& env) {
  auto inject = [env](const PrimFunc& func, const IRModule&, const tir::transform::PassContext&) {
    return tir::transform::WithBody(func, AluInjector(env).VisitStmt(func->body));
  };
  return tir::transform::CreatePrimFuncPass(inject, 0, "vta.InjectAlu");
}

}  // namespace loom::vta
