// The x86 tuning templates (graph/tuning.h): the conv2d kernels of topi/x86 (direct, grouped,
// depthwise, Winograd) and the packed dense GEMM, each with its configuration space (topi/x86
// tuning_spaces.cc), its default point and a standalone kernel for any point.
#include <sstream>

#include "loom/te/lower.h"
#include "loom/tir/analysis.h"
#include "loom/topi/x86/dense.h"
#include "strategy/x86/workloads.h"

namespace loom::strategy::x86 {

using graph::MeasurableKernel;
using topi::Config;
using topi::x86::Conv2DWorkload;

graph::TuningWorkload Conv2DTuningWorkload(const Conv2DWorkload& wl) {
  const topi::Conv2DAttrs& a = wl.attrs;
  return {kConv2DTemplate,
          {wl.n, wl.c, wl.h, wl.w, wl.k, wl.r, wl.s, a.strides[0], a.strides[1], a.pads[0],
           a.pads[1], a.pads[2], a.pads[3], a.dilations[0], a.dilations[1], a.groups}};
}

Conv2DWorkload Conv2DWorkloadOf(const std::vector<int64_t>& args) {
  LOOM_CHECK_USER(args.size() == 16)
      << kConv2DTemplate << ": a workload is 16 integers (n, c, h, w, k, r, s, 2 strides, 4 "
      << "pads, 2 dilations, groups), got " << args.size();
  Conv2DWorkload wl;
  wl.n = args[0], wl.c = args[1], wl.h = args[2], wl.w = args[3];
  wl.k = args[4], wl.r = args[5], wl.s = args[6];
  wl.attrs.strides = {args[7], args[8]};
  wl.attrs.pads = {args[9], args[10], args[11], args[12]};
  wl.attrs.dilations = {args[13], args[14]};
  wl.attrs.groups = args[15];
  return wl;
}

graph::TuningWorkload DenseTuningWorkload(int64_t m, int64_t n, int64_t k) {
  return {kDenseTemplate, {m, n, k}};
}

namespace {

std::array<int64_t, 3> DenseSizes(const std::vector<int64_t>& args) {
  LOOM_CHECK_USER(args.size() == 3 && args[0] > 0 && args[1] > 0 && args[2] > 0)
      << kDenseTemplate << ": a workload is 3 positive integers (M, N, K)";
  return {args[0], args[1], args[2]};
}

MeasurableKernel::Buffer BufferOf(const PrimFunc& func, size_t param, bool input = false,
                                  bool weight = false) {
  return {tir::ConstParamShape(func, param), DataType::Float(32), input, weight};
}

MeasurableKernel Conv2DKernelOf(const std::vector<int64_t>& args, const Config& config) {
  const Conv2DWorkload wl = Conv2DWorkloadOf(args);
  topi::x86::Conv2DKernel kernel =
      topi::x86::MakeConv2DKernel(wl, topi::x86::Conv2DChoiceOf(wl, config));
  MeasurableKernel m;
  m.module = kernel.module;
  const IRModule& f = kernel.module;
  // data, weight, packed data, packed weight, blocked output, NCHW output
  m.buffers = {BufferOf(f.Lookup("pack_data"), 0, true),
               BufferOf(f.Lookup("pack_weight"), 0, true),
               BufferOf(f.Lookup("pack_data"), 1),
               BufferOf(f.Lookup("pack_weight"), 1, /*input=*/false, /*weight=*/true),
               BufferOf(f.Lookup("conv"), 2),
               BufferOf(f.Lookup("unpack_output"), 1)};
  m.setup = {{"pack_data", {0, 2}}, {"pack_weight", {1, 3}}};
  m.timed = {"conv", {2, 3, 4}};
  m.finish = {{"unpack_output", {4, 5}}};
  m.result = 5;
  m.flops = 2.0 * wl.n * wl.k * wl.out_h() * wl.out_w() * (wl.c / wl.attrs.groups) * wl.r * wl.s;
  return m;
}

MeasurableKernel DenseKernelOf(const std::vector<int64_t>& args, const Config& config) {
  const auto [M, N, K] = DenseSizes(args);
  const topi::x86::DenseConfig tiling = topi::x86::DenseConfigFrom(M, N, K, config);
  const DataType f32 = DataType::Float(32);
  te::Tensor weight = te::placeholder({int(N), int(K)}, f32, "weight");
  te::Tensor packed = topi::x86::pack_dense_weight(weight, /*transposed=*/true, tiling);
  te::Tensor data = te::placeholder({int(M), int(K)}, f32, "data");
  te::Tensor packed_in = te::placeholder(packed.shape(), f32, "packed_weight");
  te::Tensor out = topi::x86::dense_packed(data, packed_in, N);
  MeasurableKernel m;
  m.module.Add("pack_weight",
               te::lower(topi::x86::schedule_dense_pack(packed), {weight, packed}, "pack_weight"));
  m.module.Add("dense", te::lower(topi::x86::schedule_dense_packed(out, tiling),
                                  {data, packed_in, out}, "dense"));
  const IRModule& f = m.module;
  // data, weight [N, K], packed weight, output
  m.buffers = {BufferOf(f.Lookup("dense"), 0, true), BufferOf(f.Lookup("pack_weight"), 0, true),
               BufferOf(f.Lookup("pack_weight"), 1, /*input=*/false, /*weight=*/true),
               BufferOf(f.Lookup("dense"), 2)};
  m.setup = {{"pack_weight", {1, 2}}};
  m.timed = {"dense", {0, 2, 3}};
  m.result = 3;
  m.flops = 2.0 * M * N * K;
  return m;
}

[[maybe_unused]] const bool kRegistered = [] {
  graph::RegisterTuningTemplate({.name = kConv2DTemplate,
                                 .space =
                                     [](const std::vector<int64_t>& args) {
                                       return topi::x86::Conv2DConfigSpace(Conv2DWorkloadOf(args));
                                     },
                                 .default_config =
                                     [](const std::vector<int64_t>& args) {
                                       return topi::x86::DefaultConv2DConfig(
                                           Conv2DWorkloadOf(args));
                                     },
                                 .instantiate = Conv2DKernelOf,
                                 .describe =
                                     [](const std::vector<int64_t>& args) {
                                       return "conv2d " + Conv2DWorkloadOf(args).str();
                                     }});
  graph::RegisterTuningTemplate({.name = kDenseTemplate,
                                 .space =
                                     [](const std::vector<int64_t>& args) {
                                       const auto [M, N, K] = DenseSizes(args);
                                       return topi::x86::DenseConfigSpace(M, N, K);
                                     },
                                 .default_config =
                                     [](const std::vector<int64_t>& args) {
                                       const auto [M, N, K] = DenseSizes(args);
                                       return topi::x86::DenseConfigOf(
                                           topi::x86::DefaultDenseConfig(M, N, K));
                                     },
                                 .instantiate = DenseKernelOf,
                                 .describe =
                                     [](const std::vector<int64_t>& args) {
                                       const auto [M, N, K] = DenseSizes(args);
                                       std::ostringstream text;
                                       text << "dense M=" << M << " N=" << N << " K=" << K;
                                       return text.str();
                                     }});
  return true;
}();

}  // namespace
}  // namespace loom::strategy::x86
