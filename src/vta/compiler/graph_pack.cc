// PackGraph (loom/vta/compiler/graph.h): quantized convolutions and their integer tails into
// VTA's layouts and operators.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <limits>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "loom/graph/functor.h"
#include "loom/graph/strategy.h"
#include "loom/graph/tuning.h"
#include "loom/support/error.h"
#include "loom/vta/compiler/conv2d.h"
#include "loom/vta/compiler/conv2d_tuning.h"
#include "loom/vta/compiler/graph.h"

namespace loom::vta {
namespace {

using graph::CallNode;
using graph::ConstantNode;
using graph::Expr;
using graph::MakeCall;

const DataType kI8 = DataType::Int(8), kI32 = DataType::Int(32);

bool IsOp(const CallNode* call, const char* name) {
  return call != nullptr && call->op != nullptr && call->op->name == name;
}

std::string NameOf(const CallNode& call) {
  if (!call.name_hint.empty()) return call.name_hint;
  return call.op ? call.op->name : std::string("a call");
}

// Padding a layer's channels to whole blocks may multiply its work by this much at most.
constexpr double kMaxPaddedWork = 2.0;

int64_t RoundUp(int64_t n, int64_t block) { return (n + block - 1) / block * block; }

// The values an int32 tensor may take.
struct ValueRange {
  int64_t lo = 0, hi = 0;
};

// The integer value of a one-element int32 constant.
std::optional<int64_t> ScalarInt(const Expr& e) {
  const auto* constant = e.as<ConstantNode>();
  if (constant == nullptr || constant->data.NumElements() != 1 ||
      constant->data.dtype() != kI32) {
    return std::nullopt;
  }
  return *static_cast<const int32_t*>(constant->data.data());
}

// One step of a convolution's tail, as PackGraph will emit it.
struct Step {
  enum Kind { kAluImm, kBias, kResidual } kind = kAluImm;
  std::string op;   // kAluImm: add, shr, min, max
  int64_t imm = 0;  // kAluImm: the immediate; kResidual: the left shift of the residual
  Expr operand;     // kBias: the int32 per-channel constant; kResidual: the int8 tensor
  std::string name;
};

// A convolution the pass moves to VTA: its tail from the convolution to the cast to int8.
struct Plan {
  const CallNode* conv = nullptr;
  Conv2DWorkload workload;  // channels padded to whole blocks
  std::string note;         // for the placement: the padding, if any
  std::vector<Step> steps;
  Conv2DTiling tiling;  // the tuned one, else the default
};

// What the pass decides for one convolution: packed (its plan kept by the planner), or the
// reason it stays on the CPU.
struct Decision {
  bool packed = false;
  std::string reason;  // the CPU's; on VTA, what the packing changed (padded channels)
};

class Planner {
 public:
  Planner(const Environment& env, const Target& target, const graph::Function& main)
      : env_(env), target_(target) {
    // Every use: a call's argument, a tuple's field, a projection's tuple (users the walk
    // of a tail cannot follow count as null).
    graph::PostOrderVisitDataflow(main->body, [&](const Expr& e) {
      if (const auto* call = e.as<CallNode>()) {
        for (const Expr& arg : call->args) users_[arg.get()].push_back(call);
      } else if (const auto* tuple = e.as<graph::TupleNode>()) {
        for (const Expr& field : tuple->fields) users_[field.get()].push_back(nullptr);
      } else if (const auto* item = e.as<graph::TupleGetItemNode>()) {
        users_[item->tuple.get()].push_back(nullptr);
      }
    });
    users_[main->body.get()].push_back(nullptr);  // the model's result is used
  }

  // The decision for a qnn.conv2d or qnn.dense (a 1x1 convolution of a 1x1 image); a plan is
  // kept by the tail's last call (the cast to int8).
  Decision Decide(const CallNode& conv) {
    Decision d;
    Plan plan;
    plan.conv = &conv;
    auto fail = [&](std::string why) {
      d.reason = std::move(why);
      return d;
    };
    // The operands: int8 data of constant shape (NCHW, or [N, K] for a dense layer), a
    // constant int8 weight (OIHW, or [M, K]), zero points 0.
    const bool dense = IsOp(&conv, "qnn.dense");
    const size_t rank = dense ? 2 : 4;
    const graph::Type& data = conv.args[0].type();
    const auto* weight = conv.args[1].as<ConstantNode>();
    std::optional<std::vector<int64_t>> shape = data.ConstShape();
    if (data.dtype() != kI8 || !shape || shape->size() != rank) {
      return fail(std::string("its data is not an int8 ") + (dense ? "2-d" : "NCHW") +
                  " tensor of constant shape");
    }
    if (weight == nullptr || weight->data.dtype() != kI8 || weight->data.Shape().size() != rank) {
      return fail(std::string("its weight is not a constant int8 ") + (dense ? "2-d" : "OIHW") +
                  " tensor");
    }
    if (conv.attrs.GetInt("data_zero_point") != 0 || conv.attrs.GetInt("weight_zero_point") != 0) {
      return fail("its zero points are not 0 (quantize with the power-of-two scheme)");
    }
    if (dense) {
      Conv2DWorkload& work = plan.workload;
      work.batch = (*shape)[0], work.in_channels = (*shape)[1];
      work.height = work.width = 1;
      work.out_channels = weight->data.Shape()[0];
      return DecideTail(std::move(plan), *weight);
    }
    if (conv.attrs.GetInt("groups") != 1) return fail("it is grouped");
    const graph::Ints& dilation = conv.attrs.GetInts("dilation");
    const graph::Ints& strides = conv.attrs.GetInts("strides");
    const graph::Ints& padding = conv.attrs.GetInts("padding");
    if (dilation != graph::Ints{1, 1}) return fail("it is dilated");
    if (padding.size() != 4 || padding[0] != padding[2] || padding[1] != padding[3]) {
      return fail("its padding is not the same on both sides");
    }
    const std::vector<int64_t> w = weight->data.Shape();
    Conv2DWorkload& work = plan.workload;
    work.batch = (*shape)[0], work.in_channels = (*shape)[1];
    work.height = (*shape)[2], work.width = (*shape)[3];
    work.out_channels = w[0], work.kernel_h = w[2], work.kernel_w = w[3];
    work.stride_h = strides[0], work.stride_w = strides[1];
    work.pad_h = padding[0], work.pad_w = padding[1];
    return DecideTail(std::move(plan), *weight);
  }

  const std::unordered_map<const CallNode*, Plan>& tails() const { return tails_; }

 private:
  // The rest of Decide, for either layer: the workload checked, the tail walked.
  Decision DecideTail(Plan plan, const ConstantNode& weight) {
    Decision d;
    auto fail = [&](std::string why) {
      d.reason = std::move(why);
      return d;
    };
    const CallNode& conv = *plan.conv;
    // Channels padded to whole blocks (zero weights, sliced off after), unless that more than
    // doubles the layer's work (an RGB image's 3 channels padded to 16: better on the CPU).
    const int64_t in_channels = plan.workload.in_channels,
                  out_channels = plan.workload.out_channels;
    plan.workload.in_channels = RoundUp(in_channels, env_.block_in());
    plan.workload.out_channels = RoundUp(out_channels, env_.block_out());
    const double padded_work =
        static_cast<double>(plan.workload.in_channels * plan.workload.out_channels) /
        static_cast<double>(in_channels * out_channels);
    if (padded_work > kMaxPaddedWork) {
      std::ostringstream why;
      why << "padding its " << in_channels << " input and " << out_channels
          << " output channels to whole blocks of " << env_.block_in() << " would multiply "
          << "its work by " << std::setprecision(2) << padded_work << " (more than "
          << kMaxPaddedWork << ")";
      return fail(why.str());
    }
    if (padded_work > 1) {
      std::ostringstream note;
      note << "channels padded to whole blocks: " << in_channels << " -> "
           << plan.workload.in_channels << " in, " << out_channels << " -> "
           << plan.workload.out_channels << " out";
      plan.note = note.str();
    }
    const Conv2DWorkload& work = plan.workload;
    if (env_.inp_dtype() != kI8 || env_.wgt_dtype() != kI8 || env_.out_dtype() != kI8 ||
        env_.acc_dtype() != kI32) {
      return fail("the configuration computes " + env_.inp_dtype().str() + " x " +
                  env_.wgt_dtype().str() + " into " + env_.acc_dtype().str() + ", stored as " +
                  env_.out_dtype().str() + "; the packing takes int8 x int8 into int32, as the "
                  "power-of-two quantization computes");
    }
    try {
      work.Check(env_);
    } catch (const Error& error) {
      return fail(error.what());
    }
    ValueRange range = ProductRange(weight);
    // Walk the tail while each value has one user.
    const CallNode* at = &conv;
    while (true) {
      const std::vector<const CallNode*>& users = users_[at];
      if (users.size() != 1 || users[0] == nullptr) {
        return fail("its int32 result is used before it is requantized to int8");
      }
      const CallNode* next = users[0];
      const std::string name = NameOf(*next);
      if (IsOp(next, "cast")) {
        if (next->checked_type.dtype() != kI8) {
          return fail("'" + name + "' casts its int32 values to " +
                      next->checked_type.dtype().str() + ", not int8");
        }
        if (range.lo < -128 || range.hi > 127) {
          return fail("'" + name + "' narrows values that may lie beyond int8");
        }
        int64_t operands = 0;
        for (const Step& step : plan.steps) operands += step.kind == Step::kResidual;
        // The tuning records' tiling (a record that does not fit the space is an error
        // naming it), else the default; none fits: the CPU.
        const int64_t threads = target_.GetInt("virtual-threads");
        const std::optional<topi::Config> tuned =
            graph::QueryTunedConfig(target_, Conv2DTuningWorkload(env_, work, operands, threads));
        if (tuned) {
          plan.tiling = TilingOf(env_, work, operands, *tuned);
        } else {
          try {
            plan.tiling = DefaultConv2DTiling(env_, work, operands, threads);
          } catch (const Error& error) {
            return fail(error.what());
          }
        }
        d.reason = plan.note;
        tails_[next] = plan;
        d.packed = true;
        return d;
      }
      std::optional<std::string> why = AddStep(*at, *next, &plan, &range);
      if (why) return fail("'" + name + "': " + *why);
      at = next;
    }
  }

  // The sums of products of int8 data ([-128, 127]) with the weights, per output channel.
  static ValueRange ProductRange(const ConstantNode& weight) {
    const std::vector<int64_t> shape = weight.data.Shape();
    const int64_t per_channel = weight.data.NumElements() / shape[0];
    const auto* w = static_cast<const int8_t*>(weight.data.data());
    ValueRange range;
    for (int64_t o = 0; o < shape[0]; ++o) {
      int64_t positive = 0, negative = 0;
      for (int64_t k = 0; k < per_channel; ++k) {
        const int64_t v = w[o * per_channel + k];
        (v > 0 ? positive : negative) += v;
      }
      // data in [-128, 127]: the sum is at most 127 * positive - 128 * negative, ...
      range.hi = std::max(range.hi, 127 * positive - 128 * negative);
      range.lo = std::min(range.lo, -128 * positive + 127 * negative);
    }
    return range;
  }

  // Adds `next` (which reads `at`) to the plan, or says why the ALU cannot compute it. The
  // values must stay within int32 for the wrapping arithmetic to be exact and the bounds to
  // hold.
  std::optional<std::string> AddStep(const CallNode& at, const CallNode& next, Plan* plan,
                                     ValueRange* range) {
    std::optional<std::string> why = Translate(at, next, plan, range);
    if (!why && (range->lo < std::numeric_limits<int32_t>::min() ||
                 range->hi > std::numeric_limits<int32_t>::max())) {
      why = "its values may overflow int32";
    }
    return why;
  }

  std::optional<std::string> Translate(const CallNode& at, const CallNode& next, Plan* plan,
                                       ValueRange* range) {
    auto alu = [&](const std::string& op, int64_t imm) {
      plan->steps.push_back({Step::kAluImm, op, imm, Expr(), NameOf(next)});
    };
    // The layer's own channels (the workload's are padded).
    const int64_t out_channels = plan->conv->args[1].as<ConstantNode>()->data.Shape()[0];
    if (IsOp(&next, "nn.relu")) {
      alu("max", 0);
      range->lo = std::max<int64_t>(range->lo, 0), range->hi = std::max<int64_t>(range->hi, 0);
      return std::nullopt;
    }
    if (IsOp(&next, "clip")) {
      const double low = next.attrs.GetFloat("a_min"), high = next.attrs.GetFloat("a_max");
      if (!std::isfinite(low) || !std::isfinite(high) || low > high) {
        return std::string("its bounds are not finite and ordered");
      }
      // A bound the values never pass is no operation (the requantization's saturating clip
      // below int32's largest value, before its rounding add, is one while they stay small).
      if (range->hi > high) {
        if (high != std::floor(high) || !env_.AluImmediateFits(AluOpcode::kMin, int64_t(high))) {
          return "its upper bound " + std::to_string(high) + " is no 16-bit immediate";
        }
        alu("min", static_cast<int64_t>(high));
        range->hi = static_cast<int64_t>(high), range->lo = std::min(range->lo, range->hi);
      }
      if (range->lo < low) {
        if (low != std::floor(low) || !env_.AluImmediateFits(AluOpcode::kMax, int64_t(low))) {
          return "its lower bound " + std::to_string(low) + " is no 16-bit immediate";
        }
        alu("max", static_cast<int64_t>(low));
        range->lo = static_cast<int64_t>(low), range->hi = std::max(range->hi, range->lo);
      }
      return std::nullopt;
    }
    const bool shift_right = IsOp(&next, "right_shift"), shift_left = IsOp(&next, "left_shift");
    if (shift_right || shift_left) {
      std::optional<int64_t> bits = ScalarInt(next.args[1]);
      if (!bits || next.args[0].get() != &at || *bits < 0 ||
          !env_.AluImmediateFits(AluOpcode::kShr, shift_right ? *bits : -*bits)) {
        return std::string("it shifts by something other than a constant the ALU takes (") +
               (shift_right ? "0 to 15" : "0 to 16") + " bits)";
      }
      if (shift_right) {
        alu("shr", *bits);
        range->lo >>= *bits, range->hi >>= *bits;
      } else {
        alu("shr", -*bits);
        range->lo *= int64_t{1} << *bits, range->hi *= int64_t{1} << *bits;
      }
      return std::nullopt;
    }
    const bool bias_add = IsOp(&next, "nn.bias_add");
    if (!bias_add && !IsOp(&next, "add")) {
      return "the ALU does not compute " + (next.op ? next.op->name : std::string("a call"));
    }
    const Expr& other = next.args[0].get() == &at ? next.args[1] : next.args[0];
    if (std::optional<int64_t> scalar = ScalarInt(other)) {
      if (!env_.AluImmediateFits(AluOpcode::kAdd, *scalar)) {
        return "it adds " + std::to_string(*scalar) + ", no 16-bit immediate";
      }
      alu("add", *scalar);
      range->lo += *scalar, range->hi += *scalar;
      return std::nullopt;
    }
    if (const auto* constant = other.as<ConstantNode>()) {
      // A bias: one int32 per output channel, along the channels: [C] for nn.bias_add on
      // axis 1 and for a dense layer's add, [C, 1, 1] or [1, C, 1, 1] for a convolution's.
      const std::vector<int64_t> shape = constant->data.Shape();
      const bool dense = IsOp(plan->conv, "qnn.dense");
      const bool per_channel =
          bias_add ? next.attrs.GetInt("axis") == 1 && shape == std::vector<int64_t>{out_channels}
          : dense  ? shape == std::vector<int64_t>{out_channels} ||
                        shape == std::vector<int64_t>{1, out_channels}
                   : shape == std::vector<int64_t>{out_channels, 1, 1} ||
                        shape == std::vector<int64_t>{1, out_channels, 1, 1};
      if (constant->data.dtype() != kI32 || !per_channel) {
        return std::string("it adds a constant that is not one int32 per output channel");
      }
      const auto* values = static_cast<const int32_t*>(constant->data.data());
      const auto [lo, hi] = std::minmax_element(values, values + out_channels);
      plan->steps.push_back({Step::kBias, "", 0, other, NameOf(next)});
      range->lo += *lo, range->hi += *hi;
      return std::nullopt;
    }
    // A residual: [left_shift(] cast(int32, t) [, s)] of an int8 tensor of the output's shape.
    int64_t shift = 0;
    const auto* widened = other.as<CallNode>();
    if (IsOp(widened, "left_shift")) {
      std::optional<int64_t> bits = ScalarInt(widened->args[1]);
      if (!bits || *bits < 0 || !env_.AluImmediateFits(AluOpcode::kShr, -*bits)) {
        return std::string("it adds a residual shifted by other than 0 to 16 bits");
      }
      shift = *bits;
      widened = widened->args[0].as<CallNode>();
    }
    if (!IsOp(widened, "cast") || widened->args[0].type().dtype() != kI8 ||
        widened->args[0].type().ConstShape() != next.checked_type.ConstShape()) {
      return std::string("it adds a value that is neither a constant nor a widened int8 tensor "
                         "of its shape");
    }
    plan->steps.push_back({Step::kResidual, "", shift, widened->args[0], NameOf(next)});
    range->lo += -128 * (int64_t{1} << shift), range->hi += 127 * (int64_t{1} << shift);
    return std::nullopt;
  }

  const Environment& env_;
  const Target& target_;
  std::unordered_map<const Object*, std::vector<const CallNode*>> users_;
  std::unordered_map<const CallNode*, Plan> tails_;
};

// The rewrite: each planned tail's cast becomes the packed convolution and tail, unpacked.
class Packer : public graph::ExprMutator {
 public:
  Packer(const Environment& env, const Planner& planner) : env_(env), planner_(planner) {}

  using graph::ExprMutator::VisitExpr_;
  Expr VisitExpr_(const CallNode* op) override {
    auto planned = planner_.tails().find(op);
    if (planned == planner_.tails().end()) return graph::ExprMutator::VisitExpr_(op);
    const Plan& plan = planned->second;
    const CallNode& conv = *plan.conv;
    Expr packed = MakeCall(
        "vta.conv2d_packed", {Packed(VisitExpr(conv.args[0])), PackedWeight(conv)},
        // A dense layer is a 1x1 convolution of a 1x1 image.
        {{"strides", graph::Ints{plan.workload.stride_h, plan.workload.stride_w}},
         {"padding", graph::Ints{plan.workload.pad_h, plan.workload.pad_w}},
         {"out_dtype", env_.acc_dtype().str()},
         {"tiling",
          graph::Ints{plan.tiling.rows, plan.tiling.oc_blocks, plan.tiling.virtual_threads}}},
        NameOf(conv));
    for (const Step& step : plan.steps) {
      switch (step.kind) {
        case Step::kAluImm:
          packed = MakeCall("vta.alu_imm", {packed},
                            {{"op", step.op}, {"imm", step.imm}}, step.name);
          break;
        case Step::kBias:
          // Copied by a stage of the kernel: the accumulator LOADs it.
          packed = MakeCall("add", {packed, MakeCall("copy", {PackedBias(step.operand)})}, {},
                            step.name);
          break;
        case Step::kResidual:
          packed = MakeCall("vta.add_residual", {packed, Packed(VisitExpr(step.operand))},
                            {{"shift", step.imm}}, step.name);
          break;
      }
    }
    packed = graph::MakeCast(packed, kI8);
    Expr unpacked = Unpacked(packed, op->checked_type);
    packed_of_[unpacked.get()] = packed;
    return unpacked;
  }

 private:
  // x (int8 NCHW) in VTA's layout [N/b][C/bi][H][W][b][bi], its channels padded with zeros to
  // whole blocks; the packed value itself when x is a packed convolution's unpacked output.
  Expr Packed(const Expr& x) {
    auto known = packed_of_.find(x.get());
    if (known != packed_of_.end()) return known->second;
    std::vector<int64_t> s = *x.type().ConstShape();
    const size_t rank = s.size();
    s.resize(4, 1);  // a dense layer's [N, C] as NCHW of 1x1 images
    const int64_t b = env_.batch(), bi = env_.block_in();
    Expr padded = x;
    if (s[1] % bi != 0) {
      graph::Ints widths(2 * rank, 0);
      widths[rank + 1] = RoundUp(s[1], bi) - s[1];  // the end of the channels
      padded = MakeCall("nn.pad", {x}, {{"pad_width", widths}});
      s[1] = RoundUp(s[1], bi);
    }
    Expr split = MakeCall("reshape", {padded},
                          {{"newshape", graph::Ints{s[0] / b, b, s[1] / bi, bi, s[2], s[3]}}});
    Expr packed = MakeCall("transpose", {split}, {{"axes", graph::Ints{0, 2, 4, 5, 1, 3}}});
    packed_of_[x.get()] = packed;
    return packed;
  }

  // The packed value back in NCHW (`type`), its padded channels sliced off.
  Expr Unpacked(const Expr& packed, const graph::Type& type) const {
    const std::vector<int64_t> s = *type.ConstShape();
    const int64_t channels = RoundUp(s[1], env_.block_out());
    std::vector<int64_t> padded = s;
    padded[1] = channels;
    Expr moved = MakeCall("transpose", {packed}, {{"axes", graph::Ints{0, 4, 1, 5, 2, 3}}});
    Expr unpacked =
        MakeCall("reshape", {moved}, {{"newshape", graph::Ints(padded.begin(), padded.end())}});
    if (channels == s[1]) return unpacked;
    return MakeCall(
        "strided_slice", {unpacked},
        {{"begin", graph::Ints{0}}, {"end", graph::Ints{s[1]}}, {"axes", graph::Ints{1}}});
  }

  // The OIHW weight as [O/bo][C/bi][KH][KW][bo][bi], zero in the padded channels.
  Expr PackedWeight(const CallNode& conv) const {
    const runtime::NDArray& w = conv.args[1].as<ConstantNode>()->data;
    std::vector<int64_t> s = w.Shape();
    s.resize(4, 1);  // a dense layer's [M, K] as OIHW of 1x1 windows
    const int64_t bo = env_.block_out(), bi = env_.block_in();
    const int64_t out_blocks = RoundUp(s[0], bo) / bo, in_blocks = RoundUp(s[1], bi) / bi;
    runtime::NDArray packed =
        runtime::NDArray::Empty({out_blocks, in_blocks, s[2], s[3], bo, bi}, kI8);
    std::memset(packed.data(), 0, packed.NumBytes());
    const auto* from = static_cast<const int8_t*>(w.data());
    auto* to = static_cast<int8_t*>(packed.data());
    for (int64_t o = 0; o < s[0]; ++o) {
      for (int64_t c = 0; c < s[1]; ++c) {
        for (int64_t k = 0; k < s[2] * s[3]; ++k) {
          const int64_t at = (((o / bo) * in_blocks + c / bi) * s[2] * s[3] + k) * bo * bi +
                             (o % bo) * bi + c % bi;
          to[at] = from[(o * s[1] + c) * s[2] * s[3] + k];
        }
      }
    }
    return graph::MakeConstant(packed, conv.args[1].as<ConstantNode>()->name_hint + ".vta");
  }

  // A per-channel int32 constant as [1][O/bo][1][1][b][bo], the same for each of the
  // batch's b lanes (an accumulator element holds b x bo values).
  Expr PackedBias(const Expr& bias) const {
    const runtime::NDArray& c = bias.as<ConstantNode>()->data;
    const int64_t channels = c.NumElements(), bo = env_.block_out(), b = env_.batch();
    const int64_t blocks = RoundUp(channels, bo) / bo;
    runtime::NDArray packed = runtime::NDArray::Empty({1, blocks, 1, 1, b, bo}, kI32);
    const auto* from = static_cast<const int32_t*>(c.data());
    auto* to = static_cast<int32_t*>(packed.data());
    for (int64_t block = 0; block < blocks; ++block) {
      const int64_t first = block * bo, count = std::min(bo, channels - first);
      for (int64_t lane = 0; lane < b; ++lane) {
        int32_t* row = to + (block * b + lane) * bo;
        std::fill_n(std::copy_n(from + first, count, row), bo - count, 0);  // zero padding
      }
    }
    return graph::MakeConstant(packed, bias.as<ConstantNode>()->name_hint + ".vta");
  }

  const Environment& env_;
  const Planner& planner_;
  std::unordered_map<const Object*, Expr> packed_of_;
};

}  // namespace

graph::Pass PackGraph(const Environment& env, const Target& target) {
  return {"vta.PackGraph", [env, target](const graph::IRModule& module) {
            const graph::Function& main = module.main();
            Planner planner(env, target, main);
            graph::PostOrderVisitDataflow(main->body, [&](const Expr& e) {
              const auto* call = e.as<CallNode>();
              if (!IsOp(call, "qnn.conv2d") && !IsOp(call, "qnn.dense")) return;
              Decision d = planner.Decide(*call);
              graph::RecordPlacement(
                  {NameOf(*call), d.packed ? "vta" : "host", d.reason});
            });
            if (planner.tails().empty()) return module;
            Packer packer(env, planner);
            graph::Expr body = packer.VisitExpr(main->body);
            graph::IRModule result = module;
            result.Add("main", graph::MakeFunction(main->params, body, main->attrs),
                       /*replace=*/true);
            return result;
          }};
}

}  // namespace loom::vta
