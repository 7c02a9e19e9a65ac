// resize2d compiled against a reference written here (coordinates computed in float32 in the
// same order, so nearest picks the same pixels): up- and down-sampling, every coordinate mode,
// every nearest rounding, linear blending; and the user errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "loom/topi/transform.h"
#include "topi_test_util.h"

namespace loom::topi {
namespace {

using target_test::RandomArray;

float Coordinate(int64_t out, int64_t in, int64_t out_size, ResizeCoordinates mode) {
  float o = static_cast<float>(out), scale = static_cast<float>(double(out_size) / in);
  switch (mode) {
    case ResizeCoordinates::kHalfPixel:
      return (o + 0.5f) / scale - 0.5f;
    case ResizeCoordinates::kPytorchHalfPixel:
      return out_size == 1 ? 0.0f : (o + 0.5f) / scale - 0.5f;
    case ResizeCoordinates::kAlignCorners:
      return out_size == 1 ? 0.0f : o * static_cast<float>(double(in - 1) / (out_size - 1));
    case ResizeCoordinates::kAsymmetric:
      return o / scale;
  }
  return 0;
}

int64_t Nearest(float x, ResizeRounding r, int64_t in) {
  double v = r == ResizeRounding::kFloor ? std::floor(x)
             : r == ResizeRounding::kCeil ? std::ceil(x)
             : r == ResizeRounding::kRoundPreferFloor
                 ? (x - std::floor(x) == 0.5f ? std::floor(x) : std::round(x))
                 : (x - std::floor(x) == 0.5f ? std::ceil(x) : std::round(x));
  return std::clamp<int64_t>(static_cast<int64_t>(v), 0, in - 1);
}

TEST(TopiResize, NearestAndLinearInEveryCoordinateMode) {
  const int64_t H = 5, W = 7, planes = 2;
  std::vector<std::pair<int64_t, int64_t>> sizes = {{10, 14}, {3, 4}, {1, 1}, {8, 3}};
  for (auto [out_h, out_w] : sizes) {
    for (ResizeCoordinates mode : {ResizeCoordinates::kHalfPixel, ResizeCoordinates::kPytorchHalfPixel,
                                   ResizeCoordinates::kAlignCorners, ResizeCoordinates::kAsymmetric}) {
      for (int variant = 0; variant < 5; ++variant) {  // four roundings, then linear
        bool linear = variant == 4;
        ResizeRounding rounding = static_cast<ResizeRounding>(linear ? 0 : variant);
        te::Tensor x = te::placeholder({1, int(planes), int(H), int(W)}, DataType::Float(32), "x");
        te::Tensor y = resize2d(x, out_h, out_w, linear ? ResizeMethod::kLinear : ResizeMethod::kNearest,
                                mode, rounding);
        tir::HostArray in = RandomArray(DataType::Float(32), {1, planes, H, W}, 99);
        tir::HostArray got = test::RunCompiled({x}, y, {in});
        auto pixel = [&](int64_t plane, int64_t r, int64_t c) {
          return in.GetFloat((plane * H + r) * W + c);
        };
        test::ExpectClose(
            got,
            [&](int64_t i) {
              int64_t plane = i / (out_h * out_w), oh = (i / out_w) % out_h, ow = i % out_w;
              float h = Coordinate(oh, H, out_h, mode), w = Coordinate(ow, W, out_w, mode);
              if (!linear) return pixel(plane, Nearest(h, rounding, H), Nearest(w, rounding, W));
              double hc = std::clamp<double>(h, 0, H - 1), wc = std::clamp<double>(w, 0, W - 1);
              int64_t h0 = int64_t(std::floor(hc)), w0 = int64_t(std::floor(wc));
              int64_t h1 = std::min(h0 + 1, H - 1), w1 = std::min(w0 + 1, W - 1);
              double fh = hc - h0, fw = wc - w0;
              double top = pixel(plane, h0, w0) * (1 - fw) + pixel(plane, h0, w1) * fw;
              double bottom = pixel(plane, h1, w0) * (1 - fw) + pixel(plane, h1, w1) * fw;
              return top * (1 - fh) + bottom * fh;
            },
            linear ? 1e-5 : 0,
            "resize to " + std::to_string(out_h) + "x" + std::to_string(out_w) + " mode " +
                std::to_string(int(mode)) + " variant " + std::to_string(variant));
      }
    }
  }
}

TEST(TopiResize, BadArgumentsAreUserErrors) {
  te::Tensor x = te::placeholder({1, 2, 5, 7}, DataType::Float(32), "x");
  te::Tensor i = te::placeholder({1, 2, 5, 7}, DataType::Int(32), "i");
  te::Tensor v = te::placeholder({5}, DataType::Float(32), "v");
  EXPECT_NE(test::ErrorOf([&] { resize2d(x, 0, 3); }).find("must be positive"), std::string::npos);
  EXPECT_NE(test::ErrorOf([&] { resize2d(i, 4, 4, ResizeMethod::kLinear); }).find("needs a float tensor"),
            std::string::npos);
  EXPECT_NE(test::ErrorOf([&] { resize2d(v, 4, 4); }).find("needs two spatial"), std::string::npos);
}

}  // namespace
}  // namespace loom::topi
