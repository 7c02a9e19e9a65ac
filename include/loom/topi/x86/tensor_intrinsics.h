// Tensor intrinsics of x86 vector units, for `tensorize` in the x86 schedules.
#pragma once

#include "loom/te/tensor_intrin.h"

namespace loom::topi::x86 {

// The int32 lanes of one AVX-512 register, and the bytes one vpdpbusd lane sums.
inline constexpr int kVnniLanes = 16;
inline constexpr int kVnniDepth = 4;

// AVX-512 VNNI's vpdpbusd as the computation c[j] += sum_{k < 4} int32(a[k]) * int32(b[j, k])
// for j < 16: a is 4 uint8, b is 16 x 4 int8 (row-major, contiguous: 64 bytes), c is 16
// int32. Its statements broadcast a's 4 bytes as one int32 to every lane and call vpdpbusd
// on c and b's 64 bytes. Exact: each lane adds four products of at most 2^15 in magnitude
// to int32 (wrapping as int32 addition does; vpdpbusds would saturate instead).
te::TensorIntrin VnniDot16x4();

}  // namespace loom::topi::x86
