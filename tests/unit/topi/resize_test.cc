// resize2d compiled against a reference written here (coordinates computed in float32 in the
// same order, so nearest picks the same pixels): up- and down-sampling, every coordinate mode,
// every nearest rounding, linear blending; cubic and tf_crop_and_resize against a transcription
// of ONNX's reference implementation; and the user errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
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
    case ResizeCoordinates::kTfCropAndResize:  // tested against OnnxResize below
    case ResizeCoordinates::kHalfPixelSymmetric:
      break;
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

// ONNX's reference implementation (onnx/reference/ops/op_resize.py), in double: one axis
// interpolated at output coordinate `x` from `data` (edge pixels repeated outside it).
struct OnnxAxis {
  ResizeAttrs attrs;
  int64_t out_size;
  double roi_start = 0, roi_end = 1;
  double scale = 0;  // the scale the model gave (0: out_size / in)
};

std::vector<double> CubicCoefficients(double ratio, double A) {
  return {((A * (ratio + 1) - 5 * A) * (ratio + 1) + 8 * A) * (ratio + 1) - 4 * A,
          ((A + 2) * ratio - (A + 3)) * ratio * ratio + 1,
          ((A + 2) * (1 - ratio) - (A + 3)) * (1 - ratio) * (1 - ratio) + 1,
          ((A * ((1 - ratio) + 1) - 5 * A) * ((1 - ratio) + 1) + 8 * A) * ((1 - ratio) + 1) - 4 * A};
}

double Interpolate1D(const std::vector<double>& data, const OnnxAxis& axis, int64_t x) {
  const int64_t in = static_cast<int64_t>(data.size());
  const double scale = axis.scale > 0 ? axis.scale : double(axis.out_size) / in;
  // The real-valued output size (ONNX's output_width): align_corners and tf_crop_and_resize
  // map by it.
  const double width = scale * double(in);
  double x_ori = 0;
  switch (axis.attrs.coordinates) {
    case ResizeCoordinates::kHalfPixel: x_ori = (x + 0.5) / scale - 0.5; break;
    case ResizeCoordinates::kPytorchHalfPixel:
      x_ori = width == 1 ? 0 : (x + 0.5) / scale - 0.5;
      break;
    case ResizeCoordinates::kAlignCorners:
      x_ori = width == 1 ? 0 : x * (double(in - 1) / (width - 1));
      break;
    case ResizeCoordinates::kAsymmetric: x_ori = x / scale; break;
    case ResizeCoordinates::kHalfPixelSymmetric:
      x_ori = double(in) / 2 * (1 - double(axis.out_size) / width) + (x + 0.5) / scale - 0.5;
      break;
    case ResizeCoordinates::kTfCropAndResize:
      x_ori = width == 1 ? (axis.roi_end - axis.roi_start) * double(in - 1) / 2
                         : x * (axis.roi_end - axis.roi_start) * double(in - 1) / (width - 1);
      x_ori += axis.roi_start * double(in - 1);
      if (x_ori < 0 || x_ori > double(in - 1)) return axis.attrs.extrapolation_value;
      break;
  }
  if (axis.attrs.method == ResizeMethod::kNearest) {
    const ResizeRounding r = axis.attrs.rounding;
    const double fraction = x_ori - std::floor(x_ori);
    const double rounded =
        r == ResizeRounding::kFloor  ? std::floor(x_ori)
        : r == ResizeRounding::kCeil ? std::ceil(x_ori)
        : fraction == 0.5
            ? (r == ResizeRounding::kRoundPreferFloor ? std::floor(x_ori) : std::ceil(x_ori))
            : std::round(x_ori);
    return data[std::clamp<int64_t>(static_cast<int64_t>(rounded), 0, in - 1)];
  }
  const int64_t x_ori_int = static_cast<int64_t>(std::floor(x_ori));
  double ratio = x_ori == std::floor(x_ori) ? 1 : x_ori - double(x_ori_int);
  std::vector<double> coeffs;
  if (axis.attrs.method == ResizeMethod::kLinear) {
    coeffs = {1 - ratio, ratio};
  } else {
    coeffs = CubicCoefficients(ratio, axis.attrs.cubic_coeff_a);
  }
  // The n taps around the coordinate (ratio 1: it is the upper of the middle two). The
  // reference finds them as the n positions nearest x + pad in the edge-padded data, which
  // picks the same ones except just above an integer, where x + pad rounds onto it and the
  // lower neighbour wins the tie: a discontinuity the kernels do not copy.
  const int64_t n = static_cast<int64_t>(coeffs.size());
  const int64_t base = (ratio == 1 ? x_ori_int - 1 : x_ori_int) - (n / 2 - 1);
  std::vector<int64_t> nearest(n);
  std::iota(nearest.begin(), nearest.end(), base);
  double total = 0, weight_sum = 0;
  for (int64_t k = 0; k < n; ++k) {
    int64_t index = nearest[k];
    if (axis.attrs.exclude_outside && (index < 0 || index >= in)) coeffs[k] = 0;
    weight_sum += coeffs[k];
  }
  for (int64_t k = 0; k < n; ++k) {
    int64_t index = std::clamp<int64_t>(nearest[k], 0, in - 1);
    double weight = axis.attrs.exclude_outside ? coeffs[k] / weight_sum : coeffs[k];
    total += weight * data[index];
  }
  return total;
}

// ONNX's n-d scheme on an H x W plane: each input row interpolated along the width, then
// those values along the height.
double OnnxResize(const std::vector<std::vector<double>>& plane, const OnnxAxis& rows,
                  const OnnxAxis& columns, int64_t oh, int64_t ow) {
  std::vector<double> along_rows;
  for (const std::vector<double>& row : plane) along_rows.push_back(Interpolate1D(row, columns, ow));
  return Interpolate1D(along_rows, rows, oh);
}

TEST(TopiResize, CubicAndTfCropAndResizeFollowTheOnnxReference) {
  const int64_t H = 6, W = 9, planes = 2;
  struct Case {
    ResizeAttrs attrs;
    int64_t out_h, out_w;
  };
  auto attrs = [](ResizeMethod method, ResizeCoordinates coordinates, double a = -0.75,
                  bool exclude = false, std::array<double, 4> roi = {0, 0, 1, 1},
                  double extrapolation = 0) {
    ResizeAttrs r;
    r.method = method;
    r.coordinates = coordinates;
    r.cubic_coeff_a = a;
    r.exclude_outside = exclude;
    r.roi = roi;
    r.extrapolation_value = extrapolation;
    return r;
  };
  using M = ResizeMethod;
  using C = ResizeCoordinates;
  std::vector<Case> cases = {
      {attrs(M::kCubic, C::kHalfPixel), 13, 17},
      {attrs(M::kCubic, C::kHalfPixel, -0.5, /*exclude=*/true), 4, 5},
      {attrs(M::kCubic, C::kAsymmetric, -0.75, true), 11, 20},
      {attrs(M::kCubic, C::kAlignCorners), 1, 7},
      {attrs(M::kCubic, C::kPytorchHalfPixel, -0.5), 9, 1},
      {attrs(M::kCubic, C::kTfCropAndResize, -0.75, false, {0.1, -0.2, 0.8, 1.3}, 2.5), 7, 12},
      {attrs(M::kLinear, C::kTfCropAndResize, -0.75, false, {0.25, 0, 1.5, 0.6}, -1), 10, 8},
      {attrs(M::kLinear, C::kTfCropAndResize, -0.75, false, {0, 0, 1, 1}), 11, 17},
      {attrs(M::kCubic, C::kTfCropAndResize, -0.75, true, {0.3, 0.2, 0.6, 0.9}, 4), 1, 1},
  };
  for (const Case& c : cases) {
    te::Tensor x = te::placeholder({int(planes), 1, int(H), int(W)}, DataType::Float(32), "x");
    te::Tensor y = resize2d(x, c.out_h, c.out_w, c.attrs);
    tir::HostArray in = RandomArray(DataType::Float(32), {planes, 1, H, W}, 98);
    tir::HostArray got = test::RunCompiled({x}, y, {in});
    OnnxAxis rows{c.attrs, c.out_h, c.attrs.roi[0], c.attrs.roi[2]};
    OnnxAxis columns{c.attrs, c.out_w, c.attrs.roi[1], c.attrs.roi[3]};
    test::ExpectClose(
        got,
        [&](int64_t i) {
          int64_t plane = i / (c.out_h * c.out_w), oh = (i / c.out_w) % c.out_h, ow = i % c.out_w;
          std::vector<std::vector<double>> image(H, std::vector<double>(W));
          for (int64_t r = 0; r < H; ++r)
            for (int64_t col = 0; col < W; ++col) image[r][col] = in.GetFloat((plane * H + r) * W + col);
          return OnnxResize(image, rows, columns, oh, ow);
        },
        1e-4,
        "resize to " + std::to_string(c.out_h) + "x" + std::to_string(c.out_w) + " method " +
            std::to_string(int(c.attrs.method)) + " mode " + std::to_string(int(c.attrs.coordinates)));
  }
}

// tf_crop_and_resize with nearest: the coordinates are computed in float64 in ONNX's order,
// so they pick the reference's pixels exactly (the last output lands on the last input).
TEST(TopiResize, TfCropAndResizeNearest) {
  const int64_t H = 5, W = 7;
  ResizeAttrs a;
  a.coordinates = ResizeCoordinates::kTfCropAndResize;
  a.rounding = ResizeRounding::kFloor;
  a.roi = {0.2, -0.1, 1.0, 1.0};
  a.extrapolation_value = 9;
  const int64_t out_h = 6, out_w = 4;
  te::Tensor x = te::placeholder({int(H), int(W)}, DataType::Float(32), "x");
  te::Tensor y = resize2d(x, out_h, out_w, a);
  tir::HostArray in = RandomArray(DataType::Float(32), {H, W}, 97);
  tir::HostArray got = test::RunCompiled({x}, y, {in});
  auto coordinate = [](int64_t o, int64_t in_size, int64_t out_size, double start, double end) {
    return o * (end - start) * double(in_size - 1) / double(out_size - 1) + start * double(in_size - 1);
  };
  test::ExpectClose(
      got,
      [&](int64_t i) {
        double h = coordinate(i / out_w, H, out_h, a.roi[0], a.roi[2]);
        double w = coordinate(i % out_w, W, out_w, a.roi[1], a.roi[3]);
        if (h < 0 || h > H - 1 || w < 0 || w > W - 1) return 9.0;
        return in.GetFloat(int64_t(std::floor(h)) * W + int64_t(std::floor(w)));
      },
      0, "tf_crop_and_resize nearest");
}

// Scales the model gave map coordinates by themselves (ONNX), not by the output size's ratio:
// 0.6 of 5 rows gives 3 rows read at (o + 0.5) / 0.6 - 0.5, not / (3 / 5). Every coordinate
// mode against the reference, with two of the three methods each, whole and fractional scales.
TEST(TopiResize, GivenScalesMapCoordinatesByThemselves) {
  const int64_t H = 5, W = 7, planes = 2;
  using M = ResizeMethod;
  using C = ResizeCoordinates;
  const std::vector<std::pair<double, double>> scales = {{0.6, 1.7}, {2.0, 0.5}};
  const std::vector<C> modes = {C::kHalfPixel,  C::kPytorchHalfPixel,   C::kAlignCorners,
                                C::kAsymmetric, C::kHalfPixelSymmetric, C::kTfCropAndResize};
  for (size_t pair = 0; pair < scales.size(); ++pair) {
    auto [scale_h, scale_w] = scales[pair];
    for (size_t m = 0; m < modes.size(); ++m) {
      const M method = static_cast<M>((m + pair) % 3);
      const C mode = modes[m];
      ResizeAttrs a;
      a.method = method;
      a.coordinates = mode;
      a.rounding = ResizeRounding::kRoundPreferCeil;
      a.roi = {0.1, 0.0, 0.9, 1.2};
      a.extrapolation_value = -3;
      // As ONNX: scales are float32 in the model; the output size is floor(in * scale).
      a.scales = {static_cast<float>(scale_h), static_cast<float>(scale_w)};
      const int64_t out_h = static_cast<int64_t>(std::floor(a.scales[0] * H));
      const int64_t out_w = static_cast<int64_t>(std::floor(a.scales[1] * W));
      te::Tensor x = te::placeholder({int(planes), 1, int(H), int(W)}, DataType::Float(32), "x");
      te::Tensor y = resize2d(x, out_h, out_w, a);
      tir::HostArray in = RandomArray(DataType::Float(32), {planes, 1, H, W}, 96);
      tir::HostArray got = test::RunCompiled({x}, y, {in});
      OnnxAxis rows{a, out_h, a.roi[0], a.roi[2], a.scales[0]};
      OnnxAxis columns{a, out_w, a.roi[1], a.roi[3], a.scales[1]};
      test::ExpectClose(
          got,
          [&](int64_t i) {
            int64_t plane = i / (out_h * out_w), oh = (i / out_w) % out_h, ow = i % out_w;
            std::vector<std::vector<double>> image(H, std::vector<double>(W));
            for (int64_t r = 0; r < H; ++r)
              for (int64_t col = 0; col < W; ++col)
                image[r][col] = in.GetFloat((plane * H + r) * W + col);
            return OnnxResize(image, rows, columns, oh, ow);
          },
          method == M::kNearest ? 0 : 1e-4,
          "scales " + std::to_string(scale_h) + "x" + std::to_string(scale_w) + " method " +
              std::to_string(int(method)) + " mode " + std::to_string(int(mode)));
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
  ResizeAttrs cubic;
  cubic.method = ResizeMethod::kCubic;
  EXPECT_NE(test::ErrorOf([&] { resize2d(i, 4, 4, cubic); })
                .find("resize2d: cubic resizing of 'i' needs a float tensor, got int32"),
            std::string::npos);
}

}  // namespace
}  // namespace loom::topi
