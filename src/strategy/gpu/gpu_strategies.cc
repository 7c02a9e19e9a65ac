// The GPU implementations (key "gpu": the cuda and opencl targets). Every operator has one:
// the generic schedule of topi/gpu/schedule.h (one thread per output element, or one block
// per output of a long reduction) takes whatever nothing more specific does; a matrix
// product (dense, matmul, batch_matmul, with its epilogue) large enough gets the
// shared-memory tiling of topi/gpu/matmul.h, or, of float16 / bfloat16 operands summed in
// float32 on a target with tensor cores for them (--precision fp16 on cuda -arch=sm_70 and
// up, bf16 on sm_80 and up), the tensor-core schedule of topi/gpu/tensor_core.h; a conv2d of
// one group large enough the same tiling as an implicit matrix product, a depthwise conv2d
// its input through shared memory, and another conv2d (with its epilogue) the direct
// schedule of topi/gpu/conv2d.h. In AlterOpLayout, a dense layer of a constant weight large
// enough to tile becomes a matmul of the weight transposed at compile time; with
// -conv2d-winograd, a 3x3 conv2d of stride 1 and one group becomes Winograd F(4x4, 3x3)
// (topi/gpu/conv2d_winograd.h): its weight transformed by an operator that FoldConstant
// computes when the weight is a constant.
#include <algorithm>
#include <optional>

#include "loom/graph/op_util.h"
#include "loom/graph/strategy.h"
#include "loom/topi/gpu/conv2d.h"
#include "loom/topi/gpu/conv2d_winograd.h"
#include "loom/topi/gpu/matmul.h"
#include "loom/topi/gpu/schedule.h"
#include "loom/topi/gpu/tensor_core.h"

namespace loom::strategy::gpu {
namespace {

using graph::CallInfo;
using Tensors = std::vector<te::Tensor>;

// Threads per block of the generic schedule: 256, or fewer where the target allows fewer.
int ThreadsPerBlock(const Target& target) {
  return static_cast<int>(std::min<int64_t>(256, target.GetInt("max-threads-per-block")));
}

// The master call's constant output shape when the group has one output of that shape (the
// call's, or an elementwise epilogue's, of any type: an epilogue may round the result for the
// next product, as --precision's casts do); else nothing.
std::optional<std::vector<int64_t>> GroupShape(const CallInfo& info, const Tensors& outputs) {
  std::optional<std::vector<int64_t>> shape = info.output_type.ConstShape();
  if (outputs.size() != 1 || !shape ||
      !graph::Equal(graph::TensorType(outputs[0].shape(), outputs[0].dtype()),
                    graph::TensorType(info.output_type.shape(), outputs[0].dtype()))) {
    return std::nullopt;
  }
  return shape;
}

// Whether a product of `rows` x `columns` holds at least one full tile each way.
bool HoldsTile(int64_t rows, int64_t columns, const topi::gpu::MatmulTiling& t) {
  return rows >= t.threads_y * t.rows_per_thread && columns >= t.threads_x * t.cols_per_thread;
}

// CUDA's limit on a grid's y and z extents (x allows 2^31 - 1).
constexpr int64_t kMaxGridYZ = 65535;

// Whether a product's grid fits: its batch dimensions (all but the last two of `shape`, fused
// into blockIdx.z) and its blocks of `block_rows` rows (blockIdx.y).
bool ProductGridFits(const std::vector<int64_t>& shape, int64_t block_rows) {
  int64_t batch = 1;
  for (size_t d = 0; d + 2 < shape.size(); ++d) batch *= shape[d];
  return batch <= kMaxGridYZ &&
         (shape[shape.size() - 2] + block_rows - 1) / block_rows <= kMaxGridYZ;
}

// Whether a tiling's block fits the target: its threads, and shared tiles of `shared_bytes`.
bool FitsTarget(const topi::gpu::MatmulTiling& t, int64_t shared_bytes, const Target& target) {
  return t.threads_x * t.threads_y <= target.GetInt("max-threads-per-block") &&
         shared_bytes <= target.GetInt("max-shared-memory-per-block");
}

// The bytes of one element of input `i` of the call (what its shared tiles hold).
int64_t OperandBytes(const CallInfo& info, size_t i) {
  return (info.input_types[i].dtype().bits() + 7) / 8;
}

// The shared memory of a product's two tiles per step: tile_k x the block's rows of the rows
// operand and tile_k x its columns of the columns operand, of those bytes per element.
int64_t ProductTileBytes(const topi::gpu::MatmulTiling& t, int64_t row_bytes,
                         int64_t column_bytes) {
  return t.tile_k * (t.threads_y * t.rows_per_thread * row_bytes +
                     t.threads_x * t.cols_per_thread * column_bytes);
}

// Whether the group (a product, with or without an elementwise epilogue of its shape) is a
// float32 product of two operands of at least two dimensions, whose last two dimensions hold
// a tile, whose batch fits a grid's z extent and whose tiles fit the target.
bool TilesProduct(const CallInfo& info, const Tensors& outputs, const topi::gpu::MatmulTiling& t,
                  const Target& target) {
  std::optional<std::vector<int64_t>> shape = GroupShape(info, outputs);
  if (!shape || shape->size() < 2 || info.output_type.dtype() != DataType::Float(32) ||
      info.input_types.size() != 2) {
    return false;
  }
  for (const graph::Type& input : info.input_types) {
    std::optional<std::vector<int64_t>> input_shape = input.ConstShape();
    if (!input_shape || input_shape->size() < 2) return false;
  }
  return HoldsTile((*shape)[shape->size() - 2], shape->back(), t) &&
         ProductGridFits(*shape, t.threads_y * t.rows_per_thread) &&
         FitsTarget(t, ProductTileBytes(t, OperandBytes(info, 0), OperandBytes(info, 1)), target);
}

// 16 x 16 threads of 4 x 4 elements each, steps of 8 along the reduction: the best of the
// tilings scripts/gpu-check.sh measured at 1024^3 on an H200, and within 6% of the best at
// 4096^3.
constexpr topi::gpu::MatmulTiling kDefaultTiling{16, 16, 4, 4, 8};

graph::OpImplementation TiledProduct() {
  return {.name = "gpu.matmul_shared_tiled",
          .priority = 10,
          .applies =
              [](const CallInfo& info, const Tensors& outputs, const Target& target) {
                return TilesProduct(info, outputs, kDefaultTiling, target);
              },
          .schedule =
              [](const CallInfo&, const Tensors& outputs, const Target&) {
                return topi::gpu::schedule_matmul_shared(outputs[0], kDefaultTiling);
              }};
}

// Tensor-core tilings, the first whose tiles the product divides into: blocks of 64 x 64
// (2 x 2 warps of 2 x 2 tiles of 16 x 16) over steps of 32, else 32 x 32 over steps of 16.
// Not yet timed on a GPU (scripts/gpu-check.sh sweeps others).
constexpr topi::gpu::TensorCoreTiling kTensorCoreTilings[] = {{2, 2, 2, 2, 2}, {2, 2, 1, 1, 1}};

// The tensor-core tiling of the group: a product (with or without an elementwise epilogue of
// its shape, which may round the result for the next product: --precision's casts) of
// two float16 or bfloat16 operands of at least two dimensions summed in float32, on a target
// with tensor cores for them, whose sizes divide into one of kTensorCoreTilings that fits the
// target; else nothing.
std::optional<topi::gpu::TensorCoreTiling> TensorCoreTilingOf(const CallInfo& info,
                                                              const Tensors& outputs,
                                                              const Target& target) {
  std::optional<std::vector<int64_t>> shape = GroupShape(info, outputs);
  if (!shape || shape->size() < 2 || info.output_type.dtype() != DataType::Float(32) ||
      info.input_types.size() != 2 || info.input_types[0].dtype() != info.input_types[1].dtype()) {
    return std::nullopt;
  }
  std::optional<std::vector<int64_t>> a = info.input_types[0].ConstShape();
  std::optional<std::vector<int64_t>> b = info.input_types[1].ConstShape();
  if (!target.HasTensorCores(info.input_types[0].dtype()) || !a || !b || a->size() < 2 ||
      b->size() < 2) {
    return std::nullopt;
  }
  const int64_t operand_bytes = OperandBytes(info, 0);
  for (const topi::gpu::TensorCoreTiling& tiling : kTensorCoreTilings) {
    if (topi::gpu::TensorCoreTilingFits((*shape)[shape->size() - 2], shape->back(), a->back(),
                                        tiling) &&
        ProductGridFits(*shape, tiling.block_rows()) &&
        tiling.threads() <= target.GetInt("max-threads-per-block") &&
        tiling.shared_bytes(operand_bytes) <= target.GetInt("max-shared-memory-per-block")) {
      return tiling;
    }
  }
  return std::nullopt;
}

graph::OpImplementation TensorCoreProduct() {
  return {.name = "gpu.matmul_tensor_core",
          .priority = 20,
          .applies =
              [](const CallInfo& info, const Tensors& outputs, const Target& target) {
                return TensorCoreTilingOf(info, outputs, target).has_value();
              },
          .schedule =
              [](const CallInfo& info, const Tensors& outputs, const Target& target) {
                return topi::gpu::schedule_matmul_tensor_core(
                    outputs[0], *TensorCoreTilingOf(info, outputs, target));
              }};
}

// Channels per thread: 8 where they divide the output channels (a remainder would be guarded
// in every thread) and the launch keeps at least the target's -parallel-threads threads; else
// 1, and the generic schedule takes the layer (more threads, no idle lanes in small images).
// Measured on an H200 (scripts/gpu-check.sh, ResNet-18): 8 channels per thread ran the layers
// of 100352 and 25088 such threads 1.4-3.6x faster than one thread per output, those of
// 12544 no faster, and those of 6272 and 3136 2.0-2.2x slower.
int ChannelsPerThread(const std::vector<int64_t>& shape, const Target& target) {
  constexpr int kChannels = 8;
  const int64_t outputs = shape[0] * shape[1] * shape[2] * shape[3];
  const bool busy = outputs / kChannels >= target.GetInt("parallel-threads");
  return shape[1] % kChannels == 0 && busy ? kChannels : 1;
}

// Pixels per block: the output's pixels rounded up to a warp, 128 at most.
int PixelsPerBlock(int64_t pixels, const Target& target) {
  const int64_t warps = (pixels + 31) / 32;
  return static_cast<int>(std::min<int64_t>(
      {warps * 32, 128, target.GetInt("max-threads-per-block")}));
}

graph::OpImplementation DirectConv2D() {
  return {
      .name = "gpu.conv2d_nchw_direct",
      .priority = 10,
      .applies =
          [](const CallInfo& info, const Tensors& outputs, const Target& target) {
            std::optional<std::vector<int64_t>> shape = GroupShape(info, outputs);
            return shape && shape->size() == 4 && ChannelsPerThread(*shape, target) > 1;
          },
      .schedule =
          [](const CallInfo& info, const Tensors& outputs, const Target& target) {
            std::vector<int64_t> shape = *info.output_type.ConstShape();
            return topi::gpu::schedule_conv2d_nchw_direct(
                outputs[0], PixelsPerBlock(shape[2] * shape[3], target),
                ChannelsPerThread(shape, target));
          }};
}

// The elements of the input rectangle under `image_rows` output rows of `columns` pixels:
// stretched by the call's strides and its window (`weight`'s) with dilation.
int64_t InputRectangle(const CallInfo& info, const std::vector<int64_t>& weight, int64_t image_rows,
                       int64_t columns) {
  const graph::Ints& strides = info.attrs.GetInts("strides");
  const graph::Ints& dilation = info.attrs.GetInts("dilation");
  const int64_t data_rows = (image_rows - 1) * strides[0] + (weight[2] - 1) * dilation[0] + 1;
  const int64_t data_columns = (columns - 1) * strides[1] + (weight[3] - 1) * dilation[1] + 1;
  return data_rows * data_columns;
}

// The shared memory of a tiled conv2d's two tiles: the weight's (a tile's output channels x
// tile_k input channels x the window) and the data's (tile_k channels x the rectangle under a
// block's pixels, stretched by the stride and the window). A block of several image rows
// (rows of at most half a tile) may reach one row further, its strided columns covering a
// whole tile; one row of at most a tile covers the row rounded up to the threads along it.
int64_t TiledConvSharedBytes(const CallInfo& info, const std::vector<int64_t>& out,
                             const std::vector<int64_t>& weight, const topi::gpu::MatmulTiling& t) {
  const int64_t tile_rows = t.threads_y * t.rows_per_thread;
  const int64_t tile_columns = t.threads_x * t.cols_per_thread;
  const int64_t row_length = out[3];
  const int64_t rows_per_tile = tile_columns / row_length;
  const int64_t image_rows = rows_per_tile > 1 ? rows_per_tile + 1 : 1;
  const int64_t columns =
      rows_per_tile > 1
          ? row_length
          : std::min(tile_columns, (row_length + t.threads_x - 1) / t.threads_x * t.threads_x);
  return t.tile_k * (tile_rows * weight[2] * weight[3] * OperandBytes(info, 1) +
                     InputRectangle(info, weight, image_rows, columns) * OperandBytes(info, 0));
}

// The blocks along a tiled conv2d's grid z: images x groups of image rows.
int64_t TiledConvBatchBlocks(const std::vector<int64_t>& out, const topi::gpu::MatmulTiling& t) {
  const int64_t rows_per_tile = t.threads_x * t.cols_per_thread / out[3];
  return out[0] * (rows_per_tile > 1 ? (out[2] + rows_per_tile - 1) / rows_per_tile : out[2]);
}

// A float32 conv2d group's output and weight shapes (an epilogue keeping the output's), or
// nothing.
struct ConvShapes {
  std::vector<int64_t> output, weight;
};
std::optional<ConvShapes> Float32ConvShapes(const CallInfo& info, const Tensors& outputs) {
  std::optional<std::vector<int64_t>> shape = GroupShape(info, outputs);
  std::optional<std::vector<int64_t>> weight =
      info.input_types.size() == 2 ? info.input_types[1].ConstShape() : std::nullopt;
  if (!shape || shape->size() != 4 || !weight || weight->size() != 4 ||
      info.output_type.dtype() != DataType::Float(32)) {
    return std::nullopt;
  }
  return ConvShapes{*shape, *weight};
}

// The tiling of the tiled conv2d: the products' default, strided (each thread's pixels strided
// by the threads, as schedule_conv2d_nchw_tiled needs).
constexpr topi::gpu::MatmulTiling kConvTiling{16, 16, 4, 4, 8, /*strided=*/true};

// A float32 conv2d of one group whose output channels and pixels hold a tile and whose tiles
// fit the target's shared memory: a matrix product per image (weight x the data's windows),
// tiled through shared memory as the products are. Preferred to the direct schedule for its
// reuse (each element fetched into shared memory feeds a whole tile's rows or columns); not
// yet timed against it on a GPU.
graph::OpImplementation TiledConv2D() {
  return {.name = "gpu.conv2d_nchw_tiled",
          .priority = 20,
          .applies =
              [](const CallInfo& info, const Tensors& outputs, const Target& target) {
                std::optional<ConvShapes> conv = Float32ConvShapes(info, outputs);
                if (!conv || !target.GetBool("conv2d-tiled") || info.attrs.GetInt("groups") != 1) {
                  return false;
                }
                const std::vector<int64_t>& out = conv->output;
                return HoldsTile(out[1], out[2] * out[3], kConvTiling) &&
                       TiledConvBatchBlocks(out, kConvTiling) <= kMaxGridYZ &&
                       FitsTarget(kConvTiling,
                                  TiledConvSharedBytes(info, out, conv->weight, kConvTiling),
                                  target);
              },
          .schedule =
              [](const CallInfo&, const Tensors& outputs, const Target&) {
                return topi::gpu::schedule_conv2d_nchw_tiled(outputs[0], kConvTiling);
              }};
}

// The shared memory of the depthwise schedule's input rectangle: under a block of whole
// rows (as many as `threads` hold) or `threads` columns of one, stretched by the stride and
// the window.
int64_t DepthwiseSharedBytes(const CallInfo& info, const std::vector<int64_t>& out,
                             const std::vector<int64_t>& weight, int64_t threads) {
  const int64_t row_length = out[3];
  const int64_t rows = row_length <= threads ? threads / row_length : 1;
  return InputRectangle(info, weight, rows, std::min(row_length, threads)) * OperandBytes(info, 0);
}

// A float32 depthwise conv2d (one input channel per group) whose input rectangle fits the
// target's shared memory: each block's input fetched once into shared memory, where its
// threads' windows overlap. Not yet timed against the generic schedule on a GPU.
graph::OpImplementation DepthwiseConv2D() {
  return {.name = "gpu.depthwise_conv2d_nchw_shared",
          .priority = 15,
          .applies =
              [](const CallInfo& info, const Tensors& outputs, const Target& target) {
                std::optional<ConvShapes> conv = Float32ConvShapes(info, outputs);
                return conv && conv->weight[1] == 1 &&
                       DepthwiseSharedBytes(info, conv->output, conv->weight,
                                            ThreadsPerBlock(target)) <=
                           target.GetInt("max-shared-memory-per-block");
              },
          .schedule =
              [](const CallInfo&, const Tensors& outputs, const Target& target) {
                return topi::gpu::schedule_depthwise_conv2d_nchw_shared(outputs[0],
                                                                        ThreadsPerBlock(target));
              }};
}

// The tiles of a Winograd F(4x4, 3x3) conv2d with output `out` ([N, K, P, Q]).
int64_t WinogradTiles(const std::vector<int64_t>& out) {
  return out[0] * ((out[2] + 3) / 4) * ((out[3] + 3) / 4);
}

// The tiling of the Winograd products of a conv2d with output `out` (output channels x
// tiles, for each of the 36 transform points) whose tiles fit the target: the products'
// default where the tiles fill its 64 columns, else 64 channels x 16 tiles a block; none
// below 16 tiles (as on x86: reading the transformed weight, 4 times the weight, would cost
// more than Winograd saves) or 64 channels.
std::optional<topi::gpu::MatmulTiling> WinogradTiling(const std::vector<int64_t>& out,
                                                      const Target& target) {
  constexpr topi::gpu::MatmulTiling kNarrowTiling{16, 8, 4, 2, 8};
  for (const topi::gpu::MatmulTiling& t : {kDefaultTiling, kNarrowTiling}) {
    if (HoldsTile(out[1], WinogradTiles(out), t) &&
        FitsTarget(t, ProductTileBytes(t, 4, 4), target)) {
      return t;
    }
  }
  return std::nullopt;
}

// With -conv2d-winograd: a float32 3x3 conv2d of stride 1, dilation 1 and one group whose
// products have a tiling (WinogradTiling) as the Winograd convolution of its transformed
// weight.
std::optional<graph::LayoutRewrite> RewriteWinogradConv2D(const graph::CallNode& call,
                                                          graph::LayoutRewriteContext& context,
                                                          const Target& target) {
  if (!target.GetBool("conv2d-winograd") || call.attrs.GetInt("groups") != 1 ||
      call.attrs.GetInts("strides") != graph::Ints{1, 1} ||
      call.attrs.GetInts("dilation") != graph::Ints{1, 1}) {
    return std::nullopt;
  }
  const graph::Type& weight_type = call.args[1].type();
  std::optional<std::vector<int64_t>> weight = weight_type.ConstShape();
  std::optional<std::vector<int64_t>> out = call.checked_type.ConstShape();
  const DataType f32 = DataType::Float(32);
  if (!weight || !out || weight->size() != 4 || out->size() != 4 || (*weight)[2] != 3 ||
      (*weight)[3] != 3 || weight_type.dtype() != f32 || call.args[0].type().dtype() != f32 ||
      call.checked_type.dtype() != f32 || !WinogradTiling(*out, target)) {
    return std::nullopt;
  }
  graph::Expr transformed =
      graph::MakeCall("nn.contrib_conv2d_winograd_nchw_weight_transform", {context.Operand(1, "")});
  return graph::LayoutRewrite{
      graph::MakeCall("nn.contrib_conv2d_winograd_nchw", {context.Operand(0, ""), transformed},
                      graph::ops::WindowAttrs(call), call.name_hint),
      ""};
}

// A dense layer of a constant weight [N, K] whose output has at least 32 rows and columns
// (one tile of the smallest tiling, kTensorCoreTilings' last) as nn.matmul of the weight
// transposed once, by FoldConstant: the tiled schedules' copies into shared memory then read
// the weight along its rows, neighbouring threads neighbouring elements, where reading it
// transposed strides K elements between threads.
std::optional<graph::LayoutRewrite> RewriteDenseWeight(const graph::CallNode& call,
                                                       graph::LayoutRewriteContext& context,
                                                       const Target&) {
  constexpr int64_t kMinExtent = 32;
  std::optional<std::vector<int64_t>> out = call.checked_type.ConstShape();
  if (!graph::IsConstantExpr(call.args[1]) || !out || out->size() < 2) return std::nullopt;
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < out->size(); ++d) rows *= (*out)[d];
  if (rows < kMinExtent || out->back() < kMinExtent) return std::nullopt;
  graph::Expr transposed =
      graph::MakeCall("transpose", {context.Operand(1, "")}, {{"axes", graph::Ints{1, 0}}});
  return graph::LayoutRewrite{
      graph::MakeCall("nn.matmul", {context.Operand(0, ""), transposed},
                      {{"out_dtype", call.attrs.GetString("out_dtype")}}, call.name_hint),
      ""};
}

graph::OpImplementation WinogradConv2D() {
  return {.name = "gpu.conv2d_nchw_winograd",
          .priority = 10,
          .applies =
              [](const CallInfo& info, const Tensors& outputs, const Target& target) {
                std::optional<std::vector<int64_t>> shape = GroupShape(info, outputs);
                return shape && WinogradTiling(*shape, target);
              },
          .schedule =
              [](const CallInfo& info, const Tensors& outputs, const Target& target) {
                return topi::gpu::schedule_conv2d_nchw_winograd(
                    outputs[0], *WinogradTiling(*info.output_type.ConstShape(), target),
                    ThreadsPerBlock(target));
              }};
}

void RegisterWinogradOps() {
  using graph::OpPattern;
  // Opaque: a model's weights are constants, so FoldConstant computes it at compile time.
  graph::ops::RegisterComputedOp("nn.contrib_conv2d_winograd_nchw_weight_transform",
                                 [](const CallInfo&, const Tensors& in) {
                                   return Tensors{topi::gpu::winograd_weight_transform_nchw(in[0])};
                                 })
      .Describe("a 3x3 OIHW weight as Winograd F(4x4, 3x3)'s [6, 6, C, K] (GPU targets)")
      .Inputs({"weight"})
      .Pattern(OpPattern::kOpaque);
  graph::OpBuilder winograd = graph::ops::RegisterComputedOp(
      "nn.contrib_conv2d_winograd_nchw", [](const CallInfo& info, const Tensors& in) {
        return Tensors{
            topi::gpu::conv2d_nchw_winograd(in[0], in[1], graph::ops::Conv2DAttrsOf(info, 1))};
      });
  winograd.Describe("Winograd F(4x4, 3x3) conv2d of NCHW data (GPU targets)")
      .Inputs({"data", "transformed_weight"})
      .Pattern(OpPattern::kOutEWiseFusable);
  graph::ops::ConvAttrFields(winograd);
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterWinogradOps();
  graph::RegisterLayoutRewrite("nn.conv2d", "gpu", RewriteWinogradConv2D);
  graph::RegisterLayoutRewrite("nn.dense", "gpu", RewriteDenseWeight);
  graph::RegisterImplementation("nn.contrib_conv2d_winograd_nchw", "gpu", WinogradConv2D());
  graph::RegisterFallbackImplementation(
      "gpu", {.name = "gpu.generic",
              .priority = 0,
              .applies =
                  [](const CallInfo&, const Tensors& outputs, const Target&) {
                    return !topi::gpu::GenericScheduleUnsupported(
                                Array<te::Tensor>(outputs.begin(), outputs.end()))
                                .has_value();
                  },
              .schedule =
                  [](const CallInfo&, const Tensors& outputs, const Target& target) {
                    return topi::gpu::schedule_generic(
                        Array<te::Tensor>(outputs.begin(), outputs.end()),
                        {.threads_per_block = ThreadsPerBlock(target),
                         .parallel_threads = target.GetInt("parallel-threads")});
                  }});
  graph::RegisterImplementation("nn.conv2d", "gpu", DirectConv2D());
  graph::RegisterImplementation("nn.conv2d", "gpu", TiledConv2D());
  graph::RegisterImplementation("nn.conv2d", "gpu", DepthwiseConv2D());
  for (const char* op : {"nn.dense", "nn.matmul", "nn.batch_matmul"}) {
    graph::RegisterImplementation(op, "gpu", TiledProduct());
    graph::RegisterImplementation(op, "gpu", TensorCoreProduct());
  }
  // --precision bf16 / fp16 multiplies 16-bit operands where tensor cores do.
  for (DataType half : {DataType::BFloat16(), DataType::Float(16)}) {
    graph::RegisterHalfPrecisionProducts(
        "gpu", half, [half](const Target& target) { return target.HasTensorCores(half); });
  }
  return true;
}();

}  // namespace
}  // namespace loom::strategy::gpu
