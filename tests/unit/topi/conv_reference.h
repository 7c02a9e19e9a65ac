// The direct NCHW convolution every conv2d test compares against, in double precision.
#pragma once

#include <cstdint>
#include <vector>

#include "loom/tir/host_array.h"
#include "loom/topi/nn.h"
#include "loom/topi/x86/conv2d.h"

namespace loom::topi::test {

// ONNX Conv of x [N, C, H, W] with w [K, C / groups, R, S] into [N, K, P, Q], row-major.
inline std::vector<double> ReferenceConv2D(const tir::HostArray& x, const tir::HostArray& w,
                                           const Conv2DAttrs& a, int64_t P, int64_t Q) {
  const int64_t N = x.shape()[0], C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
  const int64_t K = w.shape()[0], CG = w.shape()[1], R = w.shape()[2], S = w.shape()[3];
  std::vector<double> out;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t p = 0; p < P; ++p)
        for (int64_t q = 0; q < Q; ++q) {
          double total = 0;
          int64_t group = k / (K / a.groups);
          for (int64_t rc = 0; rc < CG; ++rc)
            for (int64_t r = 0; r < R; ++r)
              for (int64_t s = 0; s < S; ++s) {
                int64_t h = p * a.strides[0] + r * a.dilations[0] - a.pads[0];
                int64_t wc = q * a.strides[1] + s * a.dilations[1] - a.pads[1];
                if (h < 0 || h >= H || wc < 0 || wc >= W) continue;
                int64_t channel = group * CG + rc;
                total += x.GetFloat(((n * C + channel) * H + h) * W + wc) *
                         w.GetFloat(((k * CG + rc) * R + r) * S + s);
              }
          out.push_back(total);
        }
  return out;
}

// The integer convolution, exactly: sum over the window of x * w, positions outside the input
// reading `pad_value`; NCHW x KCRS (grouped: K x C/groups x R x S).
inline std::vector<int64_t> ReferenceIntegerConv(const tir::HostArray& x, const tir::HostArray& w,
                                                 const x86::Conv2DWorkload& wl, int64_t pad_value) {
  const int64_t p = wl.out_h(), q = wl.out_w();
  std::vector<int64_t> out(static_cast<size_t>(wl.n * wl.k * p * q), 0);
  // Grouped: filter k reads its group's channels, group_channels of them.
  const int64_t group_channels = wl.c / wl.attrs.groups, group_filters = wl.k / wl.attrs.groups;
  for (int64_t n = 0; n < wl.n; ++n)
    for (int64_t k = 0; k < wl.k; ++k)
      for (int64_t i = 0; i < p; ++i)
        for (int64_t j = 0; j < q; ++j) {
          int64_t sum = 0;
          for (int64_t gc = 0; gc < group_channels; ++gc)
            for (int64_t r = 0; r < wl.r; ++r)
              for (int64_t s = 0; s < wl.s; ++s) {
                const int64_t c = k / group_filters * group_channels + gc;
                int64_t row =
                    i * wl.attrs.strides[0] + r * wl.attrs.dilations[0] - wl.attrs.pads[0];
                int64_t col =
                    j * wl.attrs.strides[1] + s * wl.attrs.dilations[1] - wl.attrs.pads[1];
                bool inside = row >= 0 && row < wl.h && col >= 0 && col < wl.w;
                int64_t v =
                    inside ? x.GetInt(((n * wl.c + c) * wl.h + row) * wl.w + col) : pad_value;
                sum += v * w.GetInt(((k * group_channels + gc) * wl.r + r) * wl.s + s);
              }
          out[static_cast<size_t>(((n * wl.k + k) * p + i) * q + j)] = sum;
        }
  return out;
}

}  // namespace loom::topi::test
