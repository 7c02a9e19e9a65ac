// Winograd F(4x4, 3x3) conv2d in the blocked NCHWc layouts: the computes and their schedule.
//
// Every transform is written row by row with only the non-zero entries of its matrix
// (topi/winograd_transforms.h).
#include "loom/topi/x86/conv2d_winograd.h"

#include <algorithm>
#include <functional>
#include <sstream>
#include <vector>

#include "topi/topi_util.h"
#include "topi/winograd_transforms.h"

namespace loom::topi::x86 {

namespace {

using namespace detail::winograd;

constexpr int kLanes = detail::kAvx512Lanes;
const char* const kTag = "conv2d_nchwc_winograd";

// The largest of 16, 8, 4, 2, 1 dividing `extent`: the vector of a loop over channels whose
// count need not be a multiple of 16, split without a remainder.
int VectorWidth(int64_t extent) {
  int width = kLanes;
  while (extent % width != 0) width /= 2;
  return width;
}

// The stages of one Winograd convolution, found from its output.
struct WinogradStages {
  te::Tensor data_pad, data_rows, data_transform, product, output_rows, conv;
};

WinogradStages FindStages(const te::Tensor& out) {
  const std::string schedule = "schedule_conv2d_nchwc_winograd";
  te::Operation anchor = detail::FindAnchor(
      out, [](const te::Operation& op) { return op->tag == kTag; }, schedule,
      "a conv2d_nchwc_winograd output");
  detail::CheckEpilogueKeepsShape(out, anchor, schedule);
  const te::Tensor conv(anchor, 0);
  WinogradStages stages;
  stages.conv = conv;
  stages.output_rows = InputNamed(conv, "winograd_output_rows");
  stages.product = InputNamed(stages.output_rows, "winograd_product");
  stages.data_transform = InputNamed(stages.product, "winograd_data");
  stages.data_rows = InputNamed(stages.data_transform, "winograd_data_rows");
  stages.data_pad = InputNamed(stages.data_rows, "winograd_data_pad");
  return stages;
}

}  // namespace

te::Tensor winograd_weight_transform(const te::Tensor& weight_kcrs) {
  const std::string op = "winograd_weight_transform";
  std::vector<int64_t> w = CheckedWeightShape(weight_kcrs, op);
  LOOM_CHECK_USER(w[0] % kLanes == 0)
      << op << ": weight '" << weight_kcrs.name() << "' has " << w[0] << " filters; the "
      << "transformed weight is laid out in panels of 16 filters, so K must be a multiple of 16";
  const int panels = static_cast<int>(w[0] / kLanes), C = static_cast<int>(w[1]);
  return te::compute(
      {kPoints, kPoints, panels, C, kLanes},
      [&](const Array<Var>& i) {
        PrimExpr k = i[2] * kLanes + i[4];
        return WeightTransformPoint(i[0], i[1],
                                    [&](int r, int s) { return weight_kcrs(k, i[3], r, s); });
      },
      op, detail::kInjective);
}

te::Tensor conv2d_nchwc_winograd(const te::Tensor& data, const te::Tensor& transformed_weight,
                                 const Conv2DAttrs& attrs, int64_t oc_bn) {
  const std::string op = "conv2d_nchwc_winograd";
  const DataType f32 = DataType::Float(32);
  LOOM_CHECK_USER(data.ndim() == 5 && transformed_weight.ndim() == 5 && data.dtype() == f32 &&
                  transformed_weight.dtype() == f32)
      << op << ": data '" << data.name() << "' must be float32 [N, C/ic_bn, H, W, ic_bn] and "
      << "the transformed weight '" << transformed_weight.name() << "' float32 [6, 6, K/16, C, 16] "
      << "(winograd_weight_transform), got " << data.ndim() << "-d " << data.dtype().str()
      << " and " << transformed_weight.ndim() << "-d " << transformed_weight.dtype().str();
  std::vector<int64_t> in = detail::ConstShape(data, op);
  std::vector<int64_t> u = detail::ConstShape(transformed_weight, op);
  const int64_t N = in[0], ic_blocks = in[1], H = in[2], W = in[3], ic_bn = in[4];
  const int64_t C = ic_blocks * ic_bn, K = u[2] * kLanes;
  LOOM_CHECK_USER(u[0] == kPoints && u[1] == kPoints && u[3] == C && u[4] == kLanes)
      << op << ": the transformed weight '" << transformed_weight.name() << "' has shape "
      << detail::ShapeText(u) << ", expected [6, 6, K/16, " << C << ", 16] for data '"
      << data.name() << "' of " << C << " channels; transform the [K, C, 3, 3] weight with "
      << "winograd_weight_transform";
  CheckUnitStrideWindow(attrs, op);
  const auto& pads = attrs.pads;
  const detail::Conv2DOutputSize size = detail::CheckedConv2DOutputSize(op, H, W, 3, 3, attrs);
  const int64_t P = size.p, Q = size.q;
  LOOM_CHECK_USER(oc_bn > 0 && oc_bn % kLanes == 0 && K % oc_bn == 0)
      << op << ": the output channel block oc_bn=" << oc_bn << " must be a multiple of 16 "
      << "dividing the " << K << " output channels";

  const int64_t tiles_h = detail::CeilDiv(P, kTileSize), tiles_w = detail::CeilDiv(Q, kTileSize);
  const int64_t tiles = N * tiles_h * tiles_w;
  const int64_t padded_h = tiles_h * kTileSize + 2, padded_w = tiles_w * kTileSize + 2;
  // Zeros around the input out to whole tiles. Materialized by the schedule (per row of
  // tiles or for the whole layer), so that the input transform reads plain vectors; reads
  // outside the input are clamped because a select evaluates both sides.
  te::Tensor data_pad = te::compute(
      {int(N), int(ic_blocks), int(padded_h), int(padded_w), int(ic_bn)},
      [&](const Array<Var>& i) {
        PrimExpr h = i[2] - int(pads[0]), w = i[3] - int(pads[1]);
        PrimExpr inside = h >= 0 && h < int(H) && w >= 0 && w < int(W);
        return select(inside,
                      data(i[0], i[1], detail::ClampIndex(h, int(H)),
                           detail::ClampIndex(w, int(W)), i[4]),
                      make_zero(f32));
      },
      "winograd_data_pad", "winograd_data_pad");
  // The 6x6 input tile of tile t at position (row, column), input channel c.
  auto tile_input = [&](const PrimExpr& t, const PrimExpr& row, const PrimExpr& column,
                        const PrimExpr& c) {
    // With one image the row is written without a floormod, so that bound inference finds
    // the exact input rows a row of tiles reads (a schedule computing per row of tiles
    // then pads only those).
    PrimExpr image = N == 1 ? PrimExpr(0) : floordiv(t, int(tiles_h * tiles_w));
    PrimExpr tile_row = N == 1 ? floordiv(t, int(tiles_w))
                               : floormod(floordiv(t, int(tiles_w)), int(tiles_h));
    PrimExpr tile_column = floormod(t, int(tiles_w));
    return data_pad(image, floordiv(c, int(ic_bn)), tile_row * kTileSize + row,
                    tile_column * kTileSize + column, floormod(c, int(ic_bn)));
  };
  // B^T d, then (B^T d) B: the two passes of the input transform.
  te::Tensor data_rows = te::compute(
      {kPoints, kInputTile, int(tiles), int(C)},
      [&](Var point, Var column, Var t, Var c) {
        return CombineRow(kDataTransform, point,
                          [&](int row) { return tile_input(t, row, column, c); });
      },
      "winograd_data_rows", "winograd_data_rows");
  te::Tensor data_transform = te::compute(
      {kPoints, kPoints, int(tiles), int(C)},
      [&](Var row_point, Var column_point, Var t, Var c) {
        return CombineRow(kDataTransform, column_point,
                          [&](int column) { return data_rows(row_point, column, t, c); });
      },
      "winograd_data", "winograd_data");
  // The 36 GEMMs. The schedule's register tile may run past the last tile; its rows read
  // the last tile again (clamped) and are not stored.
  IterVar rc = te::reduce_axis(Range(0, int(C)), "rc");
  te::Tensor product = te::compute(
      {kPoints, kPoints, int(tiles), int(K)},
      [&](Var row_point, Var column_point, Var t, Var k) {
        return te::sum(data_transform(row_point, column_point, min(t, int(tiles - 1)), rc->var) *
                           transformed_weight(row_point, column_point, floordiv(k, kLanes), rc->var,
                                              floormod(k, kLanes)),
                       {rc});
      },
      "winograd_product", "winograd_product");
  // A^T m, then (A^T m) A, written straight into the output tiles.
  te::Tensor output_rows = te::compute(
      {kTileSize, kPoints, int(tiles), int(K)},
      [&](Var row, Var column_point, Var t, Var k) {
        return CombineRow(kOutputTransform, row,
                          [&](int point) { return product(point, column_point, t, k); });
      },
      "winograd_output_rows", "winograd_output_rows");
  return te::compute(
      {int(N), int(K / oc_bn), int(P), int(Q), int(oc_bn)},
      [&](const Array<Var>& i) {
        PrimExpr t = (i[0] * int(tiles_h) + floordiv(i[2], kTileSize)) * int(tiles_w) +
                     floordiv(i[3], kTileSize);
        PrimExpr k = i[1] * int(oc_bn) + i[4];
        return CombineRow(kOutputTransform, floormod(i[3], kTileSize), [&](int point) {
          return output_rows(floormod(i[2], kTileSize), point, t, k);
        });
      },
      op, kTag);
}

std::string WinogradConfig::str() const {
  std::ostringstream text;
  text << "fuse_tile_rows=" << fuse_tile_rows << " gemm_rows=" << gemm_rows
       << " gemm_columns=" << gemm_columns << " gemm_unroll=" << gemm_unroll;
  return text.str();
}

WinogradConfig DefaultWinogradConfig(const Conv2DWorkload& workload) {
  WinogradConfig config;
  const int64_t P = workload.out_h(), Q = workload.out_w();
  const int64_t tiles_w = detail::CeilDiv(Q, kTileSize);
  const int64_t tiles = workload.n * detail::CeilDiv(P, kTileSize) * tiles_w;
  // Rows of tiles fused where the schedule allows it (one image of whole tiles).
  config.fuse_tile_rows = workload.n == 1 && P % kTileSize == 0 && Q % kTileSize == 0;
  const int64_t k = workload.k;
  if (config.fuse_tile_rows) {
    // 2 vectors x up to 12 tiles (26 zmm registers); the row's tiles divided exactly.
    config.gemm_columns = k % 32 == 0 ? 32 : 16;
    config.gemm_rows = detail::LargestDivisorUpTo(tiles_w, 12);
  } else {
    // 24 accumulators (4 vectors x 6 tiles, 2 x 12, 1 x 24) and the weight vectors.
    config.gemm_columns = k % 64 == 0 ? 64 : k % 32 == 0 ? 32 : 16;
    const int64_t max_rows = 384 / config.gemm_columns;
    config.gemm_rows = std::min<int64_t>(max_rows, std::max<int64_t>(tiles, 1));
  }
  config.gemm_unroll = workload.c % 4 == 0 ? 4 : workload.c % 2 == 0 ? 2 : 1;
  return config;
}

te::Schedule schedule_conv2d_nchwc_winograd(const te::Tensor& out, const WinogradConfig& config) {
  const std::string op = "schedule_conv2d_nchwc_winograd";
  WinogradStages st = FindStages(out);
  std::vector<int64_t> product_shape = detail::ConstShape(st.product, op);
  const int64_t C = detail::ConstShape(st.data_transform, op)[3], K = product_shape[3];
  LOOM_CHECK_USER(config.gemm_rows > 0 && config.gemm_columns > 0 &&
                  config.gemm_columns % kLanes == 0 && K % config.gemm_columns == 0 &&
                  config.gemm_unroll > 0 && C % config.gemm_unroll == 0)
      << op << ": config " << config.str() << " does not fit " << C << " input and " << K
      << " output channels: gemm_rows must be positive, gemm_columns a multiple of 16 "
      << "dividing K and gemm_unroll a divisor of C";
  // Partial last tiles put a likely() guard on the row-of-tiles loop, and LoopPartition
  // then peels an iteration of a loop holding the row's allocations, which the later
  // storage passes do not handle (the peeled copy was found writing out of bounds).
  // With more than one image the input rows of a row of tiles are not found exactly (the
  // tile index wraps around images) and the row's buffers were found overrun.
  std::vector<int64_t> out_shape = detail::ConstShape(st.conv, op);
  LOOM_CHECK_USER(!config.fuse_tile_rows ||
                  (out_shape[0] == 1 && out_shape[2] % kTileSize == 0 &&
                   out_shape[3] % kTileSize == 0))
      << op << ": fuse_tile_rows needs one image of whole 4x4 output tiles, got " << out_shape[0]
      << " of " << out_shape[2] << "x" << out_shape[3] << "; use fuse_tile_rows = false";

  te::Schedule s = te::create_schedule({out.op()});
  detail::InlineInjective(s, {out.op()});
  if (st.conv.op() != out.op()) s[st.conv].compute_inline();

  // The output transform runs one row of tiles per parallel iteration. With fuse_tile_rows
  // the row's padded input rows, input transform and GEMMs run in the same iteration, so
  // the intermediates of a row (36 x tiles x channels each) stay in the core's L2 instead
  // of streaming whole layers through memory.
  te::Stage output = s[out];
  Array<IterVar> axes = output->leaf_iter_vars;  // n, k block, p, q, lane
  auto [tile_row, row] = output.split(axes[2], kTileSize);
  auto [tile_column, column] = output.split(axes[3], kTileSize);
  auto [lane_vector, lane] = output.split(axes[4], kLanes);
  output.reorder({axes[0], tile_row, tile_column, axes[1], lane_vector, row, column, lane});
  output.unroll(row);
  output.unroll(column);
  output.vectorize(lane);
  IterVar block = output.fuse(axes[0], tile_row);
  output.parallel(block);

  // Output transform: per tile and 16 output channels, A^T m (24 vectors) then the 4x4
  // outputs, with the epilogue applied before each vector is stored.
  te::Stage output_rows = s[st.output_rows];
  output_rows.compute_at(output, lane_vector);
  output_rows.set_scope("local");
  Array<IterVar> row_axes = output_rows->leaf_iter_vars;  // row, point, t, k
  output_rows.unroll(row_axes[0]);
  output_rows.unroll(row_axes[1]);
  output_rows.vectorize(row_axes[3]);

  // The GEMMs: per transform point, register tiles of gemm_rows tiles x gemm_columns
  // channels accumulating over every input channel (one broadcast data value times one
  // weight vector per multiply-add), as bench/gemm/gemm_f32.cc.
  te::Tensor acc = s.cache_write(st.product, "local");
  te::Stage product = s[st.product];
  Array<IterVar> product_axes = product->leaf_iter_vars;  // row point, column point, t, k
  auto [tile_block, tile] = product.split(product_axes[2], int(config.gemm_rows));
  auto [column_block, columns] = product.split(product_axes[3], int(config.gemm_columns));
  auto [vector, vector_lane] = product.split(columns, kLanes);
  product.reorder({product_axes[0], product_axes[1], column_block, tile_block, tile, vector,
                   vector_lane});
  product.unroll(tile);
  product.unroll(vector);
  product.vectorize(vector_lane);
  if (config.fuse_tile_rows) {
    product.compute_at(output, block);
  } else {
    product.parallel(product.fuse(product_axes[0], product_axes[1]));
  }
  te::Stage tile_acc = s[acc];
  tile_acc.compute_at(product, tile_block);
  tile_acc.set_scope("local");
  Array<IterVar> acc_axes = tile_acc->leaf_iter_vars;  // points, t, k, rc
  auto [acc_vector, acc_lane] = tile_acc.split(acc_axes[3], kLanes);
  auto [channel_step, channel] = tile_acc.split(acc_axes[4], int(config.gemm_unroll));
  tile_acc.reorder({channel_step, channel, acc_axes[0], acc_axes[1], acc_axes[2], acc_vector,
                    acc_lane});
  tile_acc.unroll(channel);
  tile_acc.unroll(acc_axes[2]);
  tile_acc.unroll(acc_vector);
  tile_acc.vectorize(acc_lane);

  // Input transform: per tile and vector of input channels, B^T d (36 vectors) then the 36
  // transform points.
  te::Stage transform = s[st.data_transform];
  Array<IterVar> transform_axes = transform->leaf_iter_vars;  // row point, column point, t, c
  auto [channel_vector, channel_lane] = transform.split(transform_axes[3], VectorWidth(C));
  transform.reorder({transform_axes[2], channel_vector, transform_axes[0], transform_axes[1],
                     channel_lane});
  transform.unroll(transform_axes[0]);
  transform.unroll(transform_axes[1]);
  transform.vectorize(channel_lane);
  IterVar transform_unit = channel_vector;
  if (config.fuse_tile_rows) {
    transform.compute_at(output, block);
  } else {
    transform_unit = transform.fuse(transform_axes[2], channel_vector);
    transform.parallel(transform_unit);
  }
  te::Stage data_rows = s[st.data_rows];
  data_rows.compute_at(transform, transform_unit);
  data_rows.set_scope("local");
  Array<IterVar> data_row_axes = data_rows->leaf_iter_vars;  // point, column, t, c
  data_rows.unroll(data_row_axes[0]);
  data_rows.unroll(data_row_axes[1]);
  data_rows.vectorize(data_row_axes[3]);

  te::Stage pad = s[st.data_pad];
  Array<IterVar> pad_axes = pad->leaf_iter_vars;  // n, c block, h, w, c
  pad.vectorize(pad_axes[4]);
  if (config.fuse_tile_rows) {
    pad.compute_at(output, block);
  } else {
    pad.parallel(pad.fuse(pad.fuse(pad_axes[0], pad_axes[1]), pad_axes[2]));
  }
  return s;
}

// Measured 2026-11-24 on this project's 2-core KVM Xeon (AVX-512, 2 MiB L2 per core), shared
// with other jobs: batch 1, float32, default configs, medians of 41 calls interleaved with
// oneDNN's direct convolution (brgconv:avx512_core, layouts chosen by oneDNN) and Loom's
// direct NCHWc convolution, in the quietest of several runs (others were up to 2x slower):
//   ResNet-18 3x3 s1     1 thread: Winograd  oneDNN  Loom direct   2 threads: Winograd  oneDNN
//   C=K=64  56x56                  0.62 ms   1.52    1.64                     0.69      1.36
//   C=K=128 28x28                  0.80 ms   1.55    1.67                     0.36      0.85
//   C=K=256 14x14                  0.73 ms   1.29    1.38                     0.45      0.97
//   C=K=512 7x7                    2.34 ms   1.70    1.84                     0.98      1.12
// At 7x7 the 4 tiles do not pay for the transformed weight (36 / 9 = 4 times the direct
// weight: 38 MB at 512 channels, streamed once per call), so Winograd needs 16 tiles or
// more (14x14 and larger at batch 1).
bool PreferWinograd(const Conv2DWorkload& workload) {
  const Conv2DAttrs& a = workload.attrs;
  if (workload.r != 3 || workload.s != 3 || a.strides != std::array<int64_t, 2>{1, 1} ||
      a.dilations != std::array<int64_t, 2>{1, 1} || a.groups != 1 || workload.k % kLanes != 0 ||
      workload.c < kLanes) {
    return false;
  }
  return workload.n * detail::CeilDiv(workload.out_h(), kTileSize) *
             detail::CeilDiv(workload.out_w(), kTileSize) >=
         16;
}

}  // namespace loom::topi::x86
