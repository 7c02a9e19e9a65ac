// If, Loop and Scan: the branch taken, or both and a selection for a condition only a run
// knows; the loops whose course is known at compile time unrolled (each iteration's body
// imported with the values around the node visible), the others run by the VM, against
// references computed here and against their unrolled forms; and the errors.
#include <gtest/gtest.h>

#include "loom/graph/compile.h"
#include "onnx_test_util.h"

namespace loom::frontend::onnx::test {
namespace {

const DataType kBool = DataType::Bool();

::onnx::AttributeProto GraphAttr(const std::string& name, const ModelBuilder& body) {
  ::onnx::AttributeProto attr;
  attr.set_name(name);
  attr.set_type(::onnx::AttributeProto::GRAPH);
  *attr.mutable_g() = body.proto().graph();
  return attr;
}

runtime::NDArray Scalar(DataType dtype, double value) {
  runtime::NDArray array = runtime::NDArray::Empty({}, dtype);
  SetValue(array, 0, value);
  return array;
}

// A branch computing `op`(x, one), x from the scope around it.
ModelBuilder Branch(const std::string& op) {
  ModelBuilder branch;
  branch.Initializer("one", ArrayOf({3}, kF32, {1, 1, 1}))
      .Node(op, {"x", "one"}, {"y_" + op})
      .Output("y_" + op);
  return branch;
}

TEST(OnnxControl, IfWithAConstantConditionImportsTheBranchItTakes) {
  runtime::NDArray x = ArrayOf({3}, kF32, {1, 2, 3});
  for (bool taken : {true, false}) {
    ModelBuilder model;
    model.Input("x", {3})
        .Initializer("cond", Scalar(kBool, taken))
        .Node("If", {"cond"}, {"y"},
              {GraphAttr("then_branch", Branch("Add")), GraphAttr("else_branch", Branch("Sub"))})
        .Output("y");
    ExpectOutputs(
        model, {x},
        {ArrayOf({3}, kF32, taken ? std::vector<double>{2, 3, 4} : std::vector<double>{0, 1, 2})});
  }
  // A condition folded from the input's static shape: 3 > 2.
  ModelBuilder shaped;
  shaped.Input("x", {3})
      .Initializer("two", ArrayOf({1}, kI64, {2}))
      .Node("Shape", {"x"}, {"shape"})
      .Node("Greater", {"shape", "two"}, {"longer"})
      .Node("Squeeze", {"longer"}, {"cond"})
      .Node("If", {"cond"}, {"y"},
            {GraphAttr("then_branch", Branch("Mul")), GraphAttr("else_branch", Branch("Sub"))})
      .Output("y");
  ExpectOutputs(shaped, {x}, {x});
}

TEST(OnnxControl, IfWithARunTimeConditionSelectsBetweenItsBranches) {
  runtime::NDArray x = ArrayOf({3}, kF32, {1, 2, 3});
  // The condition as ONNX gives it (rank 0) and as exporters often do (one element, rank 1).
  for (const std::vector<int64_t>& cond_shape : {std::vector<int64_t>{}, {1}}) {
    ModelBuilder model;
    model.Input("x", {3})
        .Input("cond", cond_shape, kBool)
        .Node("If", {"cond"}, {"y"},
              {GraphAttr("then_branch", Branch("Add")), GraphAttr("else_branch", Branch("Sub"))},
              "branch")
        .Output("y");
    for (bool taken : {true, false}) {
      runtime::NDArray cond = runtime::NDArray::Empty(cond_shape, kBool);
      SetValue(cond, 0, taken);
      ExpectOutputs(model, {x, cond},
                    {ArrayOf({3}, kF32,
                             taken ? std::vector<double>{2, 3, 4} : std::vector<double>{0, 1, 2})});
    }
  }
}

TEST(OnnxControl, RunTimeBranchesMustAgreeOnTheirOutputs) {
  ModelBuilder wider;  // else gives [6]: x joined with itself
  wider.Node("Concat", {"x", "x"}, {"y_wide"}, {IntAttr("axis", 0)}).Output("y_wide");
  ModelBuilder model;
  model.Input("x", {3})
      .Input("cond", {}, kBool)
      .Node("If", {"cond"}, {"y"},
            {GraphAttr("then_branch", Branch("Add")), GraphAttr("else_branch", wider)}, "branch")
      .Output("y");
  EXPECT_EQ(ErrorOf([&] { model.Import(); }),
            "node 'branch' (If): output 0 is Tensor[(3,), float32] in then_branch and "
            "Tensor[(6,), float32] in else_branch; with a condition computed at run time Loom "
            "computes both branches and selects, so their outputs must have the same types (a "
            "branch chosen by a size, or a constant, may differ)");
  ModelBuilder counted;
  counted.Input("x", {3})
      .Input("cond", {2}, kBool)
      .Node("If", {"cond"}, {"y"},
            {GraphAttr("then_branch", Branch("Add")), GraphAttr("else_branch", Branch("Sub"))},
            "two")
      .Output("y");
  EXPECT_EQ(ErrorOf([&] { counted.Import(); }),
            "node 'two' (If): the condition must be one bool, got Tensor[(2,), bool]");
}

// Loop body: s' = s + x * (i + 1) (x from outside), a scan output 2 s', and the condition
// i < `last` (or passed through).
ModelBuilder LoopBody(std::optional<int64_t> last) {
  ModelBuilder body;
  body.Input("i", {}, kI64).Input("cond_in", {}, kBool).Input("s", {2});
  body.Initializer("one", Scalar(kI64, 1)).Initializer("two", ArrayOf({1}, kF32, {2}));
  body.Node("Add", {"i", "one"}, {"i1"})
      .Node("Cast", {"i1"}, {"f"}, {IntAttr("to", ::onnx::TensorProto::FLOAT)})
      .Node("Mul", {"x", "f"}, {"step"})
      .Node("Add", {"s", "step"}, {"s_out"})
      .Node("Mul", {"s_out", "two"}, {"doubled"});
  if (last) {
    body.Initializer("last", Scalar(kI64, static_cast<double>(*last)))
        .Node("Less", {"i", "last"}, {"cond_out"});
  } else {
    body.Node("Identity", {"cond_in"}, {"cond_out"});
  }
  body.Output("cond_out").Output("s_out").Output("doubled");
  return body;
}

// The loop's carried sum and its scan output after `iterations` iterations.
std::vector<runtime::NDArray> LoopReference(const std::vector<double>& x,
                                            const std::vector<double>& s0, int iterations) {
  std::vector<double> s = s0, scan;
  for (int i = 0; i < iterations; ++i) {
    for (int k = 0; k < 2; ++k) {
      s[k] += x[k] * (i + 1);
      scan.push_back(2 * s[k]);
    }
  }
  return {ArrayOf({2}, kF32, s), ArrayOf({iterations, 2}, kF32, scan)};
}

TEST(OnnxControl, LoopWithAConstantTripCountIsUnrolled) {
  ModelBuilder model;
  model.Input("x", {2})
      .Input("s0", {2})
      .Initializer("M", Scalar(kI64, 4))
      .Node("Loop", {"M", "", "s0"}, {"s", "scan"}, {GraphAttr("body", LoopBody(std::nullopt))})
      .Output("s")
      .Output("scan");
  std::vector<double> x = {0.5, -1}, s0 = {3, 4};
  ExpectOutputs(model, {ArrayOf({2}, kF32, x), ArrayOf({2}, kF32, s0)}, LoopReference(x, s0, 4));
}

TEST(OnnxControl, LoopEndsWhenItsConstantConditionTurnsFalse) {
  // The body's condition i < 2 is false after iteration 2: three iterations of the ten.
  ModelBuilder model;
  model.Input("x", {2})
      .Input("s0", {2})
      .Initializer("M", Scalar(kI64, 10))
      .Initializer("go", Scalar(kBool, 1))
      .Node("Loop", {"M", "go", "s0"}, {"s", "scan"}, {GraphAttr("body", LoopBody(2))})
      .Output("s")
      .Output("scan");
  std::vector<double> x = {1, 2}, s0 = {0, 0};
  ExpectOutputs(model, {ArrayOf({2}, kF32, x), ArrayOf({2}, kF32, s0)}, LoopReference(x, s0, 3));
}

// A loop of the trip count the model gives at run time.
ModelBuilder RunTimeLoop(std::optional<int64_t> last = std::nullopt) {
  ModelBuilder model;
  model.Input("x", {2}).Input("s0", {2}).Input("M", {}, kI64);
  if (last) model.Input("go", {}, kBool);
  model.Node("Loop", {"M", last ? "go" : "", "s0"}, {"s", "scan"},
             {GraphAttr("body", LoopBody(last))}, "loop");
  model.Output("s").Output("scan");
  return model;
}

TEST(OnnxControl, LoopWithARunTimeTripCountRunsInTheVm) {
  ModelBuilder model = RunTimeLoop();
  std::vector<double> x = {0.5, -1}, s0 = {3, 4};
  // No iteration: the carried value as given, an empty scan output.
  for (int trips : {0, 1, 4, 7}) {
    SCOPED_TRACE("M = " + std::to_string(trips));
    ExpectOutputs(model, {ArrayOf({2}, kF32, x), ArrayOf({2}, kF32, s0), Scalar(kI64, trips)},
                  LoopReference(x, s0, trips));
  }
  // The loop runs in the VM, however constant the rest of the model is.
  graph::CompiledModel compiled = graph::Compile(model.Import().module, {});
  EXPECT_EQ(compiled.executor, "vm");
  EXPECT_NE(ErrorOf([&] {
              graph::Compile(model.Import().module, {.executor = "graph"});
            }).find("'loop' is a loop run at run time, which the virtual machine runs"),
            std::string::npos);
}

TEST(OnnxControl, LoopWithARunTimeConditionEndsWhenItTurnsFalse) {
  // The body's condition i < 2 ends the loop after three iterations, the trip count after M.
  ModelBuilder model = RunTimeLoop(2);
  std::vector<double> x = {1, 2}, s0 = {0, 0.5};
  auto inputs = [&](int trips, bool go) {
    return std::vector<runtime::NDArray>{ArrayOf({2}, kF32, x), ArrayOf({2}, kF32, s0),
                                         Scalar(kI64, trips), Scalar(kBool, go)};
  };
  ExpectOutputs(model, inputs(10, true), LoopReference(x, s0, 3));
  ExpectOutputs(model, inputs(2, true), LoopReference(x, s0, 2));
  ExpectOutputs(model, inputs(10, false), LoopReference(x, s0, 0));
}

// Differential: the loop run at run time computes what the same loop unrolled at import (its
// trip count a constant) computes, over random values and trip counts.
TEST(OnnxControl, RunTimeLoopsComputeWhatTheirUnrolledFormsCompute) {
  ImportedModel at_run_time = RunTimeLoop().Import();
  graph::CompiledModel compiled = graph::Compile(at_run_time.module, {});
  std::unique_ptr<runtime::Executor> vm = graph::MakeExecutor(compiled);
  for (int seed = 0; seed < 6; ++seed) {
    const int trips = (seed * 5) % 7;
    runtime::NDArray x = RandomArray({2}, kF32, seed), s0 = RandomArray({2}, kF32, seed + 50);
    ModelBuilder unrolled;
    unrolled.Input("x", {2}).Input("s0", {2}).Initializer("M", Scalar(kI64, trips));
    unrolled.Node("Loop", {"M", "", "s0"}, {"s", "scan"},
                  {GraphAttr("body", LoopBody(std::nullopt))}, "loop");
    unrolled.Output("s").Output("scan");
    std::vector<runtime::NDArray> want = RunImported(unrolled.Import(), {x, s0}, 3);
    ExpectRunGives(*vm, {x, s0, Scalar(kI64, trips)}, want, 1e-6, "seed " + std::to_string(seed));
  }
}

// Loops nest, each body compiled as a program of its own, and their values may have sizes
// only a run knows: the outer loop's iteration i runs an inner loop of i iterations adding
// x (read from two scopes out) to the state, so s = s0 + x * (0 + 1 + ... + (M - 1)), and
// stacks each iteration's state (slices of the input's symbolic length).
TEST(OnnxControl, RunTimeLoopsNestAndTakeSymbolicShapes) {
  ModelBuilder inner;
  inner.Input("j", {}, kI64).Input("c", {}, kBool).Input("t", {-1});
  inner.Node("Add", {"t", "x"}, {"t_out"})
      .Node("Identity", {"c"}, {"c_out"})
      .Output("c_out")
      .Output("t_out");
  ModelBuilder outer;
  outer.Input("i", {}, kI64).Input("c", {}, kBool).Input("s", {-1});
  outer.Node("Loop", {"i", "", "s"}, {"s_out"}, {GraphAttr("body", inner)}, "inner")
      .Node("Identity", {"c"}, {"c_out"})
      .Node("Identity", {"s_out"}, {"row"})
      .Output("c_out")
      .Output("s_out")
      .Output("row");
  ModelBuilder model;
  model.Input("x", {-1}).Input("s0", {-1}).Input("M", {}, kI64);
  model.Node("Loop", {"M", "", "s0"}, {"s", "rows"}, {GraphAttr("body", outer)}, "outer");
  model.Output("s").Output("rows");
  ImportOptions options;
  options.symbolic_dimensions = true;
  // The general program, and one with a program specialized for n = 3 (its loops' bodies
  // compiled for it too).
  graph::IRModule module = model.Import(options).module;
  for (auto [n, trips, buckets] :
       {std::tuple{3, 4, false}, std::tuple{5, 2, false}, std::tuple{2, 1, false},
        std::tuple{3, 3, true}, std::tuple{4, 2, true}}) {
    SCOPED_TRACE("n = " + std::to_string(n) + ", M = " + std::to_string(trips) +
                 (buckets ? ", buckets n = 3" : ""));
    graph::CompileOptions compile;
    if (buckets) compile.dynamic_buckets = {{"d0", {3}}};
    std::unique_ptr<runtime::Executor> vm = graph::MakeExecutor(graph::Compile(module, compile));
    runtime::NDArray x = RandomArray({n}, kF32, n), s0 = RandomArray({n}, kF32, n + 1);
    vm->SetInput(0, x);
    vm->SetInput(1, s0);
    vm->SetInput(2, Scalar(kI64, trips));
    vm->Run();
    std::vector<double> s = Values(s0), rows;
    for (int i = 0; i < trips; ++i) {
      for (int k = 0; k < n; ++k) {
        for (int j = 0; j < i; ++j) s[static_cast<size_t>(k)] += Values(x)[static_cast<size_t>(k)];
      }
      rows.insert(rows.end(), s.begin(), s.end());
    }
    ExpectClose(vm->GetOutput(0), s, 1e-5, "s");
    ASSERT_EQ(vm->GetOutput(1).Shape(), (std::vector<int64_t>{trips, n}));
    ExpectClose(vm->GetOutput(1), rows, 1e-5, "rows");
  }
}

TEST(OnnxControl, RunTimeLoopsStopAtTheIterationLimit) {
  ImportOptions limit;
  limit.max_loop_iterations = 4;
  ImportedModel model = RunTimeLoop().Import(limit);
  std::vector<runtime::NDArray> inputs = {ArrayOf({2}, kF32, {1, 2}), ArrayOf({2}, kF32, {0, 0}),
                                          Scalar(kI64, 4)};
  EXPECT_EQ(RunImported(model, inputs, 3)[1].Shape(), (std::vector<int64_t>{4, 2}));
  inputs[2] = Scalar(kI64, 5);
  EXPECT_EQ(ErrorOf([&] { RunImported(model, inputs, 3); }),
            "VirtualMachine: loop: the loop does not end within 4 iterations, the limit it was "
            "compiled with; raise it with --max-loop-iterations "
            "(ImportOptions::max_loop_iterations) if the loop does end");
}

TEST(OnnxControl, RunTimeLoopsTheVmCannotRunAreErrors) {
  // A carried value whose shape changes across iterations.
  ModelBuilder growing_body;
  growing_body.Input("i", {}, kI64).Input("cond_in", {}, kBool).Input("s", {2});
  growing_body.Node("Concat", {"s", "s"}, {"s_out"}, {IntAttr("axis", 0)})
      .Node("Identity", {"cond_in"}, {"cond_out"})
      .Output("cond_out")
      .Output("s_out");
  ModelBuilder growing;
  growing.Input("s0", {2}).Input("M", {}, kI64);
  growing.Node("Loop", {"M", "", "s0"}, {"s"}, {GraphAttr("body", growing_body)}, "loop")
      .Output("s");
  EXPECT_EQ(ErrorOf([&] { growing.Import(); }),
            "node 'loop' (Loop): loop-carried value 0 ('s') is Tensor[(2,), float32] before the "
            "loop and Tensor[(4,), float32] after an iteration; a loop run at run time keeps "
            "each carried value's dtype and shape");
  // A dimension only a run knows is checked each iteration: s' = (s, s)[: i + 2] keeps s's
  // two elements in iteration 0 only.
  ModelBuilder sliced_body;
  sliced_body.Input("i", {}, kI64).Input("cond_in", {}, kBool).Input("s", {2});
  sliced_body.Initializer("zero", ArrayOf({1}, kI64, {0}))
      .Initializer("two", ArrayOf({1}, kI64, {2}))
      .Node("Concat", {"s", "s"}, {"ss"}, {IntAttr("axis", 0)})
      .Node("Add", {"i", "two"}, {"end"})
      .Node("Slice", {"ss", "zero", "end"}, {"s_out"})
      .Node("Identity", {"cond_in"}, {"cond_out"})
      .Output("cond_out")
      .Output("s_out");
  ModelBuilder sliced;
  sliced.Input("s0", {2}).Input("M", {}, kI64);
  sliced.Node("Loop", {"M", "", "s0"}, {"s"}, {GraphAttr("body", sliced_body)}, "loop").Output("s");
  ImportedModel imported = sliced.Import();
  runtime::NDArray s0 = ArrayOf({2}, kF32, {1, 2});
  EXPECT_EQ(RunImported(imported, {s0, Scalar(kI64, 1)}, 3)[0].Shape(), (std::vector<int64_t>{2}));
  EXPECT_EQ(ErrorOf([&] {
              RunImported(imported, {s0, Scalar(kI64, 2)}, 3);
            }),
            "VirtualMachine: loop: loop-carried value 0 changes its dimension 0 in an iteration; "
            "a loop keeps each carried value's shape");
  // Scan outputs without a trip count.
  ModelBuilder unbounded;
  unbounded.Input("x", {2}).Input("s0", {2}).Input("go", {}, kBool);
  unbounded.Node("Loop", {"", "go", "s0"}, {"s", "scan"}, {GraphAttr("body", LoopBody(2))}, "loop");
  unbounded.Output("s");
  EXPECT_TRUE(ErrorOf([&] {
                unbounded.Import();
              }).starts_with("node 'loop' (Loop): it has scan outputs and no trip count"));
}

TEST(OnnxControl, LoopsOfConstantCourseUnrollUpToTheLimit) {
  ModelBuilder long_loop;
  long_loop.Input("x", {2}).Input("s0", {2}).Initializer("M", Scalar(kI64, 5000));
  long_loop.Node("Loop", {"M", "", "s0"}, {"s", "scan"},
                 {GraphAttr("body", LoopBody(std::nullopt))}, "loop");
  long_loop.Output("s");
  EXPECT_EQ(ErrorOf([&] { long_loop.Import(); }),
            "node 'loop' (Loop): it does not end within 4096 iterations (it runs 5000); "
            "Loom unrolls loops at import, up to the iteration limit: raise it with "
            "--max-loop-iterations (ImportOptions::max_loop_iterations) if the loop does end");
  // The limit is the user's.
  ModelBuilder five;
  five.Input("x", {2}).Input("s0", {2}).Initializer("M", Scalar(kI64, 5));
  five.Node("Loop", {"M", "", "s0"}, {"s", "scan"}, {GraphAttr("body", LoopBody(std::nullopt))},
            "loop");
  five.Output("s");
  ImportOptions limit;
  limit.max_loop_iterations = 4;
  EXPECT_NE(ErrorOf([&] { five.Import(limit); }).find("does not end within 4 iterations"),
            std::string::npos);
  limit.max_loop_iterations = 5;
  EXPECT_EQ(ErrorOf([&] { five.Import(limit); }), "no error");
  limit.max_loop_iterations = 0;
  EXPECT_EQ(ErrorOf([&] { five.Import(limit); }),
            "ImportOptions::max_loop_iterations must be at least 1, got 0");

  // A body whose node fails names the iteration it was imported for (i = 1: a shape of
  // one element for two).
  ModelBuilder bad_body;
  bad_body.Input("i", {}, kI64).Input("cond_in", {}, kBool).Input("s", {2});
  bad_body.Node("Reshape", {"s", "i"}, {"s_out"}, {}, "reshape")
      .Node("Identity", {"cond_in"}, {"cond_out"})
      .Output("cond_out")
      .Output("s_out");
  ModelBuilder model;
  model.Input("s0", {2}).Initializer("M", Scalar(kI64, 2));
  model.Node("Loop", {"M", "", "s0"}, {"s"}, {GraphAttr("body", bad_body)}, "loop").Output("s");
  std::string error = ErrorOf([&] { model.Import(); });
  EXPECT_TRUE(error.starts_with("node 'reshape' (Reshape) in loop/body[1]: ")) << error;
}

// State: a running sum of rows; scan outputs: the sums (along axis 0) and, reversed and
// stacked along axis 1, the rows themselves read backwards. `steps` rows (-1: a length only a
// run knows).
ModelBuilder ScanModel(int64_t steps) {
  ModelBuilder body;
  body.Input("sum", {3}).Input("row", {3}).Input("back", {3});
  body.Node("Add", {"sum", "row"}, {"sum_out"})
      .Node("Identity", {"sum_out"}, {"sums"})
      .Node("Identity", {"back"}, {"backs"})
      .Output("sum_out")
      .Output("sums")
      .Output("backs");
  ModelBuilder model;
  model.Input("init", {3}).Input("xs", {steps, 3}).Input("ys", {3, steps});
  model
      .Node("Scan", {"init", "xs", "ys"}, {"total", "sums", "backs"},
            {GraphAttr("body", body), IntAttr("num_scan_inputs", 2),
             IntsAttr("scan_input_axes", {0, 1}), IntsAttr("scan_input_directions", {0, 1}),
             IntsAttr("scan_output_axes", {0, -1}), IntsAttr("scan_output_directions", {0, 1})})
      .Output("total")
      .Output("sums")
      .Output("backs");
  return model;
}

// Differential: a Scan over a length only a run knows (a loop the VM runs) computes what the
// same Scan unrolled over that length computes.
TEST(OnnxControl, ScanOverALengthOnlyARunKnowsRunsAsALoop) {
  ImportOptions symbolic;
  symbolic.symbolic_dimensions = true;
  std::unique_ptr<runtime::Executor> vm =
      graph::MakeExecutor(graph::Compile(ScanModel(-1).Import(symbolic).module, {}));
  for (int64_t steps : {1, 4, 6}) {
    std::vector<runtime::NDArray> inputs = {RandomArray({3}, kF32, 1),
                                            RandomArray({steps, 3}, kF32, 2),
                                            RandomArray({3, steps}, kF32, 3)};
    std::vector<runtime::NDArray> want = RunImported(ScanModel(steps).Import(), inputs, 3);
    ExpectRunGives(*vm, inputs, want, 1e-6, std::to_string(steps) + " steps");
  }
}

TEST(OnnxControl, ScanIsUnrolledOverItsInputsAxesAndDirections) {
  ModelBuilder model = ScanModel(4);
  runtime::NDArray init = RandomArray({3}, kF32, 1), xs = RandomArray({4, 3}, kF32, 2),
                   ys = RandomArray({3, 4}, kF32, 3);
  std::vector<double> sum = Values(init), sums;
  for (int t = 0; t < 4; ++t) {
    for (int k = 0; k < 3; ++k) sum[k] += GetFloat(xs, t * 3 + k);
    sums.insert(sums.end(), sum.begin(), sum.end());
  }
  // Iteration t reads column 3 - t of ys; the outputs are prepended, so column j of backs
  // is iteration 3 - j's: column j of ys.
  ExpectOutputs(model, {init, xs, ys}, {ArrayOf({3}, kF32, sum), ArrayOf({4, 3}, kF32, sums), ys});
}

TEST(OnnxControl, ScanBeforeOpset9IsAnError) {
  ModelBuilder body;
  body.Input("s", {3}).Input("x", {3}).Node("Add", {"s", "x"}, {"t"}).Output("t");
  ModelBuilder model(8);
  model.Input("s0", {1, 3}).Input("xs", {1, 4, 3});
  model
      .Node("Scan", {"", "s0", "xs"}, {"s"},
            {GraphAttr("body", body), IntAttr("num_scan_inputs", 1)}, "scan")
      .Output("s");
  EXPECT_EQ(ErrorOf([&] { model.Import(); }),
            "node 'scan' (Scan): Scan before opset 9 (with a batch axis and sequence_lens) is "
            "not supported; export the model with opset 9 or newer");
}

}  // namespace
}  // namespace loom::frontend::onnx::test
