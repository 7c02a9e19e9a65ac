// AffineGrid against the grid computed here from its definition: constant sizes (a constant
// shape) and sizes only a run knows (the VM), 2-d and 3-d, both align_corners, sizes of 1.
#include <gtest/gtest.h>

#include "loom/graph/compile.h"
#include "onnx_test_util.h"

namespace loom::frontend::onnx::test {
namespace {

// The normalized coordinate of position i of `size` along an axis.
double Coordinate(int64_t i, int64_t size, bool align_corners) {
  if (align_corners) return size == 1 ? -1.0 : -1.0 + 2.0 * static_cast<double>(i) / (size - 1);
  return -1.0 + (2.0 * static_cast<double>(i) + 1.0) / static_cast<double>(size);
}

// The grid [N, (D,) H, W, k] of theta [N, k, k + 1] over `spatial` ((D,) H, W).
runtime::NDArray Grid(const runtime::NDArray& theta, const std::vector<int64_t>& spatial,
                      bool align_corners) {
  const int64_t n = theta.Shape()[0], k = static_cast<int64_t>(spatial.size());
  std::vector<int64_t> shape = {n};
  shape.insert(shape.end(), spatial.begin(), spatial.end());
  shape.push_back(k);
  std::vector<double> t = Values(theta), out;
  const int64_t depth = k == 3 ? spatial[0] : 1, height = spatial[k - 2], width = spatial[k - 1];
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t d = 0; d < depth; ++d) {
      for (int64_t h = 0; h < height; ++h) {
        for (int64_t w = 0; w < width; ++w) {
          const double coordinates[3] = {Coordinate(w, width, align_corners),
                                         Coordinate(h, height, align_corners),
                                         Coordinate(d, depth, align_corners)};
          for (int64_t row = 0; row < k; ++row) {
            const double* m = &t[static_cast<size_t>((b * k + row) * (k + 1))];
            double value = m[k];
            for (int64_t j = 0; j < k; ++j) value += m[j] * coordinates[j];
            out.push_back(value);
          }
        }
      }
    }
  }
  return ArrayOf(shape, kF32, out);
}

// AffineGrid over theta [2, k, k + 1]; `size` an input (only a run knows it) or, given, a
// constant.
ModelBuilder AffineGrid(int64_t k, int64_t align_corners,
                        const std::vector<int64_t>& constant_size = {}) {
  ModelBuilder model(20);
  model.Input("theta", {2, k, k + 1});
  if (constant_size.empty()) {
    model.Input("size", {k + 2}, kI64);
  } else {
    std::vector<double> size(constant_size.begin(), constant_size.end());
    model.Initializer("size", ArrayOf({k + 2}, kI64, size));
  }
  return model
      .Node("AffineGrid", {"theta", "size"}, {"grid"}, {IntAttr("align_corners", align_corners)},
            "grid")
      .Output("grid");
}

runtime::NDArray SizeOf(const std::vector<int64_t>& size) {
  return ArrayOf({static_cast<int64_t>(size.size())}, kI64,
                 std::vector<double>(size.begin(), size.end()));
}

TEST(OnnxImage, AffineGridOfSizesOnlyARunKnows) {
  for (int64_t k : {2, 3}) {
    for (int64_t align : {0, 1}) {
      SCOPED_TRACE("k = " + std::to_string(k) + ", align_corners = " + std::to_string(align));
      graph::CompiledModel compiled = graph::Compile(AffineGrid(k, align).Import().module, {});
      EXPECT_EQ(compiled.executor, "vm");
      std::unique_ptr<runtime::Executor> vm = graph::MakeExecutor(compiled);
      const runtime::NDArray theta = RandomArray({2, k, k + 1}, kF32, static_cast<int>(k));
      const std::vector<std::vector<int64_t>> spatials =
          k == 2 ? std::vector<std::vector<int64_t>>{{4, 5}, {1, 3}, {2, 1}}
                 : std::vector<std::vector<int64_t>>{{2, 3, 4}, {1, 1, 2}};
      for (const std::vector<int64_t>& spatial : spatials) {
        std::vector<int64_t> size = {2, 3};
        size.insert(size.end(), spatial.begin(), spatial.end());
        ExpectRunGives(*vm, {theta, SizeOf(size)}, {Grid(theta, spatial, align != 0)}, 1e-5,
                       "size " + runtime::ShapeString(size));
      }
    }
  }
}

TEST(OnnxImage, AffineGridOfConstantSizesHasAConstantShape) {
  const runtime::NDArray theta = RandomArray({2, 2, 3}, kF32, 9);
  for (int64_t align : {0, 1}) {
    ModelBuilder model = AffineGrid(2, align, {2, 1, 3, 1});
    EXPECT_EQ(model.Import().module.main()->body.type().str(), "Tensor[(2, 3, 1, 2), float32]");
    ExpectOutputs(model, {theta}, {Grid(theta, {3, 1}, align != 0)}, 1e-5);
  }
}

TEST(OnnxImage, MalformedAffineGridsAreErrorsNamingTheNode) {
  auto error = [](const ModelBuilder& model) { return ErrorOf([&] { model.Import(); }); };
  ModelBuilder wrong_theta(20);
  wrong_theta.Input("theta", {2, 3, 4}).Input("size", {4}, kI64);
  wrong_theta.Node("AffineGrid", {"theta", "size"}, {"grid"}, {}, "grid").Output("grid");
  EXPECT_NE(error(wrong_theta)
                .find("node 'grid' (AffineGrid): theta must be floats [N, 2, 3] "
                      "for a size of 4 integers, got Tensor[(2, 3, 4), float32]"),
            std::string::npos)
      << error(wrong_theta);
  ModelBuilder wrong_size(20);
  wrong_size.Input("theta", {2, 2, 3}).Input("size", {3}, kI64);
  wrong_size.Node("AffineGrid", {"theta", "size"}, {"grid"}, {}, "grid").Output("grid");
  EXPECT_NE(error(wrong_size).find("size must be 4 or 5 integers (N, C, then H, W or D, H, W)"),
            std::string::npos)
      << error(wrong_size);
  EXPECT_NE(error(AffineGrid(2, 2)).find("align_corners must be 0 or 1, got 2"), std::string::npos);
  EXPECT_NE(error(AffineGrid(2, 0, {2, 1, -3, 4})).find("has a negative dimension"),
            std::string::npos);
}

}  // namespace
}  // namespace loom::frontend::onnx::test
