// The importer core: model parsing, inputs and shape bindings, initializers (inline and
// external), node order, the unsupported-operator listing, folding, outputs and the errors
// a user meets.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "frontend/onnx/converter.h"
#include "onnx_test_util.h"

namespace loom::frontend::onnx::test {
namespace {

namespace fs = std::filesystem;

runtime::NDArray Relu(const runtime::NDArray& x) {
  runtime::NDArray y = runtime::NDArray::Empty(x.Shape(), x.dtype());
  for (int64_t i = 0; i < x.NumElements(); ++i) SetValue(y, i, std::max(0.0, GetFloat(x, i)));
  return y;
}

// x * slope where x < 0, slope one value per row of a 2-d x.
runtime::NDArray PReluRows(const runtime::NDArray& x, const runtime::NDArray& slope) {
  runtime::NDArray y = runtime::NDArray::Empty(x.Shape(), x.dtype());
  int64_t columns = x.Shape()[1];
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    double v = GetFloat(x, i);
    SetValue(y, i, v < 0 ? v * GetFloat(slope, i / columns) : v);
  }
  return y;
}

// A fresh directory for one test's files, removed when the test ends.
class TestDir {
 public:
  // `suffix` tells two folders of one test apart.
  explicit TestDir(const std::string& suffix = "")
      : path_(fs::temp_directory_path() /
              ("loom_importer_test_" + std::to_string(getpid()) + "_" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name() + suffix)) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TestDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  fs::path operator/(const std::string& name) const { return path_ / name; }
  std::string string() const { return path_.string(); }

 private:
  fs::path path_;
};

void WriteFile(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// What the converter of the test operator com.loomtest.Probe saw through its NodeContext.
struct ProbeRecord {
  std::string where;
  int64_t opset = 0;
  int num_inputs = 0;
  bool has_input_2 = false;
  std::vector<int64_t> axes, ints, constant_ints;
  std::vector<float> floats;
  float alpha = 0;
  std::string mode;
  std::vector<double> tensor;
};

ProbeRecord& Probe() {
  static ProbeRecord record;
  return record;
}

// x + 2, recording attributes read with the ONNX-default fallbacks and the constant input 1.
LOOM_REGISTER_ONNX_CONVERTER("com.loomtest.Probe", [](NodeContext& ctx) -> Outputs {
  ProbeRecord& record = Probe();
  record.where = ctx.Where();
  record.opset = ctx.opset();
  record.num_inputs = ctx.NumInputs();
  record.has_input_2 = ctx.HasInput(2);
  record.axes = ctx.AttrInts("axes", {});
  record.ints = ctx.AttrInts("ints", {7, 8});
  record.floats = ctx.AttrFloats("floats", {});
  record.alpha = ctx.AttrFloat("alpha", 0.5f);
  record.mode = ctx.AttrString("mode", "none");
  record.constant_ints = ctx.ConstantInts(1);
  record.tensor = ctx.HasAttr("t") ? Values(ctx.AttrTensor("t")) : std::vector<double>{};
  return {ctx.Call("add", {ctx.Input(0), ctx.Scalar(2, ctx.InputDtype(0))})};
});

TEST(NodeContext, AttributesConstantsAndNames) {
  ModelBuilder model;
  ::onnx::OperatorSetIdProto* domain = model.proto().add_opset_import();
  domain->set_domain("com.loomtest");
  domain->set_version(3);
  model.Input("x", {3}).Initializer("k", ArrayOf({2}, kI64, {4, -5}));
  model.Node("Probe", {"x", "k", ""}, {"y"},
             {FloatsAttr("floats", {1.5f}), StringAttr("mode", "fast"),
              TensorAttr("t", ArrayOf({2}, DataType::Int(32), {3, 9}))},
             "probe");
  model.proto().mutable_graph()->mutable_node(0)->set_domain("com.loomtest");
  model.Output("y");
  ImportedModel imported = model.Import();
  const ProbeRecord& record = Probe();
  EXPECT_EQ(record.where, "node 'probe' (Probe)");
  EXPECT_EQ(record.opset, 3);  // the node's domain's opset
  EXPECT_EQ(record.num_inputs, 3);
  EXPECT_FALSE(record.has_input_2);  // an empty name is an absent input
  EXPECT_EQ(record.axes, std::vector<int64_t>{});
  EXPECT_EQ(record.ints, (std::vector<int64_t>{7, 8}));
  EXPECT_EQ(record.floats, std::vector<float>{1.5f});
  EXPECT_EQ(record.alpha, 0.5f);
  EXPECT_EQ(record.mode, "fast");
  EXPECT_EQ(record.constant_ints, (std::vector<int64_t>{4, -5}));
  EXPECT_EQ(record.tensor, (std::vector<double>{3, 9}));
  EXPECT_EQ(imported.op_counts, (std::map<std::string, int>{{"com.loomtest.Probe", 1}}));
  // The node's first call takes its name; its constants are named apart.
  const auto* add = imported.module.main()->body.as<graph::CallNode>();
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->name_hint, "probe");
  EXPECT_EQ(add->args[1].as<graph::ConstantNode>()->name_hint, "probe.const");
  ExpectOutputs(model, {ArrayOf({3}, kF32, {1, -2, 0.5})}, {ArrayOf({3}, kF32, {3, 0, 2.5})});
}

TEST(Importer, ImportsAndRunsAModel) {
  ModelBuilder model;
  model.Input("x", {2, 3}).Node("Relu", {"x"}, {"y"}, {}, "relu_1").Output("y");
  ImportedModel imported = model.Import();
  EXPECT_EQ(imported.opset, 17);
  EXPECT_EQ(imported.producer, "loom-test");
  EXPECT_EQ(imported.op_counts, (std::map<std::string, int>{{"Relu", 1}}));
  EXPECT_EQ(imported.module.output_names(), (std::vector<std::string>{"y"}));
  const auto* call = imported.module.main()->body.as<graph::CallNode>();
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->name_hint, "relu_1");  // node names make call names
  runtime::NDArray x = RandomArray({2, 3}, kF32, 1);
  ExpectOutputs(model, {x}, {Relu(x)});
}

TEST(Importer, SeveralOutputsBecomeATupleWithTheirNames) {
  ModelBuilder model;
  model.Input("x", {4}).Node("Relu", {"x"}, {"r"}).Node("Sigmoid", {"x"}, {"s"});
  model.Output("s").Output("r");
  ImportedModel imported = model.Import();
  EXPECT_TRUE(imported.module.main()->body.as<graph::TupleNode>() != nullptr);
  EXPECT_EQ(imported.module.output_names(), (std::vector<std::string>{"s", "r"}));
  runtime::NDArray x = ArrayOf({4}, kF32, {-2, -0.5, 0.5, 3});
  std::vector<double> s;
  for (double v : Values(x)) s.push_back(1 / (1 + std::exp(-v)));
  ExpectOutputs(model, {x}, {ArrayOf({4}, kF32, s), Relu(x)});
}

TEST(Importer, DefaultDomainMayBeSpelledAiOnnx) {
  ModelBuilder model(13);
  model.proto().mutable_opset_import(0)->set_domain("ai.onnx");
  model.Input("x", {2}).Node("Relu", {"x"}, {"y"}).Output("y");
  model.proto().mutable_graph()->mutable_node(0)->set_domain("ai.onnx");
  EXPECT_EQ(model.Import().opset, 13);

  model.proto().clear_opset_import();
  EXPECT_TRUE(Contains(ErrorOf([&] { model.Import(); }),
                       "the model imports no opset of the default ONNX domain"));
}

TEST(Importer, ListsEveryUnsupportedOperatorBeforeConverting) {
  ModelBuilder model;
  model.Input("x", {2});
  model.proto().add_opset_import()->set_domain("com.example");
  model.proto().mutable_opset_import(1)->set_version(1);
  const char* names[] = {"f1", "f2", "f3", "f4"};
  std::string last = "x";
  for (const char* name : names) {
    model.Node("FancyOp", {last}, {std::string(name) + "_out"}, {}, name);
    last = std::string(name) + "_out";
  }
  model.Node("Relu", {last}, {"r"});
  model.Node("Gizmo", {"r"}, {"g"});  // unnamed: shown by index
  model.proto().mutable_graph()->mutable_node(5)->set_domain("com.example");
  model.Output("g");
  std::string message = ErrorOf([&] { model.Import(); });
  EXPECT_TRUE(Contains(message, "2 ONNX operator type(s) that Loom cannot import")) << message;
  EXPECT_TRUE(Contains(message, "FancyOp: 4 nodes ('f1', 'f2', 'f3', ...)")) << message;
  EXPECT_TRUE(Contains(message, "com.example.Gizmo: 1 node (#5)")) << message;
  EXPECT_FALSE(Contains(message, "Relu")) << message;
}

TEST(Importer, SupportedOperatorsAreSortedAndIncludeTheConverters) {
  std::vector<std::string> ops = SupportedOperators();
  EXPECT_TRUE(std::is_sorted(ops.begin(), ops.end()));
  for (const char* op : {"Conv", "Gemm", "MaxPool", "Resize", "BatchNormalization"}) {
    EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op;
  }
}

TEST(Importer, SymbolicDimensionsNeedABinding) {
  ModelBuilder model;
  model.Input("images", {-1, 3, 8, 8}).Node("Relu", {"images"}, {"y"}).Output("y");
  std::string message = ErrorOf([&] { model.Import(); });
  EXPECT_TRUE(Contains(message, "model input 'images' has the shape [d0, 3, 8, 8]")) << message;
  EXPECT_TRUE(Contains(message, "dimension 0 ('d0') is symbolic")) << message;
  EXPECT_TRUE(Contains(message, "--input-shape images=1x3x8x8")) << message;

  ImportOptions options;
  options.input_shapes["images"] = {2, 3, 8, 8};
  ImportedModel imported = model.Import(options);
  EXPECT_EQ(imported.module.main()->params[0].type().ConstShape(),
            (std::vector<int64_t>{2, 3, 8, 8}));
  runtime::NDArray x = RandomArray({2, 3, 8, 8}, kF32, 2);
  ExpectOutputs(model, {x}, {Relu(x)}, 1e-6, options);
}

TEST(Importer, UnknownDimensionsAndMissingShapesNeedABinding) {
  ModelBuilder model;
  model.Input("x", {4}).Node("Relu", {"x"}, {"y"}).Output("y");
  auto* shape = model.proto()
                    .mutable_graph()
                    ->mutable_input(0)
                    ->mutable_type()
                    ->mutable_tensor_type()
                    ->mutable_shape();
  shape->mutable_dim(0)->clear_dim_value();
  EXPECT_TRUE(Contains(ErrorOf([&] { model.Import(); }), "dimension 0 is unknown"));

  model.proto()
      .mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->clear_shape();
  std::string message = ErrorOf([&] { model.Import(); });
  EXPECT_TRUE(Contains(message, "model input 'x' has no shape in the model")) << message;
  ImportOptions options;
  options.input_shapes["x"] = {5};
  EXPECT_EQ(model.Import(options).module.main()->params[0].type().ConstShape(),
            (std::vector<int64_t>{5}));
}

TEST(Importer, BindingsMustNameAnInputAndAgreeWithStaticDimensions) {
  ModelBuilder model;
  model.Input("a", {-1, 4}).Input("b", {2, 4});
  model.Node("PRelu", {"a", "b"}, {"y"}).Output("y");
  ImportOptions options;
  options.input_shapes["a"] = {2, 4};
  options.input_shapes["c"] = {2, 4};
  std::string message = ErrorOf([&] { model.Import(options); });
  EXPECT_TRUE(Contains(message, "a shape is given for 'c', which is not an input of the model"))
      << message;
  EXPECT_TRUE(Contains(message, "its inputs are 'a', 'b'")) << message;

  options.input_shapes.erase("c");
  options.input_shapes["b"] = {3, 4};
  message = ErrorOf([&] { model.Import(options); });
  EXPECT_TRUE(Contains(message,
                       "the shape 3x4 given for model input 'b' contradicts its shape "
                       "in the model, [2, 4]"))
      << message;
  options.input_shapes["b"] = {2, 4, 1};
  EXPECT_TRUE(Contains(ErrorOf([&] { model.Import(options); }), "contradicts"));
  options.input_shapes["b"] = {2, 4};  // agreeing with a static shape is fine
  EXPECT_EQ(model.Import(options).module.main()->params.size(), 2u);
}

TEST(Importer, InitializersListedAsInputsAreNotModelInputs) {
  runtime::NDArray slope = ArrayOf({2}, kF32, {0.5, -2});
  ModelBuilder model;
  model.Input("x", {3, 2}).Input("slope", {2}).Initializer("slope", slope);
  model.Node("PRelu", {"x", "slope"}, {"y"}).Output("y");
  ImportedModel imported = model.Import();
  ASSERT_EQ(imported.module.main()->params.size(), 1u);
  EXPECT_EQ(imported.module.main()->params[0]->name_hint, "x");
  runtime::NDArray x = ArrayOf({3, 2}, kF32, {-1, -1, 2, 2, -3, 0});
  ExpectOutputs(model, {x}, {ArrayOf({3, 2}, kF32, {-0.5, 2, 2, 2, -1.5, 0})});
}

TEST(Importer, FoldsNodesOfConstantsAndNamesTheConstantsAfterTheirValues) {
  runtime::NDArray w = ArrayOf({2, 1}, kF32, {-3, 0.25});
  ModelBuilder model;
  model.Input("x", {2, 3}).Initializer("w", w);
  model.Node("Relu", {"w"}, {"relu_w"}).Node("PRelu", {"x", "relu_w"}, {"y"}).Output("y");
  ImportedModel imported = model.Import();
  const auto* call = imported.module.main()->body.as<graph::CallNode>();
  ASSERT_NE(call, nullptr);
  const auto* folded = call->args[1].as<graph::ConstantNode>();
  ASSERT_NE(folded, nullptr) << graph::ToText(imported.module);
  EXPECT_EQ(folded->name_hint, "relu_w");
  EXPECT_EQ(Values(folded->data), (std::vector<double>{0, 0.25}));
  runtime::NDArray x = RandomArray({2, 3}, kF32, 3);
  ExpectOutputs(model, {x}, {PReluRows(x, ArrayOf({2}, kF32, {0, 0.25}))});
  // A folded value may be a model output too.
  model.Output("relu_w");
  ExpectOutputs(model, {x},
                {PReluRows(x, ArrayOf({2}, kF32, {0, 0.25})), ArrayOf({2, 1}, kF32, {0, 0.25})});
}

TEST(Importer, FoldsShapeArithmeticIntoConstants) {
  // reshape(x, concat(unsqueeze(shape(x)[0]), [-1])): the exporters' way to flatten.
  ModelBuilder model(13);
  model.Input("x", {2, 3, 4});
  model.Initializer("zero", ArrayOf({}, kI64, {0}));
  model.Initializer("axes", ArrayOf({1}, kI64, {0}));
  model.Initializer("rest", ArrayOf({1}, kI64, {-1}));
  model.Node("Shape", {"x"}, {"shape"}).Node("Gather", {"shape", "zero"}, {"batch"});
  model.Node("Unsqueeze", {"batch", "axes"}, {"batch1"});
  model.Node("Concat", {"batch1", "rest"}, {"new_shape"}, {IntAttr("axis", 0)});
  model.Node("Reshape", {"x", "new_shape"}, {"flat"}, {}, "flatten");
  model.Node("Relu", {"flat"}, {"y"}).Output("y");
  ImportedModel imported = model.Import();
  const auto* relu = imported.module.main()->body.as<graph::CallNode>();
  ASSERT_NE(relu, nullptr);
  const auto* reshape = relu->args[0].as<graph::CallNode>();
  ASSERT_NE(reshape, nullptr) << graph::ToText(imported.module);
  EXPECT_EQ(reshape->name_hint, "flatten");
  EXPECT_TRUE(reshape->args[0].as<graph::VarNode>() != nullptr) << graph::ToText(imported.module);
  EXPECT_EQ(reshape->checked_type.ConstShape(), (std::vector<int64_t>{2, 12}));
  runtime::NDArray x = RandomArray({2, 3, 4}, kF32, 5);
  ExpectOutputs(model, {x}, {Relu(x.CreateView({2, 12}, kF32))});

  // The same shape from a model input is not folded: the VM reads it when the model runs.
  ModelBuilder dynamic(13);
  dynamic.Input("x", {2, 3, 4}).Input("new_shape", {2}, kI64);
  dynamic.Node("Reshape", {"x", "new_shape"}, {"y"}, {}, "reshape").Output("y");
  ExpectOutputs(dynamic, {x, ArrayOf({2}, kI64, {-1, 6})}, {x.CreateView({4, 6}, kF32)});
}

TEST(Importer, FoldsEveryOutputOfASplitOfConstants) {
  ModelBuilder model(13);
  model.Input("x", {2, 2}).Initializer("w", ArrayOf({4}, kF32, {-1, 2, 0.5, -3}));
  model.Node("Split", {"w"}, {"low", "high"}, {IntAttr("axis", 0)}, "split");
  model.Node("PRelu", {"x", "high"}, {"y"}).Output("y").Output("low");
  ImportedModel imported = model.Import();
  const auto& outputs = imported.module.main()->body.as<graph::TupleNode>()->fields;
  const auto* low = outputs[1].as<graph::ConstantNode>();
  ASSERT_NE(low, nullptr) << graph::ToText(imported.module);
  EXPECT_EQ(Values(low->data), (std::vector<double>{-1, 2}));
  const auto* high = outputs[0].as<graph::CallNode>()->args[1].as<graph::ConstantNode>();
  ASSERT_NE(high, nullptr) << graph::ToText(imported.module);
  EXPECT_EQ(Values(high->data), (std::vector<double>{0.5, -3}));
}

TEST(Importer, NodesMustBeInTopologicalOrderAndDefineValuesOnce) {
  ModelBuilder model;
  model.Input("x", {2}).Node("Relu", {"later"}, {"y"}, {}, "first");
  model.Node("Relu", {"x"}, {"later"}).Output("y");
  std::string message = ErrorOf([&] { model.Import(); });
  EXPECT_TRUE(Contains(message,
                       "node 'first' (Relu) reads 'later', which no earlier node, "
                       "initializer or graph input defines"))
      << message;

  ModelBuilder twice;
  twice.Input("x", {2}).Node("Relu", {"x"}, {"y"}).Node("Sigmoid", {"x"}, {"y"}).Output("y");
  EXPECT_TRUE(Contains(ErrorOf([&] { twice.Import(); }),
                       "node #1 (Sigmoid) defines 'y', which an earlier node"));
}

TEST(Importer, OutputsMustBeDefined) {
  ModelBuilder model;
  model.Input("x", {2}).Node("Relu", {"x"}, {"y"}).Output("z");
  EXPECT_TRUE(Contains(ErrorOf([&] { model.Import(); }),
                       "the model's output 'z' is not computed by any node"));
}

TEST(Importer, ErrorsNameTheNode) {
  // A type error of the graph call names the ONNX node.
  ModelBuilder model;
  model.Input("x", {2, 3}).Input("slope", {4});
  model.Node("PRelu", {"x", "slope"}, {"y"}, {}, "act").Output("y");
  std::string message = ErrorOf([&] { model.Import(); });
  EXPECT_EQ(message.rfind("node 'act' (PRelu): ", 0), 0u) << message;

  // A required attribute; an attribute of the wrong type (unnamed node: its index).
  ModelBuilder lrn;
  lrn.Input("x", {1, 4, 2, 2}).Node("LRN", {"x"}, {"y"}).Output("y");
  EXPECT_EQ(ErrorOf([&] { lrn.Import(); }),
            "node #0 (LRN): the required attribute 'size' is missing");
  lrn.proto().mutable_graph()->mutable_node(0)->add_attribute()->CopyFrom(FloatAttr("size", 3));
  EXPECT_EQ(ErrorOf([&] { lrn.Import(); }),
            "node #0 (LRN): attribute 'size' must be INT, got FLOAT");
}

// Opsets start at 1; one newer than the importer knows is imported with a warning.
TEST(Importer, OpsetsOutsideTheKnownRange) {
  for (int64_t opset : {0, -1}) {
    ModelBuilder model(opset);
    model.Input("x", {2}).Node("Relu", {"x"}, {"y"}).Output("y");
    EXPECT_TRUE(Contains(ErrorOf([&] { model.Import(); }),
                         "imports opset " + std::to_string(opset) +
                             " of the default ONNX domain; opsets start at 1"));
  }
  ModelBuilder future(1000);
  future.Input("x", {2}).Node("Relu", {"x"}, {"y"}).Output("y");
  const ImportedModel imported = future.Import();
  ASSERT_EQ(imported.warnings.size(), 1u);
  EXPECT_TRUE(Contains(imported.warnings[0],
                       "opset 1000 of the default ONNX domain, newer "
                       "than the newest this importer knows"))
      << imported.warnings[0];
  ModelBuilder current(17);
  current.Input("x", {2}).Node("Relu", {"x"}, {"y"}).Output("y");
  EXPECT_TRUE(current.Import().warnings.empty());
}

// Names are UTF-8 (they reach the artifact's JSON): another byte sequence is an error that
// shows it escaped.
TEST(Importer, NamesMustBeUtf8) {
  for (const std::string& bad : {std::string("r\xff"), std::string("\xc0\xaf"),
                                 std::string("\xed\xa0\x80"), std::string("cut\xe2\x82")}) {
    ModelBuilder model;
    model.Input("x", {2}).Node("Relu", {"x"}, {bad}).Node("Relu", {bad}, {"y"}).Output("y");
    const std::string message = ErrorOf([&] { model.Import(); });
    EXPECT_TRUE(Contains(message, "node #0's output has a name that is not UTF-8")) << message;
  }
  ModelBuilder fine;  // multi-byte UTF-8 is a name like any other
  fine.Input("x", {2})
      .Node("Relu", {"x"}, {"\xc3\xa9t\xc3\xa9 \xf0\x9f\x99\x82"})
      .Node("Relu", {"\xc3\xa9t\xc3\xa9 \xf0\x9f\x99\x82"}, {"y"})
      .Output("y");
  EXPECT_NO_THROW(fine.Import());
}

// Gather's constant indices must lie in [-extent, extent): a kernel would clamp others.
TEST(Importer, GatherIndicesOutOfRangeAreAnError) {
  for (int64_t index : {4, -5, 100}) {
    ModelBuilder model;
    model.Input("x", {2, 4}).Initializer("idx", ArrayOf({2}, kI64, {1, double(index)}));
    model.Node("Gather", {"x", "idx"}, {"y"}, {IntAttr("axis", 1)}, "g").Output("y");
    EXPECT_EQ(ErrorOf([&] { model.Import(); }),
              "node 'g' (Gather): index " + std::to_string(index) +
                  " is outside [-4, 3], the range of axis 1 of data [2, 4]");
  }
}

TEST(Importer, UnsupportedElementTypesAreNamed) {
  ModelBuilder model;
  model.Input("x", {2}).Node("Relu", {"x"}, {"y"}).Output("y");
  model.proto()
      .mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->set_elem_type(::onnx::TensorProto::COMPLEX64);
  std::string message = ErrorOf([&] { model.Import(); });
  EXPECT_TRUE(Contains(message, "model input 'x': element type COMPLEX64 is not supported"))
      << message;
  EXPECT_TRUE(Contains(ErrorOf([] { DataTypeOfOnnx(::onnx::TensorProto::STRING, "t"); }),
                       "t: element type STRING is not supported"));
  EXPECT_TRUE(Contains(ErrorOf([] { DataTypeOfOnnx(99, "t"); }), "unknown type 99"));
}

// A model stored in float16 keeps float16 inputs and outputs and computes in float32: a conv
// over 18 products and a clip whose float16 bounds are constants the converter reads.
TEST(Importer, Float16ModelsRun) {
  const DataType f16 = DataType::Float(16);
  auto half_of = [&](const runtime::NDArray& a) {
    runtime::NDArray half = runtime::NDArray::Empty(a.Shape(), f16);
    for (int64_t i = 0; i < a.NumElements(); ++i) SetValue(half, i, GetFloat(a, i));
    return half;
  };
  runtime::NDArray x = half_of(RandomArray({1, 2, 4, 4}, kF32, 1));
  runtime::NDArray w = half_of(RandomArray({3, 2, 3, 3}, kF32, 2));
  ModelBuilder model(13);
  model.Input("x", {1, 2, 4, 4}, f16)
      .Initializer("w", w)
      .Initializer("lo", half_of(ArrayOf({}, kF32, {-5})))
      .Initializer("hi", half_of(ArrayOf({}, kF32, {6.5})))
      .Node("Conv", {"x", "w"}, {"c"}, {IntsAttr("pads", {1, 1, 1, 1})})
      .Node("Clip", {"c", "lo", "hi"}, {"y"})
      .Output("y");
  runtime::NDArray expected = runtime::NDArray::Empty({1, 3, 4, 4}, f16);
  for (int64_t k = 0; k < 3; ++k) {
    for (int64_t i = 0; i < 4; ++i) {
      for (int64_t j = 0; j < 4; ++j) {
        double sum = 0;
        for (int64_t c = 0; c < 2; ++c) {
          for (int64_t r = 0; r < 3; ++r) {
            for (int64_t s = 0; s < 3; ++s) {
              int64_t h = i + r - 1, v = j + s - 1;
              if (h < 0 || h >= 4 || v < 0 || v >= 4) continue;
              sum += GetFloat(x, (c * 4 + h) * 4 + v) * GetFloat(w, ((k * 2 + c) * 3 + r) * 3 + s);
            }
          }
        }
        SetValue(expected, (k * 4 + i) * 4 + j, std::clamp(sum, -5.0, 6.5));
      }
    }
  }
  // float16 results: within the rounding of the result (2^-11 relative).
  ExpectOutputs(model, {x}, {expected}, 1e-3);
}

TEST(Importer, UsedOutputsTheConverterDoesNotComputeAreErrors) {
  ModelBuilder model;
  model.Input("x", {1, 2, 3, 3});
  for (const char* name : {"scale", "bias", "mean", "var"}) {
    model.Initializer(name, ArrayOf({2}, kF32, {1, 1}));
  }
  model.Node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y", "running_mean"}, {},
             "bn");
  model.Output("y");
  EXPECT_EQ(model.Import().module.output_names().size(), 1u);  // unused: left out
  model.Output("running_mean");
  EXPECT_TRUE(Contains(ErrorOf([&] { model.Import(); }),
                       "node 'bn' (BatchNormalization): the model uses its output 1 "
                       "('running_mean'), but Loom computes only its first 1 output(s)"));
}

TEST(TensorProto, TypedFieldsAndRawData) {
  ::onnx::TensorProto floats;
  floats.set_data_type(::onnx::TensorProto::FLOAT);
  floats.add_dims(2);
  floats.add_float_data(1.5f);
  floats.add_float_data(-2);
  runtime::NDArray a = ArrayOfTensorProto(floats, "floats");
  EXPECT_EQ(a.Shape(), (std::vector<int64_t>{2}));
  EXPECT_EQ(Values(a), (std::vector<double>{1.5, -2}));

  ::onnx::TensorProto int8s;
  int8s.set_data_type(::onnx::TensorProto::INT8);
  int8s.add_int32_data(-7);
  int8s.add_int32_data(9);
  int8s.add_dims(2);
  EXPECT_EQ(Values(ArrayOfTensorProto(int8s, "int8s")), (std::vector<double>{-7, 9}));

  // float16 and bfloat16 values in int32_data are their bits.
  ::onnx::TensorProto halves;
  halves.set_data_type(::onnx::TensorProto::FLOAT16);
  halves.add_dims(2);
  halves.add_int32_data(0x3e00);  // 1.5
  halves.add_int32_data(0xc000);  // -2
  runtime::NDArray h = ArrayOfTensorProto(halves, "halves");
  EXPECT_EQ(h.dtype(), DataType::Float(16));
  EXPECT_EQ(Values(h), (std::vector<double>{1.5, -2}));
  ::onnx::TensorProto brains = halves;
  brains.set_data_type(::onnx::TensorProto::BFLOAT16);
  brains.set_int32_data(0, 0x3fc0);  // 1.5
  runtime::NDArray b16 = ArrayOfTensorProto(brains, "brains");
  EXPECT_EQ(b16.dtype(), DataType::BFloat16());
  EXPECT_EQ(static_cast<const uint16_t*>(b16.data())[0], 0x3fc0);

  ::onnx::TensorProto scalar;
  scalar.set_data_type(::onnx::TensorProto::INT64);
  scalar.add_int64_data(int64_t{1} << 40);
  runtime::NDArray s = ArrayOfTensorProto(scalar, "scalar");
  EXPECT_TRUE(s.Shape().empty());
  EXPECT_EQ(static_cast<const int64_t*>(s.data())[0], int64_t{1} << 40);

  ::onnx::TensorProto bools = TensorOf("b", ArrayOf({3}, DataType::Bool(), {1, 0, 1}));
  EXPECT_EQ(Values(ArrayOfTensorProto(bools, "bools")), (std::vector<double>{1, 0, 1}));

  floats.add_dims(2);  // [2, 2] needs 4 values
  EXPECT_EQ(ErrorOf([&] { ArrayOfTensorProto(floats, "initializer 'w'"); }),
            "initializer 'w': float_data holds 2 values, but the shape [2, 2] needs 4");
  bools.add_dims(2);
  EXPECT_EQ(ErrorOf([&] { ArrayOfTensorProto(bools, "initializer 'b'"); }),
            "initializer 'b': raw_data holds 3 bytes, but bool of shape [3, 2] needs 6");
}

TEST(TensorProto, ReadsSerializedTensorFiles) {
  TestDir dir;
  runtime::NDArray value = ArrayOf({2, 2}, DataType::Int(32), {1, -2, 3, -4});
  std::string bytes;
  ASSERT_TRUE(TensorOf("t", value).SerializeToString(&bytes));
  WriteFile(dir / "input_0.pb", bytes);
  runtime::NDArray read = ReadTensorProtoFile((dir / "input_0.pb").string());
  EXPECT_EQ(read.dtype(), DataType::Int(32));
  EXPECT_EQ(Values(read), Values(value));

  WriteFile(dir / "bad.pb", "\xff\xff\xff garbage");
  std::string message = ErrorOf([&] { ReadTensorProtoFile((dir / "bad.pb").string()); });
  EXPECT_TRUE(Contains(message, "cannot parse '" + (dir / "bad.pb").string() + "'")) << message;
  EXPECT_TRUE(Contains(ErrorOf([&] { ReadTensorProtoFile((dir / "none.pb").string()); }),
                       "cannot open the tensor file"));
}

TEST(ImportFile, MissingCorruptAndTruncatedFilesAreNamed) {
  TestDir dir;
  std::string missing = (dir / "missing.onnx").string();
  EXPECT_EQ(ErrorOf([&] { ImportFile(missing); }), "cannot open the ONNX model '" + missing + "'");

  std::string corrupt = (dir / "corrupt.onnx").string();
  WriteFile(corrupt, "\x0a\xff\xff\xff\xff\x0f not protobuf");
  EXPECT_TRUE(Contains(ErrorOf([&] { ImportFile(corrupt); }),
                       "cannot parse '" + corrupt + "' as an ONNX model (ModelProto)"));

  ModelBuilder model;
  model.Input("x", {2, 3}).Node("Relu", {"x"}, {"y"}).Output("y");
  model.Initializer("unused", RandomArray({64}, kF32, 4));
  std::string bytes = model.Bytes();
  std::string truncated = (dir / "truncated.onnx").string();
  WriteFile(truncated, bytes.substr(0, bytes.size() - 20));
  std::string message = ErrorOf([&] { ImportFile(truncated); });
  EXPECT_TRUE(Contains(message, "'" + truncated + "'")) << message;

  std::string empty = (dir / "empty.onnx").string();
  WriteFile(empty, "");
  EXPECT_EQ(ErrorOf([&] { ImportFile(empty); }),
            "'" + empty + "' holds no ONNX graph: it is truncated or not an ONNX model");
}

// A model whose PRelu slope lives in weights.bin at `offset`.
ModelBuilder ExternalSlopeModel(int64_t offset, const std::string& location = "weights.bin") {
  ModelBuilder model;
  model.Input("x", {2, 2});
  ::onnx::TensorProto* slope = model.proto().mutable_graph()->add_initializer();
  slope->set_name("slope");
  slope->set_data_type(::onnx::TensorProto::FLOAT);
  slope->add_dims(2);
  slope->add_dims(1);
  slope->set_data_location(::onnx::TensorProto::EXTERNAL);
  auto add = [&](const std::string& key, const std::string& value) {
    auto* entry = slope->add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  };
  add("location", location);
  add("offset", std::to_string(offset));
  add("length", "8");
  model.Node("PRelu", {"x", "slope"}, {"y"}).Output("y");
  return model;
}

TEST(ImportFile, ReadsExternalDataRelativeToTheModel) {
  TestDir dir;
  float slope[2] = {0.5f, 3.0f};
  std::string weights(16, '\0');
  std::memcpy(weights.data() + 8, slope, sizeof(slope));
  WriteFile(dir / "weights.bin", weights);
  ModelBuilder model = ExternalSlopeModel(8);
  WriteFile(dir / "model.onnx", model.Bytes());

  ImportedModel imported = ImportFile((dir / "model.onnx").string());
  runtime::NDArray x = ArrayOf({2, 2}, kF32, {-2, 2, -1, 1});
  std::vector<runtime::NDArray> y = RunImported(imported, {x}, 0);
  EXPECT_EQ(Values(y.at(0)), (std::vector<double>{-1, 2, -3, 1}));

  // ImportBytes finds the files in the folder it is given.
  EXPECT_EQ(ImportBytes(model.Bytes(), dir.string()).module.main()->params.size(), 1u);
}

TEST(ImportFile, MissingOrShortExternalDataIsAnError) {
  TestDir dir;
  WriteFile(dir / "model.onnx", ExternalSlopeModel(0, "absent.bin").Bytes());
  std::string message = ErrorOf([&] { ImportFile((dir / "model.onnx").string()); });
  EXPECT_TRUE(Contains(message, "initializer 'slope': cannot read its external data file '" +
                                    (dir / "absent.bin").string() + "'"))
      << message;

  WriteFile(dir / "weights.bin", std::string(12, '\0'));
  WriteFile(dir / "model.onnx", ExternalSlopeModel(8).Bytes());
  message = ErrorOf([&] { ImportFile((dir / "model.onnx").string()); });
  EXPECT_TRUE(Contains(message,
                       "initializer 'slope': its external data (offset 8, 8 bytes) runs "
                       "past the end of '" +
                           (dir / "weights.bin").string() + "' (12 bytes)"))
      << message;
}

TEST(ImportFile, ExternalDataStaysInTheModelsFolderAndWithinItsFile) {
  TestDir dir;
  WriteFile(dir / "weights.bin", std::string(16, '\0'));
  for (const std::string& location : {std::string("/etc/passwd"), std::string("../weights.bin"),
                                      std::string("sub/../../weights.bin")}) {
    WriteFile(dir / "model.onnx", ExternalSlopeModel(0, location).Bytes());
    EXPECT_EQ(ErrorOf([&] { ImportFile((dir / "model.onnx").string()); }),
              "initializer 'slope': external data location '" + location +
                  "' must be a path relative to the model's folder, without '..'");
  }
  // A file of the folder that is a symbolic link to one outside: refused, naming both.
  TestDir outside("_outside");
  WriteFile(outside / "secret.bin", std::string(16, '\0'));
  std::filesystem::create_symlink(outside / "secret.bin", dir / "link.bin");
  WriteFile(dir / "model.onnx", ExternalSlopeModel(0, "link.bin").Bytes());
  std::string linked = ErrorOf([&] { ImportFile((dir / "model.onnx").string()); });
  EXPECT_TRUE(Contains(linked, "outside the model's folder")) << linked;
  EXPECT_TRUE(Contains(linked, "secret.bin")) << linked;
  // A folder is no data file.
  std::filesystem::create_directory(dir / "folder.bin");
  WriteFile(dir / "model.onnx", ExternalSlopeModel(0, "folder.bin").Bytes());
  EXPECT_TRUE(Contains(ErrorOf([&] { ImportFile((dir / "model.onnx").string()); }),
                       "is not a regular file"));
  // An offset near INT64_MAX must not wrap around the end-of-file check.
  WriteFile(dir / "model.onnx",
            ExternalSlopeModel(std::numeric_limits<int64_t>::max() - 4).Bytes());
  std::string message = ErrorOf([&] { ImportFile((dir / "model.onnx").string()); });
  EXPECT_TRUE(Contains(message, "initializer 'slope': its external data (offset " +
                                    std::to_string(std::numeric_limits<int64_t>::max() - 4) +
                                    ", 8 bytes) runs past the end of"))
      << message;
}

}  // namespace
}  // namespace loom::frontend::onnx::test
