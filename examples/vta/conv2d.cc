// VTA's "2D Convolution Optimization" tutorial, through Loom: a 3x3 convolution of a 14x14 image
// with 256 int8 channels into 256 channels (batch 1, padding 1, stride 1), accumulated in int32,
// shifted right by 8 and clipped to [0, 127] by the ALU, stored as int8. Tensors are in VTA's
// blocked layouts: data[1][16][14][14][1][16] (N/1, C/16, H, W, n, c), kernel[16][16][3][3][16]
// [16] (O/16, I/16, KH, KW, o, i), result like data.
//
//   vta_conv2d [--print-ir] [--print-insn] [--no-virtual-threads]
//
// The schedule: the output in tiles of 4 channel blocks (64 channels) by the whole 14x14 image;
// per block of 16 input channels, the padded input tile (16x16 pixels, the padding inferred from
// the pad stage: dma_copy) and the tile's weights are loaded, and the GEMM intrinsic runs over
// the tile's 3x3 window. The shift and clips run on the accumulator (alu), the tile is stored
// (dma_copy). The four output tiles are split between two co-processor virtual threads. (The
// tutorial tiles the image in halves of 7 rows; a tile's padding then depends on which half it
// is, and Loom's DMA injection only infers constant padding, so a tile here holds all 14 rows.)
#include <algorithm>

#include "loom/ir/expr_ops.h"
#include "loom/te/schedule.h"
#include "loom/topi/transform.h"
#include "vta_example.h"

using namespace loom;
using namespace loom::vta;

namespace {

constexpr int kSize = 14, kBlocks = 16, kKernel = 3;  // image size, channel blocks, window
constexpr int kTileBlocks = 4;                        // output channel blocks per tile

struct Conv2d {
  Environment env{VTAConfig::Default()};
  te::Tensor data, kernel, data_buf, kernel_buf, conv, shr, low, high, res;
  IterVar ic, dy, dx, ic_tns;

  Conv2d() {
    const DataType i8 = DataType::Int(8), i32 = DataType::Int(32);
    data = te::placeholder({1, kBlocks, kSize, kSize, 1, 16}, i8, "data");
    kernel = te::placeholder({kBlocks, kBlocks, kKernel, kKernel, 16, 16}, i8, "kernel");
    data_buf = topi::pad(data, {0, 0, 1, 1, 0, 0}, {0, 0, 1, 1, 0, 0});
    kernel_buf = te::compute(
        {kBlocks, kBlocks, kKernel, kKernel, 16, 16},
        [&](const Array<Var>& i) { return kernel(i); }, "kernel_buf");
    ic = te::reduce_axis(Range(0, kBlocks), "ic");
    dy = te::reduce_axis(Range(0, kKernel), "dy");
    dx = te::reduce_axis(Range(0, kKernel), "dx");
    ic_tns = te::reduce_axis(Range(0, 16), "ic_tns");
    conv = te::compute(
        {1, kBlocks, kSize, kSize, 1, 16},
        [&](const Array<Var>& i) {
          return te::sum(
              cast(i32,
                   data_buf(i[0], ic->var, i[2] + dy->var, i[3] + dx->var, i[4], ic_tns->var)) *
                  cast(i32, kernel_buf(i[1], ic->var, dy->var, dx->var, i[5], ic_tns->var)),
              {ic, dy, dx, ic_tns});
        },
        "conv");
    auto elementwise = [&](const char* name, auto f) {
      return te::compute({1, kBlocks, kSize, kSize, 1, 16}, f, name);
    };
    shr = elementwise("shr", [&](const Array<Var>& i) {
      return call_intrin(i32, "shift_right", {conv(i), IntImm(i32, 8)});
    });
    low = elementwise("low", [&](const Array<Var>& i) { return max(shr(i), 0); });
    high = elementwise("high", [&](const Array<Var>& i) { return min(low(i), 127); });
    res = elementwise("res", [&](const Array<Var>& i) { return cast(i8, high(i)); });
  }

  te::Schedule Scheduled(bool virtual_threads) const {
    te::Schedule s = te::create_schedule({res.op()});
    te::Stage r = s[res];
    // Output tiles of kTileBlocks channel blocks by the whole image.
    auto [oc_out, oc_inn] = r.split(r->leaf_iter_vars[1], kTileBlocks);
    if (virtual_threads) {
      auto [tx, tiles] = r.split_by_nparts(oc_out, 2);
      r.bind(tx, te::thread_axis("cthread"));
      oc_out = tiles;
    }
    for (const te::Tensor& t : {conv, shr, low, high}) {
      s[t].set_scope(Environment::kAccScope);
      s[t].compute_at(r, oc_out);
    }
    // The convolution: per block of input channels, over the tile's channels, rows, the
    // window and columns, with the 16x16 product innermost (the GEMM intrinsic).
    te::Stage c = s[conv];
    const Array<IterVar> axis = c->root_iter_vars;
    c.reorder({ic, axis[0], axis[1], axis[2], dy, dx, axis[3], axis[4], axis[5], ic_tns});
    s[data_buf].set_scope(Environment::kInpScope);
    s[kernel_buf].set_scope(Environment::kWgtScope);
    s[data_buf].compute_at(c, ic);
    s[kernel_buf].compute_at(c, ic);
    s[data_buf].pragma(s[data_buf]->leaf_iter_vars[0], Environment::kDmaCopy);
    s[kernel_buf].pragma(s[kernel_buf]->leaf_iter_vars[0], Environment::kDmaCopy);
    for (const te::Tensor& t : {shr, low, high}) {
      s[t].pragma(s[t]->leaf_iter_vars[0], Environment::kAlu);
    }
    r.pragma(oc_inn, Environment::kDmaCopy);
    c.tensorize(axis[4], env.gemm());
    return s;
  }
};

}  // namespace

int main(int argc, char** argv) {
  return example::Main(
      argc, argv, example::kNoVirtualThreadsFlag, [](const example::Options& options) {
        const Conv2d g;
        runtime::Module module = example::Compile(g.env, g.Scheduled(options.virtual_threads),
                                                  {g.data, g.kernel, g.res}, "conv2d", options);

        runtime::NDArray data = example::RandomInt8(example::ShapeOf(g.data), -128, 127, 5);
        runtime::NDArray kernel = example::RandomInt8(example::ShapeOf(g.kernel), -128, 127, 6);
        runtime::NDArray res =
            runtime::NDArray::Empty(example::ShapeOf(g.res), DataType::Int(8), example::kVta);
        example::RunAndReport(module, "conv2d", options, example::ToDevice(data),
                              example::ToDevice(kernel), res);

        const auto* dv = static_cast<const int8_t*>(data->data);
        const auto* kv = static_cast<const int8_t*>(kernel->data);
        auto pixel = [&](int c, int y, int x, int lane) {
          if (y < 0 || y >= kSize || x < 0 || x >= kSize) return 0;
          return int{dv[((c * kSize + y) * kSize + x) * 16 + lane]};
        };
        std::vector<int8_t> expected(kBlocks * kSize * kSize * 16);
        for (int co = 0; co < kBlocks; ++co) {
          for (int y = 0; y < kSize; ++y) {
            for (int x = 0; x < kSize; ++x) {
              for (int o = 0; o < 16; ++o) {
                int32_t sum = 0;
                for (int ci = 0; ci < kBlocks; ++ci) {
                  for (int ky = 0; ky < kKernel; ++ky) {
                    for (int kx = 0; kx < kKernel; ++kx) {
                      const int8_t* w =
                          kv +
                          ((((co * kBlocks + ci) * kKernel + ky) * kKernel + kx) * 16 + o) * 16;
                      for (int i = 0; i < 16; ++i)
                        sum += pixel(ci, y + ky - 1, x + kx - 1, i) * w[i];
                    }
                  }
                }
                expected[((co * kSize + y) * kSize + x) * 16 + o] =
                    static_cast<int8_t>(std::clamp(sum >> 8, 0, 127));
              }
            }
          }
        }
        return example::Check(res, expected);
      });
}
