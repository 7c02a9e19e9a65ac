// RNN, GRU and LSTM import: what a layer's node must hold, and the errors that say what is
// wrong. Their numbers are checked against ONNX Runtime over the attribute space by
// tests/e2e/recurrent/check_recurrent_layers.py, and by the ONNX node tests.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "loom/graph/compile.h"
#include "onnx_test_util.h"

namespace loom::frontend::onnx::test {
namespace {

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// An LSTM node 'l' over X [T=3, B=2, I=4] with hidden size 5 and weights for `directions`.
ModelBuilder Lstm(std::vector<::onnx::AttributeProto> attrs, int64_t directions = 1,
                  int64_t hidden = 5) {
  ModelBuilder model;
  model.Input("x", {3, 2, 4})
      .Initializer("w", RandomArray({directions, 4 * hidden, 4}, kF32, 1))
      .Initializer("r", RandomArray({directions, 4 * hidden, hidden}, kF32, 2));
  model.Node("LSTM", {"x", "w", "r"}, {"y", "y_h"}, attrs, "l").Output("y").Output("y_h");
  return model;
}

// The type of output k of a model with several outputs.
std::string OutputType(const ImportedModel& model, int k) {
  return model.module.main()->body.type().fields().at(k).str();
}

std::string ImportError(const ModelBuilder& model) {
  return ErrorOf([&] { model.Import(); });
}

TEST(OnnxRecurrent, OutputsHaveOnnxShapes) {
  ImportedModel forward = Lstm({IntAttr("hidden_size", 5)}).Import();
  EXPECT_EQ(OutputType(forward, 0), "Tensor[(3, 1, 2, 5), float32]");
  EXPECT_EQ(OutputType(forward, 1), "Tensor[(1, 2, 5), float32]");
  ModelBuilder batch_first;
  batch_first.Input("x", {2, 3, 4})
      .Initializer("w", RandomArray({2, 9, 4}, kF32, 1))
      .Initializer("r", RandomArray({2, 9, 3}, kF32, 2))
      .Node("GRU", {"x", "w", "r"}, {"y", "y_h"},
            {IntAttr("layout", 1), StringAttr("direction", "bidirectional")}, "g")
      .Output("y")
      .Output("y_h");
  ImportedModel gru = batch_first.Import();
  EXPECT_EQ(OutputType(gru, 0), "Tensor[(2, 3, 2, 3), float32]");
  EXPECT_EQ(OutputType(gru, 1), "Tensor[(2, 2, 3), float32]");
}

// A layer `op` ('l') over X of `steps` time steps (-1: a size only a run knows), batch 2,
// input size 4, hidden size 5, with biases and an initial hidden state; with `lens`, its
// sequence_lens an input too (int32 [2]).
ModelBuilder Layer(const std::string& op, int64_t steps, const std::string& direction,
                   int64_t layout, bool lens = false) {
  const int64_t gates = op == "LSTM" ? 4 : op == "GRU" ? 3 : 1;
  const int64_t directions = direction == "bidirectional" ? 2 : 1, hidden = 5;
  ModelBuilder model;
  model
      .Input("x",
             layout != 0 ? std::vector<int64_t>{2, steps, 4} : std::vector<int64_t>{steps, 2, 4})
      .Initializer("w", RandomArray({directions, gates * hidden, 4}, kF32, 1))
      .Initializer("r", RandomArray({directions, gates * hidden, hidden}, kF32, 2))
      .Initializer("b", RandomArray({directions, 2 * gates * hidden}, kF32, 3))
      .Initializer("h0", RandomArray(layout != 0 ? std::vector<int64_t>{2, directions, hidden}
                                                 : std::vector<int64_t>{directions, 2, hidden},
                                     kF32, 4));
  if (lens) model.Input("lens", {2}, DataType::Int(32));
  model.Node(op, {"x", "w", "r", "b", lens ? "lens" : "", "h0"}, {"y", "y_h"},
             {IntAttr("hidden_size", hidden), StringAttr("direction", direction),
              IntAttr("layout", layout)},
             "l");
  return model.Output("y").Output("y_h");
}

// Differential: a layer over a sequence length only a run knows (a loop the VM runs) computes
// what the layer unrolled over that length computes, every cell, direction and layout, with
// and without sequence_lens (entries past their length keep their state and output 0, a
// reverse direction runs over each entry's own sequence).
TEST(OnnxRecurrent, ASequenceLengthOnlyARunKnowsRunsAsALoop) {
  ImportOptions symbolic;
  symbolic.symbolic_dimensions = true;
  for (const char* op : {"RNN", "GRU", "LSTM"}) {
    for (const char* direction : {"forward", "reverse", "bidirectional"}) {
      for (int64_t layout : {0, 1}) {
        for (bool lens : {false, true}) {
          SCOPED_TRACE(std::string(op) + " " + direction + " layout " + std::to_string(layout) +
                       (lens ? " with sequence_lens" : ""));
          std::unique_ptr<runtime::Executor> vm = graph::MakeExecutor(
              graph::Compile(Layer(op, -1, direction, layout, lens).Import(symbolic).module, {}));
          for (int64_t steps : {1, 5}) {
            std::vector<runtime::NDArray> inputs = {RandomArray(
                layout != 0 ? std::vector<int64_t>{2, steps, 4} : std::vector<int64_t>{steps, 2, 4},
                kF32, static_cast<int>(steps))};
            // One entry's whole sequence (and past it: clamped), the other's first steps / 2.
            if (lens) {
              inputs.push_back(
                  ArrayOf({2}, DataType::Int(32), {double(steps + 1), double(steps / 2)}));
            }
            std::vector<runtime::NDArray> want =
                RunImported(Layer(op, steps, direction, layout, lens).Import(), inputs, 3);
            ExpectRunGives(*vm, inputs, want, 1e-5, std::to_string(steps) + " steps");
          }
        }
      }
    }
  }
}

// With the sequence length bounded (d0 <= 6), the step's tensors (constant shapes) are
// planned inside the loop as the tensors around it are: storages, not the pool.
TEST(OnnxRecurrent, ABoundedSequenceLengthPlansTheLoopsMemory) {
  ImportOptions symbolic;
  symbolic.symbolic_dimensions = true;
  graph::CompiledModel compiled =
      graph::Compile(Layer("LSTM", -1, "bidirectional", 0).Import(symbolic).module,
                     {.size_constraints = {"d0 <= 6"}});
  const nlohmann::json program = nlohmann::json::parse(compiled.graph_json);
  const nlohmann::json& code = program["instructions"];
  size_t head = 0, back = 0;  // the loop: from the target of its backward goto to the goto
  for (size_t n = 0; n < code.size(); ++n) {
    if (code[n]["op"] == "goto" && code[n]["target"].get<size_t>() < n) {
      head = code[n]["target"].get<size_t>();
      back = n;
    }
  }
  ASSERT_GT(back, head);
  int planned_in_loop = 0, pooled_in_loop = 0;
  for (size_t n = head; n < back; ++n) {
    if (code[n]["op"] == "alloc")
      ++(code[n].contains("storage") ? planned_in_loop : pooled_in_loop);
  }
  EXPECT_GT(planned_in_loop, 0);
  EXPECT_GT(compiled.memory.planned_bytes, 0);
  std::unique_ptr<runtime::Executor> vm = graph::MakeExecutor(compiled);
  for (int64_t steps : {6, 1, 4}) {
    runtime::NDArray x = RandomArray({steps, 2, 4}, kF32, static_cast<int>(steps));
    std::vector<runtime::NDArray> want =
        RunImported(Layer("LSTM", steps, "bidirectional", 0).Import(), {x}, 3);
    ExpectRunGives(*vm, {x}, want, 1e-5, std::to_string(steps) + " steps");
  }
}

TEST(OnnxRecurrent, MalformedLayersAreErrorsNamingTheNode) {
  EXPECT_EQ(ImportError(Lstm({IntAttr("hidden_size", 6)})),
            "node 'l' (LSTM): with hidden_size 6 and input size 4, W must be [1, 24, 4] and R "
            "[1, 24, 6] (4 gate(s) stacked), got [1, 20, 4] and [1, 20, 5]");
  EXPECT_EQ(ImportError(Lstm({StringAttr("direction", "bidirectional")})),
            "node 'l' (LSTM): direction 'bidirectional' takes 2 set(s) of weights, W has 1");
  EXPECT_EQ(ImportError(Lstm({StringAttr("direction", "backward")})),
            "node 'l' (LSTM): direction 'backward' is not forward, reverse or bidirectional");
  EXPECT_EQ(ImportError(Lstm({IntAttr("layout", 2)})), "node 'l' (LSTM): layout must be 0 or 1");
  ::onnx::AttributeProto two_functions;
  two_functions.set_name("activations");
  two_functions.set_type(::onnx::AttributeProto::STRINGS);
  two_functions.add_strings("Sigmoid");
  two_functions.add_strings("Tanh");
  EXPECT_EQ(ImportError(Lstm({two_functions})),
            "node 'l' (LSTM): activations must name 3 function(s) per direction (3 in all), got 2");
  two_functions.add_strings("Swish");
  EXPECT_EQ(ImportError(Lstm({two_functions})),
            "node 'l' (LSTM): activation 'Swish' is not one of Relu, Tanh, Sigmoid, Affine, "
            "LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus");
  EXPECT_EQ(ImportError(Lstm({FloatAttr("clip", -1)})),
            "node 'l' (LSTM): clip must be positive, got -1.000000");

  ModelBuilder lens = Lstm({});
  lens.Input("lens", {3}, DataType::Int(32));
  auto* node = lens.proto().mutable_graph()->mutable_node(0);
  node->add_input("");
  node->add_input("lens");
  EXPECT_EQ(ImportError(lens), "node 'l' (LSTM): sequence_lens must be [2], got [3]");
}

TEST(OnnxRecurrent, ReverseSequenceAxesAndLengthsAreChecked) {
  ModelBuilder model;
  model.Input("x", {3, 2, 4}).Input("lens", {3}, kI64);
  model.Node("ReverseSequence", {"x", "lens"}, {"y"}, {}, "rs").Output("y");
  EXPECT_EQ(ImportError(model), "node 'rs' (ReverseSequence): sequence_lens must be [2], got [3]");
  ModelBuilder axes;
  axes.Input("x", {3, 2, 4}).Input("lens", {2}, kI64);
  axes.Node("ReverseSequence", {"x", "lens"}, {"y"},
            {IntAttr("time_axis", 0), IntAttr("batch_axis", 2)}, "rs")
      .Output("y");
  EXPECT_TRUE(Contains(ImportError(axes),
                       "time_axis and batch_axis must be 0 and 1 in some order, got 0 and 2"));
}

}  // namespace
}  // namespace loom::frontend::onnx::test
