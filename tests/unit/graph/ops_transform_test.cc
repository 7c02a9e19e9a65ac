// Data-movement graph operators: output types (negative axes, ONNX conventions), errors
// naming the call and the shapes, and each call compiled and compared with the elements it
// must move.
#include <cstdint>
#include <limits>

#include "graph_test_util.h"

namespace loom::graph {
namespace {

using runtime::NDArray;
using test::ErrorOf;
using test::In;
using test::GetFloat;
using test::RandomArray;
using test::RunCall;
using test::Values;

const DataType kF32 = DataType::Float(32);
const DataType kI64 = DataType::Int(64);

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// 0, 1, 2, ... in `shape`.
NDArray Iota(const std::vector<int64_t>& shape) {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  std::vector<double> values;
  for (int64_t i = 0; i < count; ++i) values.push_back(static_cast<double>(i));
  return test::ArrayOf(shape, kF32, values);
}

std::string TypeOf(const std::string& op, const std::vector<int64_t>& shape, Attrs attrs) {
  return MakeCall(op, {In("x", shape)}, std::move(attrs)).type().str();
}

TEST(GraphOpsTransform, ShapeChangeTypes) {
  EXPECT_EQ(TypeOf("reshape", {2, 3, 4}, {{"newshape", Ints{0, -1}}}), "Tensor[(2, 12), float32]");
  EXPECT_EQ(TypeOf("flatten", {2, 3, 4}, {{"axis", int64_t{2}}}), "Tensor[(6, 4), float32]");
  EXPECT_EQ(TypeOf("flatten", {2, 3, 4}, {{"axis", int64_t{0}}}), "Tensor[(1, 24), float32]");
  EXPECT_EQ(TypeOf("squeeze", {1, 3, 1}, {}), "Tensor[(3,), float32]");
  EXPECT_EQ(TypeOf("squeeze", {1, 3, 1}, {{"axes", Ints{-1}}}), "Tensor[(1, 3), float32]");
  EXPECT_EQ(TypeOf("expand_dims", {2, 3}, {{"axis", int64_t{-1}}, {"num_newaxis", int64_t{2}}}),
            "Tensor[(2, 3, 1, 1), float32]");
  EXPECT_EQ(TypeOf("expand_dims", {2, 3}, {{"axis", int64_t{0}}}), "Tensor[(1, 2, 3), float32]");
  EXPECT_EQ(TypeOf("transpose", {2, 3, 4}, {}), "Tensor[(4, 3, 2), float32]");
  EXPECT_EQ(TypeOf("transpose", {2, 3, 4}, {{"axes", Ints{1, 0, 2}}}),
            "Tensor[(3, 2, 4), float32]");
  EXPECT_EQ(TypeOf("broadcast_to", {3, 1}, {{"shape", Ints{2, 3, 4}}}),
            "Tensor[(2, 3, 4), float32]");
  EXPECT_EQ(TypeOf("tile", {2, 3}, {{"reps", Ints{2, 1}}}), "Tensor[(4, 3), float32]");
  EXPECT_EQ(MakeCall("reshape", {In("x", {2})}, {{"newshape", Ints{2}}})->op->pattern,
            OpPattern::kInjective);
}

TEST(GraphOpsTransform, ShapeChangeErrorsNameTheCall) {
  std::string message = ErrorOf([] {
    MakeCall("reshape", {In("x", {2, 3, 4})}, {{"newshape", Ints{5, -1}}}, "r");
  });
  EXPECT_TRUE(Has(message, "reshape 'r': ")) << message;
  EXPECT_TRUE(Has(message, "data Tensor[(2, 3, 4), float32]")) << message;
  message = ErrorOf([] { MakeCall("squeeze", {In("x", {1, 3})}, {{"axes", Ints{1}}}, "sq"); });
  EXPECT_TRUE(Has(message, "squeeze 'sq': ")) << message;
  EXPECT_TRUE(Has(message, "data Tensor[(1, 3), float32]")) << message;
  EXPECT_EQ(ErrorOf([] {
              MakeCall("expand_dims", {In("x", {2, 3})}, {{"axis", int64_t{4}}}, "e");
            }),
            "expand_dims 'e': axis 4 must be in [-3, 2] for data Tensor[(2, 3), float32]");
  message = ErrorOf([] { MakeCall("transpose", {In("x", {2, 3})}, {{"axes", Ints{0, 0}}}, "t"); });
  EXPECT_TRUE(Has(message, "transpose 't': ")) << message;
}

// The error of `op` on data of `shape` with `attrs`: it names the call and the input.
void ExpectDataError(const std::string& op, const std::vector<int64_t>& shape, Attrs attrs) {
  std::string message = ErrorOf([&] { MakeCall(op, {In("x", shape)}, attrs, "node"); });
  EXPECT_TRUE(Has(message, op + " 'node': ")) << op << ": " << message;
  EXPECT_TRUE(Has(message, "data " + TensorType(shape, kF32).str())) << op << ": " << message;
}

TEST(GraphOpsTransform, MoreErrorsNameTheCallAndShapes) {
  ExpectDataError("flatten", {2, 3}, {{"axis", int64_t{3}}});
  ExpectDataError("broadcast_to", {3, 2}, {{"shape", Ints{3, 4}}});
  ExpectDataError("tile", {2, 3}, {{"reps", Ints{2}}});
  ExpectDataError("space_to_depth", {1, 1, 3, 4}, {{"blocksize", int64_t{2}}});
  EXPECT_EQ(ErrorOf([] {
              MakeCall("space_to_depth", {In("x", {1, 1, 2, 2})},
                       {{"blocksize", int64_t{2}}, {"mode", std::string("CRD")}}, "s");
            }),
            "space_to_depth 's': attribute 'mode' must be one of \"DCR\", got \"CRD\"");
  std::string message = ErrorOf([] {
    MakeCall("gather_elements", {In("x", {2, 3}), In("i", {2}, kI64)}, {}, "ge");
  });
  EXPECT_TRUE(Has(message, "gather_elements 'ge': ")) << message;
  EXPECT_TRUE(Has(message, "indices Tensor[(2,), int64]")) << message;
}

TEST(GraphOpsTransform, ShapeChangesMoveElements) {
  NDArray x = Iota({2, 3, 4});
  EXPECT_EQ(
      Values(RunCall(MakeCall("reshape", {In("x", {2, 3, 4})}, {{"newshape", Ints{4, -1}}}), {x})),
      Values(x));
  EXPECT_EQ(
      Values(RunCall(MakeCall("expand_dims", {In("x", {2, 3, 4})}, {{"axis", int64_t{1}}}), {x})),
      Values(x));
  std::vector<double> want;
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 2; ++i)
      for (int k = 0; k < 4; ++k) want.push_back(i * 12 + j * 4 + k);
  EXPECT_EQ(
      Values(RunCall(MakeCall("transpose", {In("x", {2, 3, 4})}, {{"axes", Ints{1, 0, 2}}}), {x})),
      want);
  NDArray column = Iota({3, 1});
  EXPECT_EQ(Values(RunCall(MakeCall("broadcast_to", {In("x", {3, 1})}, {{"shape", Ints{2, 3, 2}}}),
                           {column})),
            (std::vector<double>{0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(TypeOf("expand", {3, 1}, {{"shape", Ints{2, 1, 4}}}), "Tensor[(2, 3, 4), float32]");
  EXPECT_EQ(Values(RunCall(MakeCall("expand", {In("x", {3, 1})}, {{"shape", Ints{2}}}), {column})),
            (std::vector<double>{0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(ErrorOf([] {
              MakeCall("expand", {In("x", {3, 1})}, {{"shape", Ints{-2}}}, "ex");
            }),
            "expand 'ex': attribute 'shape' holds an invalid dimension -2 in [-2]");
  NDArray small = Iota({2, 2});
  EXPECT_EQ(Values(RunCall(MakeCall("tile", {In("x", {2, 2})}, {{"reps", Ints{1, 2}}}), {small})),
            (std::vector<double>{0, 1, 0, 1, 2, 3, 2, 3}));
}

TEST(GraphOpsTransform, ConcatenateIsVariadic) {
  Call cat = MakeCall("concatenate", {In("a", {2, 1}), In("b", {2, 2}), In("c", {2, 1})},
                      {{"axis", int64_t{-1}}});
  EXPECT_EQ(cat.type().str(), "Tensor[(2, 4), float32]");
  NDArray a = Iota({2, 1}), b = Iota({2, 2}), c = Iota({2, 1});
  EXPECT_EQ(Values(RunCall(cat, {a, b, c})), (std::vector<double>{0, 0, 1, 0, 1, 2, 3, 1}));
  std::string message = ErrorOf([] {
    MakeCall("concatenate", {In("a", {2, 1}), In("b", {3, 1})}, {{"axis", int64_t{1}}}, "cat");
  });
  EXPECT_TRUE(Has(message, "concatenate 'cat': ")) << message;
  EXPECT_TRUE(Has(message, "input0 Tensor[(2, 1), float32], input1 Tensor[(3, 1), float32]"))
      << message;
}

TEST(GraphOpsTransform, SplitGivesATuple) {
  EXPECT_EQ(MakeCall("split", {In("x", {6, 4})}, {{"indices_or_sections", Ints{3}}}).type().str(),
            "(Tensor[(2, 4), float32], Tensor[(2, 4), float32], Tensor[(2, 4), float32])");
  EXPECT_EQ(MakeCall("split", {In("x", {6, 4})}, {{"indices_or_sections", Ints{1}}}).type().str(),
            "(Tensor[(6, 4), float32],)");
  Call split = MakeCall("split", {In("x", {2, 4})},
                        {{"indices_or_sections", Ints{1, 3}}, {"axis", int64_t{-1}}});
  EXPECT_EQ(split.type().str(), "(Tensor[(2, 1), float32], Tensor[(2, 3), float32])");
  std::vector<NDArray> pieces =
      EvaluateCallOutputs(*split.get(), {Iota({2, 4})}, test::HostTarget());
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_EQ(Values(pieces[0]), (std::vector<double>{0, 4}));
  EXPECT_EQ(Values(pieces[1]), (std::vector<double>{1, 2, 3, 5, 6, 7}));
  std::string message = ErrorOf([] {
    MakeCall("split", {In("x", {2, 4})},
             {{"indices_or_sections", Ints{1, 2}}, {"axis", int64_t{1}}}, "sp");
  });
  EXPECT_TRUE(Has(message, "split 'sp': ")) << message;
  EXPECT_TRUE(Has(message, "data Tensor[(2, 4), float32]")) << message;
}

TEST(GraphOpsTransform, StridedSliceFollowsOnnxSlice) {
  // Rows 4, 2 (step -2 to 0 exclusive); columns 1, 3, 5 (end clamped).
  Call slice = MakeCall("strided_slice", {In("x", {5, 6})},
                        {{"begin", Ints{-1, 1}}, {"end", Ints{0, 100}}, {"strides", Ints{-2, 2}}});
  EXPECT_EQ(slice.type().str(), "Tensor[(2, 3), float32]");
  EXPECT_EQ(Values(RunCall(slice, {Iota({5, 6})})), (std::vector<double>{25, 27, 29, 13, 15, 17}));
  Call columns = MakeCall(
      "strided_slice", {In("x", {5, 6})},
      {{"begin", Ints{2}}, {"end", Ints{std::numeric_limits<int64_t>::max()}}, {"axes", Ints{-1}}});
  EXPECT_EQ(columns.type().str(), "Tensor[(5, 4), float32]");
  std::string message = ErrorOf([] {
    MakeCall("strided_slice", {In("x", {5, 6})},
             {{"begin", Ints{0}}, {"end", Ints{1}}, {"strides", Ints{0}}}, "sl");
  });
  EXPECT_TRUE(Has(message, "strided_slice 'sl': ")) << message;
}

TEST(GraphOpsTransform, GathersIndexData) {
  Call take = MakeCall("take", {In("x", {3, 4}), In("i", {2}, kI64)}, {{"axis", int64_t{1}}});
  EXPECT_EQ(take.type().str(), "Tensor[(3, 2), float32]");
  NDArray indices = test::ArrayOf({2}, kI64, {2, -1});
  EXPECT_EQ(Values(RunCall(take, {Iota({3, 4}), indices})),
            (std::vector<double>{2, 3, 6, 7, 10, 11}));

  Call gather =
      MakeCall("gather_elements", {In("x", {2, 3}), In("i", {2, 2}, kI64)}, {{"axis", int64_t{1}}});
  EXPECT_EQ(gather.type().str(), "Tensor[(2, 2), float32]");
  NDArray where = test::ArrayOf({2, 2}, kI64, {2, 0, 1, 1});
  EXPECT_EQ(Values(RunCall(gather, {Iota({2, 3}), where})), (std::vector<double>{2, 0, 4, 4}));
  std::string message = ErrorOf([] {
    MakeCall("take", {In("x", {3, 4}), In("i", {2}, kF32)}, {}, "g");
  });
  EXPECT_TRUE(Has(message, "take 'g': ")) << message;
  EXPECT_TRUE(Has(message, "indices Tensor[(2,), float32]")) << message;
}

TEST(GraphOpsTransform, PadModes) {
  Attrs attrs = {{"pad_width", Ints{1, 0, 0, 2}}};
  Call constant = MakeCall("nn.pad", {In("x", {2, 3})}, attrs.With("pad_value", 9.0));
  EXPECT_EQ(constant.type().str(), "Tensor[(3, 5), float32]");
  NDArray x = Iota({2, 3});
  EXPECT_EQ(Values(RunCall(constant, {x})),
            (std::vector<double>{9, 9, 9, 9, 9, 0, 1, 2, 9, 9, 3, 4, 5, 9, 9}));
  Call reflect =
      MakeCall("nn.pad", {In("x", {2, 3})}, attrs.With("pad_mode", std::string("reflect")));
  EXPECT_EQ(Values(RunCall(reflect, {x})),
            (std::vector<double>{3, 4, 5, 4, 3, 0, 1, 2, 1, 0, 3, 4, 5, 4, 3}));
  Call edge = MakeCall("nn.pad", {In("x", {2, 3})}, attrs.With("pad_mode", std::string("edge")));
  EXPECT_EQ(Values(RunCall(edge, {x})),
            (std::vector<double>{0, 1, 2, 2, 2, 0, 1, 2, 2, 2, 3, 4, 5, 5, 5}));
  EXPECT_EQ(ErrorOf([] {
              MakeCall("nn.pad", {In("x", {2, 3})}, {{"pad_width", Ints{1, 1}}}, "p");
            }),
            "nn.pad 'p': pad_width must hold 4 integers (every dimension's begin, then every "
            "end) for data Tensor[(2, 3), float32], got [1, 1]");
  Call wrap = MakeCall("nn.pad", {In("x", {2, 3})}, attrs.With("pad_mode", std::string("wrap")));
  EXPECT_EQ(Values(RunCall(wrap, {x})),
            (std::vector<double>{3, 4, 5, 3, 4, 0, 1, 2, 0, 1, 3, 4, 5, 3, 4}));
  EXPECT_EQ(
      ErrorOf([&] {
        MakeCall("nn.pad", {In("x", {2, 3})}, attrs.With("pad_mode", std::string("circular")), "p");
      }),
      "nn.pad 'p': attribute 'pad_mode' must be one of \"constant\", \"reflect\", \"edge\", "
      "\"wrap\", got \"circular\"");
}

TEST(GraphOpsTransform, DepthAndSpace) {
  Call d2s = MakeCall("depth_to_space", {In("x", {1, 4, 1, 2})}, {{"blocksize", int64_t{2}}});
  EXPECT_EQ(d2s.type().str(), "Tensor[(1, 1, 2, 4), float32]");
  NDArray x = RandomArray({1, 4, 1, 2}, kF32, 1);
  // DCR: output (h * 2 + i, w * 2 + j) is channel i * 2 + j at (h, w).
  std::vector<double> want;
  for (int i = 0; i < 2; ++i)
    for (int w = 0; w < 2; ++w)
      for (int j = 0; j < 2; ++j) want.push_back(GetFloat(x, (i * 2 + j) * 2 + w));
  NDArray space = RunCall(d2s, {x});
  EXPECT_EQ(Values(space), want);
  Call s2d = MakeCall("space_to_depth", {In("x", {1, 1, 2, 4})}, {{"blocksize", int64_t{2}}});
  EXPECT_EQ(s2d.type().str(), "Tensor[(1, 4, 1, 2), float32]");
  EXPECT_EQ(Values(RunCall(s2d, {space})), Values(x));
  std::string message = ErrorOf([] {
    MakeCall("depth_to_space", {In("x", {1, 3, 1, 2})}, {{"blocksize", int64_t{2}}}, "d");
  });
  EXPECT_TRUE(Has(message, "depth_to_space 'd': ")) << message;
  EXPECT_TRUE(Has(message, "data Tensor[(1, 3, 1, 2), float32]")) << message;
}

TEST(GraphOpsTransform, Resize2D) {
  Call resize = MakeCall("image.resize2d", {In("x", {1, 1, 2, 2})},
                         {{"size", Ints{3, 4}},
                          {"coordinate_transformation_mode", std::string("asymmetric")},
                          {"nearest_mode", std::string("floor")}});
  EXPECT_EQ(resize.type().str(), "Tensor[(1, 1, 3, 4), float32]");
  EXPECT_EQ(Values(RunCall(resize, {Iota({1, 1, 2, 2})})),
            (std::vector<double>{0, 0, 1, 1, 0, 0, 1, 1, 2, 2, 3, 3}));
  Call linear = MakeCall("image.resize2d", {In("x", {1, 1, 1, 2})},
                         {{"size", Ints{1, 3}},
                          {"mode", std::string("linear")},
                          {"coordinate_transformation_mode", std::string("align_corners")}});
  EXPECT_EQ(Values(RunCall(linear, {Iota({1, 1, 1, 2})})), (std::vector<double>{0, 0.5, 1}));
  EXPECT_EQ(ErrorOf([] {
              MakeCall("image.resize2d", {In("x", {1, 1, 2, 2})},
                       {{"size", Ints{4, 4}}, {"mode", std::string("area")}}, "rs");
            }),
            "image.resize2d 'rs': attribute 'mode' must be one of \"nearest\", \"linear\", "
            "\"cubic\", got \"area\"");
}

}  // namespace
}  // namespace loom::graph
