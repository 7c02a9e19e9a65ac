// Helpers for the operator library's tests: compiling operator outputs with a schedule
// (schedule_injective unless given) and running them, comparing results with a reference, and catching
// user errors.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "error_of.h"
#include "../target/target_test_util.h"
#include "loom/runtime/float_codec.h"
#include "loom/te/lower.h"
#include "loom/topi/schedule.h"

namespace loom::topi::test {

// Runs `func` (named "op") built for `target` on `arrays` and fresh outputs shaped as `outs`.
inline std::vector<tir::HostArray> RunBuilt(const PrimFunc& func, const std::string& target,
                                            const std::vector<te::Tensor>& outs,
                                            const std::vector<tir::HostArray>& arrays) {
  runtime::Module module = build(func, Target::Parse(target));
  std::vector<tir::HostArray> all = arrays, results;
  for (const te::Tensor& out : outs) {
    std::vector<int64_t> shape;
    for (const PrimExpr& extent : out.shape()) {
      int64_t value = 0;
      EXPECT_TRUE(IsConstInt(extent, &value)) << out.name() << " has a symbolic shape";
      shape.push_back(value);
    }
    results.emplace_back(out.dtype(), shape);
    all.push_back(results.back());
  }
  target_test::CallWithArrays(module, "op", all);
  return results;
}

// Whether two results are the same bits, any NaN matching any NaN.
inline bool SameResults(const tir::HostArray& a, const tir::HostArray& b) {
  if (target_test::SameBytes(a, b)) return true;
  if (!a.dtype().is_float() || a.NumElements() != b.NumElements()) return false;
  for (int64_t i = 0; i < a.NumElements(); ++i) {
    double x = a.GetFloat(i), y = b.GetFloat(i);
    if (!(std::isnan(x) && std::isnan(y)) && std::memcmp(&x, &y, sizeof(x)) != 0) return false;
  }
  return true;
}

// Compiles schedule `s` of `outs` (computed from `inputs`), runs it on `arrays` (one per
// input) and returns the outputs, whose shapes must be constant. The same function also goes
// through the c target, whose results must equal the llvm target's bit for bit (llvm without
// multiply-add contraction, which the c target leaves out).
inline std::vector<tir::HostArray> RunScheduled(const te::Schedule& s,
                                                const std::vector<te::Tensor>& inputs,
                                                const std::vector<te::Tensor>& outs,
                                                const std::vector<tir::HostArray>& arrays) {
  Array<te::Tensor> args(inputs.begin(), inputs.end());
  args.insert(args.end(), outs.begin(), outs.end());
  PrimFunc func = te::lower(s, args, "op");
  std::vector<tir::HostArray> results = RunBuilt(func, "llvm", outs, arrays);
  std::vector<tir::HostArray> uncontracted = RunBuilt(func, "llvm -fp-contract=off", outs, arrays);
  std::vector<tir::HostArray> c = RunBuilt(func, "c", outs, arrays);
  for (size_t i = 0; i < outs.size(); ++i) {
    if (SameResults(c[i], uncontracted[i])) continue;
    int64_t first = 0;
    while (first + 1 < c[i].NumElements() && c[i].GetFloat(first) == uncontracted[i].GetFloat(first)) {
      ++first;
    }
    ADD_FAILURE() << "output " << i << " ('" << outs[i].name() << "') of the c target differs "
                  << "from llvm's, first at element " << first << ": " << c[i].GetFloat(first)
                  << " against " << uncontracted[i].GetFloat(first);
  }
  return results;
}

// The same with schedule_injective.
inline std::vector<tir::HostArray> RunCompiledOutputs(const std::vector<te::Tensor>& inputs,
                                                      const std::vector<te::Tensor>& outs,
                                                      const std::vector<tir::HostArray>& arrays) {
  return RunScheduled(schedule_injective(Array<te::Tensor>(outs.begin(), outs.end())), inputs,
                      outs, arrays);
}

inline tir::HostArray RunCompiled(const std::vector<te::Tensor>& inputs, const te::Tensor& out,
                                  const std::vector<tir::HostArray>& arrays) {
  return RunCompiledOutputs(inputs, {out}, arrays)[0];
}

// Float results within `tolerance` relative (absolute near 0); exact otherwise.
inline void ExpectClose(const tir::HostArray& got, const std::function<double(int64_t)>& want,
                        double tolerance, const std::string& label) {
  int failures = 0;
  for (int64_t i = 0; i < got.NumElements() && failures < 5; ++i) {
    double expected = want(i);
    double actual = got.dtype().is_float() ? got.GetFloat(i) : static_cast<double>(got.GetInt(i));
    bool ok = std::isnan(expected) ? std::isnan(actual)
                                   : std::abs(actual - expected) <=
                                         tolerance * std::max(1.0, std::abs(expected));
    if (!ok) {
      ++failures;
      ADD_FAILURE() << label << " element " << i << ": got " << actual << ", want " << expected;
    }
  }
}

// A constant shape as expressions.
inline Array<PrimExpr> Exprs(const std::vector<int64_t>& shape) {
  Array<PrimExpr> extents;
  for (int64_t extent : shape) extents.push_back(static_cast<int>(extent));
  return extents;
}

using ::loom::testing::ErrorOf;

// An 8-bit integer array over the type's whole range (uint8 0..255, int8 -128..127): products
// of 255 and -128 are where a signed/unsigned mix-up or a 16-bit intermediate shows.
inline tir::HostArray FullRangeArray(DataType t, std::vector<int64_t> shape, unsigned seed) {
  tir::HostArray array(t, std::move(shape));
  std::mt19937 rng(seed);
  const int lo = t.is_uint() ? 0 : -128, hi = t.is_uint() ? 255 : 127;
  for (int64_t i = 0; i < array.NumElements(); ++i)
    array.SetInt(i, std::uniform_int_distribution<int>(lo, hi)(rng));
  return array;
}

// Values in [-2, 2) rounded to bfloat16, in an array of type `t` (bfloat16 or float32), so
// that a reference reading them computes on what a bfloat16 kernel reads.
inline tir::HostArray BFloat16ValuedArray(DataType t, std::vector<int64_t> shape, unsigned seed) {
  tir::HostArray array(t, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  for (int64_t i = 0; i < array.NumElements(); ++i) {
    array.SetFloat(i, BFloat16BitsToFloat(FloatToBFloat16Bits(value(rng))));
  }
  return array;
}

}  // namespace loom::topi::test
