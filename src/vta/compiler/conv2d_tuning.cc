// The tuning template of VTA's convolution (loom/vta/compiler/conv2d_tuning.h).
#include "loom/vta/compiler/conv2d_tuning.h"

#include <sstream>

#include "loom/ir/expr_ops.h"
#include "loom/support/error.h"
#include "loom/te/operation.h"
#include "loom/tir/analysis.h"
#include "loom/vta/compiler/passes.h"

namespace loom::vta {
namespace {

// The convolution's integers, then acc_operands and the most virtual threads.
constexpr size_t kWorkloadArgs = 13;

struct Args {
  Conv2DWorkload workload;
  int64_t acc_operands = 0, max_virtual_threads = 1;
  VTAConfig config;
};

Args ArgsOf(const std::vector<int64_t>& args) {
  LOOM_CHECK_USER(args.size() > kWorkloadArgs)
      << kConv2DTemplate << ": a workload is the convolution's 11 integers, the accumulator "
      << "operands, the most virtual threads and the configuration's parameters; got "
      << args.size() << " integers";
  Args a;
  Conv2DWorkload& w = a.workload;
  w.batch = args[0], w.in_channels = args[1], w.out_channels = args[2];
  w.height = args[3], w.width = args[4], w.kernel_h = args[5], w.kernel_w = args[6];
  w.stride_h = args[7], w.stride_w = args[8], w.pad_h = args[9], w.pad_w = args[10];
  a.acc_operands = args[11], a.max_virtual_threads = args[12];
  LOOM_CHECK_USER(a.acc_operands >= 0 && a.acc_operands <= 4 && a.max_virtual_threads >= 1 &&
                  a.max_virtual_threads <= 2)
      << kConv2DTemplate << ": " << a.acc_operands << " accumulator operands (0 to 4) and "
      << a.max_virtual_threads << " virtual threads (1 or 2)";
  a.config = VTAConfig::FromParameters({args.begin() + kWorkloadArgs, args.end()});
  return a;
}

Conv2DTiling TilingOfConfig(const topi::Config& config) {
  return {config["rows"], config["oc_blocks"], config["virtual_threads"]};
}

topi::ConfigSpace SpaceOf(const Environment& env, const Conv2DWorkload& w, int64_t acc_operands,
                          int64_t max_virtual_threads) {
  w.Check(env);
  const int64_t out_blocks = w.out_channels / env.block_out();
  topi::ConfigSpace space;
  space.AddKnob("rows", topi::KnobKind::kSplit, topi::Divisors(w.out_height()));
  space.AddKnob("oc_blocks", topi::KnobKind::kSplit, topi::Divisors(out_blocks));
  std::vector<int64_t> threads;
  for (int64_t t = 1; t <= max_virtual_threads; ++t) threads.push_back(t);
  space.AddKnob("virtual_threads", topi::KnobKind::kChoice, threads);
  space.AddConstraint("the channel tiles divide between the virtual threads",
                      [out_blocks](const topi::Config& c) {
                        return (out_blocks / c["oc_blocks"]) % c["virtual_threads"] == 0;
                      });
  // A copy of the environment: the space outlives the one it is made with.
  space.AddConstraint("a tile fits the on-chip buffers",
                      [w, acc_operands, env](const topi::Config& c) {
                        return FootprintOf(w, TilingOfConfig(c), acc_operands).FitsIn(env);
                      });
  return space;
}

// The convolution with its representative tail, lowered for the point's tiling: arguments data,
// kernel, bias, the residuals, the output.
graph::MeasurableKernel KernelOf(const std::vector<int64_t>& args, const topi::Config& config) {
  const Args a = ArgsOf(args);
  const Environment env(a.config);
  const Conv2DWorkload& w = a.workload;
  const int b = env.batch(), bi = env.block_in(), bo = env.block_out();
  auto extents = [](std::vector<int64_t> shape) {
    Array<PrimExpr> out;
    for (int64_t e : shape) out.push_back(PrimExpr(static_cast<int>(e)));
    return out;
  };
  const DataType acc = env.acc_dtype();
  te::Tensor data =
      te::placeholder(extents({w.batch / b, w.in_channels / bi, w.height, w.width, b, bi}),
                      env.inp_dtype(), "data");
  te::Tensor kernel = te::placeholder(
      extents({w.out_channels / bo, w.in_channels / bi, w.kernel_h, w.kernel_w, bo, bi}),
      env.wgt_dtype(), "kernel");
  te::Tensor bias = te::placeholder(extents({1, w.out_channels / bo, 1, 1, b, bo}), acc, "bias");
  te::Tensor conv = Conv2DPacked(data, kernel, w, acc);
  const Array<PrimExpr> out_shape = conv.shape();
  // Each operand reaches the accumulator through a stage that copies (or widens) it.
  te::Tensor bias_loaded = te::compute(
      bias.shape(), [&](const Array<Var>& i) { return bias(i); }, "bias_loaded");
  te::Tensor value = te::compute(
      out_shape,
      [&](const Array<Var>& i) {
        PrimExpr zero = make_const(i[0].dtype(), int64_t{0});
        return conv(i) + bias_loaded(zero, i[1], zero, zero, i[4], i[5]);
      },
      "biased");
  value = te::compute(
      out_shape,
      [&](const Array<Var>& i) {
        return call_intrin(acc, "shift_right", {value(i), make_const(acc, int64_t{8})});
      },
      "shifted");
  Array<te::Tensor> arguments = {data, kernel, bias};
  for (int64_t r = 0; r < a.acc_operands; ++r) {
    te::Tensor residual =
        te::placeholder(out_shape, env.out_dtype(), "residual" + std::to_string(r));
    te::Tensor wide = te::compute(
        out_shape, [&](const Array<Var>& i) { return cast(acc, residual(i)); },
        "widened" + std::to_string(r));
    te::Tensor sum = value;
    value = te::compute(
        out_shape, [&](const Array<Var>& i) { return sum(i) + wide(i); },
        "residual_added" + std::to_string(r));
    arguments.push_back(residual);
  }
  // One ALU instruction per stage: the clip's two bounds apart.
  te::Tensor summed = value;
  te::Tensor below = te::compute(
      out_shape, [&](const Array<Var>& i) { return min(summed(i), make_const(acc, int64_t{127})); },
      "clipped_above");
  value = te::compute(
      out_shape, [&](const Array<Var>& i) { return max(below(i), make_const(acc, int64_t{-128})); },
      "clipped");
  te::Tensor last = value;
  te::Tensor out = te::compute(
      out_shape, [&](const Array<Var>& i) { return cast(env.out_dtype(), last(i)); }, "out");
  arguments.push_back(out);

  const Conv2DTiling tiling = TilingOf(env, w, a.acc_operands, config);
  graph::MeasurableKernel m;
  m.module.Add("vta_conv2d",
               lower(env, ScheduleConv2DPacked(env, out, tiling), arguments, "vta_conv2d"));
  const PrimFunc& f = m.module.Lookup("vta_conv2d");
  std::vector<size_t> all;
  for (size_t p = 0; p < arguments.size(); ++p) {
    const bool is_out = p + 1 == arguments.size();
    m.buffers.push_back({tir::ConstParamShape(f, p), arguments[p].dtype(), /*input=*/!is_out,
                         /*weight=*/p == 1 || p == 2});
    all.push_back(p);
  }
  m.timed = {"vta_conv2d", all};
  m.result = arguments.size() - 1;
  m.flops = 2.0 * w.batch * w.out_channels * w.out_height() * w.out_width() * w.in_channels *
            w.kernel_h * w.kernel_w;
  return m;
}

std::string Describe(const std::vector<int64_t>& args) {
  const Args a = ArgsOf(args);
  const Conv2DWorkload& w = a.workload;
  std::ostringstream text;
  text << "vta conv2d " << w.batch << "x" << w.in_channels << "x" << w.height << "x" << w.width
       << " -> " << w.out_channels << " " << w.kernel_h << "x" << w.kernel_w << " s" << w.stride_h
       << " p" << w.pad_h;
  if (a.acc_operands > 0) text << " +" << a.acc_operands << " residual";
  return text.str();
}

}  // namespace

topi::Config TuningPointOf(const Conv2DTiling& t) {
  return topi::Config(
      {{"rows", t.rows}, {"oc_blocks", t.oc_blocks}, {"virtual_threads", t.virtual_threads}});
}

graph::TuningWorkload Conv2DTuningWorkload(const Environment& env, const Conv2DWorkload& w,
                                           int64_t acc_operands, int64_t max_virtual_threads) {
  std::vector<int64_t> args = {w.batch,    w.in_channels, w.out_channels,     w.height,   w.width,
                               w.kernel_h, w.kernel_w,    w.stride_h,         w.stride_w, w.pad_h,
                               w.pad_w,    acc_operands,  max_virtual_threads};
  for (int64_t p : env.config().Parameters()) args.push_back(p);
  return {kConv2DTemplate, args};
}

Conv2DTiling TilingOf(const Environment& env, const Conv2DWorkload& workload, int64_t acc_operands,
                      const topi::Config& config) {
  // Every value a candidate of its knob (IndexOf names the one that is not), then the
  // constraints; the threads' limit is the knob's widest list.
  const topi::ConfigSpace space = SpaceOf(env, workload, acc_operands, 2);
  try {
    space.IndexOf(config);
  } catch (const Error& error) {
    LOOM_THROW << kConv2DTemplate << ": " << error.what();
  }
  std::string failed;
  LOOM_CHECK_USER(space.IsValid(config, &failed))
      << kConv2DTemplate << ": the point {" << config.str() << "} breaks \"" << failed << "\"";
  return TilingOfConfig(config);
}

void RegisterConv2DTuningTemplate() {
  static const bool registered = [] {
    graph::RegisterTuningTemplate(
        {.name = kConv2DTemplate,
         .space =
             [](const std::vector<int64_t>& args) {
               const Args a = ArgsOf(args);
               return SpaceOf(Environment(a.config), a.workload, a.acc_operands,
                              a.max_virtual_threads);
             },
         .default_config =
             [](const std::vector<int64_t>& args) {
               const Args a = ArgsOf(args);
               return TuningPointOf(DefaultConv2DTiling(Environment(a.config), a.workload,
                                                        a.acc_operands, a.max_virtual_threads));
             },
         .instantiate = KernelOf,
         .describe = Describe});
    return true;
  }();
  (void)registered;
}

}  // namespace loom::vta
