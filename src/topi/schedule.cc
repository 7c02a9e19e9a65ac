#include "loom/topi/schedule.h"

#include <algorithm>
#include <limits>
#include <string>
#include <tuple>

#include "loom/ir/functor.h"
#include "loom/te/operation.h"
#include "topi/topi_util.h"

namespace loom::topi {

namespace {

using detail::IsInjective;

// The number of elements of `shape`, when *constant says every extent is a constant.
int64_t ConstantElements(const Array<PrimExpr>& shape, bool* constant) {
  int64_t elements = 1;
  *constant = true;
  for (const PrimExpr& extent : shape) {
    int64_t value = 0;
    *constant = *constant && IsConstInt(extent, &value);
    elements *= *constant ? value : 1;
  }
  return elements;
}

// Whether a loop over a tensor of `shape` is worth a parallel launch: a symbolic shape may be
// large, a constant one must be.
bool WorthParallel(const Array<PrimExpr>& shape) {
  bool constant = true;
  int64_t elements = ConstantElements(shape, &constant);
  return !constant || elements >= kParallelMinElements;
}

void ScheduleInjectiveOutput(te::Stage stage, int vector_lanes) {
  Array<IterVar> axes = stage->leaf_iter_vars;
  if (axes.empty()) return;  // a 0-d tensor: one element
  // Vectors of the last axis when whole vectors tile it: the lanes are then consecutive
  // elements of that axis, so a per-column operand (a bias of [N] broadcast over [M, N])
  // is one vector load. Vectors of the fused axes would index it by (fused % N), a gather
  // of 16 loads (measured: a [128, 3072] GELU with a bias took 2.1 ms that way).
  // So too when the last axis's extent is symbolic (a size only a run knows): fusing it
  // would unravel every element's index by divisions by that size; the vectors of its tail
  // are guarded instead.
  int64_t last = 0;
  IterVar vectors, lanes;
  const bool symbolic_last = !IsConstInt(axes.back()->dom->extent, &last);
  if (axes.size() > 1 && (symbolic_last || last % vector_lanes == 0)) {
    std::tie(vectors, lanes) = stage.split(axes.back(), vector_lanes);
    for (size_t d = axes.size() - 1; d-- > 0;) vectors = stage.fuse(axes[d], vectors);
  } else {
    IterVar fused = axes[0];
    for (size_t d = 1; d < axes.size(); ++d) fused = stage.fuse(fused, axes[d]);
    std::tie(vectors, lanes) = stage.split(fused, vector_lanes);
  }
  stage.vectorize(lanes);
  if (WorthParallel(stage->op->output_shape(0))) stage.parallel(vectors);
}

bool IsReduction(const te::Operation& op) { return op->tag == "comm_reduce"; }

// The narrowest vector (SSE) worth accumulating partial sums in.
constexpr int kMinReduceLanes = 4;

// Each output element reduced by one task: the output dimensions fused into one parallel
// loop around the reduction loops; when the innermost output dimension is kept and
// contiguous in the input (the reduction does not read along it with stride 1), it is
// split into vectors of `lanes` accumulating at once inside the reduction loops.
void SchedulePerOutput(te::Stage stage, int lanes) {
  const auto* compute = dynamic_cast<const te::ComputeOpNode*>(stage->op.get());
  Array<IterVar> spatial = compute->axis;
  Array<IterVar> reduce = compute->reduce_axis;
  // Work: every (output, reduction) pair.
  bool constant = true;
  int64_t work = ConstantElements(stage->op->output_shape(0), &constant);
  for (const IterVar& r : reduce) {
    int64_t extent = 0;
    constant = constant && IsConstInt(r->dom->extent, &extent);
    work *= constant ? extent : 1;
  }
  bool parallel = !constant || work >= kParallelMinElements;
  if (spatial.empty()) return;
  IterVar last = spatial.back();
  int64_t last_extent = 0;
  IsConstInt(last->dom->extent, &last_extent);
  Array<IterVar> order(spatial.begin(), spatial.end() - 1);
  IterVar vector_lanes;
  // A kept axis narrower than a vector but at least an SSE one (a channel block of 8 of a
  // global pooling in NCHW8c) is one vector whole: scalar, each output's sum is a chain of
  // dependent adds (RegNetY-400MF's 48-channel pooling over 56x56 took 0.12 ms).
  bool whole_vector = last_extent >= kMinReduceLanes && last_extent < lanes;
  bool vectorize = last_extent >= lanes || whole_vector;
  if (whole_vector) {
    vector_lanes = last;
  } else if (vectorize) {
    auto [vectors, inner] = stage.split(last, lanes);
    order.push_back(vectors);
    vector_lanes = inner;
  } else {
    order.push_back(last);
  }
  IterVar outer;
  if (!order.empty()) {
    outer = order[0];
    for (size_t d = 1; d < order.size(); ++d) outer = stage.fuse(outer, order[d]);
  }
  Array<IterVar> loops;
  if (outer.defined()) loops.push_back(outer);
  loops.insert(loops.end(), reduce.begin(), reduce.end());
  if (vectorize) loops.push_back(vector_lanes);
  stage.reorder(loops);
  if (vectorize) stage.vectorize(vector_lanes);
  if (parallel && outer.defined()) stage.parallel(outer);
}

// A chunk of a long reduction is at least this long, so that its work outweighs its launch.
constexpr int64_t kRfactorChunkElements = 1 << 13;
// Parallel tasks a long reduction is split into: a multiple of every power-of-two thread
// count up to 64, so that threads get equal shares.
constexpr int64_t kRfactorTasks = 64;

// Whether a tensor the reduction reads has `axis` as the index of its last dimension: the
// reduction then walks memory with stride 1 along it.
bool ReadsContiguouslyAlong(const te::ComputeOpNode& compute, const IterVar& axis) {
  bool contiguous = false;
  for (const PrimExpr& body : compute.body) {
    PostOrderVisit(body, [&](const ObjectRef& node) {
      const auto* load = node.as<BufferLoadNode>();
      bool along = load != nullptr && !load->indices.empty() &&
                   load->indices.back().same_as(axis->var);
      contiguous = contiguous || along;
    });
  }
  return contiguous;
}

// A long reduction into few outputs (see schedule_reduce) split into partial reductions by
// rfactor: the innermost reduction axis, when it is read contiguously and is a multiple of
// the vector width (else half, down to 4) long, gives that many partial results per output accumulated as one
// vector; the remaining reduction loops (fused) are cut into chunks reduced in parallel;
// small final reductions combine the chunks, then the lanes. Returns false, leaving the
// stage alone, when the reduction is not long, its outputs are not few, or nothing would be
// gained.
bool ScheduleLongReduction(te::Schedule s, te::Stage stage, int vector_lanes) {
  const auto* compute = dynamic_cast<const te::ComputeOpNode*>(stage->op.get());
  bool constant = true;
  int64_t outputs = ConstantElements(stage->op->output_shape(0), &constant);
  int64_t length = 1;
  for (const IterVar& r : compute->reduce_axis) {
    int64_t extent = 0;
    constant = constant && IsConstInt(r->dom->extent, &extent);
    length *= constant ? extent : 1;
  }
  if (!constant || outputs == 0 || outputs >= kRfactorMaxOutputs || length < kRfactorMinLength) {
    return false;
  }
  // The lanes divide the innermost axis: a bounds check on them would keep the vector loop
  // scalar (LoopPartition does not peel rfactor's checks, which are not likely()).
  const IterVar& innermost = compute->reduce_axis.back();
  int64_t innermost_extent = 0;
  IsConstInt(innermost->dom->extent, &innermost_extent);
  int lanes = vector_lanes;
  while (lanes > kMinReduceLanes && innermost_extent % lanes != 0) lanes /= 2;
  bool reduce_lanes = innermost_extent % lanes == 0 && ReadsContiguouslyAlong(*compute, innermost);
  // The parallel tasks over outputs alone: one per output, or per vector of outputs where
  // SchedulePerOutput vectorizes the kept innermost dimension.
  int64_t output_tasks = outputs;
  int64_t last_extent = 0;
  if (!reduce_lanes && !compute->axis.empty() &&
      IsConstInt(compute->axis.back()->dom->extent, &last_extent) &&
      last_extent >= kMinReduceLanes) {
    // Vectors of the kept axis: whole when it is narrower than one.
    output_tasks = outputs / last_extent * detail::CeilDiv(last_extent, vector_lanes);
  }
  int64_t chunks = 1;
  if (outputs * length >= kParallelMinElements) {
    chunks = std::clamp(detail::CeilDiv(kRfactorTasks, output_tasks), int64_t{1},
                        length / kRfactorChunkElements);
  }
  if (!reduce_lanes && chunks == 1) return false;

  // The stage, then the partial reductions it reads, each reading the next.
  Array<te::Stage> reductions{stage};
  te::Tensor partial = stage->op->output(0);
  if (reduce_lanes) {
    IterVar lane = stage.split(innermost, lanes).second;
    partial = s.rfactor(partial, lane, static_cast<int>(compute->axis.size()));
    reductions.push_back(s[partial]);
  }
  if (chunks > 1) {
    te::Stage to_chunk = reductions.back();
    Array<IterVar> reduce_loops;
    for (const IterVar& leaf : to_chunk->leaf_iter_vars) {
      if (leaf->iter_type == IterVarType::kCommReduce) reduce_loops.push_back(leaf);
    }
    IterVar all = reduce_loops[0];
    for (size_t d = 1; d < reduce_loops.size(); ++d) all = to_chunk.fuse(all, reduce_loops[d]);
    IterVar chunk = to_chunk.split_by_nparts(all, static_cast<int>(chunks)).first;
    reductions.push_back(s[s.rfactor(partial, chunk, 0)]);
  }
  SchedulePerOutput(stage, vector_lanes);
  for (size_t k = 1; k < reductions.size(); ++k) {
    SchedulePerOutput(reductions[k], reduce_lanes ? lanes : vector_lanes);
  }
  return true;
}

}  // namespace

te::Schedule schedule_reduce(const Array<te::Tensor>& outs, int vector_lanes) {
  Array<te::Operation> ops;
  for (const te::Tensor& out : outs) ops.push_back(out.op());
  te::Schedule s = te::create_schedule(ops);
  // A copy: rfactor adds stages while the loop runs, and schedules them itself.
  Array<te::Stage> stages = s.stages();
  for (const te::Stage& stage : stages) {
    bool is_output = false;
    for (const te::Operation& op : ops) is_output = is_output || op == stage->op;
    te::Stage mutable_stage(stage);
    if (IsReduction(stage->op)) {
      if (!ScheduleLongReduction(s, mutable_stage, vector_lanes)) {
        SchedulePerOutput(mutable_stage, vector_lanes);
      }
    } else if (is_output && IsInjective(stage->op)) {
      ScheduleInjectiveOutput(mutable_stage, vector_lanes);
    } else if (IsInjective(stage->op)) {
      mutable_stage.compute_inline();
    }
  }
  return s;
}

namespace {

// A reduction computed where its row is: its innermost reduction axis, when read with stride
// 1 and a multiple of the vector width long, accumulates that many lanes at a time in a vector (an rfactor stage
// also computed at the row), then the lanes are summed; a serial scalar reduction would be
// one dependent add after another (latency bound: a softmax over 128 keys took 5x longer).
void ComputeReductionAtRow(te::Schedule s, te::Stage reduction, te::Stage out, IterVar row,
                           int vector_lanes) {
  const auto* compute = dynamic_cast<const te::ComputeOpNode*>(reduction->op.get());
  const IterVar& innermost = compute->reduce_axis.back();
  int64_t extent = 0;
  if (IsConstInt(innermost->dom->extent, &extent) && extent % vector_lanes == 0 &&
      extent > vector_lanes && ReadsContiguouslyAlong(*compute, innermost)) {
    IterVar lane = reduction.split(innermost, vector_lanes).second;
    te::Stage partial =
        s[s.rfactor(reduction->op->output(0), lane, static_cast<int>(compute->axis.size()))];
    // Inside the reduction (of the lanes now), which is computed at the row.
    IterVar kept;
    for (const IterVar& leaf : reduction->leaf_iter_vars) {
      if (leaf->iter_type != IterVarType::kCommReduce) kept = leaf;
    }
    LOOM_ICHECK(kept.defined()) << "a row's statistic keeps the row's dimensions";
    partial.compute_at(reduction, kept);
    // Its leaves: the kept dimensions, the lanes (factor_axis: after the kept ones), then
    // the remaining reduction; the lanes go innermost.
    Array<IterVar> order;
    IterVar lanes;
    for (const IterVar& leaf : partial->leaf_iter_vars) {
      if (leaf->iter_type == IterVarType::kCommReduce) continue;
      if (lanes.defined()) order.push_back(lanes);
      lanes = leaf;
    }
    for (const IterVar& leaf : partial->leaf_iter_vars) {
      if (leaf->iter_type == IterVarType::kCommReduce) order.push_back(leaf);
    }
    order.push_back(lanes);
    partial.reorder(order);
    partial.vectorize(lanes);
  }
  reduction.compute_at(out, row);
}

}  // namespace

te::Schedule schedule_softmax(const te::Tensor& out, int vector_lanes) {
  const std::string& tag = out.op()->tag;
  const std::string prefix = "softmax_output:";
  LOOM_CHECK_USER(tag.rfind(prefix, 0) == 0)
      << "schedule_softmax: '" << out.name() << "' is not the output of softmax or log_softmax";
  size_t axis = std::stoul(tag.substr(prefix.size()));
  te::Schedule s = te::create_schedule({out.op()});
  te::Stage stage = s[out];
  Array<IterVar> axes = stage->leaf_iter_vars;
  Array<IterVar> rows;
  for (size_t d = 0; d < axes.size(); ++d) {
    if (d != axis) rows.push_back(axes[d]);
  }
  auto [vectors, lanes] = stage.split(axes[axis], vector_lanes);
  stage.vectorize(lanes);
  IterVar row;
  if (!rows.empty()) {
    Array<IterVar> order = rows;
    order.push_back(vectors);
    order.push_back(lanes);
    stage.reorder(order);
    row = rows[0];
    for (size_t d = 1; d < rows.size(); ++d) row = stage.fuse(row, rows[d]);
    if (WorthParallel(out.shape())) stage.parallel(row);
  }
  // The row's maximum, exponentials and their sum, computed where the row is. A copy of the
  // stages: rfactor adds some.
  Array<te::Stage> stages = s.stages();
  for (const te::Stage& producer : stages) {
    te::Stage row_stage(producer);
    bool exponentials = producer->op->tag == "softmax_exp";
    if (row.defined() && IsReduction(producer->op)) {
      ComputeReductionAtRow(s, row_stage, stage, row, vector_lanes);
    } else if (row.defined() && exponentials) {
      row_stage.compute_at(stage, row);
    }
    if (exponentials) {
      IterVar exp_lanes = row_stage.split(row_stage->leaf_iter_vars[axis], vector_lanes).second;
      row_stage.vectorize(exp_lanes);
    }
  }
  return s;
}

te::Schedule schedule_layer_norm(const te::Tensor& out, int first, int vector_lanes) {
  const std::string op = "schedule_layer_norm";
  LOOM_CHECK_USER(first >= 1 && first < out.ndim())
      << op << ": the normalized dimensions must start at 1.." << out.ndim() - 1 << " of '"
      << out.name() << "' (" << out.ndim() << "-d), got " << first;
  te::Schedule s = te::create_schedule({out.op()});
  te::Stage stage = s[out];
  Array<IterVar> axes = stage->leaf_iter_vars;
  IterVar row = axes[0];
  for (int d = 1; d < first; ++d) row = stage.fuse(row, axes[d]);
  IterVar inner = axes[first];
  for (int d = first + 1; d < out.ndim(); ++d) inner = stage.fuse(inner, axes[d]);
  stage.vectorize(stage.split(inner, vector_lanes).second);
  if (WorthParallel(out.shape())) stage.parallel(row);
  // Every statistic computed where its row is; the elementwise stages between inlined.
  Array<te::Stage> stages = s.stages();
  for (const te::Stage& producer : stages) {
    te::Stage row_stage(producer);
    if (producer->op == out.op()) continue;
    if (IsReduction(producer->op)) {
      ComputeReductionAtRow(s, row_stage, stage, row, vector_lanes);
    } else if (IsInjective(producer->op)) {
      row_stage.compute_inline();
    }
  }
  return s;
}

namespace {

// An elementwise stage computed again for each of this many output elements, or more, is
// worth a buffer of its own when it computes a transcendental.
constexpr int64_t kMinBroadcastReuse = 8;

// Whether a stage's own body calls an intrinsic that costs tens of instructions per element
// (a polynomial or a library call), against one for an add or a multiply.
bool CallsTranscendental(const te::Operation& op) {
  static const char* const kTranscendentals[] = {"exp",     "exp2", "log", "log2", "log10", "tanh",
                                                 "sigmoid", "erf",  "sin", "cos",  "pow"};
  const auto* compute = dynamic_cast<const te::ComputeOpNode*>(op.get());
  bool found = false;
  for (const PrimExpr& body : compute->body) {
    PostOrderVisit(body, [&](const ObjectRef& node) {
      const auto* call = node.as<CallNode>();
      if (call == nullptr || found) return;
      for (const char* name : kTranscendentals) found = found || call->op.name() == name;
    });
  }
  return found;
}

}  // namespace

te::Schedule schedule_injective(const Array<te::Tensor>& outs, int vector_lanes) {
  Array<te::Operation> ops;
  int64_t smallest_output = std::numeric_limits<int64_t>::max();
  for (const te::Tensor& out : outs) {
    ops.push_back(out.op());
    bool constant = true;
    int64_t elements = ConstantElements(out.shape(), &constant);
    smallest_output = std::min(smallest_output, constant ? elements : smallest_output);
  }
  te::Schedule s = te::create_schedule(ops);
  // A small stage with a transcendental that the outputs broadcast (a squeeze-and-excitation
  // block's per-channel sigmoid scaling its feature map) is not inlined: every output element
  // would compute it again (RegNetY-400MF's 104 sigmoids for 81536 products took 0.19 ms).
  // It is computed once, in a loop of its own before the outputs'.
  detail::InlineInjective(s, ops, [&](const te::Operation& op) {
    bool constant = true;
    int64_t elements = ConstantElements(op->output_shape(0), &constant);
    return constant && elements <= smallest_output / kMinBroadcastReuse &&
           CallsTranscendental(op);
  });
  for (const te::Operation& op : ops) ScheduleInjectiveOutput(s[op], vector_lanes);
  return s;
}

}  // namespace loom::topi
