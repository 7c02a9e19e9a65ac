// Conv2DPacked + ScheduleConv2DPacked (loom/vta/compiler/conv2d.h): ResNet-18's convolution
// shapes (their channels and image sizes reduced where the simulator would take long), with
// the quantized tail of a bias, a rounding shift, a clip or ReLU and an optional residual, run on
// the simulator with the hazard checker on and compared bit for bit with a CPU reference.
#include "loom/vta/compiler/conv2d.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "conv_workload.h"
#include "error_of.h"
#include "hazard_checked_test.h"
#include "loom/ir/expr_ops.h"
#include "loom/te/operation.h"
#include "loom/vta/compiler/passes.h"
#include "vta_example.h"

namespace loom::vta {
namespace {

using loom::testing::ErrorOf;

const DataType kI8 = DataType::Int(8), kI32 = DataType::Int(32);

// The tail the graph's quantized convolutions end in: + bias, + 2^(shift-1), >> shift, then
// clipped to [low, 127] (low 0: ReLU), optionally + a residual (int8, widened) before the clip.
struct Tail {
  int shift = 8;
  int low = -127;
  bool residual = false;
};

Array<PrimExpr> Shape(std::initializer_list<int64_t> extents) {
  Array<PrimExpr> shape;
  for (int64_t e : extents) shape.push_back(PrimExpr(static_cast<int>(e)));
  return shape;
}

struct Built {
  te::Tensor data, kernel, bias, residual, out;
};

Built BuildConv(const Environment& env, const Conv2DWorkload& w, const Tail& tail) {
  const int64_t b = env.batch(), bi = env.block_in(), bo = env.block_out();
  Built g;
  g.data = te::placeholder(Shape({w.batch / b, w.in_channels / bi, w.height, w.width, b, bi}), kI8,
                           "data");
  g.kernel = te::placeholder(
      Shape({w.out_channels / bo, w.in_channels / bi, w.kernel_h, w.kernel_w, bo, bi}), kI8,
      "kernel");
  g.bias = te::placeholder(Shape({1, w.out_channels / bo, 1, 1, 1, bo}), kI32, "bias");
  te::Tensor conv = Conv2DPacked(g.data, g.kernel, w, env.acc_dtype());
  const Array<PrimExpr> shape = conv.shape();
  auto stage = [&](const char* name, auto f) { return te::compute(shape, f, name); };
  te::Tensor bias = te::compute(g.bias.shape(), [&](const Array<Var>& i) { return g.bias(i); },
                                "bias_acc");
  te::Tensor biased = stage("biased", [&](const Array<Var>& i) {
    return conv(i) + bias(0, i[1], 0, 0, 0, i[5]);
  });
  te::Tensor rounded = stage("rounded", [&](const Array<Var>& i) {
    return biased(i) + make_const(kI32, int64_t{1} << (tail.shift - 1));
  });
  te::Tensor shifted = stage("shifted", [&](const Array<Var>& i) {
    return call_intrin(kI32, "shift_right", {rounded(i), make_const(kI32, int64_t{tail.shift})});
  });
  te::Tensor summed = shifted;
  if (tail.residual) {
    g.residual = te::placeholder(shape, kI8, "residual");
    te::Tensor wide = stage("residual_wide", [&](const Array<Var>& i) {
      return cast(kI32, g.residual(i));
    });
    summed = stage("summed", [&](const Array<Var>& i) { return shifted(i) + wide(i); });
  }
  te::Tensor high = stage("high", [&](const Array<Var>& i) { return min(summed(i), 127); });
  te::Tensor low = stage("low", [&](const Array<Var>& i) { return max(high(i), tail.low); });
  g.out = stage("out", [&](const Array<Var>& i) { return cast(kI8, low(i)); });
  return g;
}

runtime::NDArray Random(const te::Tensor& t, int low, int high, unsigned seed) {
  runtime::NDArray host = runtime::NDArray::Empty(example::ShapeOf(t), t.dtype(), example::kCpu);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> value(low, high);
  for (int64_t k = 0; k < host.NumElements(); ++k) {
    if (t.dtype() == kI8) {
      static_cast<int8_t*>(host->data)[k] = static_cast<int8_t>(value(rng));
    } else {
      static_cast<int32_t*>(host->data)[k] = value(rng);
    }
  }
  return host;
}

// The convolution and its tail on the CPU, in the blocked layouts (batch block 1).
std::vector<int8_t> Reference(const Environment& env, const Conv2DWorkload& w, const Tail& tail,
                              const runtime::NDArray& data, const runtime::NDArray& kernel,
                              const runtime::NDArray& bias, const runtime::NDArray* residual) {
  const int64_t bi = env.block_in(), bo = env.block_out();
  const int64_t ib = w.in_channels / bi, ob = w.out_channels / bo;
  const int64_t oh = w.out_height(), ow = w.out_width();
  const auto* d = static_cast<const int8_t*>(data->data);
  const auto* k = static_cast<const int8_t*>(kernel->data);
  const auto* bv = static_cast<const int32_t*>(bias->data);
  std::vector<int8_t> out(ob * oh * ow * bo);
  for (int64_t o = 0; o < ob; ++o) {
    for (int64_t y = 0; y < oh; ++y) {
      for (int64_t x = 0; x < ow; ++x) {
        for (int64_t lane = 0; lane < bo; ++lane) {
          int32_t sum = 0;
          for (int64_t c = 0; c < ib; ++c) {
            for (int64_t ky = 0; ky < w.kernel_h; ++ky) {
              for (int64_t kx = 0; kx < w.kernel_w; ++kx) {
                const int64_t iy = y * w.stride_h + ky - w.pad_h, ix = x * w.stride_w + kx - w.pad_w;
                if (iy < 0 || iy >= w.height || ix < 0 || ix >= w.width) continue;
                for (int64_t i = 0; i < bi; ++i) {
                  sum += int32_t{d[((c * w.height + iy) * w.width + ix) * bi + i]} *
                         k[((((o * ib + c) * w.kernel_h + ky) * w.kernel_w + kx) * bo + lane) * bi + i];
                }
              }
            }
          }
          const int64_t at = ((o * oh + y) * ow + x) * bo + lane;
          int32_t v = (sum + bv[o * bo + lane] + (1 << (tail.shift - 1))) >> tail.shift;
          if (residual) v += static_cast<const int8_t*>((*residual)->data)[at];
          out[at] = static_cast<int8_t>(std::clamp(v, tail.low, 127));
        }
      }
    }
  }
  return out;
}

class VtaConv2D : public testing::HazardCheckedTest {
 protected:
  // Builds, runs and checks `w` with `tail` under `tiling` (the default when rows is 0);
  // returns the run's report.
  SimReport Check(const Conv2DWorkload& w, const Tail& tail, Conv2DTiling tiling = {0, 0, 0}) {
    const Environment env(VTAConfig::Default());
    Built g = BuildConv(env, w, tail);
    if (tiling.rows == 0) tiling = DefaultConv2DTiling(env, w, TailAccOperands(g.out));
    EXPECT_EQ(TailAccOperands(g.out), tail.residual ? 1 : 0);
    Array<te::Tensor> args = {g.data, g.kernel, g.bias};
    if (tail.residual) args.push_back(g.residual);
    args.push_back(g.out);
    runtime::Module module =
        build(lower(env, ScheduleConv2DPacked(env, g.out, tiling), args, "conv"),
              Target::Parse("vta"));
    runtime::NDArray data = Random(g.data, -128, 127, 1), kernel = Random(g.kernel, -128, 127, 2);
    runtime::NDArray bias = Random(g.bias, -20000, 20000, 3);
    runtime::NDArray residual;
    if (tail.residual) residual = Random(g.residual, -128, 127, 4);
    runtime::NDArray out =
        runtime::NDArray::Empty(example::ShapeOf(g.out), kI8, example::kVta);
    if (tail.residual) {
      module.GetFunction("conv")(example::ToDevice(data), example::ToDevice(kernel),
                                 example::ToDevice(bias), example::ToDevice(residual), out);
    } else {
      module.GetFunction("conv")(example::ToDevice(data), example::ToDevice(kernel),
                                 example::ToDevice(bias), out);
    }
    ThrowIfLastError();
    runtime::NDArray host = example::ToHost(out);
    std::vector<int8_t> got(example::Values(host), example::Values(host) + host.NumElements());
    EXPECT_EQ(got, Reference(env, w, tail, data, kernel, bias, tail.residual ? &residual : nullptr))
        << "tiling: " << tiling.rows << " rows, " << tiling.oc_blocks << " channel blocks, "
        << tiling.virtual_threads << " threads";
    return LastRun(VTATLSCommandHandle()).report;
  }
};

using loom::vta::testing::Conv;

// A 3x3 convolution over an image larger than one tile: tiles of rows whose padding differs
// (the first and last row tiles padded, the middle ones not).
TEST_F(VtaConv2D, ThreeByThreeInTilesOfRowsWithReLU) {
  SimReport report = Check(Conv(32, 32, 56, 3, 1), {.shift = 9, .low = 0}, {14, 1, 2});
  EXPECT_GT(report.counters.gemm_counter, 0u);
}

// ResNet-18's strided 3x3 and strided 1x1 (downsampling) convolutions.
TEST_F(VtaConv2D, StridedThreeByThreeAndOneByOne) {
  Check(Conv(32, 64, 28, 3, 2), {.shift = 10, .low = 0});
  Check(Conv(32, 64, 28, 1, 2), {.shift = 7});
}

// A residual block's second convolution: + the block's input (int8, widened as it is LOADed
// into the accumulator) before the clip.
TEST_F(VtaConv2D, ResidualAddThroughEightBitAccumulatorLoads) {
  Check(Conv(64, 64, 14, 3, 1), {.shift = 9, .low = 0, .residual = true});
}

// Every default tiling fits, and different tilings of one convolution agree.
TEST_F(VtaConv2D, TilingsAgree) {
  const Conv2DWorkload w = Conv(32, 64, 14, 3, 1);
  for (Conv2DTiling t : {Conv2DTiling{14, 4, 1}, Conv2DTiling{7, 2, 2}, Conv2DTiling{2, 1, 2},
                         Conv2DTiling{1, 4, 1}}) {
    Check(w, {.shift = 8}, t);
  }
}

// The default tiling of each of ResNet-18's convolutions fits the default configuration.
TEST(VtaConv2DTiling, ResNet18LayersFitTheDefaultConfiguration) {
  const Environment env(VTAConfig::Default());
  for (const Conv2DWorkload& w :
       {Conv(64, 64, 56, 3, 1), Conv(64, 128, 56, 3, 2), Conv(64, 128, 56, 1, 2),
        Conv(128, 128, 28, 3, 1), Conv(128, 256, 28, 3, 2), Conv(256, 256, 14, 3, 1),
        Conv(256, 512, 14, 3, 2), Conv(512, 512, 7, 3, 1)}) {
    for (int64_t operands : {0, 1}) {
      const Conv2DTiling t = DefaultConv2DTiling(env, w, operands);
      const Conv2DFootprint f = FootprintOf(w, t, operands);
      EXPECT_LE(f.inp, env.Memory(Environment::kInpScope).depth);
      EXPECT_LE(f.wgt, env.Memory(Environment::kWgtScope).depth);
      EXPECT_LE(f.acc, env.Memory(Environment::kAccScope).depth);
      EXPECT_EQ(w.out_height() % t.rows, 0);
    }
  }
}

TEST(VtaConv2DTiling, ChannelsOutsideWholeBlocksAreAUserError) {
  const Environment env(VTAConfig::Default());
  EXPECT_NE(ErrorOf([&] { DefaultConv2DTiling(env, Conv(3, 64, 224, 7, 2), 0); })
                .find("channels must come in whole blocks"),
            std::string::npos);
}

}  // namespace
}  // namespace loom::vta
