// The 16-bit float formats as bits, and rounding a value to a float type's precision. The
// runtime stores float16/bfloat16 tensors with these; the compiler rounds its constants
// with them, so a folded constant equals what the hardware computes.
#pragma once

#include <cstdint>

#include "loom/runtime/data_type.h"

namespace loom {

// IEEE binary16, round to nearest even; NaN stays NaN, overflow becomes infinity.
uint16_t FloatToHalfBits(float value);
float HalfBitsToFloat(uint16_t bits);
// bfloat16 (the high half of a float32), round to nearest even; NaN stays NaN.
uint16_t FloatToBFloat16Bits(float value);
float BFloat16BitsToFloat(uint16_t bits);

// `value` rounded to the precision of float type t (float64: unchanged). Rounding the exact
// double result of one float32 operation gives the correctly rounded float32 result, which
// is why constant folding may compute in double and round once.
double RoundToFloatType(double value, DataType t);

}  // namespace loom
