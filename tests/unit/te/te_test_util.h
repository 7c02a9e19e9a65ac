// Helpers for TE tests: run a lowered function on host arrays with the TIR interpreter.
#pragma once

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"
#include "loom/ir/printer.h"
#include "loom/te/lower.h"
#include "loom/tir/interpreter.h"

namespace loom::te::test {

inline const DataType kF32 = DataType::Float(32);
inline const DataType kI32 = DataType::Int(32);

// Small integers as floats: sums stay exact, so schedules must agree bit for bit.
inline tir::HostArray RandomArray(DataType dtype, std::vector<int64_t> shape, uint32_t seed) {
  tir::HostArray array(dtype, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(-8, 8);
  for (int64_t i = 0; i < array.NumElements(); ++i) array.SetFloat(i, dist(rng));
  return array;
}

// Runs `func` on copies of `inputs` followed by fresh outputs of the given shapes; returns
// the outputs.
inline std::vector<tir::HostArray> RunFunc(const PrimFunc& func,
                                       const std::vector<tir::HostArray>& inputs,
                                       const std::vector<std::pair<DataType, std::vector<int64_t>>>&
                                           outputs) {
  std::vector<tir::HostArray> arrays;
  for (const tir::HostArray& a : inputs) arrays.push_back(a.Copy());
  std::vector<tir::HostArray> results;
  for (const auto& [dtype, shape] : outputs) {
    results.emplace_back(dtype, shape);
    arrays.push_back(results.back());  // shares the memory of results.back()
  }
  tir::Interpreter().Run(func, std::vector<tir::Argument>(arrays.begin(), arrays.end()));
  return results;
}

inline void ExpectSame(const tir::HostArray& a, const tir::HostArray& b, const std::string& what) {
  ASSERT_EQ(a.NumElements(), b.NumElements()) << what;
  for (int64_t i = 0; i < a.NumElements(); ++i) {
    ASSERT_EQ(a.GetFloat(i), b.GetFloat(i)) << what << " differs at flat index " << i;
  }
}

// Loops of the lowered function whose variable has this name (printing order).
inline std::vector<const ForNode*> LoopsNamed(const PrimFunc& func, const std::string& name) {
  std::vector<const ForNode*> loops;
  PostOrderVisit(func->body, [&](const ObjectRef& node) {
    if (const auto* loop = node.as<ForNode>(); loop && loop->loop_var.name() == name) {
      loops.push_back(loop);
    }
  });
  return loops;
}

}  // namespace loom::te::test
