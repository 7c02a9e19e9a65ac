// Converters of ONNX's recurrent layers (RNN, GRU, LSTM) and of ReverseSequence.
//
// A layer is unrolled over its sequence, when its length is static, into the graph operators
// of its equations (a length only a run knows makes the same steps the body of a loop run at
// run time, RunAtRunTime):
// - the input projections of all time steps are one product, X [T*B, I] times W^T (plus
//   the biases that add to it directly), split into the T steps by one operator; each step
//   reads its piece as a parameter, so every step lowers to the same kernels, compiled once;
// - each step adds its recurrent product H_{t-1} R^T and applies the gates;
// - `sequence_lens` (a runtime input) masks the steps at or past each batch entry's
//   length: the state is held and Y is 0 there. The reverse direction then runs over each
//   entry's first sequence_lens[b] steps reversed (ReverseSequence), and its Y is reversed
//   back the same way.
// Gate order, bias layout, peepholes and the `activations` attribute follow the ONNX
// operators; `clip` bounds every activation's input.
#include <string>
#include <vector>

#include "frontend/onnx/activations.h"
#include "frontend/onnx/converter.h"

namespace loom::frontend::onnx {
namespace {

using graph::Expr;
using graph::Ints;

enum class Cell { kRnn, kGru, kLstm };

struct CellInfo {
  const char* op;
  int gates;                             // stacked in W and R: RNN 1, GRU 3, LSTM 4
  std::vector<const char*> activations;  // per direction, ONNX's defaults
};

CellInfo InfoOf(Cell cell) {
  switch (cell) {
    case Cell::kRnn:
      return {"RNN", 1, {"Tanh"}};
    case Cell::kGru:
      return {"GRU", 3, {"Sigmoid", "Tanh"}};
    case Cell::kLstm:
      return {"LSTM", 4, {"Sigmoid", "Tanh", "Tanh"}};
  }
  return {};
}

// ONNX input positions shared by the three layers (LSTM adds initial_c and P).
enum Input { kX = 0, kW, kR, kBias, kSequenceLens, kInitialH, kInitialC, kPeepholes };

std::string Text(const std::vector<int64_t>& values) { return runtime::ShapeString(values); }

// x[begin:end] along `axis`.
Expr Slice(NodeContext& ctx, Expr x, int64_t axis, int64_t begin, int64_t end) {
  return ctx.Call("strided_slice", {std::move(x)},
                  {{"begin", Ints{begin}}, {"end", Ints{end}}, {"axes", Ints{axis}}});
}

// x[index] along the first axis, which goes away.
Expr Select(NodeContext& ctx, Expr x, int64_t index) {
  return ctx.Call("squeeze", {Slice(ctx, std::move(x), 0, index, index + 1)}, {{"axes", Ints{0}}});
}

// The clamped lengths as int64 [B]: a length past the sequence (of `steps`, an int64 scalar)
// means all of it.
Expr Lengths(NodeContext& ctx, Expr lens, Expr steps) {
  DataType i64 = DataType::Int(64);
  if (lens.type().dtype() != i64) lens = ctx.Call("cast", {lens}, {{"dtype", i64.str()}});
  lens = ctx.Call("maximum", {lens, ctx.Scalar(0, i64)});
  return ctx.Call("minimum", {lens, std::move(steps)});
}

// The length of `x` along `axis` as an int64 scalar (computed at run time where only a run
// knows it).
Expr LengthAlong(NodeContext& ctx, const Expr& x, int64_t axis) {
  const DataType i64 = DataType::Int(64);
  return ctx.Call("take", {ctx.Call("shape_of", {x}), ctx.Scalar(static_cast<double>(axis), i64)},
                  {{"axis", int64_t{0}}});
}

// ReverseSequence: along `time_axis`, the first lens[b] elements of every batch entry b (along
// `batch_axis`) reversed, the rest kept. `lens` is Lengths' int64 [B]; the time axis may be a
// size only a run knows. One gather_elements whose indices are lens[b] - 1 - t where
// t < lens[b], else t.
Expr ReverseSequence(NodeContext& ctx, Expr data, Expr lens, int64_t time_axis,
                     int64_t batch_axis) {
  const size_t rank = data.type().shape().size();
  DataType i64 = DataType::Int(64);
  Expr t = ctx.Call("arange_like", {data},
                    {{"start", int64_t{0}},
                     {"delta", int64_t{1}},
                     {"like_dim", time_axis},
                     {"dtype", i64.str()}});
  t = ctx.Call("expand_dims", {t}, {{"axis", int64_t{1}}});               // [T, 1]
  Expr length = ctx.Call("expand_dims", {lens}, {{"axis", int64_t{0}}});  // [1, B]
  Expr reversed = ctx.Call("subtract", {ctx.Call("subtract", {length, ctx.Scalar(1, i64)}), t});
  Expr inside = ctx.Call("less", {t, length});
  Expr index = ctx.Call("where", {inside, reversed, t});  // [T, B]
  if (time_axis > batch_axis) index = ctx.Call("transpose", {index}, {{"axes", Ints{1, 0}}});
  // [T, B] placed at the two axes, 1 elsewhere, then expanded to data's shape.
  for (size_t axis = 0; axis < rank; ++axis) {
    if (static_cast<int64_t>(axis) != time_axis && static_cast<int64_t>(axis) != batch_axis) {
      index = ctx.Call("expand_dims", {index}, {{"axis", static_cast<int64_t>(axis)}});
    }
  }
  Ints like_dims(rank);
  for (size_t axis = 0; axis < rank; ++axis) like_dims[axis] = static_cast<int64_t>(axis);
  index =
      ctx.Call("expand_like", {index, data}, {{"shape", Ints(rank, 1)}, {"like_dims", like_dims}});
  return ctx.Call("gather_elements", {data, index}, {{"axis", time_axis}});
}

// A recurrent layer's node, read and checked once.
class RecurrentLayer {
 public:
  RecurrentLayer(NodeContext& ctx, Cell cell) : ctx_(ctx), cell_(cell), info_(InfoOf(cell)) {
    ReadShapes();
    ReadAttributes();
  }

  Outputs Convert() {
    Expr x = ctx_.Input(kX);
    if (batch_first_) x = ctx_.Call("transpose", {x}, {{"axes", Ints{1, 0, 2}}});
    if (ctx_.HasInput(kSequenceLens)) {
      lens_ = Lengths(ctx_, ctx_.Input(kSequenceLens),
                      steps_ < 0 ? LengthAlong(ctx_, x, 0)
                                 : ctx_.Scalar(static_cast<double>(steps_), DataType::Int(64)));
    }
    std::vector<Direction> runs;
    if (steps_ < 0) {
      runs = RunAtRunTime(x);
    } else {
      for (int64_t d = 0; d < directions_; ++d) runs.push_back(Run(x, d, Reverse(d)));
    }
    std::vector<Expr> ys, final_h, final_c;
    for (const Direction& out : runs) {
      ys.push_back(out.y);
      final_h.push_back(ctx_.Call("expand_dims", {out.h}, {{"axis", int64_t{0}}}));
      if (out.c.defined())
        final_c.push_back(ctx_.Call("expand_dims", {out.c}, {{"axis", int64_t{0}}}));
    }
    Expr y = ctx_.Call("concatenate", ys, {{"axis", int64_t{1}}});         // [T, D, B, H]
    Expr y_h = ctx_.Call("concatenate", final_h, {{"axis", int64_t{0}}});  // [D, B, H]
    if (batch_first_) {
      y = ctx_.Call("transpose", {y}, {{"axes", Ints{2, 0, 1, 3}}});
      y_h = ctx_.Call("transpose", {y_h}, {{"axes", Ints{1, 0, 2}}});
    }
    if (cell_ != Cell::kLstm) return {y, y_h};
    Expr y_c = ctx_.Call("concatenate", final_c, {{"axis", int64_t{0}}});
    if (batch_first_) y_c = ctx_.Call("transpose", {y_c}, {{"axes", Ints{1, 0, 2}}});
    return {y, y_h, y_c};
  }

 private:
  struct Direction {
    Expr y;  // [T, 1, B, H]
    Expr h;  // [B, H]
    Expr c;  // [B, H], LSTM only
  };

  // The weights of one direction and what each step needs of them.
  struct Weights {
    Expr recurrent;         // R [G*H, H] (GRU with linear_before_reset = 0: its z and r rows)
    Expr recurrent_hidden;  // GRU with linear_before_reset = 0: R's h rows [H, H]
    Expr recurrent_bias;    // GRU with linear_before_reset: Rb of the h gate [H]
    Expr peephole_i, peephole_o, peephole_f;  // LSTM with P: [H] each
  };

  int64_t H() const { return hidden_; }

  bool Reverse(int64_t d) const {
    return direction_ == "reverse" || (direction_ == "bidirectional" && d == 1);
  }

  void ReadShapes() {
    const graph::Type& x_type = ctx_.Input(kX).type();
    std::vector<int64_t> w = ctx_.InputShape(kW), r = ctx_.InputShape(kR);
    if (x_type.ndim() != 3 || w.size() != 3 || r.size() != 3) {
      ctx_.Fail("X, W and R must be 3-d, got " + x_type.str() + ", " + Text(w) + " and " + Text(r));
    }
    batch_first_ = ctx_.AttrInt("layout", 0) != 0;
    if (ctx_.AttrInt("layout", 0) > 1) ctx_.Fail("layout must be 0 or 1");
    // The sequence length may be a size only a run knows (-1: the layer runs as a loop);
    // the batch and input sizes are constant.
    const std::vector<PrimExpr>& dims = x_type.shape();
    if (!IsConstInt(dims[batch_first_ ? 1 : 0], &steps_)) steps_ = -1;
    if (!IsConstInt(dims[batch_first_ ? 0 : 1], &batch_) || !IsConstInt(dims[2], &input_size_)) {
      ctx_.Fail("X is " + x_type.str() +
                "; Loom runs recurrent layers over a sequence length "
                "only a run knows, but needs the batch and input sizes constant: bind them "
                "with --input-shape");
    }
    std::vector<int64_t> x = {batch_first_ ? batch_ : steps_, batch_first_ ? steps_ : batch_,
                              input_size_};
    directions_ = w[0];
    int64_t gates = info_.gates;
    hidden_ = ctx_.AttrInt("hidden_size", r[2]);
    std::vector<int64_t> want_w = {directions_, gates * H(), input_size_};
    std::vector<int64_t> want_r = {directions_, gates * H(), H()};
    if (w != want_w || r != want_r) {
      ctx_.Fail("with hidden_size " + std::to_string(H()) + " and input size " +
                std::to_string(input_size_) + ", W must be " + Text(want_w) + " and R " +
                Text(want_r) + " (" + std::to_string(gates) + " gate(s) stacked), got " + Text(w) +
                " and " + Text(r));
    }
    if (steps_ == 0 || batch_ < 1)
      ctx_.Fail("X " + Text(x) + " has no time step or no batch entry");
    ExpectShape(kBias, {directions_, 2 * gates * H()}, "B");
    if (ctx_.HasInput(kSequenceLens)) ExpectShape(kSequenceLens, {batch_}, "sequence_lens");
    std::vector<int64_t> state = batch_first_ ? std::vector<int64_t>{batch_, directions_, H()}
                                              : std::vector<int64_t>{directions_, batch_, H()};
    ExpectShape(kInitialH, state, "initial_h");
    if (cell_ == Cell::kLstm) {
      ExpectShape(kInitialC, state, "initial_c");
      ExpectShape(kPeepholes, {directions_, 3 * H()}, "P");
    }
  }

  void ExpectShape(int input, const std::vector<int64_t>& want, const std::string& name) {
    if (!ctx_.HasInput(input)) return;
    std::vector<int64_t> got = ctx_.InputShape(input);
    if (got != want) ctx_.Fail(name + " must be " + Text(want) + ", got " + Text(got));
  }

  void ReadAttributes() {
    direction_ = ctx_.AttrString("direction", "forward");
    int64_t want_directions = direction_ == "bidirectional" ? 2 : 1;
    if (direction_ != "forward" && direction_ != "reverse" && direction_ != "bidirectional") {
      ctx_.Fail("direction '" + direction_ + "' is not forward, reverse or bidirectional");
    }
    if (directions_ != want_directions) {
      ctx_.Fail("direction '" + direction_ + "' takes " + std::to_string(want_directions) +
                " set(s) of weights, W has " + std::to_string(directions_));
    }
    size_t per_direction = info_.activations.size();
    std::vector<std::string> names;
    for (int64_t d = 0; d < directions_; ++d) {
      names.insert(names.end(), info_.activations.begin(), info_.activations.end());
    }
    names = ctx_.AttrStrings("activations", names);
    if (names.size() != per_direction * directions_) {
      ctx_.Fail("activations must name " + std::to_string(per_direction) + " function(s) per " +
                "direction (" + std::to_string(per_direction * directions_) + " in all), got " +
                std::to_string(names.size()));
    }
    std::vector<float> alphas = ctx_.AttrFloats("activation_alpha", {});
    std::vector<float> betas = ctx_.AttrFloats("activation_beta", {});
    size_t next_alpha = 0, next_beta = 0;
    for (const std::string& name : names) {
      std::optional<Activation> f = ParseActivation(name, alphas, &next_alpha, betas, &next_beta);
      if (!f) ctx_.Fail("activation '" + name + "' is not one of " + ActivationNames());
      activations_.push_back(*f);
    }
    if (ctx_.HasAttr("clip")) {
      clip_ = ctx_.AttrFloat("clip");
      if (!(*clip_ > 0)) ctx_.Fail("clip must be positive, got " + std::to_string(*clip_));
    }
    input_forget_ = cell_ == Cell::kLstm && ctx_.AttrInt("input_forget", 0) != 0;
    linear_before_reset_ = cell_ == Cell::kGru && ctx_.AttrInt("linear_before_reset", 0) != 0;
  }

  // Activation k of direction d, its input clipped.
  Expr Activated(int64_t d, size_t k, Expr x) {
    if (clip_) {
      x = ctx_.Call(
          "clip", {x},
          {{"a_min", -static_cast<double>(*clip_)}, {"a_max", static_cast<double>(*clip_)}});
    }
    return Activate(ctx_, activations_[d * info_.activations.size() + k], x);
  }

  // Gate k's columns of a [B, G*H] value.
  Expr Gate(Expr x, int64_t k) { return Slice(ctx_, std::move(x), 1, k * H(), (k + 1) * H()); }

  // The initial state of direction d (input `input`, else zeros) as [B, H].
  Expr InitialState(int input, int64_t d) {
    if (!ctx_.HasInput(input)) {
      return ctx_.Call("broadcast_to", {ctx_.Scalar(0, dtype())}, {{"shape", Ints{batch_, H()}}});
    }
    Expr state = ctx_.Input(input);
    if (batch_first_) state = ctx_.Call("transpose", {state}, {{"axes", Ints{1, 0, 2}}});
    return Select(ctx_, state, d);
  }

  DataType dtype() const { return ctx_.InputDtype(kX); }

  // The biases of direction d added to the input projection ([G*H]), and those the steps
  // need (GRU with linear_before_reset: Rb of the h gate, inside the reset product).
  Expr InputBias(int64_t d, Weights* weights) {
    int64_t width = info_.gates * H();
    Expr bias = Select(ctx_, ctx_.Input(kBias), d);  // [Wb; Rb]
    Expr input_bias = Slice(ctx_, bias, 0, 0, width);
    Expr recurrent_bias = Slice(ctx_, bias, 0, width, 2 * width);
    if (!linear_before_reset_) return ctx_.Call("add", {input_bias, recurrent_bias});
    weights->recurrent_bias = Slice(ctx_, recurrent_bias, 0, 2 * H(), 3 * H());
    Expr summed = ctx_.Call("add", {Slice(ctx_, input_bias, 0, 0, 2 * H()),
                                    Slice(ctx_, recurrent_bias, 0, 0, 2 * H())});
    return ctx_.Call("concatenate", {summed, Slice(ctx_, input_bias, 0, 2 * H(), 3 * H())},
                     {{"axis", int64_t{0}}});
  }

  // Every step's input projection X_t W^T + biases, [B, G*H] each, in time order.
  std::vector<Expr> InputProjections(Expr x, int64_t d, Weights* weights) {
    Expr rows = ctx_.Call("reshape", {x}, {{"newshape", Ints{steps_ * batch_, input_size_}}});
    Expr projection = ctx_.Call("nn.dense", {rows, Select(ctx_, ctx_.Input(kW), d)});
    if (ctx_.HasInput(kBias)) projection = ctx_.Call("add", {projection, InputBias(d, weights)});
    if (steps_ == 1) return {projection};
    Expr pieces = ctx_.Call("split", {projection},
                            {{"indices_or_sections", Ints{steps_}}, {"axis", int64_t{0}}});
    std::vector<Expr> steps;
    for (int64_t t = 0; t < steps_; ++t) {
      steps.push_back(graph::MakeTupleGetItem(pieces, static_cast<int>(t)));
    }
    return steps;
  }

  Weights WeightsOf(int64_t d) {
    Weights weights;
    Expr r = Select(ctx_, ctx_.Input(kR), d);
    weights.recurrent = r;
    if (cell_ == Cell::kGru && !linear_before_reset_) {
      weights.recurrent = Slice(ctx_, r, 0, 0, 2 * H());
      weights.recurrent_hidden = Slice(ctx_, r, 0, 2 * H(), 3 * H());
    }
    if (cell_ == Cell::kLstm && ctx_.HasInput(kPeepholes)) {
      Expr p = Select(ctx_, ctx_.Input(kPeepholes), d);  // i, o, f
      weights.peephole_i = Slice(ctx_, p, 0, 0, H());
      weights.peephole_o = Slice(ctx_, p, 0, H(), 2 * H());
      weights.peephole_f = Slice(ctx_, p, 0, 2 * H(), 3 * H());
    }
    return weights;
  }

  Expr Add(Expr a, Expr b) { return ctx_.Call("add", {std::move(a), std::move(b)}); }
  Expr Mul(Expr a, Expr b) { return ctx_.Call("multiply", {std::move(a), std::move(b)}); }
  Expr OneMinus(Expr a) { return ctx_.Call("subtract", {ctx_.Scalar(1, dtype()), std::move(a)}); }
  Expr Product(Expr h, Expr weight) {
    return ctx_.Call("nn.dense", {std::move(h), std::move(weight)});
  }

  // One step of direction d: the new hidden state from the input projection x, and for an
  // LSTM the new cell state in *c.
  Expr Step(int64_t d, const Weights& w, Expr x, Expr h, Expr* c) {
    switch (cell_) {
      case Cell::kRnn:
        return Activated(d, 0, Add(x, Product(h, w.recurrent)));
      case Cell::kGru: {
        Expr recurrent = Product(h, w.recurrent);  // z, r (and h with linear_before_reset)
        Expr z = Activated(d, 0, Add(Gate(x, 0), Gate(recurrent, 0)));
        Expr reset = Activated(d, 0, Add(Gate(x, 1), Gate(recurrent, 1)));
        Expr candidate =
            linear_before_reset_
                ? Mul(reset, w.recurrent_bias.defined() ? Add(Gate(recurrent, 2), w.recurrent_bias)
                                                        : Gate(recurrent, 2))
                : Product(Mul(reset, h), w.recurrent_hidden);
        Expr hidden = Activated(d, 1, Add(Gate(x, 2), candidate));
        return Add(Mul(OneMinus(z), hidden), Mul(z, h));
      }
      case Cell::kLstm: {
        Expr gates = Add(x, Product(h, w.recurrent));  // i, o, f, c
        auto peephole = [&](Expr pre, const Expr& p, const Expr& cell) {
          return p.defined() ? Add(pre, Mul(p, cell)) : pre;
        };
        Expr input = Activated(d, 0, peephole(Gate(gates, 0), w.peephole_i, *c));
        Expr forget = input_forget_ ? OneMinus(input)
                                    : Activated(d, 0, peephole(Gate(gates, 2), w.peephole_f, *c));
        Expr candidate = Activated(d, 1, Gate(gates, 3));
        *c = Add(Mul(forget, *c), Mul(input, candidate));
        Expr output = Activated(d, 0, peephole(Gate(gates, 1), w.peephole_o, *c));
        return Mul(output, Activate(ctx_, activations_[d * 3 + 2], *c));
      }
    }
    return {};
  }

  // The layer as a loop run at run time over a sequence length only a run knows: every
  // direction's input projection computed at once before it ([T, B, G*H], captured), each
  // iteration i one step of each direction (a reverse one at T - 1 - i), its hidden (and
  // cell) states carried, its hidden state the step's output (a reverse direction's stacked
  // backwards, then reversed). With sequence_lens, as unrolled: entries past their length
  // keep their state and output 0, and a reverse direction runs forward over each entry's
  // sequence reversed (ReverseSequence), its output reversed back.
  std::vector<Direction> RunAtRunTime(Expr x) {
    const DataType i64 = DataType::Int(64);
    auto scalar_type = [](DataType dtype) {
      return graph::TensorType(std::vector<int64_t>{}, dtype);
    };
    Expr steps = LengthAlong(ctx_, x, 0);
    std::vector<graph::Var> params = {graph::MakeVar("t", scalar_type(i64)),
                                      graph::MakeVar("running", scalar_type(DataType::Bool()))};
    const graph::Type state = graph::TensorType({batch_, H()}, dtype());
    std::vector<Expr> initial, next, ys;
    for (int64_t d = 0; d < directions_; ++d) {
      Weights weights = WeightsOf(d);
      const bool reversed_input = Reverse(d) && lens_.defined();
      // [T, B, G*H]: the product over every step's rows at once.
      Expr projection =
          ctx_.Call("nn.dense", {reversed_input ? ReverseSequence(ctx_, x, lens_, 0, 1) : x,
                                 Select(ctx_, ctx_.Input(kW), d)});
      if (ctx_.HasInput(kBias)) projection = ctx_.Call("add", {projection, InputBias(d, &weights)});
      Expr t = params[0];
      if (Reverse(d) && !reversed_input)
        t = ctx_.Call("subtract", {ctx_.Call("subtract", {steps, ctx_.Scalar(1, i64)}), t});
      Expr x_t = ctx_.Call("take", {projection, t}, {{"axis", int64_t{0}}});  // [B, G*H]
      const std::string suffix = std::to_string(d);
      graph::Var h = graph::MakeVar("h" + suffix, state);
      params.push_back(h);
      initial.push_back(InitialState(kInitialH, d));
      Expr c;
      if (cell_ == Cell::kLstm) {
        graph::Var cell = graph::MakeVar("c" + suffix, state);
        params.push_back(cell);
        initial.push_back(InitialState(kInitialC, d));
        c = cell;
      }
      Expr c_next = c;
      Expr h_next = Step(d, weights, x_t, h, &c_next);
      Expr y_t = h_next;
      if (lens_.defined()) Mask(params[0], h, c, &y_t, &h_next, &c_next);
      next.push_back(h_next);
      if (c_next.defined()) next.push_back(c_next);
      ys.push_back(y_t);
    }
    std::vector<Expr> body = {params[1]};
    body.insert(body.end(), next.begin(), next.end());
    body.insert(body.end(), ys.begin(), ys.end());
    Outputs results =
        RunTimeLoop(ctx_, "steps", steps, ctx_.Scalar(1, DataType::Bool()), params, initial, body);
    std::vector<Direction> runs;
    const size_t per_direction = cell_ == Cell::kLstm ? 2 : 1;
    for (int64_t d = 0; d < directions_; ++d) {
      const size_t at = static_cast<size_t>(d) * per_direction;
      // [T, B, H] by iteration: the loop's count of iterations is x's length T, which a
      // slice to it says to the types (the same size as x's, for what follows).
      Expr y = ctx_.Call(
          "slice_like", {results[initial.size() + static_cast<size_t>(d)], x},
          {{"begin", Ints{0}}, {"end", Ints{0}}, {"axes", Ints{0}}, {"like_dims", Ints{0}}});
      if (Reverse(d) && lens_.defined()) {
        y = ReverseSequence(ctx_, y, lens_, 0, 1);
      } else if (Reverse(d)) {
        y = ctx_.Call("reverse", {y}, {{"axis", int64_t{0}}});
      }
      y = ctx_.Call("expand_dims", {y}, {{"axis", int64_t{1}}});  // [T, 1, B, H]
      runs.push_back({y, results[at], per_direction == 2 ? results[at + 1] : Expr()});
    }
    return runs;
  }

  // With sequence_lens, at time step t: entries whose sequence has ended keep their state
  // (h, c) and output 0.
  void Mask(const Expr& t, const Expr& h, const Expr& c, Expr* y, Expr* h_next, Expr* c_next) {
    Expr running = ctx_.Call("less", {t, lens_});
    running = ctx_.Call("reshape", {running}, {{"newshape", Ints{batch_, 1}}});
    *y = ctx_.Call("where", {running, *y, ctx_.Scalar(0, dtype())});
    *h_next = ctx_.Call("where", {running, *h_next, h});
    if (c.defined()) *c_next = ctx_.Call("where", {running, *c_next, c});
  }

  Direction Run(Expr x, int64_t d, bool reverse) {
    // With sequence_lens the reverse direction runs forward over reversed sequences.
    bool reversed_input = reverse && lens_.defined();
    if (reversed_input) x = ReverseSequence(ctx_, x, lens_, 0, 1);
    Weights weights = WeightsOf(d);
    std::vector<Expr> inputs = InputProjections(x, d, &weights);
    Expr h = InitialState(kInitialH, d);
    Expr c;
    if (cell_ == Cell::kLstm) c = InitialState(kInitialC, d);
    std::vector<Expr> ys(steps_);
    for (int64_t k = 0; k < steps_; ++k) {
      int64_t t = reverse && !reversed_input ? steps_ - 1 - k : k;
      Expr c_next = c;
      Expr h_next = Step(d, weights, inputs[t], h, &c_next);
      ys[t] = h_next;
      if (lens_.defined()) {
        Mask(ctx_.Scalar(static_cast<double>(t), DataType::Int(64)), h, c, &ys[t], &h_next,
             &c_next);
      }
      h = h_next;
      c = c_next;
    }
    Expr y =
        ctx_.Call("expand_dims", {Stack(ctx_, ys, 0)}, {{"axis", int64_t{1}}});  // [T, 1, B, H]
    if (reversed_input) y = ReverseSequence(ctx_, y, lens_, 0, 2);
    return {y, h, c};
  }

  NodeContext& ctx_;
  Cell cell_;
  CellInfo info_;
  bool batch_first_ = false;
  int64_t steps_ = 0, batch_ = 0, input_size_ = 0, directions_ = 0, hidden_ = 0;
  std::string direction_;
  std::vector<Activation> activations_;  // per direction, info_.activations.size() each
  std::optional<float> clip_;
  bool input_forget_ = false;
  bool linear_before_reset_ = false;
  Expr lens_;  // Lengths of sequence_lens, when given
};

Converter Recurrent(Cell cell) {
  return [cell](NodeContext& ctx) -> Outputs { return RecurrentLayer(ctx, cell).Convert(); };
}

Outputs ConvertReverseSequence(NodeContext& ctx) {
  int64_t rank = ctx.InputRank(0);
  if (rank < 2) ctx.Fail("input must have at least 2 dimensions, got " + Text(ctx.InputShape(0)));
  int64_t time_axis = NormalizeAxis(ctx, ctx.AttrInt("time_axis", 0), rank, "time_axis");
  int64_t batch_axis = NormalizeAxis(ctx, ctx.AttrInt("batch_axis", 1), rank, "batch_axis");
  if (time_axis == batch_axis || time_axis > 1 || batch_axis > 1) {
    ctx.Fail("time_axis and batch_axis must be 0 and 1 in some order, got " +
             std::to_string(time_axis) + " and " + std::to_string(batch_axis));
  }
  std::vector<int64_t> shape = ctx.InputShape(0);
  if (ctx.InputShape(1) != std::vector<int64_t>{shape[batch_axis]}) {
    ctx.Fail("sequence_lens must be " + Text({shape[batch_axis]}) + ", got " +
             Text(ctx.InputShape(1)));
  }
  Expr lens = Lengths(ctx, ctx.Input(1),
                      ctx.Scalar(static_cast<double>(shape[time_axis]), DataType::Int(64)));
  return {ReverseSequence(ctx, ctx.Input(0), lens, time_axis, batch_axis)};
}

[[maybe_unused]] const bool kRegistered = [] {
  LOOM_REGISTER_ONNX_CONVERTER("RNN", Recurrent(Cell::kRnn));
  LOOM_REGISTER_ONNX_CONVERTER("GRU", Recurrent(Cell::kGru));
  LOOM_REGISTER_ONNX_CONVERTER("LSTM", Recurrent(Cell::kLstm));
  LOOM_REGISTER_ONNX_CONVERTER("ReverseSequence", ConvertReverseSequence);
  return true;
}();

}  // namespace
}  // namespace loom::frontend::onnx
