// 2-D convolution on VTA (loom/vta/compiler/conv2d.h).
#include "loom/vta/compiler/conv2d.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <sstream>
#include <unordered_set>
#include <vector>

#include "loom/ir/expr_ops.h"
#include "loom/support/error.h"
#include "loom/te/operation.h"
#include "loom/topi/config_space.h"
#include "loom/topi/transform.h"

namespace loom::vta {
namespace {

// Shapes and extents here are small (a layer's), int as PrimExpr takes them.
PrimExpr Extent(int64_t v) { return PrimExpr(static_cast<int>(v)); }

// The input rows and columns one tile of `rows` output rows reads, padding included.
int64_t InputRows(const Conv2DWorkload& w, int64_t rows) {
  return (rows - 1) * w.stride_h + w.kernel_h;
}
int64_t InputColumns(const Conv2DWorkload& w) { return (w.out_width() - 1) * w.stride_w + w.kernel_w; }

// Bytes LOADed from DRAM for the whole convolution under `tiling`: the input rows of each tile
// once per block of input channels (so the input once per channel tile), the weights once per
// row tile.
int64_t LoadedBytes(const Environment& env, const Conv2DWorkload& w, const Conv2DTiling& t) {
  const int64_t in_blocks = w.in_channels / env.block_in();
  const int64_t out_blocks = w.out_channels / env.block_out();
  const int64_t row_tiles = w.out_height() / t.rows, channel_tiles = out_blocks / t.oc_blocks;
  const int64_t batches = w.batch / env.batch();
  const int64_t inp = batches * channel_tiles * row_tiles * in_blocks * InputRows(w, t.rows) *
                      InputColumns(w) * env.config().inp_elem_bytes();
  const int64_t wgt = batches * row_tiles * out_blocks * in_blocks * w.kernel_h * w.kernel_w *
                      env.config().wgt_elem_bytes();
  return inp + wgt;
}

// The stages of a schedule's tail: what ScheduleConv2DPacked finds walking back from the output.
struct Tail {
  te::Tensor conv;                  // the Conv2DPacked result
  std::vector<te::Tensor> stages;   // element-wise stages between it and the output (ALU)
  std::vector<te::Tensor> loads;    // stages copying an input into the accumulator (LOADs)
};

// Whether `stage` computes input[...] or cast(type, input[...]) of one placeholder: a LOAD.
bool IsLoadOfInput(const te::ComputeOpNode& stage) {
  if (stage.body.size() != 1) return false;
  PrimExpr value = stage.body[0];
  if (const auto* cast = value.as<CastNode>()) value = cast->value;
  if (value.as<BufferLoadNode>() == nullptr) return false;
  Array<te::Tensor> inputs = stage.InputTensors();
  return inputs.size() == 1 && dynamic_cast<const te::PlaceholderOpNode*>(inputs[0].op().get()) != nullptr;
}

Tail FindTail(const te::Tensor& output) {
  Tail tail;
  std::unordered_set<const te::OperationNode*> seen;
  std::vector<te::Tensor> work = {output};
  while (!work.empty()) {
    te::Tensor tensor = work.back();
    work.pop_back();
    const auto* compute = dynamic_cast<const te::ComputeOpNode*>(tensor.op().get());
    LOOM_ICHECK(compute != nullptr) << "FindTail visits stages only";
    for (const te::Tensor& input : compute->InputTensors()) {
      if (!seen.insert(input.op().get()).second) continue;
      const auto* producer = dynamic_cast<const te::ComputeOpNode*>(input.op().get());
      LOOM_CHECK_USER(producer != nullptr)
          << "ScheduleConv2DPacked: the tail of '" << output.name() << "' reads the input '"
          << input.name() << "' directly; read it through a stage that copies it "
          << "(int32: x[...]) or widens it (int8: cast(int32, x[...])), which the accumulator "
          << "LOADs";
      if (!producer->reduce_axis.empty()) {
        LOOM_CHECK_USER(!tail.conv.defined() || tail.conv == input)
            << "ScheduleConv2DPacked: the tail of '" << output.name() << "' reads two "
            << "reductions, '" << tail.conv.name() << "' and '" << input.name() << "'";
        tail.conv = input;
        continue;
      }
      if (IsLoadOfInput(*producer)) {
        tail.loads.push_back(input);
        continue;
      }
      tail.stages.push_back(input);
      work.push_back(input);
    }
  }
  LOOM_CHECK_USER(tail.conv.defined())
      << "ScheduleConv2DPacked: '" << output.name() << "' does not follow from a convolution";
  return tail;
}

}  // namespace

void Conv2DWorkload::Check(const Environment& env) const {
  std::ostringstream shape;
  shape << "conv2d of " << batch << "x" << in_channels << "x" << height << "x" << width
        << " by " << out_channels << "x" << kernel_h << "x" << kernel_w << " filters (stride "
        << stride_h << "x" << stride_w << ", padding " << pad_h << "x" << pad_w << ")";
  LOOM_CHECK_USER(batch > 0 && batch % env.batch() == 0)
      << "VTA " << shape.str() << ": the batch must be a multiple of the configuration's "
      << env.batch();
  LOOM_CHECK_USER(in_channels > 0 && in_channels % env.block_in() == 0 && out_channels > 0 &&
                  out_channels % env.block_out() == 0)
      << "VTA " << shape.str() << ": channels must come in whole blocks (" << env.block_in()
      << " in, " << env.block_out() << " out)";
  LOOM_CHECK_USER(kernel_h > 0 && kernel_w > 0 && stride_h > 0 && stride_w > 0 && pad_h >= 0 &&
                  pad_w >= 0 && pad_h < kernel_h && pad_w < kernel_w)
      << "VTA " << shape.str() << ": the window, strides and padding must be positive, the "
      << "padding smaller than the window";
  LOOM_CHECK_USER(height + 2 * pad_h >= kernel_h && width + 2 * pad_w >= kernel_w)
      << "VTA " << shape.str() << ": the window is larger than the padded image";
}

te::Tensor Conv2DPacked(const te::Tensor& data, const te::Tensor& kernel, const Conv2DWorkload& w,
                        DataType acc) {
  int64_t b = 0, bi = 0, bo = 0;
  LOOM_CHECK_USER(data.ndim() == 6 && kernel.ndim() == 6 && IsConstInt(data.shape()[4], &b) &&
                  IsConstInt(data.shape()[5], &bi) && IsConstInt(kernel.shape()[4], &bo) &&
                  b > 0 && bi > 0 && bo > 0 && w.batch % b == 0 && w.in_channels % bi == 0 &&
                  w.out_channels % bo == 0)
      << "Conv2DPacked: '" << data.name() << "' and '" << kernel.name() << "' must be 6-d, in "
      << "the blocked layouts [N/b][C/bi][H][W][b][bi] and [O/bo][C/bi][KH][KW][bo][bi] with "
      << "constant blocks dividing the workload's batch and channels";
  auto expect_shape = [](const te::Tensor& t, std::vector<int64_t> shape, DataType dtype) {
    bool same = t.ndim() == static_cast<int>(shape.size()) && t.dtype() == dtype;
    for (size_t d = 0; same && d < shape.size(); ++d) {
      int64_t extent = 0;
      same = IsConstInt(t.shape()[d], &extent) && extent == shape[d];
    }
    std::ostringstream expected;
    for (int64_t e : shape) expected << "[" << e << "]";
    LOOM_CHECK_USER(same) << "Conv2DPacked: '" << t.name() << "' must be " << dtype.str()
                          << expected.str() << " for this workload and configuration";
  };
  expect_shape(data, {w.batch / b, w.in_channels / bi, w.height, w.width, b, bi}, data.dtype());
  expect_shape(kernel, {w.out_channels / bo, w.in_channels / bi, w.kernel_h, w.kernel_w, bo, bi},
               kernel.dtype());
  LOOM_CHECK_USER(data.dtype().is_int() && data.dtype().bits() <= 8 && kernel.dtype().is_int() &&
                  kernel.dtype().bits() <= 8)
      << "Conv2DPacked: '" << data.name() << "' and '" << kernel.name() << "' must be int8 (VTA's "
      << "input and weight types), not " << data.dtype().str() << " and "
      << kernel.dtype().str();
  te::Tensor padded = data;
  if (w.pad_h > 0 || w.pad_w > 0) {
    padded = topi::pad(data, {0, 0, w.pad_h, w.pad_w, 0, 0}, {0, 0, w.pad_h, w.pad_w, 0, 0},
                       topi::PadMode::kConstant, 0.0);
  }
  IterVar ic = te::reduce_axis(Range(0, Extent(w.in_channels / bi)), "ic");
  IterVar dy = te::reduce_axis(Range(0, Extent(w.kernel_h)), "dy");
  IterVar dx = te::reduce_axis(Range(0, Extent(w.kernel_w)), "dx");
  IterVar ic_tns = te::reduce_axis(Range(0, Extent(bi)), "ic_tns");
  return te::compute(
      {Extent(w.batch / b), Extent(w.out_channels / bo), Extent(w.out_height()),
       Extent(w.out_width()), Extent(b), Extent(bo)},
      [&](const Array<Var>& i) {
        PrimExpr y = i[2] * make_const(i[2].dtype(), w.stride_h) + dy->var;
        PrimExpr x = i[3] * make_const(i[3].dtype(), w.stride_w) + dx->var;
        return te::sum(cast(acc, padded(i[0], ic->var, y, x, i[4], ic_tns->var)) *
                           cast(acc, kernel(i[1], ic->var, dy->var, dx->var, i[5], ic_tns->var)),
                       {ic, dy, dx, ic_tns});
      },
      "conv2d_packed");
}

bool Conv2DFootprint::FitsIn(const Environment& env) const {
  return inp <= env.Memory(Environment::kInpScope).depth &&
         wgt <= env.Memory(Environment::kWgtScope).depth &&
         acc <= env.Memory(Environment::kAccScope).depth;
}

Conv2DFootprint FootprintOf(const Conv2DWorkload& w, const Conv2DTiling& t,
                            int64_t acc_operands) {
  Conv2DFootprint f;
  f.inp = t.virtual_threads * InputRows(w, t.rows) * InputColumns(w);
  f.wgt = t.virtual_threads * t.oc_blocks * w.kernel_h * w.kernel_w;
  // The products, each operand of the tail, and a per-channel operand (a bias).
  f.acc = t.virtual_threads * t.oc_blocks * (t.rows * w.out_width() * (1 + acc_operands) + 1);
  return f;
}

Conv2DTiling DefaultConv2DTiling(const Environment& env, const Conv2DWorkload& w,
                                 int64_t acc_operands, int64_t max_virtual_threads) {
  w.Check(env);
  const int64_t out_blocks = w.out_channels / env.block_out();
  std::optional<Conv2DTiling> best;
  int64_t best_bytes = std::numeric_limits<int64_t>::max();
  for (int64_t threads = max_virtual_threads; threads >= 1; --threads) {
    for (int64_t oc_blocks : topi::Divisors(out_blocks)) {
      if ((out_blocks / oc_blocks) % threads != 0) continue;
      for (int64_t rows : topi::Divisors(w.out_height())) {
        Conv2DTiling t{rows, oc_blocks, threads};
        if (!FootprintOf(w, t, acc_operands).FitsIn(env)) continue;
        const int64_t bytes = LoadedBytes(env, w, t);
        // Fewer bytes; among equals the larger tile (fewer instructions).
        if (bytes < best_bytes ||
            (bytes == best_bytes && rows * oc_blocks > best->rows * best->oc_blocks)) {
          best = t;
          best_bytes = bytes;
        }
      }
    }
    if (best) return *best;  // two threads where any tiling allows them
  }
  const Conv2DFootprint smallest = FootprintOf(w, {1, 1, 1}, acc_operands);
  LOOM_THROW << "VTA: no tiling of the conv2d of " << w.in_channels << "x" << w.height
                  << "x" << w.width << " by " << w.out_channels << "x" << w.kernel_h << "x"
                  << w.kernel_w << " filters fits the on-chip buffers: one output row of one "
                  << "channel block needs " << smallest.inp << " input, " << smallest.wgt
                  << " weight and " << smallest.acc << " accumulator elements, the buffers hold "
                  << env.Memory(Environment::kInpScope).depth << ", "
                  << env.Memory(Environment::kWgtScope).depth << " and "
                  << env.Memory(Environment::kAccScope).depth << "; run it on the CPU";
}

te::Schedule ScheduleConv2DPacked(const Environment& env, const te::Tensor& output,
                                  const Conv2DTiling& tiling) {
  LOOM_CHECK_USER(output.dtype() == env.out_dtype())
      << "ScheduleConv2DPacked: '" << output.name() << "' is " << output.dtype().str()
      << "; the STORE writes " << env.out_dtype().str() << " (end the tail with a cast; in a "
      << "compiled model, the kernel ends before its tail's cast to int8: a max_fuse_group "
      << "too small to hold the tail)";
  LOOM_CHECK_USER(output.ndim() == 6)
      << "ScheduleConv2DPacked: '" << output.name() << "' must be in the blocked layout "
      << "[N/b][O/bo][OH][OW][b][bo]";
  LOOM_CHECK_USER(tiling.virtual_threads == 1 || tiling.virtual_threads == 2)
      << "ScheduleConv2DPacked: " << tiling.virtual_threads << " virtual threads; 1 or 2";
  const Tail tail = FindTail(output);
  {
    // The tiling must divide the output and fit the buffers.
    const auto* conv = dynamic_cast<const te::ComputeOpNode*>(tail.conv.op().get());
    int64_t rows = 0, blocks = 0;
    LOOM_ICHECK(conv != nullptr && IsConstInt(tail.conv.shape()[2], &rows) &&
                IsConstInt(tail.conv.shape()[1], &blocks))
        << "ScheduleConv2DPacked: '" << tail.conv.name() << "' has no constant shape";
    LOOM_CHECK_USER(tiling.rows >= 1 && rows % tiling.rows == 0 && tiling.oc_blocks >= 1 &&
                    blocks % tiling.oc_blocks == 0 &&
                    (blocks / tiling.oc_blocks) % tiling.virtual_threads == 0)
        << "ScheduleConv2DPacked: a tiling of " << tiling.rows << " rows by " << tiling.oc_blocks
        << " channel blocks in " << tiling.virtual_threads << " threads does not divide the "
        << "output's " << rows << " rows and " << blocks << " channel blocks";
  }
  te::Schedule s = te::create_schedule({output.op()});
  te::Stage r = s[output];
  const Array<IterVar> axis = r->leaf_iter_vars;  // n, oc, y, x, b, bo
  auto [y_out, y_in] = r.split(axis[2], Extent(tiling.rows));
  auto [oc_out, oc_in] = r.split(axis[1], Extent(tiling.oc_blocks));
  r.reorder({axis[0], oc_out, y_out, oc_in, y_in, axis[3], axis[4], axis[5]});
  if (tiling.virtual_threads > 1) {
    auto [thread, tiles] = r.split_by_nparts(oc_out, Extent(tiling.virtual_threads));
    r.bind(thread, te::thread_axis("cthread"));
  }
  const IterVar& tile = y_out;
  // The tail on the ALU, its operands LOADed into the accumulator.
  for (const te::Tensor& stage : tail.stages) {
    s[stage].set_scope(Environment::kAccScope);
    s[stage].compute_at(r, tile);
    s[stage].pragma(s[stage]->leaf_iter_vars[0], Environment::kAlu);
  }
  for (const te::Tensor& load : tail.loads) {
    s[load].set_scope(Environment::kAccScope);
    s[load].compute_at(r, tile);
    s[load].pragma(s[load]->leaf_iter_vars[0], Environment::kDmaCopy);
  }
  // The convolution: per block of input channels, over the tile's channels, rows, the window
  // and columns, the GEMM intrinsic innermost.
  te::Stage c = s[tail.conv];
  c.set_scope(Environment::kAccScope);
  c.compute_at(r, tile);
  const auto* conv = dynamic_cast<const te::ComputeOpNode*>(tail.conv.op().get());
  const Array<IterVar> caxis = c->leaf_iter_vars;  // n, oc, y, x, b, bo, ic, dy, dx, ic_tns
  c.reorder({caxis[6], caxis[0], caxis[1], caxis[2], caxis[7], caxis[8], caxis[3], caxis[4],
             caxis[5], caxis[9]});
  // Conv2DPacked's body reads the data (or its padding stage) first, then the kernel.
  const Array<te::Tensor> conv_inputs = conv->InputTensors();
  LOOM_ICHECK(conv_inputs.size() == 2)
      << "ScheduleConv2DPacked: '" << tail.conv.name() << "' is not a Conv2DPacked result";
  te::Tensor data_buf = conv_inputs[0];
  if (dynamic_cast<const te::ComputeOpNode*>(data_buf.op().get()) != nullptr) {
    s[data_buf].set_scope(Environment::kInpScope);  // the padding, by padded LOADs
  } else {
    data_buf = s.cache_read(data_buf, Environment::kInpScope, {tail.conv.op()});
  }
  te::Tensor kernel_buf = s.cache_read(conv_inputs[1], Environment::kWgtScope, {tail.conv.op()});
  for (const te::Tensor& buf : {data_buf, kernel_buf}) {
    s[buf].compute_at(c, caxis[6]);
    s[buf].pragma(s[buf]->leaf_iter_vars[0], Environment::kDmaCopy);
  }
  c.tensorize(caxis[4], env.gemm());
  r.pragma(oc_in, Environment::kDmaCopy);
  return s;
}

int64_t TailAccOperands(const te::Tensor& output) {
  int64_t operands = 0;
  for (const te::Tensor& load : FindTail(output).loads) {
    operands += load.shape().size() == output.shape().size() &&
                std::equal(load.shape().begin(), load.shape().end(), output.shape().begin(),
                           [](const PrimExpr& a, const PrimExpr& b) {
                             int64_t x = 0, y = 0;
                             return IsConstInt(a, &x) && IsConstInt(b, &y) && x == y;
                           });
  }
  return operands;
}

}  // namespace loom::vta
