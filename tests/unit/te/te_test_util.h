// Helpers for TE tests: run a lowered function on host arrays with the TIR interpreter.
#pragma once

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"
#include "loom/ir/printer.h"
#include "loom/te/lower.h"
#include "loom/tir/interpreter.h"
#include "loom/tir/pipeline.h"

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

// The message of the loom::Error `fn` throws ("" when it throws none).
template <typename Fn>
std::string ErrorOf(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Expects `statement` to throw a loom::Error whose message contains `expected_substring`.
#define EXPECT_ERROR(statement, expected_substring)                                  \
  do {                                                                               \
    std::string message = ErrorOf([&] { statement; });                               \
    EXPECT_NE(message.find(expected_substring), std::string::npos)                   \
        << "message: " << (message.empty() ? "(no error)" : message);               \
  } while (0)

inline void ExpectSame(const tir::HostArray& a, const tir::HostArray& b, const std::string& what) {
  ASSERT_EQ(a.NumElements(), b.NumElements()) << what;
  for (int64_t i = 0; i < a.NumElements(); ++i) {
    ASSERT_EQ(a.GetFloat(i), b.GetFloat(i)) << what << " differs at flat index " << i;
  }
}

// Runs `func` on copies of `inputs` followed by fresh outputs of the given shapes; returns
// the outputs.
inline std::vector<tir::HostArray> RunOnce(
    const PrimFunc& func, const std::vector<tir::HostArray>& inputs,
    const std::vector<std::pair<DataType, std::vector<int64_t>>>& outputs) {
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

// RunOnce, and again after the TIR lowering pipeline, which must not change any output: so
// every schedule a test runs in its scheduled form (ScheduleToPrimFunc) is also checked fully
// lowered (flattened, partitioned, vectorized, storage planned). Returns the outputs.
inline std::vector<tir::HostArray> RunFunc(
    const PrimFunc& func, const std::vector<tir::HostArray>& inputs,
    const std::vector<std::pair<DataType, std::vector<int64_t>>>& outputs) {
  std::vector<tir::HostArray> results = RunOnce(func, inputs, outputs);
  PrimFunc lowered = tir::DefaultLoweringPipeline()(func);
  std::vector<tir::HostArray> lowered_results = RunOnce(lowered, inputs, outputs);
  for (size_t k = 0; k < results.size(); ++k) {
    ExpectSame(lowered_results[k], results[k],
               "output " + std::to_string(k) + " after the lowering pipeline, of\n" +
                   ToScript(func) + "lowered to\n" + ToScript(lowered));
  }
  return results;
}


// Axis d of a compute tensor's operation (TVM's s[T].op.axis[d]).
inline IterVar OpAxis(const Tensor& t, size_t d) {
  return static_cast<const ComputeOpNode*>(t.op().get())->axis.at(d);
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
