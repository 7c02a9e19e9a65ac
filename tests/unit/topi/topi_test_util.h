// Helpers for the operator library's tests: compiling operator outputs with a schedule
// (schedule_injective unless given) and running them, comparing results with a reference, and catching
// user errors.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "error_of.h"
#include "../target/target_test_util.h"
#include "loom/te/lower.h"
#include "loom/topi/schedule.h"

namespace loom::topi::test {

// Compiles schedule `s` of `outs` (computed from `inputs`), runs it on `arrays` (one per
// input) and returns the outputs, whose shapes must be constant.
inline std::vector<tir::HostArray> RunScheduled(const te::Schedule& s,
                                                const std::vector<te::Tensor>& inputs,
                                                const std::vector<te::Tensor>& outs,
                                                const std::vector<tir::HostArray>& arrays) {
  Array<te::Tensor> args(inputs.begin(), inputs.end());
  args.insert(args.end(), outs.begin(), outs.end());
  runtime::Module module = build(te::lower(s, args, "op"), Target::Parse("llvm"));
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

}  // namespace loom::topi::test
