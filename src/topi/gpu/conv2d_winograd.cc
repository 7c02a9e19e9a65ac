// The GPU Winograd convolution (loom/topi/gpu/conv2d_winograd.h): computes and schedule.
#include "loom/topi/gpu/conv2d_winograd.h"

#include <vector>

#include "loom/support/error.h"
#include "topi/gpu/shared_tiling.h"
#include "topi/topi_util.h"
#include "topi/winograd_transforms.h"

namespace loom::topi::gpu {

namespace {

using namespace detail::winograd;

const char* const kTag = "conv2d_nchw_winograd";

// A stage computed per thread: its loops unrolled in registers, attached at `thread`.
void InRegisters(te::Stage stage, te::Stage parent, const IterVar& thread) {
  stage.set_scope("local");
  stage.compute_at(parent, thread);
  for (const IterVar& axis : stage->leaf_iter_vars) stage.unroll(axis);
}

}  // namespace

te::Tensor winograd_weight_transform_nchw(const te::Tensor& weight) {
  const std::string op = "winograd_weight_transform_nchw";
  std::vector<int64_t> w = CheckedWeightShape(weight, op);
  return te::compute(
      {kPoints, kPoints, int(w[1]), int(w[0])},
      [&](Var row_point, Var column_point, Var c, Var k) {
        return WeightTransformPoint(row_point, column_point,
                                    [&](int r, int s) { return weight(k, c, r, s); });
      },
      op, detail::kInjective);
}

te::Tensor conv2d_nchw_winograd(const te::Tensor& data, const te::Tensor& transformed_weight,
                                const Conv2DAttrs& attrs) {
  const std::string op = "conv2d_nchw_winograd";
  const DataType f32 = DataType::Float(32);
  LOOM_CHECK_USER(data.ndim() == 4 && transformed_weight.ndim() == 4 && data.dtype() == f32 &&
                  transformed_weight.dtype() == f32)
      << op << ": data '" << data.name() << "' must be float32 [N, C, H, W] and the "
      << "transformed weight '" << transformed_weight.name() << "' float32 [6, 6, C, K] "
      << "(winograd_weight_transform_nchw), got " << data.ndim() << "-d " << data.dtype().str()
      << " and " << transformed_weight.ndim() << "-d " << transformed_weight.dtype().str();
  std::vector<int64_t> in = detail::ConstShape(data, op);
  std::vector<int64_t> u = detail::ConstShape(transformed_weight, op);
  const int64_t N = in[0], C = in[1], H = in[2], W = in[3], K = u[3];
  LOOM_CHECK_USER(u[0] == kPoints && u[1] == kPoints && u[2] == C)
      << op << ": the transformed weight '" << transformed_weight.name() << "' has shape "
      << detail::ShapeText(u) << ", expected (6, 6, " << C << ", K) for data '" << data.name()
      << "' of " << C << " channels; transform the [K, C, 3, 3] weight with "
      << "winograd_weight_transform_nchw";
  CheckUnitStrideWindow(attrs, op);
  const detail::Conv2DOutputSize size = detail::CheckedConv2DOutputSize(op, H, W, 3, 3, attrs);
  const int64_t P = size.p, Q = size.q;
  const int64_t tiles_h = detail::CeilDiv(P, kTileSize), tiles_w = detail::CeilDiv(Q, kTileSize);
  const int tiles = int(N * tiles_h * tiles_w);
  // Input pixel (row, column) of tile t's 6x6 input tile, channel c; zero outside the input
  // (reads clamped: a select evaluates both sides).
  auto tile_input = [&](const PrimExpr& t, int row, const PrimExpr& column, const PrimExpr& c) {
    PrimExpr image = floordiv(t, int(tiles_h * tiles_w));
    PrimExpr h =
        floormod(floordiv(t, int(tiles_w)), int(tiles_h)) * kTileSize + row - int(attrs.pads[0]);
    PrimExpr w = floormod(t, int(tiles_w)) * kTileSize + column - int(attrs.pads[1]);
    PrimExpr inside = h >= 0 && h < int(H) && w >= 0 && w < int(W);
    return select(inside,
                  data(image, c, detail::ClampIndex(h, int(H)), detail::ClampIndex(w, int(W))),
                  make_zero(f32));
  };
  // B^T d, then (B^T d) B.
  te::Tensor data_rows = te::compute(
      {kPoints, kInputTile, int(C), tiles},
      [&](Var point, Var column, Var c, Var t) {
        return CombineRow(kDataTransform, point,
                          [&](int row) { return tile_input(t, row, column, c); });
      },
      "winograd_data_rows", "winograd_data_rows");
  te::Tensor data_transform = te::compute(
      {kPoints, kPoints, int(C), tiles},
      [&](Var row_point, Var column_point, Var c, Var t) {
        return CombineRow(kDataTransform, column_point,
                          [&](int column) { return data_rows(row_point, column, c, t); });
      },
      "winograd_data", "winograd_data");
  IterVar rc = te::reduce_axis(Range(0, int(C)), "rc");
  te::Tensor product = te::compute(
      {kPoints, kPoints, int(K), tiles},
      [&](Var row_point, Var column_point, Var k, Var t) {
        return te::sum(transformed_weight(row_point, column_point, rc->var, k) *
                           data_transform(row_point, column_point, rc->var, t),
                       {rc});
      },
      "winograd_product", "winograd_product");
  // A^T m, then (A^T m) A, written straight into the output tiles.
  te::Tensor output_rows = te::compute(
      {kTileSize, kPoints, int(K), tiles},
      [&](Var row, Var column_point, Var k, Var t) {
        return CombineRow(kOutputTransform, row,
                          [&](int point) { return product(point, column_point, k, t); });
      },
      "winograd_output_rows", "winograd_output_rows");
  return te::compute(
      {int(N), int(K), int(P), int(Q)},
      [&](Var n, Var k, Var p, Var q) {
        PrimExpr t =
            (n * int(tiles_h) + floordiv(p, kTileSize)) * int(tiles_w) + floordiv(q, kTileSize);
        return CombineRow(kOutputTransform, floormod(q, kTileSize), [&](int point) {
          return output_rows(floormod(p, kTileSize), point, k, t);
        });
      },
      op, kTag);
}

te::Schedule schedule_conv2d_nchw_winograd(const te::Tensor& out, const MatmulTiling& tiling,
                                           int threads) {
  const std::string schedule = "schedule_conv2d_nchw_winograd";
  shared_tiling::CheckTiling(tiling, schedule);
  LOOM_CHECK_USER(threads > 0) << schedule << ": threads must be positive, got " << threads;
  te::Operation anchor = detail::FindAnchor(
      out, [](const te::Operation& op) { return op->tag == kTag; }, schedule,
      "a conv2d_nchw_winograd output");
  detail::CheckEpilogueKeepsShape(out, anchor, schedule);
  const te::Tensor conv(anchor, 0);
  // The stages, found from the convolution back to its input.
  const te::Tensor output_rows = InputNamed(conv, "winograd_output_rows");
  const te::Tensor products = InputNamed(output_rows, "winograd_product");
  const te::Tensor data_transform = InputNamed(products, "winograd_data");
  const te::Tensor data_rows = InputNamed(data_transform, "winograd_data_rows");

  te::Schedule s = te::create_schedule({out.op()});
  detail::InlineInjective(s, {out.op()});
  if (out.op() != anchor) s[conv].compute_inline();

  // The input transform: a thread per channel and tile, its 36 points unrolled.
  te::Stage data = s[data_transform];
  {
    const Array<IterVar> axes = data->leaf_iter_vars;  // row point, column point, c, t
    data.reorder({axes[2], axes[3], axes[0], axes[1]});
    auto [block, thread] = data.split(data.fuse(axes[2], axes[3]), threads);
    data.bind(block, te::thread_axis("blockIdx.x"));
    data.bind(thread, te::thread_axis("threadIdx.x"));
    data.unroll(axes[0]);
    data.unroll(axes[1]);
    InRegisters(s[data_rows], data, thread);
  }

  // The 36 products, tiled as batched matrix products.
  {
    const Array<te::Tensor> operands = products.op()->InputTensors();
    te::Tensor weight_shared = s.cache_read(operands[0], "shared", {products.op()});
    te::Tensor data_shared = s.cache_read(operands[1], "shared", {products.op()});
    te::Tensor accumulators = s.cache_write(products, "local");
    te::Stage product = s[products];
    const Array<IterVar> axes = product->leaf_iter_vars;  // row point, column point, k, t
    const Array<IterVar> local_axes = s[accumulators]->leaf_iter_vars;
    MatmulTiling unpadded = tiling;
    unpadded.pad_rows = false;  // the weight tile's rows are its output channels, innermost
    shared_tiling::TileThroughSharedMemory(
        product, {axes[0], axes[1]}, axes[2], axes[3], s[accumulators],
        local_axes[local_axes.size() - 1], {s[weight_shared], s[data_shared]},
        static_cast<const te::ComputeOpNode*>(weight_shared.op().get())->axis[2], unpadded);
  }

  // The output transform (and the epilogue): a thread per output channel and tile, its 4x4
  // pixels unrolled.
  te::Stage output = s[out];
  {
    const Array<IterVar> axes = output->leaf_iter_vars;  // n, k, p, q
    auto [tile_row, row] = output.split(axes[2], kTileSize);
    auto [tile_column, column] = output.split(axes[3], kTileSize);
    output.reorder({axes[0], axes[1], tile_row, tile_column, row, column});
    IterVar tile = output.fuse(output.fuse(output.fuse(axes[0], axes[1]), tile_row), tile_column);
    auto [block, thread] = output.split(tile, threads);
    output.bind(block, te::thread_axis("blockIdx.x"));
    output.bind(thread, te::thread_axis("threadIdx.x"));
    output.unroll(row);
    output.unroll(column);
    InRegisters(s[output_rows], output, thread);
  }
  return s;
}

}  // namespace loom::topi::gpu
