// The tensor converters (ops_tensor.cc): constants and shapes folded at import, and the
// shape-changing, joining, splitting, slicing and gathering operators with their
// opset-dependent forms, negative axes and clamping, run compiled against references.
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <memory>

#include "loom/graph/compile.h"
#include "onnx_test_util.h"

namespace loom::frontend::onnx::test {
namespace {

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// An int64 array holding `values` exactly (ArrayOf goes through doubles).
runtime::NDArray Int64s(const std::vector<int64_t>& values, bool scalar = false) {
  std::vector<int64_t> shape;
  if (!scalar) shape.push_back(static_cast<int64_t>(values.size()));
  runtime::NDArray array = runtime::NDArray::Empty(shape, kI64);
  array.CopyFromBytes(values.data(), values.size() * sizeof(int64_t));
  return array;
}

// 0, 1, 2, ... in `shape`.
runtime::NDArray Iota(const std::vector<int64_t>& shape, DataType dtype = kF32) {
  runtime::NDArray array = runtime::NDArray::Empty(shape, dtype);
  for (int64_t i = 0; i < array.NumElements(); ++i) SetValue(array, i, static_cast<double>(i));
  return array;
}

// x's values in another shape.
runtime::NDArray Reshaped(const runtime::NDArray& x, const std::vector<int64_t>& shape) {
  return ArrayOf(shape, x.dtype(), Values(x));
}

TEST(OnnxTensor, ConstantNodesInEachForm) {
  runtime::NDArray x = Iota({2, 3});
  ModelBuilder model(13);
  model.Input("x", {2, 3});
  model.Node("Constant", {}, {"row"}, {TensorAttr("value", ArrayOf({3}, kF32, {1, 2, 3}))});
  model.Node("Constant", {}, {"half"}, {FloatAttr("value_float", 0.5f)});
  model.Node("Constant", {}, {"shape"}, {IntsAttr("value_ints", {3, 2})});
  model.Node("Add", {"x", "row"}, {"sum"}).Node("Mul", {"x", "half"}, {"scaled"});
  model.Node("Reshape", {"x", "shape"}, {"reshaped"});
  model.Output("sum").Output("scaled").Output("reshaped");
  ExpectOutputs(model, {x},
                {ArrayOf({2, 3}, kF32, {1, 3, 5, 4, 6, 8}),
                 ArrayOf({2, 3}, kF32, {0, 0.5, 1, 1.5, 2, 2.5}), Reshaped(x, {3, 2})});
}

TEST(OnnxTensor, ShapeWithStartAndEndAndSizeAreConstants) {
  runtime::NDArray x = Iota({2, 3, 4});
  ModelBuilder model(15);
  model.Input("x", {2, 3, 4});
  model.Node("Shape", {"x"}, {"tail"}, {IntAttr("start", -2)});
  model.Node("Shape", {"x"}, {"head"}, {IntAttr("end", 1)});
  model.Node("Shape", {"x"}, {"clamped"}, {IntAttr("start", -10), IntAttr("end", 10)});
  model.Node("Size", {"x"}, {"size"}).Node("Neg", {"x"}, {"neg"});
  for (const char* name : {"tail", "head", "clamped", "size", "neg"}) model.Output(name);
  ImportedModel imported = model.Import();
  const auto* outputs = imported.module.main()->body.as<graph::TupleNode>();
  ASSERT_NE(outputs, nullptr);
  for (int i = 0; i < 4; ++i) EXPECT_NE(outputs->fields[i].as<graph::ConstantNode>(), nullptr);
  ExpectOutputs(model, {x},
                {Int64s({3, 4}), Int64s({2}), Int64s({2, 3, 4}), Int64s({24}, /*scalar=*/true),
                 ArrayOf({2, 3, 4}, kF32, [&] {
                   std::vector<double> v = Values(x);
                   for (double& e : v) e = -e;
                   return v;
                 }())});
}

TEST(OnnxTensor, ShapeArithmeticFoldsIntoOneReshape) {
  // The export pattern of x.view(x.size(0), -1).
  runtime::NDArray x = Iota({2, 3, 4});
  ModelBuilder model(13);
  model.Input("x", {2, 3, 4});
  model.Initializer("zero", Int64s({0}, /*scalar=*/true));
  model.Initializer("minus_one", Int64s({-1}));
  model.Initializer("axes", Int64s({0}));
  model.Node("Shape", {"x"}, {"shape"}).Node("Gather", {"shape", "zero"}, {"batch"});
  model.Node("Unsqueeze", {"batch", "axes"}, {"batch_1d"});
  model.Node("Concat", {"batch_1d", "minus_one"}, {"target"}, {IntAttr("axis", 0)});
  model.Node("Reshape", {"x", "target"}, {"y"}, {}, "flatten_view").Output("y");
  ImportedModel imported = model.Import();
  const auto* reshape = imported.module.main()->body.as<graph::CallNode>();
  ASSERT_NE(reshape, nullptr);
  EXPECT_EQ(reshape->op->name, "reshape");
  EXPECT_EQ(reshape->name_hint, "flatten_view");
  EXPECT_NE(reshape->args[0].as<graph::VarNode>(), nullptr) << graph::ToText(imported.module);
  ExpectOutputs(model, {x}, {Reshaped(x, {2, 12})});
}

// The same export pattern over a symbolic batch (ImportOptions::symbolic_dimensions): the
// shape arithmetic is evaluated at import over size expressions, Reshape takes the result,
// and the model compiled once for the VM runs at every batch size.
TEST(OnnxTensor, ShapeArithmeticOverSymbolicSizesSetsReshapesShape) {
  ModelBuilder model(13);
  model.Input("x", {-1, 3, 4});
  model.Initializer("zero", Int64s({0}, /*scalar=*/true));
  model.Initializer("two", Int64s({2}, /*scalar=*/true));
  model.Initializer("axes", Int64s({0}));
  model.Initializer("starts", Int64s({1}));
  model.Initializer("ends", Int64s({2}));
  model.Node("Shape", {"x"}, {"shape"}).Node("Gather", {"shape", "zero"}, {"batch"});
  model.Node("Gather", {"shape", "two"}, {"last"});  // 4: a constant
  model.Node("Div", {"last", "two"}, {"half"});      // 2
  model.Node("Mul", {"batch", "half"}, {"rows"});    // d0 * 2: inferred (-1)
  model.Node("Unsqueeze", {"rows", "axes"}, {"rows_1d"});
  model.Node("Slice", {"shape", "starts", "ends"}, {"middle"});  // [3]
  model.Node("Unsqueeze", {"half", "axes"}, {"half_1d"});
  model.Node("Concat", {"rows_1d", "middle", "half_1d"}, {"target"}, {IntAttr("axis", 0)});
  model.Node("Reshape", {"x", "target"}, {"y"}).Output("y");
  ImportOptions options;
  options.symbolic_dimensions = true;
  ImportedModel imported = model.Import(options);
  EXPECT_EQ(imported.module.main()->body.type().str(), "Tensor[(d0 * T.int64(2), 3, 2), float32]");
  std::unique_ptr<runtime::Executor> vm = graph::MakeExecutor(graph::Compile(imported.module, {}));
  for (int64_t batch : {1, 5}) {
    runtime::NDArray x = Iota({batch, 3, 4});
    vm->SetInput(0, x);
    vm->Run();
    EXPECT_EQ(vm->GetOutput(0).Shape(), (std::vector<int64_t>{batch * 2, 3, 2}));
    EXPECT_EQ(Values(vm->GetOutput(0)), Values(x)) << "batch " << batch;
  }
}

// Rows flattened and unflattened (y.view(x.size(0), x.size(1), -1)): the target's sizes
// are dimensions of x, not of the reshaped tensor, which reshape_like takes from x.
TEST(OnnxTensor, ReshapeTakesSizesFromTheTensorTheyWereComputedFrom) {
  ModelBuilder model(13);
  model.Input("x", {-1, -1, 4});
  model.Initializer("rows", Int64s({-1, 4}));
  model.Initializer("first_two", Int64s({0, 1}));
  model.Initializer("minus_one", Int64s({-1}));
  model.Node("Reshape", {"x", "rows"}, {"flat"}).Node("Relu", {"flat"}, {"relu"});
  model.Node("Shape", {"x"}, {"shape"}).Node("Gather", {"shape", "first_two"}, {"leading"});
  model.Node("Concat", {"leading", "minus_one"}, {"target"}, {IntAttr("axis", 0)});
  model.Node("Reshape", {"relu", "target"}, {"y"}).Output("y");
  ImportOptions options;
  options.symbolic_dimensions = true;
  ImportedModel imported = model.Import(options);
  EXPECT_EQ(imported.module.main()->body.type().str(), "Tensor[(d0, d1, 4), float32]");
  std::unique_ptr<runtime::Executor> vm = graph::MakeExecutor(graph::Compile(imported.module, {}));
  for (auto [a, b] : std::vector<std::pair<int64_t, int64_t>>{{2, 3}, {1, 5}}) {
    runtime::NDArray x = RandomArray({a, b, 4}, kF32, 3);
    vm->SetInput(0, x);
    vm->Run();
    EXPECT_EQ(vm->GetOutput(0).Shape(), (std::vector<int64_t>{a, b, 4}));
    std::vector<double> relu = Values(x);
    for (double& v : relu) v = std::max(v, 0.0);
    EXPECT_EQ(Values(vm->GetOutput(0)), relu);
  }
}

// What exporters write for x.expand(batch, seq) and buffer[:, :seq] over symbolic sizes:
// Equal and Where decided at import (a size is never -1), Expand and Slice taking the sizes
// from the tensor they came from; a Cast to int32 keeps its type when it folds.
TEST(OnnxTensor, ExpandAndSliceTakeSymbolicSizes) {
  ModelBuilder model(13);
  model.Input("ids", {-1, -1}, kI64);
  model.Initializer("table", Iota({1, 8}));
  model.Initializer("zero", Int64s({0}));
  model.Initializer("one", Int64s({1}));
  model.Initializer("minus_one", Int64s({-1}));
  model.Initializer("flat", Int64s({-1}));
  model.Node("Shape", {"ids"}, {"shape"});
  model.Node("Slice", {"shape", "one", "minus_one"}, {"unused_empty"});
  model.Node("Gather", {"shape", "one"}, {"seq_1d"});                   // [d1]
  model.Node("Slice", {"table", "zero", "seq_1d", "one"}, {"sliced"});  // [1, d1]
  model.Node("Reshape", {"shape", "flat"}, {"target"});
  model.Node("Equal", {"target", "minus_one"}, {"is_minus_one"});  // [false, false]
  model.Node("Where", {"is_minus_one", "one", "target"}, {"expand_to"});
  model.Node("Expand", {"sliced", "expand_to"}, {"y"}).Output("y");
  model.Node("Cast", {"shape"}, {"shape32"}, {IntAttr("to", 6)});
  model.Node("Shape", {"shape32"}, {"rank"}).Output("rank");  // [2]
  ImportOptions options;
  options.symbolic_dimensions = true;
  ImportedModel imported = model.Import(options);
  const graph::Type& type = imported.module.main()->body.type();
  ASSERT_TRUE(type.is_tuple());
  EXPECT_EQ(type.fields()[0].str(), "Tensor[(d0, d1), float32]");
  EXPECT_EQ(type.fields()[1].str(), "Tensor[(1,), int64]");
  std::unique_ptr<runtime::Executor> vm = graph::MakeExecutor(graph::Compile(imported.module, {}));
  vm->SetInput(0, Int64s({1, 2, 3, 4, 5, 6}).CreateView({2, 3}, kI64));
  vm->Run();
  EXPECT_EQ(vm->GetOutput(0).Shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Values(vm->GetOutput(0)), (std::vector<double>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(Values(vm->GetOutput(1)), (std::vector<double>{2}));
}

// Where a shape value cannot go, the error names the node and says what to do.
// Where a shape value over symbolic sizes meets the model's data (an operator that is no
// shape arithmetic, or a model output), the run computes it: each size read from the shape of
// a tensor that has it (shape_of), the arithmetic done by graph operators.
TEST(OnnxTensor, SymbolicShapeValuesMeetingDataAreComputedAtRunTime) {
  ModelBuilder model(13);
  model.Input("x", {-1, -1}).Input("scale", {2});
  model.Initializer("three", Int64s({3}, /*scalar=*/true));
  model.Node("Shape", {"x"}, {"shape"});
  model.Node("Add", {"shape", "three"}, {"plus"});   // shape arithmetic: (d0 + 3, d1 + 3)
  model.Node("Div", {"plus", "three"}, {"thirds"});  // floor division of sizes
  model.Node("Cast", {"thirds"}, {"f"}, {IntAttr("to", 1)});
  model.Node("Mul", {"f", "scale"}, {"scaled"});  // meets a run-time tensor
  model.Output("scaled").Output("shape");         // a shape value as an output
  ImportOptions options;
  options.symbolic_dimensions = true;
  std::unique_ptr<runtime::Executor> vm =
      graph::MakeExecutor(graph::Compile(model.Import(options).module, {}));
  for (auto [rows, columns] : {std::pair{1, 7}, std::pair{5, 2}}) {
    vm->SetInput(0, RandomArray({rows, columns}, kF32, rows));
    vm->SetInput(1, ArrayOf({2}, kF32, {0.5, 2}));
    vm->Run();
    EXPECT_EQ(Values(vm->GetOutput(0)),
              (std::vector<double>{0.5 * ((rows + 3) / 3), 2.0 * ((columns + 3) / 3)}));
    EXPECT_EQ(vm->GetOutput(1).dtype(), DataType::Int(64));
    EXPECT_EQ(Values(vm->GetOutput(1)), (std::vector<double>{double(rows), double(columns)}));
  }
}

// Split and Squeeze of a dimension only a run knows: the pieces' sizes (given, or equal
// pieces) and the squeezed 1 are checked when the model runs.
TEST(OnnxTensor, SplitAndSqueezeOfSymbolicDimensionsAreCheckedAtRunTime) {
  ImportOptions options;
  options.symbolic_dimensions = true;
  // Rows 0..r-1 of x (r x 2) into equal halves, the first squeezed to its one row.
  ModelBuilder halves(13);
  halves.Input("x", {-1, 2}).Initializer("first", Int64s({0}));
  halves.Node("Split", {"x"}, {"top", "bottom"}, {}, "halves");
  halves.Node("Squeeze", {"top", "first"}, {"row"}, {}, "squeeze");
  halves.Output("row").Output("bottom");
  std::unique_ptr<runtime::Executor> vm =
      graph::MakeExecutor(graph::Compile(halves.Import(options).module, {}));
  auto run = [&](runtime::Executor& executor, int64_t rows) {
    return ErrorOf([&] {
      executor.SetInput(0, Iota({rows, 2}));
      executor.Run();
    });
  };
  EXPECT_EQ(run(*vm, 2), "no error");
  EXPECT_EQ(Values(vm->GetOutput(0)), (std::vector<double>{0, 1}));
  EXPECT_EQ(Values(vm->GetOutput(1)), (std::vector<double>{2, 3}));
  EXPECT_EQ(run(*vm, 3),
            "VirtualMachine: the size halves.sizes[0] read at run time is -1, not a size: the "
            "inputs do not fit the model's shape computation (or give a negative size)");
  EXPECT_NE(run(*vm, 4).find("squeeze"), std::string::npos);  // a half of 2 rows
  // Sizes given: their sum must be the dimension.
  ModelBuilder given(13);
  given.Input("x", {-1, 2}).Initializer("sizes", Int64s({1, 2}));
  given.Node("Split", {"x", "sizes"}, {"one", "two"}, {}, "given").Output("two");
  vm = graph::MakeExecutor(graph::Compile(given.Import(options).module, {}));
  EXPECT_EQ(run(*vm, 3), "no error");
  EXPECT_EQ(Values(vm->GetOutput(0)), (std::vector<double>{2, 3, 4, 5}));
  EXPECT_EQ(run(*vm, 4),
            "VirtualMachine: the size given.sizes[0] read at run time is -1, not a size: the "
            "inputs do not fit the model's shape computation (or give a negative size)");
}

TEST(OnnxTensor, SymbolicShapeValuesOutsideShapeArithmeticAreErrors) {
  ImportOptions options;
  options.symbolic_dimensions = true;
  auto error = [&](const std::function<void(ModelBuilder&)>& tail) {
    ModelBuilder model(13);
    model.Input("x", {-1, -1});
    model.Node("Shape", {"x"}, {"shape"});
    tail(model);
    return ErrorOf([&] { model.Import(options); });
  };
  // (d0 * 2, d1 * 2): two sizes computed, dimensions of no tensor.
  EXPECT_EQ(error([](ModelBuilder& m) {
              m.Initializer("two", Int64s({2}, /*scalar=*/true));
              m.Node("Mul", {"shape", "two"}, {"doubled"});
              m.Node("Reshape", {"x", "doubled"}, {"y"}, {}, "double").Output("y");
            }),
            "node 'double' (Reshape): the shape [d0 * T.int64(2), d1 * T.int64(2)] has more "
            "than one entry that is neither constant, nor the input's dimension at its "
            "position, nor a dimension of the tensor it was computed from; bind the model's "
            "symbolic dimensions with --input-shape");
  EXPECT_EQ(error([](ModelBuilder& m) {
              m.Initializer("nine", Int64s({9}, /*scalar=*/true));
              m.Node("Gather", {"shape", "nine"}, {"y"}, {}, "past").Output("y");
            }),
            "node 'past' (Gather): index 9 is out of range for the shape value [d0, d1]");
}

TEST(OnnxTensor, ReshapeCopiesZerosAndInfersMinusOne) {
  runtime::NDArray x = Iota({2, 3, 4});
  ModelBuilder model(14);
  model.Input("x", {2, 3, 4});
  model.Initializer("copy_first", Int64s({0, -1}));
  model.Initializer("copy_last", Int64s({-1, 2, 0}));
  model.Node("Reshape", {"x", "copy_first"}, {"a"}).Node("Reshape", {"x", "copy_last"}, {"b"});
  model.Output("a").Output("b");
  ExpectOutputs(model, {x}, {Reshaped(x, {2, 12}), Reshaped(x, {3, 2, 4})});
}

TEST(OnnxTensor, ReshapeErrorsNameTheNode) {
  auto error_for = [](const std::vector<int64_t>& shape, int64_t allow_zero) {
    ModelBuilder model(14);
    model.Input("x", {2, 3}).Initializer("shape", Int64s(shape));
    model.Node("Reshape", {"x", "shape"}, {"y"}, {IntAttr("allowzero", allow_zero)}, "reshape_7");
    return ErrorOf([&] { model.Output("y").Import(); });
  };
  std::string error = error_for({-1, -1}, 0);
  EXPECT_TRUE(Contains(error, "'reshape_7'") && Contains(error, "more than one -1")) << error;
  error = error_for({0, 6}, 1);  // with allowzero a 0 is a real 0
  EXPECT_TRUE(Contains(error, "has 0 elements, the input [2, 3] has 6")) << error;
  error = error_for({4, -1}, 0);
  EXPECT_TRUE(Contains(error, "cannot infer the -1")) << error;

  // A shape given at run time that does not fit is refused then, naming the node's size.
  ModelBuilder dynamic(14);
  dynamic.Input("x", {2, 3}).Input("shape", {2}, kI64);
  dynamic.Node("Reshape", {"x", "shape"}, {"y"}, {}, "reshape_8").Output("y");
  std::unique_ptr<runtime::Executor> vm =
      graph::MakeExecutor(graph::Compile(dynamic.Import().module, {}));
  vm->SetInput(0, Iota({2, 3}));
  vm->SetInput(1, Int64s({4, -1}));
  error = ErrorOf([&] { vm->Run(); });
  EXPECT_TRUE(Contains(error, "the size reshape_8.shape[0] read at run time is -1, not a size"))
      << error;
}

TEST(OnnxTensor, TransposeReversesWithoutPerm) {
  runtime::NDArray x = Iota({2, 3});
  ModelBuilder model;
  model.Input("x", {2, 3}).Node("Transpose", {"x"}, {"t"}).Output("t");
  ExpectOutputs(model, {x}, {ArrayOf({3, 2}, kF32, {0, 3, 1, 4, 2, 5})});

  runtime::NDArray y = Iota({2, 3, 2});
  ModelBuilder permuted;
  permuted.Input("y", {2, 3, 2});
  permuted.Node("Transpose", {"y"}, {"t"}, {IntsAttr("perm", {1, 0, 2})}).Output("t");
  ExpectOutputs(permuted, {y}, {ArrayOf({3, 2, 2}, kF32, {0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11})});
}

TEST(OnnxTensor, SqueezeAndUnsqueezeTakeAxesAsAnAttributeBeforeOpset13) {
  runtime::NDArray x = Iota({1, 3, 1, 2});
  ModelBuilder v11(11);
  v11.Input("x", {1, 3, 1, 2});
  v11.Node("Squeeze", {"x"}, {"one"}, {IntsAttr("axes", {-2})});
  v11.Node("Squeeze", {"x"}, {"all"});
  v11.Node("Unsqueeze", {"all"}, {"back"}, {IntsAttr("axes", {0, -1})});
  v11.Output("one").Output("all").Output("back");
  ExpectOutputs(v11, {x}, {Reshaped(x, {1, 3, 2}), Reshaped(x, {3, 2}), Reshaped(x, {1, 3, 2, 1})});

  ModelBuilder v13(13);
  v13.Input("x", {1, 3, 1, 2}).Initializer("axes", Int64s({0, 2}));
  v13.Initializer("new_axes", Int64s({-1, 1}));
  v13.Node("Squeeze", {"x", "axes"}, {"squeezed"});
  v13.Node("Unsqueeze", {"squeezed", "new_axes"}, {"unsqueezed"});
  v13.Output("squeezed").Output("unsqueezed");
  ExpectOutputs(v13, {x}, {Reshaped(x, {3, 2}), Reshaped(x, {3, 1, 2, 1})});
}

TEST(OnnxTensor, SqueezeAndUnsqueezeErrors) {
  ModelBuilder squeeze(11);
  squeeze.Input("x", {1, 3}).Node("Squeeze", {"x"}, {"y"}, {IntsAttr("axes", {1})}, "squeeze_2");
  std::string error = ErrorOf([&] { squeeze.Output("y").Import(); });
  EXPECT_TRUE(Contains(error, "'squeeze_2'") && Contains(error, "dimension 1 of size 3")) << error;

  ModelBuilder unsqueeze(11);
  unsqueeze.Input("x", {3});
  unsqueeze.Node("Unsqueeze", {"x"}, {"y"}, {IntsAttr("axes", {1, -2})}, "unsqueeze_3");
  error = ErrorOf([&] { unsqueeze.Output("y").Import(); });
  EXPECT_TRUE(Contains(error, "'unsqueeze_3'") && Contains(error, "repeat dimension 1")) << error;
}

TEST(OnnxTensor, ConcatAlongANegativeAxis) {
  runtime::NDArray a = Iota({2, 1}), b = Iota({2, 2}), c = Iota({2, 3});
  ModelBuilder model;
  model.Input("a", {2, 1}).Input("b", {2, 2}).Input("c", {2, 3});
  model.Node("Concat", {"a", "b", "c"}, {"y"}, {IntAttr("axis", -1)}).Output("y");
  ExpectOutputs(model, {a, b, c}, {ArrayOf({2, 6}, kF32, {0, 0, 1, 0, 1, 2, 1, 2, 3, 3, 4, 5})});
}

TEST(OnnxTensor, SplitSizesFromTheAttributeTheInputOrNumOutputs) {
  runtime::NDArray x = Iota({2, 5});
  ModelBuilder v11(11);
  v11.Input("x", {2, 5});
  v11.Node("Split", {"x"}, {"a", "b"}, {IntAttr("axis", 1), IntsAttr("split", {2, 3})});
  v11.Output("a").Output("b");
  ExpectOutputs(v11, {x},
                {ArrayOf({2, 2}, kF32, {0, 1, 5, 6}), ArrayOf({2, 3}, kF32, {2, 3, 4, 7, 8, 9})});

  ModelBuilder v13(13);
  v13.Input("x", {2, 5}).Initializer("split", Int64s({1, 4}));
  v13.Node("Split", {"x", "split"}, {"a", "b"}, {IntAttr("axis", -1)});
  v13.Node("Split", {"x"}, {"top", "bottom"});  // equal pieces along axis 0
  v13.Output("a").Output("b").Output("top").Output("bottom");
  ExpectOutputs(v13, {x},
                {ArrayOf({2, 1}, kF32, {0, 5}), ArrayOf({2, 4}, kF32, {1, 2, 3, 4, 6, 7, 8, 9}),
                 ArrayOf({1, 5}, kF32, {0, 1, 2, 3, 4}), ArrayOf({1, 5}, kF32, {5, 6, 7, 8, 9})});

  // num_outputs: pieces of ceil(5 / 3) = 2, the last one smaller.
  ModelBuilder v18(18);
  v18.Input("x", {2, 5});
  v18.Node("Split", {"x"}, {"a", "b", "c"}, {IntAttr("axis", 1), IntAttr("num_outputs", 3)});
  v18.Output("a").Output("b").Output("c");
  ExpectOutputs(v18, {x},
                {ArrayOf({2, 2}, kF32, {0, 1, 5, 6}), ArrayOf({2, 2}, kF32, {2, 3, 7, 8}),
                 ArrayOf({2, 1}, kF32, {4, 9})});
}

TEST(OnnxTensor, SplitErrors) {
  ModelBuilder sizes(11);
  sizes.Input("x", {2, 5});
  sizes.Node("Split", {"x"}, {"a", "b"}, {IntAttr("axis", 1), IntsAttr("split", {2, 2})}, "s_1");
  std::string error = ErrorOf([&] { sizes.Output("a").Import(); });
  EXPECT_TRUE(Contains(error, "'s_1'") && Contains(error, "sums to 4")) << error;

  ModelBuilder uneven(13);
  uneven.Input("x", {2, 5}).Node("Split", {"x"}, {"a", "b"}, {IntAttr("axis", 1)}, "s_2");
  error = ErrorOf([&] { uneven.Output("a").Import(); });
  EXPECT_TRUE(Contains(error, "'s_2'") && Contains(error, "2 equal pieces")) << error;
}

TEST(OnnxTensor, SliceAttributesBeforeOpset10AndInputsWithClampingAndStepsAfter) {
  runtime::NDArray x = Iota({3, 4});
  ModelBuilder v9(9);
  v9.Input("x", {3, 4});
  v9.Node("Slice", {"x"}, {"y"},
          {IntsAttr("starts", {1}), IntsAttr("ends", {1000}), IntsAttr("axes", {0})});
  v9.Output("y");
  ExpectOutputs(v9, {x}, {ArrayOf({2, 4}, kF32, {4, 5, 6, 7, 8, 9, 10, 11})});

  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  ModelBuilder v13(13);
  v13.Input("x", {3, 4});
  v13.Initializer("starts", Int64s({-1, 3})).Initializer("ends", Int64s({kMin, kMin}));
  v13.Initializer("axes", Int64s({-2, 1})).Initializer("steps", Int64s({-1, -2}));
  v13.Initializer("start", Int64s({1})).Initializer("end", Int64s({kMax}));
  v13.Initializer("axis", Int64s({1}));
  v13.Node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"reversed"});
  v13.Node("Slice", {"x", "start", "end", "axis"}, {"tail"});
  v13.Output("reversed").Output("tail");
  ExpectOutputs(v13, {x},
                {ArrayOf({3, 2}, kF32, {11, 9, 7, 5, 3, 1}),
                 ArrayOf({3, 3}, kF32, {1, 2, 3, 5, 6, 7, 9, 10, 11})});

  ModelBuilder zero_step(13);
  zero_step.Input("x", {3, 4}).Initializer("starts", Int64s({0})).Initializer("ends", Int64s({2}));
  zero_step.Initializer("axes", Int64s({0})).Initializer("steps", Int64s({0}));
  zero_step.Node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"}, {}, "slice_4");
  std::string error = ErrorOf([&] { zero_step.Output("y").Import(); });
  EXPECT_TRUE(Contains(error, "'slice_4'") && Contains(error, "must not hold 0")) << error;
}

TEST(OnnxTensor, GatherWithNegativeIndicesAndGatherElements) {
  runtime::NDArray x = Iota({3, 4});
  runtime::NDArray columns = Int64s({-1, 0});
  runtime::NDArray picks = ArrayOf({3, 2}, kI64, {0, 3, 1, -1, 2, 2});
  ModelBuilder model(13);
  model.Input("x", {3, 4}).Input("columns", {2}, kI64).Input("picks", {3, 2}, kI64);
  model.Initializer("row", Int64s({-2}, /*scalar=*/true));
  model.Node("Gather", {"x", "columns"}, {"g"}, {IntAttr("axis", 1)});
  model.Node("Gather", {"x", "row"}, {"r"});
  model.Node("GatherElements", {"x", "picks"}, {"e"}, {IntAttr("axis", -1)});
  model.Output("g").Output("r").Output("e");
  ExpectOutputs(model, {x, columns, picks},
                {ArrayOf({3, 2}, kF32, {3, 0, 7, 4, 11, 8}), ArrayOf({4}, kF32, {4, 5, 6, 7}),
                 ArrayOf({3, 2}, kF32, {0, 3, 5, 7, 10, 10})});
}

// Indices given at run time outside [-n, n) are clamped into it (ONNX leaves them undefined;
// constant ones are a compile error, Importer.GatherIndicesOutOfRangeAreAnError): a high one
// reads the last element, a low one the first (docs/security.md documents it).
TEST(OnnxTensor, GatherClampsRuntimeIndicesOutsideTheAxis) {
  runtime::NDArray x = Iota({2, 4});
  runtime::NDArray columns = Int64s({100, -100, -1, 4, -5});
  ModelBuilder model(13);
  model.Input("x", {2, 4}).Input("columns", {5}, kI64);
  model.Node("Gather", {"x", "columns"}, {"g"}, {IntAttr("axis", 1)}).Output("g");
  ExpectOutputs(model, {x, columns}, {ArrayOf({2, 5}, kF32, {3, 0, 3, 3, 0, 7, 4, 7, 7, 4})});
}

TEST(OnnxTensor, ExpandTileConstantOfShapeAndRange) {
  runtime::NDArray x = ArrayOf({3, 1}, kF32, {1, 2, 3});
  ModelBuilder model(13);
  model.Input("x", {3, 1});
  model.Initializer("shape", Int64s({2, 1, 2})).Initializer("repeats", Int64s({2, 3}));
  model.Initializer("dims", Int64s({2, 3}));
  model.Initializer("start", Int64s({10}, true)).Initializer("limit", Int64s({4}, true));
  model.Initializer("delta", Int64s({-3}, true));
  model.Initializer("fstart", ArrayOf({}, kF32, {1}))
      .Initializer("flimit", ArrayOf({}, kF32, {2.5}));
  model.Initializer("fdelta", ArrayOf({}, kF32, {0.5}));
  model.Node("Expand", {"x", "shape"}, {"expanded"}).Node("Tile", {"x", "repeats"}, {"tiled"});
  model.Node("ConstantOfShape", {"dims"}, {"sevens"}, {TensorAttr("value", Int64s({7}))});
  model.Node("ConstantOfShape", {"dims"}, {"zeros"});
  model.Node("Range", {"start", "limit", "delta"}, {"down"});
  model.Node("Range", {"fstart", "flimit", "fdelta"}, {"up"});
  for (const char* name : {"expanded", "tiled", "sevens", "zeros", "down", "up"}) {
    model.Output(name);
  }
  ExpectOutputs(
      model, {x},
      {ArrayOf({2, 3, 2}, kF32, {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}),
       ArrayOf({6, 3}, kF32, {1, 1, 1, 2, 2, 2, 3, 3, 3, 1, 1, 1, 2, 2, 2, 3, 3, 3}),
       ArrayOf({2, 3}, kI64, {7, 7, 7, 7, 7, 7}), ArrayOf({2, 3}, kF32, {0, 0, 0, 0, 0, 0}),
       Int64s({10, 7}), ArrayOf({3}, kF32, {1, 1.5, 2})});
}

// A bound given at run time: the length is a size the VM reads when the model runs.
TEST(OnnxTensor, RangeOfARunTimeStart) {
  ModelBuilder model(13);
  model.Input("start", {}, kI64).Initializer("limit", Int64s({4}, true));
  model.Initializer("delta", Int64s({1}, true));
  model.Node("Range", {"start", "limit", "delta"}, {"y"}, {}, "range_5").Output("y");
  ExpectOutputs(model, {Int64s({1}, true)}, {Int64s({1, 2, 3})});
  ExpectOutputs(model, {Int64s({7}, true)}, {Int64s({})});
}

}  // namespace
}  // namespace loom::frontend::onnx::test
