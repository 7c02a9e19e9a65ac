// VTA's graph operators and their implementation for the vta target (loom/vta/compiler/graph.h):
// vta.conv2d_packed, a convolution in VTA's blocked layouts, and vta.alu_imm, one ALU
// instruction with an immediate. A group whose master is vta.conv2d_packed runs on VTA: its
// tail of element-wise operators on the ALU, tiled as its "tiling" attribute says (which
// PackGraph chose), lowered by vta::lower for the configuration of the target.
#include <limits>
#include <map>
#include <memory>
#include <mutex>

#include "loom/graph/op.h"
#include "loom/graph/strategy.h"
#include "loom/ir/expr_ops.h"
#include "loom/support/error.h"
#include "loom/vta/compiler/conv2d.h"
#include "loom/vta/compiler/conv2d_tuning.h"
#include "loom/vta/compiler/graph.h"
#include "loom/vta/compiler/passes.h"

namespace loom::vta {
namespace {

using graph::AttrKind;
using graph::CallInfo;
using graph::OpPattern;

std::vector<int64_t> ShapeOfType(const CallInfo& info, size_t input) {
  std::optional<std::vector<int64_t>> shape = info.input_types.at(input).ConstShape();
  LOOM_CHECK_USER(shape.has_value() && shape->size() == 6)
      << info.where << ": input " << input << " must be a 6-d tensor of constant shape, not "
      << info.input_types[input].str();
  return *shape;
}

// The convolution of a vta.conv2d_packed call.
Conv2DWorkload WorkloadOf(const CallInfo& info) {
  const std::vector<int64_t> data = ShapeOfType(info, 0), weight = ShapeOfType(info, 1);
  const graph::Ints& strides = info.attrs.GetInts("strides");
  const graph::Ints& padding = info.attrs.GetInts("padding");
  LOOM_CHECK_USER(strides.size() == 2 && padding.size() == 2)
      << info.where << ": strides and padding need 2 values each (rows, columns)";
  Conv2DWorkload w;
  w.batch = data[0] * data[4];
  w.in_channels = data[1] * data[5];
  w.height = data[2], w.width = data[3];
  w.out_channels = weight[0] * weight[4];
  w.kernel_h = weight[2], w.kernel_w = weight[3];
  w.stride_h = strides[0], w.stride_w = strides[1];
  w.pad_h = padding[0], w.pad_w = padding[1];
  LOOM_CHECK_USER(weight[1] == data[1] && weight[5] == data[5])
      << info.where << ": the weight's input blocks [" << weight[1] << "][" << weight[5]
      << "] differ from the data's [" << data[1] << "][" << data[5] << "]";
  LOOM_CHECK_USER(w.out_height() > 0 && w.out_width() > 0)
      << info.where << ": the window is larger than the padded image";
  return w;
}

// The environment of the target's configuration (the artifact records it and the runtime
// checks it), one per configuration file.
const Environment& EnvironmentOf(const Target& target) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<Environment>> environments;
  const VTAConfig config = ConfigOf(target);  // what the artifact records: the file as read now
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<Environment>& env = environments[config.ToJson()];
  if (env == nullptr) env = std::make_unique<Environment>(config);
  return *env;
}

void Register() {
  graph::OpBuilder(graph::OpRegistry::Register("vta.conv2d_packed"))
      .Describe(
          "a 2-d convolution in VTA's blocked layouts: data [N/b][C/bi][H][W][b][bi] and "
          "weight [O/bo][C/bi][KH][KW][bo][bi] (int8) to [N/b][O/bo][OH][OW][b][bo] in "
          "out_dtype")
      .Inputs({"data", "weight"})
      .Pattern(OpPattern::kOutEWiseFusable)
      .Attr("strides", AttrKind::kInts, graph::Ints{1, 1}, "(rows, columns)")
      .Attr("padding", AttrKind::kInts, graph::Ints{0, 0}, "zeros around the image (rows, columns)")
      .Attr("out_dtype", AttrKind::kString, std::string("int32"), "the accumulator's type")
      .Attr("tiling", AttrKind::kInts, graph::Ints{},
            "(rows, oc_blocks, virtual_threads) of the output's tiles (conv2d.h: Conv2DTiling; "
            "PackGraph chooses it, from the tuning records or by default); none: the default "
            "tiling for the target")
      .TypeRelation([](const CallInfo& info) {
        const Conv2DWorkload w = WorkloadOf(info);
        const std::vector<int64_t> data = ShapeOfType(info, 0), weight = ShapeOfType(info, 1);
        return graph::TensorType({data[0], weight[0], w.out_height(), w.out_width(), data[4],
                                  weight[4]},
                                 DataType::Parse(info.attrs.GetString("out_dtype")));
      })
      .Compute([](const CallInfo& info, const std::vector<te::Tensor>& in) {
        return std::vector<te::Tensor>{Conv2DPacked(
            in[0], in[1], WorkloadOf(info), DataType::Parse(info.attrs.GetString("out_dtype")))};
      });

  graph::OpBuilder(graph::OpRegistry::Register("vta.alu_imm"))
      .Describe("one ALU instruction with an immediate on each value: x + imm, x >> imm "
                "(arithmetic; negative: <<), min(x, imm) or max(x, imm)")
      .Inputs({"x"})
      .Pattern(OpPattern::kElemWise)
      .Attr("op", AttrKind::kString, std::nullopt, "\"add\", \"shr\", \"min\" or \"max\"")
      .Attr("imm", AttrKind::kInt, std::nullopt, "the immediate (16 bits, signed)")
      .TypeRelation([](const CallInfo& info) {
        const std::string& op = info.attrs.GetString("op");
        const int64_t imm = info.attrs.GetInt("imm");
        LOOM_CHECK_USER(op == "add" || op == "shr" || op == "min" || op == "max")
            << info.where << ": op must be add, shr, min or max, not \"" << op << "\"";
        LOOM_CHECK_USER(imm >= std::numeric_limits<int16_t>::min() &&
                        imm <= std::numeric_limits<int16_t>::max())
            << info.where << ": the immediate " << imm << " does not fit the ALU's 16 bits";
        LOOM_CHECK_USER(info.input_types[0].is_tensor() &&
                        info.input_types[0].dtype().is_int())
            << info.where << ": x must be an integer tensor, not " << info.input_types[0].str();
        // The hardware reads a shift amount of log2(bits) bits, signed.
        const int64_t half_shift = info.input_types[0].dtype().bits() / 2;
        LOOM_CHECK_USER(op != "shr" || (imm >= -half_shift && imm < half_shift))
            << info.where << ": a shift of " << imm << " on " << info.input_types[0].dtype().str()
            << " is outside " << -half_shift << " to " << half_shift - 1;
        return info.input_types[0];
      })
      .Compute([](const CallInfo& info, const std::vector<te::Tensor>& in) {
        const te::Tensor& x = in[0];
        const std::string op = info.attrs.GetString("op");
        const PrimExpr imm = make_const(x.dtype(), info.attrs.GetInt("imm"));
        return std::vector<te::Tensor>{te::compute(
            x.shape(),
            [&](const Array<Var>& i) -> PrimExpr {
              if (op == "add") return x(i) + imm;
              if (op == "min") return min(x(i), imm);
              if (op == "max") return max(x(i), imm);
              const int64_t bits = info.attrs.GetInt("imm");
              return bits >= 0 ? call_intrin(x.dtype(), "shift_right", {x(i), imm})
                               : call_intrin(x.dtype(), "shift_left",
                                             {x(i), make_const(x.dtype(), -bits)});
            },
            "alu_" + op, "elemwise")};
      });

  // The residual's widening is a stage of this operator, not a cast before it: a cast would
  // fuse into the epilogue of the residual's own producer (another packed convolution), whose
  // kernel must end with the int8 STORE.
  graph::OpBuilder(graph::OpRegistry::Register("vta.add_residual"))
      .Describe("x + (int32(r) << shift): an int8 residual r widened into the accumulator "
                "(an ACC_8BIT LOAD) and shifted left by the ALU")
      .Inputs({"x", "r"})
      .Pattern(OpPattern::kElemWise)
      .Attr("shift", AttrKind::kInt, int64_t{0}, "the left shift of r, 0 to 16 (int32)")
      .TypeRelation([](const CallInfo& info) {
        const int64_t shift = info.attrs.GetInt("shift");
        // The ALU shifts left by at most half the accumulator's bits (a signed amount).
        const int64_t widest = info.input_types[0].is_tensor()
                                   ? info.input_types[0].dtype().bits() / 2 : 0;
        LOOM_CHECK_USER(shift >= 0 && shift <= widest)
            << info.where << ": shift " << shift << " is outside 0 to " << widest;
        LOOM_CHECK_USER(info.input_types[1].is_tensor() &&
                        info.input_types[1].dtype() == DataType::Int(8) &&
                        info.input_types[0].is_tensor() &&
                        info.input_types[0].ConstShape() == info.input_types[1].ConstShape())
            << info.where << ": r must be an int8 tensor of x's shape, not "
            << info.input_types[1].str() << " beside " << info.input_types[0].str();
        return info.input_types[0];
      })
      .Compute([](const CallInfo& info, const std::vector<te::Tensor>& in) {
        const te::Tensor &x = in[0], &r = in[1];
        const int64_t shift = info.attrs.GetInt("shift");
        te::Tensor wide = te::compute(
            r.shape(), [&](const Array<Var>& i) { return cast(x.dtype(), r(i)); }, "residual",
            "elemwise");
        if (shift != 0) {
          te::Tensor unshifted = wide;
          wide = te::compute(
              r.shape(),
              [&](const Array<Var>& i) {
                return call_intrin(x.dtype(), "shift_left",
                                   {unshifted(i), make_const(x.dtype(), shift)});
              },
              "residual_shifted", "elemwise");
        }
        return std::vector<te::Tensor>{te::compute(
            x.shape(), [&](const Array<Var>& i) { return x(i) + wide(i); }, "add_residual",
            "elemwise")};
      });

  graph::RegisterImplementation(
      "vta.conv2d_packed", "vta",
      {.name = "vta.conv2d_packed",
       .priority = 10,
       .applies = [](const CallInfo&, const std::vector<te::Tensor>&, const Target&) {
         return true;
       },
       .schedule =
           [](const CallInfo& master, const std::vector<te::Tensor>& outputs,
              const Target& target) {
             LOOM_CHECK_USER(outputs.size() == 1)
                 << master.where << ": a VTA convolution's group has one output, not "
                 << outputs.size();
             const Environment& env = EnvironmentOf(target);
             const Conv2DWorkload workload = WorkloadOf(master);
             const int64_t acc_operands = TailAccOperands(outputs[0]);
             const graph::Ints& tiling = master.attrs.GetInts("tiling");
             LOOM_CHECK_USER(tiling.empty() || tiling.size() == 3)
                 << master.where << ": tiling needs 3 values (rows, oc_blocks, "
                 << "virtual_threads) or none";
             return ScheduleConv2DPacked(
                 env, outputs[0],
                 tiling.empty() ? DefaultConv2DTiling(env, workload, acc_operands,
                                                      target.GetInt("virtual-threads"))
                                : TilingOf(env, workload, acc_operands,
                                           TuningPointOf({tiling[0], tiling[1], tiling[2]})));
           },
       .lower = [](const te::Schedule& schedule, const Array<te::Tensor>& args,
                   const std::string& name, const Target& target) {
         return lower(EnvironmentOf(target), schedule, args, name);
       }});

  graph::RegisterTargetGraphPass(
      "vta", [](const Target& target) { return PackGraph(EnvironmentOf(target), target); });
  RegisterConv2DTuningTemplate();
}

[[maybe_unused]] const bool kRegistered = RegisterGraphIntegration();

}  // namespace

bool RegisterGraphIntegration() {
  static const bool registered = (Register(), true);
  return registered;
}
}  // namespace loom::vta
