// Malformed models: ImportBytes on a small model's bytes mutated and truncated many times,
// and on its proto with fields set to hostile values (negative, huge and out-of-range
// dimensions, axes and indices; swapped operator types and element types; dangling and
// absent inputs), all from fixed seeds. Every import must succeed or throw loom::Error: an
// InternalError, another exception or a crash fails the test.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "frontend/onnx/converter.h"
#include "loom/support/error.h"
#include "onnx_test_util.h"

namespace loom::frontend::onnx::test {
namespace {

// A small model that reads every kind of field the importer parses: typed-field and
// raw_data initializers, a Constant node's tensor attribute, int and ints attributes,
// constant shape operands, optional inputs and two outputs.
ModelBuilder SmallModel() {
  ModelBuilder model;
  ::onnx::TensorProto* shape = model.proto().mutable_graph()->add_initializer();
  shape->set_name("shape");
  shape->set_data_type(::onnx::TensorProto::INT64);
  shape->add_dims(2);
  shape->add_int64_data(3);
  shape->add_int64_data(-1);
  model.Input("x", {2, 3})
      .Initializer("bias", ArrayOf({3}, kF32, {0.5, -1, 2}))
      .Node("Constant", {}, {"index"}, {TensorAttr("value", ArrayOf({1}, kI64, {1}))},
            "index_const")
      .Node("Add", {"x", "bias"}, {"sum"})
      .Node("Relu", {"sum"}, {"relu"})
      .Node("Reshape", {"relu", "shape"}, {"reshaped"})
      .Node("Transpose", {"reshaped"}, {"transposed"}, {IntsAttr("perm", {1, 0})})
      .Node("Softmax", {"transposed"}, {"y"}, {IntAttr("axis", -1)}, "softmax")
      .Node("Gather", {"x", "index"}, {"g"}, {IntAttr("axis", 1)})
      .Node("Slice", {"g", "starts", "ends", "", ""}, {"z"})
      .Output("y")
      .Output("z");
  model.Initializer("starts", ArrayOf({1}, kI64, {0}));
  model.Initializer("ends", ArrayOf({1}, kI64, {1}));
  return model;
}

// Imports `bytes`; a loom::Error counts as a rejection, anything else fails the test.
// Returns whether the import succeeded.
bool ImportSurvives(const std::string& bytes, const std::function<std::string()>& what) {
  try {
    ImportBytes(bytes, ".");
    return true;
  } catch (const Error&) {
    return false;
  } catch (const std::exception& e) {
    ADD_FAILURE() << what() << ": " << e.what();
    return false;
  }
}

TEST(FuzzImport, MutatedAndTruncatedBytesImportOrThrowLoomErrors) {
  const std::string original = SmallModel().Bytes();
  ASSERT_TRUE(ImportSurvives(original, [] { return "the unmutated model"; }));
  std::mt19937 rng(20261125);
  auto below = [&rng](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  int imported = 0, rejected = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    std::string bytes = original;
    switch (trial % 4) {
      case 0:  // a few bytes overwritten
        for (size_t k = 1 + below(4); k > 0; --k) bytes[below(bytes.size())] = char(below(256));
        break;
      case 1:  // truncated
        bytes.resize(below(bytes.size()));
        break;
      case 2: {  // a range cut out
        size_t begin = below(bytes.size());
        bytes.erase(begin, 1 + below(16));
        break;
      }
      default: {  // a range repeated
        size_t begin = below(bytes.size());
        bytes.insert(begin, bytes.substr(begin, 1 + below(16)));
        break;
      }
    }
    bool ok = ImportSurvives(bytes, [&] { return "byte trial " + std::to_string(trial); });
    (ok ? imported : rejected) += 1;
  }
  // Both verdicts occur: the mutations neither all miss nor all break the model.
  EXPECT_GT(imported, 0);
  EXPECT_GT(rejected, 0);
}

// Values that break naive index and size arithmetic.
const std::vector<int64_t> kHostile = {
    -1, -2, -7, 0, 1, 2, 5, 1000, int64_t{1} << 31, int64_t{1} << 40,
    std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};

// Operator types a node is switched to, so that converters meet inputs they do not expect.
const std::vector<std::string> kOperatorTypes = {
    "Relu", "Reshape", "Transpose", "Softmax", "Gather", "Slice", "Concat", "Split",
    "Squeeze", "Unsqueeze", "Expand", "Tile", "Flatten", "MatMul", "Conv", "MaxPool",
    "Pad", "ConstantOfShape", "Range", "ReduceSum", "Gemm", "Shape", "Size", "Cast",
    "Where", "LayerNormalization", "Einsum", "Resize", "BatchNormalization",
    "GlobalAveragePool", "Identity", "Constant"};

// A small convolutional model, for the window operators' converters.
ModelBuilder SmallCnnModel() {
  ModelBuilder model;
  model.Input("x", {1, 2, 4, 4})
      .Initializer("w", RandomArray({2, 2, 3, 3}, kF32, 1))
      .Initializer("bias", ArrayOf({2}, kF32, {0.5, -1}))
      .Initializer("scale", ArrayOf({2}, kF32, {2, 3}))
      .Initializer("pads", ArrayOf({8}, kI64, {0, 0, 1, 1, 0, 0, 1, 1}))
      .Node("Conv", {"x", "w", "bias"}, {"conv"}, {IntsAttr("pads", {1, 1, 1, 1})}, "conv")
      .Node("MaxPool", {"conv"}, {"pool"},
            {IntsAttr("kernel_shape", {2, 2}), IntsAttr("strides", {2, 2})})
      .Node("Pad", {"pool", "pads"}, {"padded"})
      .Node("BatchNormalization", {"padded", "scale", "bias", "bias", "scale"}, {"y"})
      .Node("ConvTranspose", {"x", "w"}, {"z"},
            {IntsAttr("strides", {2, 2}), StringAttr("auto_pad", "SAME_UPPER")})
      .Output("y")
      .Output("z");
  return model;
}

// Imports `model` with 1 to 3 hostile field mutations, `trials` times from `seed`.
void ImportWithHostileFields(const ModelBuilder& model, uint32_t seed, int trials) {
  const ::onnx::ModelProto original = model.proto();
  std::mt19937 rng(seed);
  auto below = [&rng](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  auto hostile = [&] { return kHostile[static_cast<size_t>(below(int(kHostile.size())))]; };
  using Mutation = std::function<void(::onnx::GraphProto&)>;
  std::vector<Mutation> mutations = {
      [&](::onnx::GraphProto& g) {  // an initializer's dimension
        auto* init = g.mutable_initializer(below(g.initializer_size()));
        if (init->dims_size() == 0) init->add_dims(0);
        init->set_dims(below(init->dims_size()), hostile());
      },
      [&](::onnx::GraphProto& g) {  // an initializer's integer value
        auto* init = g.mutable_initializer(below(g.initializer_size()));
        if (init->int64_data_size() > 0)
          init->set_int64_data(below(init->int64_data_size()), hostile());
      },
      [&](::onnx::GraphProto& g) {  // an input's dimension
        auto* shape = g.mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
        if (shape->dim_size() == 0) shape->add_dim();
        shape->mutable_dim(below(shape->dim_size()))->set_dim_value(hostile());
      },
      [&](::onnx::GraphProto& g) {  // an extra or missing input dimension
        auto* shape = g.mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
        if (shape->dim_size() == 0 || below(2) == 0) {
          shape->add_dim()->set_dim_value(1 + below(3));
        } else {
          shape->mutable_dim()->RemoveLast();
        }
      },
      [&](::onnx::GraphProto& g) {  // an integer attribute
        auto* node = g.mutable_node(below(g.node_size()));
        ::onnx::AttributeProto* attr = node->add_attribute();
        attr->set_name(below(2) == 0 ? "axis" : "keepdims");
        attr->set_type(::onnx::AttributeProto::INT);
        attr->set_i(hostile());
      },
      [&](::onnx::GraphProto& g) {  // an ints attribute
        auto* node = g.mutable_node(below(g.node_size()));
        ::onnx::AttributeProto* attr = node->add_attribute();
        const char* names[] = {"perm",    "axes",      "pads",          "kernel_shape",
                               "strides", "dilations", "output_padding", "split"};
        attr->set_name(names[below(8)]);
        attr->set_type(::onnx::AttributeProto::INTS);
        for (int k = below(5); k > 0; --k) attr->add_ints(hostile());
      },
      [&](::onnx::GraphProto& g) {  // an operator type
        g.mutable_node(below(g.node_size()))
            ->set_op_type(kOperatorTypes[static_cast<size_t>(below(int(kOperatorTypes.size())))]);
      },
      [&](::onnx::GraphProto& g) {  // an element type
        int32_t type = below(17);
        if (below(2) == 0) {
          g.mutable_initializer(below(g.initializer_size()))->set_data_type(type);
        } else {
          g.mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(type);
        }
      },
      [&](::onnx::GraphProto& g) {  // an input dropped, emptied or pointed elsewhere
        auto* node = g.mutable_node(below(g.node_size()));
        const char* names[] = {"", "x", "bias", "shape", "index", "relu", "pads", "nowhere"};
        if (node->input_size() == 0 || below(4) == 0) {
          node->add_input(names[below(8)]);
        } else if (below(3) == 0) {
          node->mutable_input()->RemoveLast();
        } else {
          node->set_input(below(node->input_size()), names[below(8)]);
        }
      },
      [&](::onnx::GraphProto& g) {  // raw data of the wrong size, or moved to a missing file
        auto* init = g.mutable_initializer(below(g.initializer_size()));
        if (below(2) == 0) {
          init->set_raw_data(std::string(static_cast<size_t>(below(40)), '\x01'));
        } else {
          init->set_data_location(::onnx::TensorProto::EXTERNAL);
          auto* entry = init->add_external_data();
          entry->set_key(below(2) == 0 ? "location" : "offset");
          entry->set_value(below(2) == 0 ? "/etc/passwd" : std::to_string(hostile()));
        }
      },
  };
  int imported = 0, rejected = 0;
  for (int trial = 0; trial < trials; ++trial) {
    ::onnx::ModelProto model = original;
    for (int k = 1 + below(3); k > 0; --k) {
      mutations[static_cast<size_t>(below(int(mutations.size())))](*model.mutable_graph());
    }
    bool ok = ImportSurvives(model.SerializeAsString(), [&] {
      return "field trial " + std::to_string(trial) + ":\n" + model.graph().DebugString();
    });
    (ok ? imported : rejected) += 1;
  }
  EXPECT_GT(imported, 0);
  EXPECT_GT(rejected, 0);
}

TEST(FuzzImport, HostileFieldValuesImportOrThrowLoomErrors) {
  ImportWithHostileFields(SmallModel(), 7, 20000);
}

TEST(FuzzImport, HostileFieldValuesOfWindowOperatorsImportOrThrowLoomErrors) {
  ImportWithHostileFields(SmallCnnModel(), 11, 5000);
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(MalformedTensors, SizesAreCheckedBeforeAllocating) {
  ::onnx::TensorProto huge;
  huge.set_data_type(::onnx::TensorProto::FLOAT);
  huge.add_dims(int64_t{1} << 40);  // 4 TiB claimed, no data
  EXPECT_EQ(ErrorOf([&] { ArrayOfTensorProto(huge, "initializer 'w'"); }),
            "initializer 'w': float_data holds 0 values, but the shape [1099511627776] needs "
            "1099511627776");
  huge.add_dims(int64_t{1} << 40);  // past int64
  std::string message = ErrorOf([&] { ArrayOfTensorProto(huge, "initializer 'w'"); });
  EXPECT_TRUE(Contains(message,
                       "initializer 'w': float32 of shape [1099511627776, "
                       "1099511627776] needs more than"))
      << message;
  huge.set_dims(1, -3);
  EXPECT_EQ(ErrorOf([&] { ArrayOfTensorProto(huge, "initializer 'w'"); }),
            "initializer 'w': negative dimension in shape [1099511627776, -3]");
}

TEST(MalformedTensors, UnsignedTypesReadFromTheirTypedFields) {
  ::onnx::TensorProto u64;
  u64.set_data_type(::onnx::TensorProto::UINT64);
  u64.add_dims(2);
  u64.add_uint64_data(uint64_t{1} << 63);
  u64.add_uint64_data(5);
  runtime::NDArray a = ArrayOfTensorProto(u64, "u64");
  EXPECT_EQ(a.dtype(), DataType::UInt(64));
  EXPECT_EQ(static_cast<const uint64_t*>(a.data())[0], uint64_t{1} << 63);
  ::onnx::TensorProto u32 = u64;
  u32.set_data_type(::onnx::TensorProto::UINT32);
  runtime::NDArray b = ArrayOfTensorProto(u32, "u32");
  EXPECT_EQ(b.dtype(), DataType::UInt(32));
  EXPECT_EQ(static_cast<const uint32_t*>(b.data())[1], 5u);
  ::onnx::TensorProto u16;
  u16.set_data_type(::onnx::TensorProto::UINT16);
  u16.add_int32_data(65535);
  EXPECT_EQ(static_cast<const uint16_t*>(ArrayOfTensorProto(u16, "u16").data())[0], 65535);
}

TEST(MalformedModels, InputShapesMustBeNonNegativeAndInputsUnique) {
  ModelBuilder model;
  model.Input("x", {2, 3}).Node("Relu", {"x"}, {"y"}).Output("y");
  model.proto()
      .mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(1)
      ->set_dim_value(-4);
  EXPECT_EQ(ErrorOf([&] { model.Import(); }),
            "model input 'x': negative dimension in shape [2, -4]");
  ImportOptions options;
  options.input_shapes["x"] = {2, -1};
  ModelBuilder symbolic;
  symbolic.Input("x", {2, -1}).Node("Relu", {"x"}, {"y"}).Output("y");
  EXPECT_EQ(ErrorOf([&] { symbolic.Import(options); }),
            "model input 'x': negative dimension in shape [2, -1]");
  options.input_shapes["x"] = {2, int64_t{1} << 62};
  std::string message = ErrorOf([&] { symbolic.Import(options); });
  EXPECT_TRUE(Contains(message, "model input 'x': float32 of shape [2, 4611686018427387904] "
                                "needs more than"))
      << message;
  symbolic.proto().mutable_graph()->add_input()->CopyFrom(symbolic.proto().graph().input(0));
  options.input_shapes.clear();
  EXPECT_EQ(ErrorOf([&] { symbolic.Import(options); }),
            "the model lists the graph input 'x' twice");
}

TEST(MalformedModels, WindowsNeedWeightsOfTheInputsRankAndPositiveStrides) {
  ModelBuilder conv;
  conv.Input("x", {1, 3, 4}).Initializer("w", RandomArray({3}, kF32, 1));
  conv.Node("Conv", {"x", "w"}, {"y"}, {}, "conv").Output("y");
  EXPECT_EQ(ErrorOf([&] { conv.Import(); }),
            "node 'conv' (Conv): the weight (input 1) of shape [3] must have the rank of input "
            "0, [1, 3, 4]");
  ModelBuilder pool;
  pool.Input("x", {1, 1, 4, 4});
  pool.Node("MaxPool", {"x"}, {"y"},
            {IntsAttr("kernel_shape", {2, 2}), IntsAttr("strides", {0, 1}),
             StringAttr("auto_pad", "SAME_UPPER")},
            "pool")
      .Output("y");
  EXPECT_EQ(ErrorOf([&] { pool.Import(); }),
            "node 'pool' (MaxPool): kernel_shape [2, 2], strides [0, 1] and dilations [1, 1] "
            "must be positive");
}

TEST(MalformedModels, ComputedConstantsHaveBoundedSizes) {
  ModelBuilder model;
  model.Initializer("dims", ArrayOf({2}, kI64, {1 << 20, 1 << 20}));
  model.Node("ConstantOfShape", {"dims"}, {"y"}, {}, "fill").Output("y");
  std::string message = ErrorOf([&] { model.Import(); });
  EXPECT_TRUE(Contains(message,
                       "node 'fill' (ConstantOfShape): its output: float32 of shape "
                       "[1048576, 1048576] needs more than 1073741824 bytes"))
      << message;

  ModelBuilder range;
  range.Initializer("start", ArrayOf({}, kI64, {0}))
      .Initializer("limit", ArrayOf({}, kI64, {0}))
      .Initializer("delta", ArrayOf({}, kI64, {1}));
  range.proto().mutable_graph()->mutable_initializer(1)->set_raw_data(
      std::string("\xff\xff\xff\xff\xff\xff\xff\x7f", 8));  // INT64_MAX
  range.Node("Range", {"start", "limit", "delta"}, {"y"}, {}, "range").Output("y");
  message = ErrorOf([&] { range.Import(); });
  EXPECT_TRUE(Contains(message,
                       "node 'range' (Range): its output: int64 of shape "
                       "[9223372036854775807] needs more than"))
      << message;
  // From INT64_MIN to INT64_MAX in steps of INT64_MAX: exact, without overflowing.
  range.proto().mutable_graph()->mutable_initializer(0)->set_raw_data(
      std::string("\0\0\0\0\0\0\0\x80", 8));
  range.proto().mutable_graph()->mutable_initializer(2)->set_raw_data(
      std::string("\xff\xff\xff\xff\xff\xff\xff\x7f", 8));
  ImportedModel imported = range.Import();
  const auto* y = imported.module.main()->body.as<graph::ConstantNode>();
  ASSERT_NE(y, nullptr);
  ASSERT_EQ(y->data.NumElements(), 3);
  const auto* values = static_cast<const int64_t*>(y->data.data());
  EXPECT_EQ(values[0], std::numeric_limits<int64_t>::min());
  EXPECT_EQ(values[1], -1);
  EXPECT_EQ(values[2], std::numeric_limits<int64_t>::max() - 1);

  ModelBuilder reshape;
  reshape.Input("x", {2, 3}).Initializer("shape", ArrayOf({3}, kI64, {1 << 30, 1 << 30, 1 << 30}));
  reshape.Node("Reshape", {"x", "shape"}, {"y"}, {}, "reshape").Output("y");
  EXPECT_EQ(ErrorOf([&] { reshape.Import(); }),
            "node 'reshape' (Reshape): shape [1073741824, 1073741824, 1073741824] has more "
            "elements than int64 can count");
}

TEST(MalformedModels, EmptyConstantsFoldWithoutEvaluating) {
  // Softmax of a [3, 0] constant: the folded result is the empty constant of its type.
  ModelBuilder model;
  model.Initializer("dims", ArrayOf({2}, kI64, {3, 0}));
  model.Node("ConstantOfShape", {"dims"}, {"empty"});
  model.Node("Softmax", {"empty"}, {"y"}).Output("y");
  ImportedModel imported = model.Import();
  const auto* y = imported.module.main()->body.as<graph::ConstantNode>();
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(y->data.Shape(), (std::vector<int64_t>{3, 0}));
  EXPECT_EQ(y->data.dtype(), kF32);
}

TEST(MalformedModels, SplitSizesAreNonNegativeAndOutputsPresent) {
  ModelBuilder model;
  model.Input("x", {4}).Initializer("sizes", ArrayOf({2}, kI64, {6, -2}));
  model.Node("Split", {"x", "sizes"}, {"a", "b"}, {}, "split").Output("a");
  EXPECT_EQ(ErrorOf([&] { model.Import(); }),
            "node 'split' (Split): split [6, -2] must hold non-negative sizes that sum to "
            "dimension 0 of the input [4]");
  ModelBuilder no_outputs(18);
  no_outputs.Input("x", {4}).Node("Split", {"x"}, {}, {IntAttr("num_outputs", 0)}, "split");
  no_outputs.Node("Relu", {"x"}, {"y"}).Output("y");
  EXPECT_EQ(ErrorOf([&] { no_outputs.Import(); }),
            "node 'split' (Split): needs at least one output");
}

}  // namespace
}  // namespace loom::frontend::onnx::test
