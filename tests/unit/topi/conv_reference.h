// The direct NCHW convolution every conv2d test compares against, in double precision.
#pragma once

#include <cstdint>
#include <vector>

#include "loom/tir/host_array.h"
#include "loom/topi/nn.h"

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

}  // namespace loom::topi::test
