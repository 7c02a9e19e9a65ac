// Tensorize: the schedule primitive, the check that a stage's inner loops compute what an
// intrinsic computes, and the binding of the intrinsic's buffers to the tiles they cover.
//
// Matching works on the stage's bodies. Each root axis of the stage gets the range of
// values its tensorized loops give it: a start over the outer loops plus an extent. The
// intrinsic's axes line up with the stage's trailing axes (and its reduction axes with the
// stage's trailing reduction axes); leading axes must take one value inside. Substituting
// `start + intrinsic variable` for each root variable turns the stage's body into the
// intrinsic's body up to the tensors read: each pair of reads gives the tile of the stage's
// tensor that stands for the intrinsic's input (its start is where the indices differ).
//
// The statements are emitted inside "buffer_bind_scope" attributes pairing each intrinsic
// buffer with address_of(tensor[tile start]). Lowering later moves intermediate tensors
// into allocations of their regions, and rewrites those element accesses with them; only
// then does BindTensorizedBuffers replace the intrinsic buffers by the final ones.
#include "te/tensorize.h"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>

#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"
#include "loom/ir/structural.h"
#include "loom/tir/analysis.h"
#include "loom/tir/stmt_functor.h"
#include "loom/tir/transform.h"

namespace loom::te {
namespace detail {
namespace {

constexpr const char* kBufferBindScope = "buffer_bind_scope";

bool IsConstValue(const PrimExpr& e, int64_t expected) {
  int64_t value = 0;
  return IsConstInt(e, &value) && value == expected;
}

// Where an intrinsic buffer lies in a tensor's buffer: indices of the tile's first element.
struct Tile {
  Buffer tensor_buffer;
  Array<PrimExpr> begin;
};

class Matcher {
 public:
  Matcher(const StageNode& stage, const TensorIntrinNode& intrin, const IterVarValueMap& values,
          const BoundMap& bounds, int first_leaf, arith::Analyzer* analyzer)
      : stage_(stage),
        intrin_(intrin),
        compute_(static_cast<const ComputeOpNode&>(*stage.op)),
        intrin_compute_(static_cast<const ComputeOpNode&>(*intrin.op)),
        values_(values),
        bounds_(bounds),
        analyzer_(analyzer),
        tiles_(intrin.input_buffers.size()) {
    what_ = "tensorize of stage '" + stage.name() + "' with intrinsic '" + intrin.name + "'";
    inner_leaves_.assign(stage.leaf_iter_vars.begin() + first_leaf, stage.leaf_iter_vars.end());
    // The intrinsic's variables keep to their axes' ranges: reads of a stage's tensor in a
    // blocked layout, B[floordiv(j, 16), floormod(j, 16)] with j = 16 * outer + intrinsic
    // variable, then simplify to the tile start plus the intrinsic's index.
    for (const IterVar& iv : intrin_compute_.root_iter_vars()) {
      intrin_vars_.push_back(iv->var);
      analyzer_->Bind(iv->var, iv->dom, /*allow_override=*/true);
    }
  }

  void CheckNoBoundChecks(const Array<PrimExpr>& checks) {
    for (const PrimExpr& check : checks) {
      for (const IterVar& leaf : inner_leaves_) {
        LOOM_CHECK_USER(!tir::UsesVar(check, leaf->var))
            << what_ << ": loop '" << leaf->var.name() << "' needs the bound check "
            << ToScript(check) << " (a split that does not divide its axis); tensorize needs "
            << "the tensorized loops to cover whole tiles";
      }
    }
  }

  // Maps every root variable of the stage to `tile start + intrinsic variable`, checking the
  // extents against the intrinsic's axes.
  void MatchAxes() {
    for (const IterVar& leaf : inner_leaves_) {
      int axes = 0;
      for (const IterVar& root : stage_.root_iter_vars) {
        axes += tir::UsesVar(values_.at(root), leaf->var);
      }
      LOOM_CHECK_USER(axes <= 1)
          << what_ << ": loop '" << leaf->var.name() << "' runs over several axes of the "
          << "stage (a fused loop); tensorize needs each tensorized loop to run over one axis";
    }
    AlignAxes(compute_.axis, intrin_compute_.axis, "axis", "axes");
    AlignAxes(compute_.reduce_axis, intrin_compute_.reduce_axis, "reduction axis",
              "reduction axes");
  }

  // The stage's output tiles: where each output of the intrinsic is written.
  Array<Tile> OutputTiles() const {
    Array<PrimExpr> begin;
    for (const IterVar& iv : compute_.axis) begin.push_back(starts_.at(iv->var));
    Array<Tile> tiles;
    for (const Buffer& b : compute_.output_buffers) tiles.push_back(Tile{b, begin});
    return tiles;
  }

  const Array<Tile>& InputTiles() const { return tiles_; }

  void MatchBodies(const Array<PrimExpr>& bodies) {
    LOOM_CHECK_USER(bodies.size() == intrin_compute_.body.size())
        << what_ << ": the stage has " << bodies.size() << " outputs but the intrinsic has "
        << intrin_compute_.body.size();
    for (size_t k = 0; k < bodies.size(); ++k) {
      const auto* reduce = bodies[k].as<ReduceNode>();
      const auto* intrin_reduce = intrin_compute_.body[k].as<ReduceNode>();
      LOOM_CHECK_USER((reduce != nullptr) == (intrin_reduce != nullptr))
          << what_ << ": the stage " << (reduce ? "is" : "is not")
          << " a reduction but the intrinsic " << (intrin_reduce ? "is" : "is not");
      if (!reduce) {
        MatchExpr(bodies[k], intrin_compute_.body[k], "computes");
        continue;
      }
      const PrimExpr& combine = reduce->combiner->result.at(reduce->value_index);
      const PrimExpr& intrin_combine =
          intrin_reduce->combiner->result.at(intrin_reduce->value_index);
      LOOM_CHECK_USER(StructuralEqual(reduce->combiner, intrin_reduce->combiner))
          << what_ << ": the reducers differ (the stage combines " << combine.dtype()
          << " values with " << ToScript(combine) << ", the intrinsic " << intrin_combine.dtype()
          << " values with " << ToScript(intrin_combine) << ")";
      LOOM_CHECK_USER(reduce->value_index == intrin_reduce->value_index &&
                      reduce->source.size() == intrin_reduce->source.size())
          << what_ << ": output " << k << " is a different part of a tuple reduction";
      for (size_t i = 0; i < reduce->source.size(); ++i) {
        MatchExpr(reduce->source[i], intrin_reduce->source[i], "reduces");
      }
      MatchExpr(reduce->condition, intrin_reduce->condition, "reduces where");
    }
  }

  const std::string& what() const { return what_; }

 private:
  // The start and extent of the values of `root` over the tensorized loops.
  std::pair<PrimExpr, PrimExpr> RootRange(const IterVar& root) {
    const PrimExpr& value = values_.at(root);
    tir::VarMap at_start;
    arith::VarIntSetMap dom;
    PrimExpr iterations = make_const(value.dtype(), int64_t{1});
    for (const IterVar& leaf : inner_leaves_) {
      if (!tir::UsesVar(value, leaf->var)) continue;
      const Range& range = bounds_.at(leaf);
      at_start[leaf->var] = make_zero(leaf->var.dtype());
      dom[leaf->var] = arith::IntSet::FromRange(Range(make_zero(leaf->var.dtype()), range->extent));
      iterations = iterations * range->extent;
    }
    PrimExpr start = analyzer_->Simplify(tir::Substitute(value, at_start));
    if (dom.empty()) return {start, iterations};
    arith::IntSet set = analyzer_->int_set(value, dom);
    LOOM_CHECK_USER(!set.is_nothing() &&
                    analyzer_->CanProveEqual(set.max() - set.min() + 1, iterations))
        << what_ << ": the tensorized loops do not run over axis '" << root->var.name()
        << "' contiguously; tensorize needs each axis covered by a dense range";
    return {start, analyzer_->Simplify(iterations)};
  }

  void AlignAxes(const Array<IterVar>& axes, const Array<IterVar>& intrin_axes, const char* kind,
                 const char* kinds) {
    LOOM_CHECK_USER(intrin_axes.size() <= axes.size())
        << what_ << ": the intrinsic has " << intrin_axes.size() << " " << kinds
        << " but the stage only " << axes.size();
    size_t lead = axes.size() - intrin_axes.size();
    for (size_t d = 0; d < axes.size(); ++d) {
      const IterVar& iv = axes[d];
      auto [start, extent] = RootRange(iv);
      starts_[iv->var] = start;
      if (d < lead) {
        LOOM_CHECK_USER(IsConstValue(extent, 1))
            << what_ << ": " << kind << " '" << iv->var.name() << "' takes " << ToScript(extent)
            << " values inside the tensorized loops, but the intrinsic has no " << kind
            << " for it (its " << kinds << " match the stage's last " << intrin_axes.size()
            << "); tensorize at a loop inside '" << iv->var.name() << "'";
        substitution_[iv->var] = start;
        continue;
      }
      const IterVar& intrin_iv = intrin_axes[d - lead];
      LOOM_CHECK_USER(analyzer_->CanProveEqual(extent, intrin_iv->dom->extent))
          << what_ << ": " << kind << " '" << iv->var.name() << "' takes " << ToScript(extent)
          << " values inside the tensorized loops, but the intrinsic's " << kind << " '"
          << intrin_iv->var.name() << "' has extent " << ToScript(intrin_iv->dom->extent);
      PrimExpr offset = intrin_iv->var;
      if (!IsConstValue(intrin_iv->dom->min, 0)) offset = offset - intrin_iv->dom->min;
      substitution_[iv->var] = IsConstValue(start, 0) ? cast(iv->var.dtype(), offset)
                                              : start + cast(iv->var.dtype(), offset);
    }
  }

  bool UsesIntrinVar(const PrimExpr& e) const {
    return std::any_of(intrin_vars_.begin(), intrin_vars_.end(),
                       [&](const Var& v) { return tir::UsesVar(e, v); });
  }

  // Replaces the stage's reads, in visiting order, by the intrinsic's reads they pair with,
  // recording the tile each intrinsic input stands for.
  class ReadPairing : public ExprMutator {
   public:
    ReadPairing(Matcher* matcher, const PrimExpr& intrin_expr) : matcher_(matcher) {
      PostOrderVisit(intrin_expr, [&](const ObjectRef& node) {
        if (const auto* load = node.as<BufferLoadNode>()) intrin_reads_.push_back(load);
      });
    }
    using ExprMutator::VisitExpr_;
    PrimExpr VisitExpr_(const BufferLoadNode* op) override {
      PrimExpr visited = ExprMutator::VisitExpr_(op);
      if (next_ >= intrin_reads_.size()) {
        ++next_;
        return visited;
      }
      const BufferLoadNode* intrin_read = intrin_reads_[next_++];
      matcher_->PairReads(*visited.as<BufferLoadNode>(), *intrin_read);
      return GetRef(*intrin_read);
    }
    bool AllPaired() const { return next_ == intrin_reads_.size(); }

   private:
    Matcher* matcher_;
    std::vector<const BufferLoadNode*> intrin_reads_;
    size_t next_ = 0;
  };

  void MatchExpr(const PrimExpr& stage_expr, const PrimExpr& intrin_expr, const char* verb) {
    PrimExpr substituted = tir::Substitute(stage_expr, substitution_);
    ReadPairing pairing(this, intrin_expr);
    PrimExpr paired = pairing(substituted);
    LOOM_CHECK_USER(pairing.AllPaired() && StructuralEqual(paired, intrin_expr))
        << what_ << ": the expressions differ: inside the tensorized loops the stage " << verb
        << " " << ToScript(substituted) << " but the intrinsic " << verb << " "
        << ToScript(intrin_expr);
  }

  void PairReads(const BufferLoadNode& read, const BufferLoadNode& intrin_read) {
    auto input = std::find_if(intrin_.inputs.begin(), intrin_.inputs.end(), [&](const Tensor& t) {
      return t.buffer().same_as(intrin_read.buffer);
    });
    LOOM_ICHECK(input != intrin_.inputs.end())
        << "intrinsic '" << intrin_.name << "' reads '" << intrin_read.buffer->name
        << "', which is not among its inputs";
    size_t slot = static_cast<size_t>(input - intrin_.inputs.begin());
    std::string pair = "'" + read.buffer->name + "' (read as " + ToScript(GetRef(read)) +
                       ") in place of the intrinsic's input '" + intrin_read.buffer->name + "'";
    LOOM_CHECK_USER(read.buffer->dtype == intrin_read.buffer->dtype)
        << what_ << ": the stage reads " << pair << ", but their types differ ("
        << read.buffer->dtype << " vs " << intrin_read.buffer->dtype << ")";
    size_t ndim = read.indices.size(), intrin_ndim = intrin_read.indices.size();
    LOOM_CHECK_USER(intrin_ndim <= ndim)
        << what_ << ": the stage reads " << pair << ", which has fewer dimensions";
    Array<PrimExpr> begin;
    for (size_t d = 0; d < ndim; ++d) {
      PrimExpr index = analyzer_->Simplify(read.indices[d]);
      size_t lead = ndim - intrin_ndim;
      PrimExpr start =
          d < lead ? index : analyzer_->Simplify(index - intrin_read.indices[d - lead]);
      LOOM_CHECK_USER(!UsesIntrinVar(start))
          << what_ << ": the stage reads " << pair << ", whose index " << ToScript(index)
          << " in dimension " << d << " does not follow the intrinsic's access pattern";
      begin.push_back(start);
    }
    Tile& tile = tiles_[slot];
    if (!tile.tensor_buffer.defined()) {
      tile = Tile{read.buffer, begin};
      return;
    }
    bool same = tile.tensor_buffer.same_as(read.buffer);
    for (size_t d = 0; same && d < ndim; ++d) {
      same = analyzer_->CanProveEqual(tile.begin[d], begin[d]);
    }
    LOOM_CHECK_USER(same) << what_ << ": the intrinsic's input '" << intrin_read.buffer->name
                          << "' stands for two different tiles of the stage's tensors ('"
                          << tile.tensor_buffer->name << "' and '" << read.buffer->name << "')";
  }

  static PrimExpr GetRef(const BufferLoadNode& load) {
    return BufferLoad(load.buffer, load.indices);
  }

  const StageNode& stage_;
  const TensorIntrinNode& intrin_;
  const ComputeOpNode& compute_;
  const ComputeOpNode& intrin_compute_;
  const IterVarValueMap& values_;
  const BoundMap& bounds_;
  arith::Analyzer* analyzer_;
  std::string what_;
  std::vector<IterVar> inner_leaves_;
  Array<Var> intrin_vars_;
  tir::VarMap substitution_;
  tir::VarMap starts_;
  Array<Tile> tiles_;
};

Stmt BindTiles(Stmt body, const Array<Buffer>& intrin_buffers, const Array<Tile>& tiles) {
  for (size_t i = intrin_buffers.size(); i-- > 0;) {
    body = AttrStmt(intrin_buffers[i], kBufferBindScope,
                    address_of(BufferLoad(tiles[i].tensor_buffer, tiles[i].begin)), body);
  }
  return body;
}

// Accesses of an intrinsic buffer become accesses of the tensor buffer at the tile.
class TileAccessRewriter : public StmtExprMutator {
 public:
  TileAccessRewriter(const Buffer& intrin_buffer, const Buffer& tensor_buffer,
                     const Array<PrimExpr>& begin)
      : intrin_buffer_(intrin_buffer), tensor_buffer_(tensor_buffer), begin_(begin) {}
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  PrimExpr VisitExpr_(const BufferLoadNode* op) override {
    PrimExpr load = StmtExprMutator::VisitExpr_(op);
    const auto* rebuilt = load.as<BufferLoadNode>();
    if (!rebuilt->buffer.same_as(intrin_buffer_)) return load;
    return BufferLoad(tensor_buffer_, Indices(rebuilt->indices));
  }
  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Stmt store = StmtExprMutator::VisitStmt_(op);
    const auto* rebuilt = store.as<BufferStoreNode>();
    if (!rebuilt->buffer.same_as(intrin_buffer_)) return store;
    return BufferStore(tensor_buffer_, rebuilt->value, Indices(rebuilt->indices));
  }

 private:
  Array<PrimExpr> Indices(const Array<PrimExpr>& tile_indices) {
    Array<PrimExpr> indices = begin_;
    size_t lead = begin_.size() - tile_indices.size();
    for (size_t j = 0; j < tile_indices.size(); ++j) {
      indices[lead + j] = analyzer_.Simplify(begin_[lead + j] + tile_indices[j]);
    }
    return indices;
  }
  Buffer intrin_buffer_;
  Buffer tensor_buffer_;
  Array<PrimExpr> begin_;
  arith::Analyzer analyzer_;
};

class BufferBinder : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitStmt_;
  Stmt VisitStmt_(const AttrStmtNode* op) override {
    if (op->attr_key == tir::transform::kBufferDimAlign) {
      // The padded strides StorageFlatten will give the buffer, inside the request's scope.
      const auto* buffer = op->node.as<BufferNode>();
      const auto* tuple = op->value.as<CallNode>();
      int64_t dim = 0, factor = 0, offset = 0;
      if (buffer != nullptr && tuple != nullptr && tuple->args.size() == 3 &&
          IsConstInt(tuple->args[0], &dim) && IsConstInt(tuple->args[1], &factor) &&
          IsConstInt(tuple->args[2], &offset)) {
        std::map<int64_t, std::pair<int64_t, int64_t>>& aligns = aligns_[buffer->data.get()];
        const auto enclosing = aligns.find(dim);
        const std::optional<std::pair<int64_t, int64_t>> outer =
            enclosing == aligns.end() ? std::nullopt : std::optional(enclosing->second);
        aligns[dim] = {factor, offset};
        Stmt visited = StmtExprMutator::VisitStmt_(op);
        if (outer) {
          aligns_[buffer->data.get()][dim] = *outer;
        } else {
          aligns_[buffer->data.get()].erase(dim);
        }
        return visited;
      }
    }
    if (op->attr_key != kBufferBindScope) return StmtExprMutator::VisitStmt_(op);
    Buffer intrin_buffer = Downcast<Buffer>(op->node);
    const auto* load = op->value.as<CallNode>()->args.at(0).as<BufferLoadNode>();
    LOOM_ICHECK(load) << "buffer_bind_scope of '" << intrin_buffer->name << "' names no tile";
    const Buffer& tensor_buffer = load->buffer;
    Array<PrimExpr> strides = tensor_buffer->strides;
    if (strides.empty()) {
      PrimExpr stride = make_const(DataType::Int(32), int64_t{1});
      strides.resize(tensor_buffer->shape.size());
      const auto aligns = aligns_.find(tensor_buffer->data.get());
      for (size_t d = strides.size(); d-- > 0;) {
        if (aligns != aligns_.end()) {
          if (auto align = aligns->second.find(static_cast<int64_t>(d));
              align != aligns->second.end()) {
            stride = tir::transform::AlignStride(stride, align->second.first, align->second.second);
          }
        }
        strides[d] = stride;
        stride = analyzer_.Simplify(stride * tensor_buffer->shape[d]);
      }
    }
    PrimExpr offset = tensor_buffer->elem_offset;
    for (size_t d = 0; d < strides.size(); ++d) offset = offset + load->indices[d] * strides[d];
    offset = analyzer_.Simplify(offset);
    LOOM_CHECK_USER(intrin_buffer->scope == "global" || intrin_buffer->scope == tensor_buffer->scope)
        << "tensorize: the intrinsic reads its tensor '" << intrin_buffer->name
        << "' from scope '" << intrin_buffer->scope << "', but the tile is in '"
        << tensor_buffer->name << "', of scope '" << tensor_buffer->scope
        << "'; set_scope(\"" << intrin_buffer->scope << "\") on the stage of '"
        << tensor_buffer->name << "'";
    const int factor = intrin_buffer->offset_factor;
    LOOM_CHECK_USER(factor <= 1 ||
                    analyzer_.CanProve(floormod(offset, make_const(offset.dtype(), int64_t{factor})) == 0))
        << "tensorize: the intrinsic needs its tensor '" << intrin_buffer->name
        << "' to start at a multiple of " << factor << " elements of '" << tensor_buffer->name
        << "' (its offset_factor), but the tile starts at element " << ToScript(offset)
        << "; make the tile's position in that buffer a multiple of the intrinsic's shape";
    tir::VarMap binding;
    binding[intrin_buffer->data] = tensor_buffer->data;
    if (intrin_buffer->elem_offset.as<VarNode>()) {
      binding[Downcast<Var>(intrin_buffer->elem_offset)] = offset;
    }
    size_t lead = strides.size() - intrin_buffer->strides.size();
    for (size_t j = 0; j < intrin_buffer->strides.size(); ++j) {
      if (intrin_buffer->strides[j].as<VarNode>()) {
        binding[Downcast<Var>(intrin_buffer->strides[j])] = strides[lead + j];
      }
    }
    Stmt body = tir::Substitute(VisitStmt(op->body), binding);
    return TileAccessRewriter(intrin_buffer, tensor_buffer, load->indices).VisitStmt(body);
  }

 private:
  arith::Analyzer analyzer_;
  // The enclosing buffer_dim_align requests: per buffer (its data variable), dimension ->
  // (factor, offset).
  std::unordered_map<const VarNode*, std::map<int64_t, std::pair<int64_t, int64_t>>> aligns_;
};

}  // namespace

int TensorizedLeaf(const StageNode& stage) {
  for (const IterVar& iv : stage.all_iter_vars) {
    const IterVarAttr* attr = stage.Attr(iv);
    if (!attr || !attr->tensor_intrin) continue;
    int leaf = stage.LeafIndex(iv);
    LOOM_CHECK_USER(leaf >= 0)
        << "tensorize of stage '" << stage.name() << "' with intrinsic '"
        << attr->tensor_intrin->name << "': loop '" << iv->var.name()
        << "' was split or fused after tensorize; tensorize a loop of the final schedule";
    return leaf;
  }
  return -1;
}

TensorizedLoops TensorizeLoops(const StageNode& stage, const Array<PrimExpr>& bodies,
                               const IterVarValueMap& values, const BoundMap& bounds,
                               const Array<PrimExpr>& checks, int first_leaf,
                               arith::Analyzer* analyzer) {
  const TensorIntrinNode& intrin = *stage.Attr(stage.leaf_iter_vars[first_leaf])->tensor_intrin;
  Matcher matcher(stage, intrin, values, bounds, first_leaf, analyzer);
  matcher.CheckNoBoundChecks(checks);
  matcher.MatchAxes();
  matcher.MatchBodies(bodies);

  Array<IterVar> outer_reduce;
  for (int i = 0; i < first_leaf; ++i) {
    const IterVar& leaf = stage.leaf_iter_vars[i];
    if (leaf->iter_type == IterVarType::kCommReduce) outer_reduce.push_back(leaf);
  }
  const TensorIntrinStmts& stmts = intrin.stmts;
  TensorizedLoops result;
  if (outer_reduce.empty()) {
    result.body = stmts.body;
  } else {
    LOOM_CHECK_USER(stmts.reduce_update.defined())
        << matcher.what() << ": reduction loop '" << outer_reduce[0]->var.name()
        << "' lies outside the tensorized loops, so the intrinsic must accumulate, but it "
        << "declares no reduce_update; give it one, or tensorize at a loop outside every "
        << "reduction loop";
    if (stmts.reduce_init.defined()) {
      result.body = stmts.reduce_update;
      result.init = BindTiles(stmts.reduce_init, intrin.output_buffers, matcher.OutputTiles());
    } else {
      PrimExpr first_iteration = const_true();
      for (const IterVar& leaf : outer_reduce) {
        first_iteration = first_iteration && (leaf->var == make_zero(leaf->var.dtype()));
      }
      result.body = IfThenElse(first_iteration, stmts.body, stmts.reduce_update);
    }
  }
  Array<Buffer> buffers = intrin.input_buffers;
  buffers.insert(buffers.end(), intrin.output_buffers.begin(), intrin.output_buffers.end());
  Array<Tile> tiles = matcher.InputTiles();
  Array<Tile> output_tiles = matcher.OutputTiles();
  tiles.insert(tiles.end(), output_tiles.begin(), output_tiles.end());
  result.body = BindTiles(result.body, buffers, tiles);
  return result;
}

Stmt BindTensorizedBuffers(const Stmt& stmt) { return BufferBinder().VisitStmt(stmt); }

}  // namespace detail

void Stage::tensorize(const IterVar& var, TensorIntrin intrin) {
  StageNode* stage = node_.get();
  std::string what = "tensorize of stage '" + stage->name() + "'";
  LOOM_CHECK_USER(intrin != nullptr) << what << ": the intrinsic is undefined";
  what += " with intrinsic '" + intrin->name + "'";
  LOOM_CHECK_USER(dynamic_cast<const ComputeOpNode*>(stage->op.get()))
      << what << ": only a compute has loops to tensorize";
  LOOM_CHECK_USER(var.defined() && stage->IsLeaf(var))
      << what << ": '" << (var.defined() ? var->var.name() : "(undefined)")
      << "' is not a loop of the stage; pass one of its leaf axes";
  int already = detail::TensorizedLeaf(*stage);
  LOOM_CHECK_USER(already < 0)
      << what << ": the stage is already tensorized at loop '"
      << stage->leaf_iter_vars[already]->var.name() << "'";
  stage->iter_var_attrs[var.get()].tensor_intrin = std::move(intrin);
}

}  // namespace loom::te
