// Converters of ONNX's control flow: If with a constant condition imports the branch it
// takes, and with a condition computed at run time both branches and a selection. Loop with
// a constant trip count (and a condition that stays constant) and Scan (whose length is its
// inputs' static sequence dimension) are unrolled, their body imported once per iteration
// with the values around the node visible in it. Each iteration's kernels are the same, so
// they compile once. A Loop whose trip count or condition only a run knows becomes graph
// operator `loop`: its body a function of the module, which the VM runs once per iteration.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "frontend/onnx/converter.h"

namespace loom::frontend::onnx {
namespace {

using graph::Expr;
using graph::Ints;

// The truth of a constant rank-0 or one-element value, or nullopt when `value` is not a
// constant.
std::optional<bool> ConstantTruth(NodeContext& ctx, const Expr& value, const std::string& what) {
  const auto* constant = value.as<graph::ConstantNode>();
  if (constant == nullptr) return std::nullopt;
  const runtime::NDArray& array = constant->data;
  if (array.NumElements() != 1 || !array.dtype().is_integer_like()) {
    ctx.Fail(what + " must be one boolean, got " + array.dtype().str() + " of shape " +
             runtime::ShapeString(array.Shape()));
  }
  const auto* bytes = static_cast<const uint8_t*>(array.data());
  for (size_t k = 0; k < runtime::ElementBytes(array.dtype()); ++k) {
    if (bytes[k] != 0) return true;
  }
  return false;
}

// The iteration limit (ImportOptions::max_loop_iterations): each unrolled iteration costs
// import and compile time, and a loop that never ends must stop with an error.
void CheckUnrollable(NodeContext& ctx, int64_t iterations) {
  const int64_t limit = ctx.max_loop_iterations();
  if (iterations > limit) {
    ctx.Fail("it does not end within " + std::to_string(limit) + " iterations (it runs " +
             std::to_string(iterations) + (iterations == limit + 1 ? " or more" : "") +
             "); Loom unrolls loops at import, up to " +
             "the iteration limit: raise it with --max-loop-iterations " +
             "(ImportOptions::max_loop_iterations) if the loop does end");
  }
}

std::string BodyLabel(int64_t iteration) { return "body[" + std::to_string(iteration) + "]"; }

// If on a condition only a run knows, converted to data flow: both branches are computed
// and each output selects between them (`where` on the condition). ONNX operators have no
// side effects, and Loom's kernels read indices clamped into range and divide integers
// without trapping, so the branch not taken costs its time, except that a size it reads at
// run time (a shape operand only a run knows) is checked all the same. Its outputs must have
// the same types in both branches.
Outputs SelectBetweenBranches(NodeContext& ctx) {
  const Expr& condition = ctx.Input(0);
  const graph::Type& type = condition.type();
  if (!type.is_tensor() || type.NumElements() != std::optional<int64_t>(1) ||
      !type.dtype().is_bool()) {
    ctx.Fail("the condition must be one bool, got " + type.str());
  }
  Expr flag = ctx.Call("reshape", {condition}, {{"newshape", Ints{}}});
  std::vector<Expr> taken = ctx.ImportSubgraph("then_branch", {}, "then_branch");
  std::vector<Expr> other = ctx.ImportSubgraph("else_branch", {}, "else_branch");
  if (taken.size() != other.size()) {
    ctx.Fail("its branches give " + std::to_string(taken.size()) + " and " +
             std::to_string(other.size()) + " outputs; they must give the same number");
  }
  Outputs results;
  for (size_t k = 0; k < taken.size(); ++k) {
    const graph::Type &a = taken[k].type(), &b = other[k].type();
    if (!graph::Equal(a, b)) {
      ctx.Fail("output " + std::to_string(k) + " is " + a.str() + " in then_branch and " +
               b.str() + " in else_branch; with a condition computed at run time Loom " +
               "computes both branches and selects, so their outputs must have the same " +
               "types (a branch chosen by a size, or a constant, may differ)");
    }
    results.push_back(ctx.Call("where", {flag, taken[k], other[k]}));
  }
  return results;
}

Outputs ConvertIf(NodeContext& ctx) {
  std::optional<bool> taken = ConstantTruth(ctx, ctx.Input(0), "the condition");
  if (!taken) return SelectBetweenBranches(ctx);
  const char* branch = *taken ? "then_branch" : "else_branch";
  return ctx.ImportSubgraph(branch, {}, branch);
}

// `value`, checked to be one element of `dtype` (of any rank: the VM reads element 0).
Expr OneElement(NodeContext& ctx, const Expr& value, DataType dtype, const std::string& what) {
  const graph::Type& type = value.type();
  if (!type.is_tensor() || type.NumElements() != std::optional<int64_t>(1) ||
      type.dtype() != dtype) {
    ctx.Fail(what + " must be one " + dtype.str() + ", got " + type.str());
  }
  return value;
}

// Loop whose trip count or condition only a run knows: graph operator `loop`, its body a
// function of the module whose parameters are the iteration number, the condition, the
// carried values and the values it captures. Each carried value keeps its dtype and shape
// across iterations (a dimension only a run knows is checked then); each scan output's
// slices have one shape (the VM stacks them in a buffer of the trip count's rows; a dimension
// only a run knows is the first iteration's). The iteration limit is checked at run time.
Outputs LoopAtRunTime(NodeContext& ctx, int carried_count, int scan_count) {
  const ::onnx::GraphProto& graph = ctx.AttrGraph("body");
  const int64_t limit = ctx.max_loop_iterations();
  // Without a trip count the iteration limit bounds the loop (one more, so that reaching the
  // limit is the error it is, not the end).
  Expr trip = ctx.HasInput(0) ? OneElement(ctx, ctx.Input(0), DataType::Int(64), "the trip count M")
                              : ctx.Scalar(static_cast<double>(limit + 1), DataType::Int(64));
  Expr cond = ctx.HasInput(1) ? OneElement(ctx, ctx.Input(1), DataType::Bool(), "the condition")
                              : ctx.Scalar(1, DataType::Bool());
  std::vector<graph::Var> params = {
      graph::MakeVar(graph.input(0).name(),
                     graph::TensorType(std::vector<int64_t>{}, DataType::Int(64))),
      graph::MakeVar(graph.input(1).name(),
                     graph::TensorType(std::vector<int64_t>{}, DataType::Bool()))};
  std::vector<Expr> initial;
  for (int k = 0; k < carried_count; ++k) {
    initial.push_back(ctx.Input(2 + k));
    params.push_back(graph::MakeVar(graph.input(2 + k).name(), initial.back().type()));
  }
  std::vector<Expr> outputs =
      ctx.ImportSubgraph("body", std::vector<Expr>(params.begin(), params.end()), "body");
  OneElement(ctx, outputs[0], DataType::Bool(), "the body's condition");
  if (scan_count > 0 && !ctx.HasInput(0)) {
    ctx.Fail(
        "it has scan outputs and no trip count; a loop run at run time stacks its scan "
        "outputs in a buffer of the trip count's rows: give it a trip count M");
  }
  return RunTimeLoop(ctx, "body", trip, cond, params, initial, outputs);
}

// Loop (opset 1 to 19): inputs M (trip count), cond, the loop-carried values; the body takes
// the iteration number, the condition and the carried values, and gives the condition, the
// carried values and the scan outputs, which are stacked along a new first axis.
Outputs ConvertLoop(NodeContext& ctx) {
  const ::onnx::GraphProto& body = ctx.AttrGraph("body");
  const int carried_count = ctx.NumInputs() - 2;
  if (carried_count < 0 || body.input_size() != carried_count + 2) {
    ctx.Fail("its body takes " + std::to_string(body.input_size()) +
             " inputs; it must take the iteration number, the condition and the " +
             std::to_string(std::max(carried_count, 0)) + " loop-carried value(s)");
  }
  const int scan_count = body.output_size() - 1 - carried_count;
  if (scan_count < 0) {
    ctx.Fail("its body gives " + std::to_string(body.output_size()) +
             " outputs; it must give the condition and the " + std::to_string(carried_count) +
             " loop-carried value(s), then any scan outputs");
  }
  const bool conditional = ctx.HasInput(1);
  if (!ctx.HasInput(0) && !conditional)
    ctx.Fail("it has neither a trip count nor a condition: it never ends");
  // What only a run knows runs at run time; a loop of constant bounds unrolls.
  if (ctx.HasInput(0) && !ctx.ConstantInput(0))
    return LoopAtRunTime(ctx, carried_count, scan_count);
  std::optional<int64_t> trip_count;
  if (ctx.HasInput(0)) trip_count = ctx.ConstantInts(0).at(0);
  bool running = true;
  if (conditional) {
    std::optional<bool> initial = ConstantTruth(ctx, ctx.Input(1), "the condition");
    if (!initial) return LoopAtRunTime(ctx, carried_count, scan_count);
    running = *initial;
  }
  // A trip count with a condition is a bound the condition may end the loop before.
  if (trip_count && !conditional) CheckUnrollable(ctx, *trip_count);

  std::vector<Expr> carried;
  for (int k = 0; k < carried_count; ++k) carried.push_back(ctx.Input(2 + k));
  std::vector<std::vector<Expr>> scans(static_cast<size_t>(scan_count));
  int64_t iteration = 0;
  for (; running && (!trip_count || iteration < *trip_count); ++iteration) {
    CheckUnrollable(ctx, iteration + 1);
    std::vector<Expr> inputs = {ctx.Scalar(static_cast<double>(iteration), DataType::Int(64)),
                                ctx.Scalar(1, DataType::Bool())};
    inputs.insert(inputs.end(), carried.begin(), carried.end());
    std::vector<Expr> outputs = ctx.ImportSubgraph("body", inputs, BodyLabel(iteration));
    if (conditional) {
      std::optional<bool> next = ConstantTruth(ctx, outputs[0], "the body's condition");
      // The unrolled iterations are dropped: the loop runs at run time.
      if (!next) return LoopAtRunTime(ctx, carried_count, scan_count);
      running = *next;
    }
    carried.assign(outputs.begin() + 1, outputs.begin() + 1 + carried_count);
    for (int k = 0; k < scan_count; ++k) {
      scans[static_cast<size_t>(k)].push_back(outputs[static_cast<size_t>(1 + carried_count + k)]);
    }
  }
  // No iteration: the scan outputs' slices have the shape only an import of the body tells,
  // which the loop run at run time has (it then runs no iteration).
  if (scan_count > 0 && iteration == 0) return LoopAtRunTime(ctx, carried_count, scan_count);
  Outputs results = carried;
  for (const std::vector<Expr>& pieces : scans) results.push_back(Stack(ctx, pieces, 0));
  return results;
}

// Scan over inputs whose scanned length only a run knows: a loop run at run time of the
// first scan input's length (the others must agree: each iteration reads index t of each,
// clamped), each iteration's slices read at t (or length - 1 - t where a direction is 1),
// the scan outputs stacked by iteration, then reversed where a direction is 1 and moved to
// their axes. `input_axes` are normalized.
Outputs ScanAtRunTime(NodeContext& ctx, int64_t states, const Ints& input_axes,
                      const Ints& input_directions, const Ints& output_axes,
                      const Ints& output_directions) {
  const DataType i64 = DataType::Int(64);
  auto length_of = [&](int64_t j) {
    Expr input = ctx.Input(static_cast<int>(states + j));
    Expr dims = ctx.Call("shape_of", {input});
    return ctx.Call(
        "take", {dims, ctx.Scalar(static_cast<double>(input_axes[static_cast<size_t>(j)]), i64)},
        {{"axis", int64_t{0}}});
  };
  Expr length = length_of(0);
  std::vector<graph::Var> params = {
      graph::MakeVar("t", graph::TensorType(std::vector<int64_t>{}, i64)),
      graph::MakeVar("running", graph::TensorType(std::vector<int64_t>{}, DataType::Bool()))};
  std::vector<Expr> initial, inputs;
  for (int64_t k = 0; k < states; ++k) {
    initial.push_back(ctx.Input(static_cast<int>(k)));
    params.push_back(graph::MakeVar("state" + std::to_string(k), initial.back().type()));
    inputs.push_back(params.back());
  }
  for (size_t j = 0; j < input_axes.size(); ++j) {
    Expr t = params[0];
    if (input_directions[j] != 0) {
      t = ctx.Call("subtract", {ctx.Call("subtract", {length, ctx.Scalar(1, i64)}), t});
    }
    inputs.push_back(ctx.Call("take",
                              {ctx.Input(static_cast<int>(states + static_cast<int64_t>(j))), t},
                              {{"axis", input_axes[j]}}));
  }
  std::vector<Expr> body = {params[1]};
  std::vector<Expr> outputs = ctx.ImportSubgraph("body", inputs, "body");
  body.insert(body.end(), outputs.begin(), outputs.end());
  Outputs results =
      RunTimeLoop(ctx, "body", length, ctx.Scalar(1, DataType::Bool()), params, initial, body);
  for (size_t k = 0; k < output_axes.size(); ++k) {
    Expr& stacked = results[static_cast<size_t>(states) + k];
    if (output_directions[k] != 0) stacked = ctx.Call("reverse", {stacked}, {{"axis", int64_t{0}}});
    const int64_t rank = stacked.type().ndim();
    const int64_t axis = NormalizeAxis(ctx, output_axes[k], rank, "scan_output_axes");
    if (axis == 0) continue;
    Ints order;  // the iteration axis moved to `axis`
    for (int64_t d = 1; d < rank; ++d) {
      if (static_cast<int64_t>(order.size()) == axis) order.push_back(0);
      order.push_back(d);
    }
    if (static_cast<int64_t>(order.size()) == axis) order.push_back(0);
    stacked = ctx.Call("transpose", {stacked}, {{"axes", order}});
  }
  return results;
}

// Scan (opset 9 and up): N state values, then the scan inputs, sliced along their axes
// (reversed where a direction is 1); the body gives the N new states and one slice of each
// scan output, stacked along its axis (prepended where a direction is 1).
Outputs ConvertScan(NodeContext& ctx) {
  if (ctx.opset() < 9) {
    ctx.Fail(
        "Scan before opset 9 (with a batch axis and sequence_lens) is not supported; "
        "export the model with opset 9 or newer");
  }
  const ::onnx::GraphProto& body = ctx.AttrGraph("body");
  const int64_t scan_inputs = ctx.AttrInt("num_scan_inputs");
  const int64_t states = ctx.NumInputs() - scan_inputs;
  if (scan_inputs < 1 || states < 0) {
    ctx.Fail("num_scan_inputs " + std::to_string(scan_inputs) + " must be between 1 and its " +
             std::to_string(ctx.NumInputs()) + " inputs");
  }
  const int64_t scan_outputs = body.output_size() - states;
  if (scan_outputs < 0) {
    ctx.Fail("its body gives " + std::to_string(body.output_size()) + " outputs, fewer than " +
             "its " + std::to_string(states) + " state value(s)");
  }
  auto per_value = [&](const char* name, int64_t count) {
    Ints values = ctx.AttrInts(name, Ints(static_cast<size_t>(count), 0));
    if (static_cast<int64_t>(values.size()) != count) {
      ctx.Fail(std::string(name) + " must have " + std::to_string(count) + " values, got " +
               std::to_string(values.size()));
    }
    return values;
  };
  Ints input_axes = per_value("scan_input_axes", scan_inputs);
  Ints input_directions = per_value("scan_input_directions", scan_inputs);
  Ints output_axes = per_value("scan_output_axes", scan_outputs);
  Ints output_directions = per_value("scan_output_directions", scan_outputs);

  for (int64_t j = 0; j < scan_inputs; ++j) {
    const graph::Type& type = ctx.Input(static_cast<int>(states + j)).type();
    int64_t& axis = input_axes[static_cast<size_t>(j)];
    axis = NormalizeAxis(ctx, axis, type.ndim(), "scan_input_axes");
    int64_t size = 0;
    if (!IsConstInt(type.shape()[static_cast<size_t>(axis)], &size)) {
      return ScanAtRunTime(ctx, states, input_axes, input_directions, output_axes,
                           output_directions);
    }
  }
  int64_t length = -1;
  for (int64_t j = 0; j < scan_inputs; ++j) {
    const int input = static_cast<int>(states + j);
    std::vector<int64_t> shape = ctx.InputShape(input);
    const int64_t axis = input_axes[static_cast<size_t>(j)];
    if (length >= 0 && shape[static_cast<size_t>(axis)] != length) {
      ctx.Fail("its scan inputs have different lengths, " + std::to_string(length) + " and " +
               std::to_string(shape[static_cast<size_t>(axis)]));
    }
    length = shape[static_cast<size_t>(axis)];
  }
  if (length == 0) ctx.Fail("its scan inputs are empty: Loom needs at least one iteration");
  CheckUnrollable(ctx, length);

  std::vector<Expr> state;
  for (int64_t k = 0; k < states; ++k) state.push_back(ctx.Input(static_cast<int>(k)));
  std::vector<std::vector<Expr>> pieces(static_cast<size_t>(scan_outputs));
  for (int64_t t = 0; t < length; ++t) {
    std::vector<Expr> inputs = state;
    for (int64_t j = 0; j < scan_inputs; ++j) {
      const int64_t axis = input_axes[static_cast<size_t>(j)];
      const int64_t at = input_directions[static_cast<size_t>(j)] != 0 ? length - 1 - t : t;
      Expr slice = ctx.Call("strided_slice", {ctx.Input(static_cast<int>(states + j))},
                            {{"begin", Ints{at}}, {"end", Ints{at + 1}}, {"axes", Ints{axis}}});
      inputs.push_back(ctx.Call("squeeze", {slice}, {{"axes", Ints{axis}}}));
    }
    std::vector<Expr> outputs = ctx.ImportSubgraph("body", inputs, BodyLabel(t));
    state.assign(outputs.begin(), outputs.begin() + states);
    for (int64_t k = 0; k < scan_outputs; ++k) {
      pieces[static_cast<size_t>(k)].push_back(outputs[static_cast<size_t>(states + k)]);
    }
  }
  Outputs results = state;
  for (int64_t k = 0; k < scan_outputs; ++k) {
    std::vector<Expr>& slices = pieces[static_cast<size_t>(k)];
    if (output_directions[static_cast<size_t>(k)] != 0) std::reverse(slices.begin(), slices.end());
    const int64_t rank = slices[0].type().ndim() + 1;
    int64_t axis =
        NormalizeAxis(ctx, output_axes[static_cast<size_t>(k)], rank, "scan_output_axes");
    results.push_back(Stack(ctx, slices, axis));
  }
  return results;
}

[[maybe_unused]] const bool kRegistered = [] {
  LOOM_REGISTER_ONNX_CONVERTER("If", ConvertIf);
  LOOM_REGISTER_ONNX_CONVERTER("Loop", ConvertLoop);
  LOOM_REGISTER_ONNX_CONVERTER("Scan", ConvertScan);
  return true;
}();

}  // namespace
}  // namespace loom::frontend::onnx
