// loom-bench-conv2d: Loom's conv2d against oneDNN's on every distinct convolution of
// ResNet-18 and MobileNetV2 (batch 1, 224x224, float32), in the same run.
//
//   loom-bench-conv2d [--threads 1,2] [--nets resnet18,mobilenet_v2] [--layers 3,5] [--repeat 15]
//
// Prints one line per layer as it is measured (milliseconds per call with 4 decimals, as the
// depthwise layers take about 10 us), e.g.
//   conv2d net=resnet18 layer=3 n=1 c=64 h=56 w=56 k=128 r=3 s=3 stride=2 pad=1 groups=1 threads=1 loom_ms=0.3010 onednn_ms=0.3220
// and per network and thread count the geometric mean of loom_ms / onednn_ms:
//   geomean net=resnet18 threads=1 loom_over_onednn=1.04 layers=11
//
// Both libraries get the layout they want: Loom compiles the layer with
// topi::x86::MakeConv2DKernel (its pack functions run once, untimed), oneDNN picks its
// blocked layouts (memory format `any`, algorithm convolution_auto; its reorders run once,
// untimed). Timed are only Loom's `conv` and oneDNN's convolution primitive (execute and
// stream wait). Before timing, both outputs, back in NCHW, must agree within 1e-4 of the
// largest output (plus 1e-5); a mismatch aborts the run naming the layer. Each timed
// sample is a batch of back-to-back calls lasting at least 1 ms (small layers take
// microseconds), the libraries alternate sample by sample, each sample after an untimed
// busy pause that lets both libraries' idle threads stop spinning, and a figure is the median per
// call over --repeat samples.
//
// The thread counts of both libraries are fixed when they load (LOOM_NUM_THREADS,
// OMP_NUM_THREADS), so each thread count runs in a child process started with that
// environment; each library's threads otherwise behave as by default (see kSettleTime in
// bench/common/bench_common.cc).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <iostream>
#include <oneapi/dnnl/dnnl.hpp>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "bench_common.h"
#include "conv2d_layers.h"
#include "loom/runtime/ndarray.h"
#include "loom/support/error.h"
#include "loom/target/build.h"
#include "loom/tir/analysis.h"
#include "loom/topi/x86/conv2d.h"

namespace loom::bench {
namespace {

using topi::x86::Conv2DWorkload;

constexpr double kMinSampleSeconds = 1e-3;

// An array shaped and typed as parameter `index` of `func`.
runtime::NDArray ArrayForParam(const PrimFunc& func, size_t index) {
  return runtime::NDArray::Empty(tir::ConstParamShape(func, index),
                                 tir::ParamBuffer(func, index)->dtype);
}

void FillUniform(float* data, int64_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t x = 0; x < count; ++x) data[x] = dist(rng);
}

// oneDNN's convolution of one layer, its inputs already in the layouts it chose.
class OneDnnConv2D {
 public:
  OneDnnConv2D(const Conv2DWorkload& workload, const float* data, const float* weight)
      : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {
    using dnnl::memory;
    const Conv2DWorkload& l = workload;
    const int64_t groups = l.attrs.groups;
    memory::dims src_dims{l.n, l.c, l.h, l.w};
    memory::dims weight_dims = groups > 1
                                   ? memory::dims{groups, l.k / groups, l.c / groups, l.r, l.s}
                                   : memory::dims{l.k, l.c, l.r, l.s};
    dst_dims_ = {l.n, l.k, l.out_h(), l.out_w()};
    auto any = [](const memory::dims& dims) {
      return memory::desc(dims, memory::data_type::f32, memory::format_tag::any);
    };
    dnnl::convolution_forward::desc desc(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_auto, any(src_dims),
        any(weight_dims), any(dst_dims_), {l.attrs.strides[0], l.attrs.strides[1]},
        // oneDNN counts dilation from 0 (a dense kernel), Loom from 1.
        {l.attrs.dilations[0] - 1, l.attrs.dilations[1] - 1}, {l.attrs.pads[0], l.attrs.pads[1]},
        {l.attrs.pads[2], l.attrs.pads[3]});
    dnnl::convolution_forward::primitive_desc chosen(desc, engine_);
    conv_ = dnnl::convolution_forward(chosen);
    src_ = Reordered(src_dims, memory::format_tag::nchw, data, chosen.src_desc());
    weight_ =
        Reordered(weight_dims, groups > 1 ? memory::format_tag::goihw : memory::format_tag::oihw,
                  weight, chosen.weights_desc());
    dst_ = memory(chosen.dst_desc(), engine_);
    args_ = {{DNNL_ARG_SRC, src_}, {DNNL_ARG_WEIGHTS, weight_}, {DNNL_ARG_DST, dst_}};
  }

  void Run() {
    conv_.execute(stream_, args_);
    stream_.wait();
  }

  // The last output in NCHW.
  std::vector<float> OutputNCHW() {
    std::vector<float> out(
        static_cast<size_t>(dst_dims_[0] * dst_dims_[1] * dst_dims_[2] * dst_dims_[3]));
    dnnl::memory plain({dst_dims_, dnnl::memory::data_type::f32, dnnl::memory::format_tag::nchw},
                       engine_, out.data());
    dnnl::reorder(dst_, plain).execute(stream_, dst_, plain);
    stream_.wait();
    return out;
  }

 private:
  dnnl::memory Reordered(const dnnl::memory::dims& dims, dnnl::memory::format_tag tag,
                         const float* values, const dnnl::memory::desc& wanted) {
    dnnl::memory plain({dims, dnnl::memory::data_type::f32, tag}, engine_,
                       const_cast<float*>(values));
    dnnl::memory chosen(wanted, engine_);
    dnnl::reorder(plain, chosen).execute(stream_, plain, chosen);
    stream_.wait();
    return chosen;
  }

  dnnl::engine engine_;
  dnnl::stream stream_;
  dnnl::memory::dims dst_dims_;
  dnnl::convolution_forward conv_;
  dnnl::memory src_, weight_, dst_;
  std::unordered_map<int, dnnl::memory> args_;
};

// Measures one layer; returns loom_ms / onednn_ms.
double RunLayer(const Net& net, const NetLayer& layer, int threads, int repeat) {
  const Conv2DWorkload& workload = layer.workload;
  const std::string label = "net=" + net.name + " layer=" + std::to_string(layer.number);
  topi::x86::Conv2DKernel kernel = topi::x86::MakeConv2DKernel(workload);
  const IRModule& module = kernel.module;
  runtime::Module built = build(module, Target::Parse("llvm"));

  runtime::NDArray data = ArrayForParam(module.Lookup("pack_data"), 0);
  runtime::NDArray weight = ArrayForParam(module.Lookup("pack_weight"), 0);
  runtime::NDArray packed_data = ArrayForParam(module.Lookup("pack_data"), 1);
  runtime::NDArray packed_weight = ArrayForParam(module.Lookup("pack_weight"), 1);
  runtime::NDArray packed_out = ArrayForParam(module.Lookup("conv"), 2);
  runtime::NDArray result = ArrayForParam(module.Lookup("unpack_output"), 1);
  LOOM_ICHECK(data.Shape() ==
              std::vector<int64_t>({workload.n, workload.c, workload.h, workload.w}))
      << label << ": pack_data does not take the NCHW data";
  LOOM_ICHECK(result.Shape() ==
              std::vector<int64_t>({workload.n, workload.k, workload.out_h(), workload.out_w()}))
      << label << ": unpack_output does not give the NCHW output";
  FillUniform(static_cast<float*>(data.data()), data.NumElements(), 1);
  FillUniform(static_cast<float*>(weight.data()), weight.NumElements(), 2);
  built.GetRequiredFunction("pack_data")(data, packed_data);
  built.GetRequiredFunction("pack_weight")(weight, packed_weight);
  runtime::PackedFunc conv = built.GetRequiredFunction("conv");
  OneDnnConv2D onednn(workload, static_cast<const float*>(data.data()),
                      static_cast<const float*>(weight.data()));

  conv(packed_data, packed_weight, packed_out);
  built.GetRequiredFunction("unpack_output")(packed_out, result);
  onednn.Run();
  std::vector<float> want = onednn.OutputNCHW();
  const float* got = static_cast<const float*>(result.data());
  double largest = 0, worst = 0;
  int64_t worst_at = 0;
  for (float value : want) largest = std::max(largest, std::abs(static_cast<double>(value)));
  for (int64_t x = 0; x < result.NumElements(); ++x) {
    double diff = std::abs(static_cast<double>(got[x]) - want[x]);
    if (!(diff <= worst)) {
      worst = diff;
      worst_at = x;
      if (std::isnan(diff)) break;  // NaN compares false with any later difference
    }
  }
  LOOM_CHECK_USER(worst <= 1e-4 * largest + 1e-5)
      << "loom-bench-conv2d: " << label << " (" << workload.str() << "): Loom's output differs "
      << "from oneDNN's by " << worst << " at NCHW element " << worst_at << " (" << got[worst_at]
      << " vs " << want[worst_at] << "; largest output " << largest << ")";

  std::vector<double> seconds =
      MedianSeconds({[&] { conv(packed_data, packed_weight, packed_out); }, [&] { onednn.Run(); }},
                    repeat, kMinSampleSeconds);
  PrintLine(Format("conv2d %s %s threads=%d loom_ms=%.4f onednn_ms=%.4f", label.c_str(),
                   workload.str().c_str(), threads, seconds[0] * 1e3, seconds[1] * 1e3));
  return seconds[0] / seconds[1];
}

// One thread count, in this process (the environment is already set for it).
int RunLayers(const Conv2DBenchOptions& options) {
  int threads = options.threads.at(0);
  for (const Net& net : BenchmarkNets()) {
    if (std::find(options.nets.begin(), options.nets.end(), net.name) == options.nets.end())
      continue;
    std::vector<double> ratios;
    for (const NetLayer& layer : net.layers) {
      bool chosen = options.layers.empty() ||
                    std::find(options.layers.begin(), options.layers.end(), layer.number) !=
                        options.layers.end();
      if (chosen) ratios.push_back(RunLayer(net, layer, threads, options.repeat));
    }
    if (ratios.empty()) continue;
    PrintLine(Format("geomean net=%s threads=%d loom_over_onednn=%.2f layers=%zu", net.name.c_str(),
                     threads, GeometricMean(ratios), ratios.size()));
  }
  return 0;
}

}  // namespace
}  // namespace loom::bench

int main(int argc, char** argv) {
  using loom::bench::Conv2DBenchOptions;
  return loom::bench::BenchMain<Conv2DBenchOptions>(
      argc, argv, loom::bench::ParseConv2DBenchOptions, loom::bench::RunLayers,
      [&](const Conv2DBenchOptions& options) {
        return loom::bench::RunPerThreadCount("loom-bench-conv2d", options.threads,
                                              [&](int threads) {
                                                return loom::bench::Conv2DBenchArgs(
                                                    options, threads, argv[0]);
                                              });
      });
}
