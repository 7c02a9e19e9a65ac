// Helpers for the graph tests: running one operator call compiled alone (EvaluateCall) or
// with a fused ReLU (LowerToTIR), random arrays and constants, element access, comparison
// with a reference, and catching user errors.
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
#include "loom/graph/evaluate.h"
#include "loom/graph/expr.h"
#include "loom/graph/lower.h"
#include "loom/graph/module.h"
#include "loom/runtime/float_codec.h"
#include "loom/runtime/packed_func.h"
#include "loom/target/build.h"

namespace loom::graph::test {

using ::loom::testing::ErrorOf;

// A model input of `shape` (float32 unless given).
inline Var In(const std::string& name, const std::vector<int64_t>& shape,
              DataType dtype = DataType::Float(32)) {
  return MakeVar(name, TensorType(shape, dtype));
}

// Element i of a compact host array, as a double / an integer (any numeric dtype).
inline double GetFloat(const runtime::NDArray& a, int64_t i) {
  DataType t = a.dtype();
  const void* p = a.data();
  if (t == DataType::Float(32)) return static_cast<const float*>(p)[i];
  if (t == DataType::Float(64)) return static_cast<const double*>(p)[i];
  if (t == DataType::Float(16)) return HalfBitsToFloat(static_cast<const uint16_t*>(p)[i]);
  if (t.is_bfloat16()) return BFloat16BitsToFloat(static_cast<const uint16_t*>(p)[i]);
  if (t == DataType::Int(64)) return static_cast<double>(static_cast<const int64_t*>(p)[i]);
  if (t == DataType::Int(32)) return static_cast<const int32_t*>(p)[i];
  if (t == DataType::Int(8)) return static_cast<const int8_t*>(p)[i];
  if (t == DataType::UInt(8) || t.is_bool()) return static_cast<const uint8_t*>(p)[i];
  ADD_FAILURE() << "GetFloat: unsupported dtype " << t.str();
  return 0;
}
inline int64_t GetInt(const runtime::NDArray& a, int64_t i) {
  return static_cast<int64_t>(GetFloat(a, i));
}
inline void SetValue(const runtime::NDArray& a, int64_t i, double v) {
  DataType t = a.dtype();
  void* p = a.data();
  if (t == DataType::Float(32))
    static_cast<float*>(p)[i] = static_cast<float>(v);
  else if (t == DataType::Float(64))
    static_cast<double*>(p)[i] = v;
  else if (t == DataType::Float(16))
    static_cast<uint16_t*>(p)[i] = FloatToHalfBits(static_cast<float>(v));
  else if (t.is_bfloat16())
    static_cast<uint16_t*>(p)[i] = FloatToBFloat16Bits(static_cast<float>(v));
  else if (t == DataType::Int(64))
    static_cast<int64_t*>(p)[i] = static_cast<int64_t>(v);
  else if (t == DataType::Int(32))
    static_cast<int32_t*>(p)[i] = static_cast<int32_t>(v);
  else if (t == DataType::Int(8))
    static_cast<int8_t*>(p)[i] = static_cast<int8_t>(v);
  else if (t == DataType::UInt(8) || t.is_bool())
    static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(v);
  else
    ADD_FAILURE() << "SetValue: unsupported dtype " << t.str();
}

// A host array of `shape`: floats uniform in [-4, 4), integers in [-100, 100] ([0, 100]
// unsigned), bools 0 or 1.
inline runtime::NDArray RandomArray(const std::vector<int64_t>& shape, DataType dtype,
                                    unsigned seed) {
  runtime::NDArray array = runtime::NDArray::Empty(shape, dtype);
  std::mt19937 rng(seed);
  for (int64_t i = 0; i < array.NumElements(); ++i) {
    if (dtype.is_float()) {
      SetValue(array, i, std::uniform_real_distribution<double>(-4, 4)(rng));
    } else if (dtype.is_bool()) {
      SetValue(array, i, static_cast<double>(rng() % 2));
    } else {
      int64_t lo = dtype.is_uint() ? 0 : -100;
      SetValue(array, i, static_cast<double>(std::uniform_int_distribution<int64_t>(lo, 100)(rng)));
    }
  }
  return array;
}

// A host array of `shape` holding `values` (row-major).
inline runtime::NDArray ArrayOf(const std::vector<int64_t>& shape, DataType dtype,
                                const std::vector<double>& values) {
  runtime::NDArray array = runtime::NDArray::Empty(shape, dtype);
  EXPECT_EQ(array.NumElements(), static_cast<int64_t>(values.size()));
  for (size_t i = 0; i < values.size(); ++i) SetValue(array, static_cast<int64_t>(i), values[i]);
  return array;
}

inline const Target& HostTarget() {
  static const Target target = Target::Parse("llvm");
  return target;
}

// A named float32 constant of random values uniform in [lo, hi).
inline Constant RandomConstant(const std::vector<int64_t>& shape, const std::string& name,
                               unsigned seed, double lo = -4, double hi = 4) {
  runtime::NDArray array = RandomArray(shape, DataType::Float(32), seed);
  for (int64_t i = 0; i < array.NumElements(); ++i) {
    SetValue(array, i, lo + (GetFloat(array, i) + 4) / 8 * (hi - lo));
  }
  return MakeConstant(array, name);
}

// The output of `call` on `inputs` (one array per argument), compiled alone for the host.
inline runtime::NDArray RunCall(const Call& call, const std::vector<runtime::NDArray>& inputs) {
  return EvaluateCall(*call.get(), inputs, HostTarget());
}

// relu(call(inputs)) compiled as one fused group mastered by the call, as Compile lowers it
// (LowerToTIR): the call's schedule with an elementwise epilogue.
inline runtime::NDArray RunWithRelu(const Call& call, const std::vector<runtime::NDArray>& inputs) {
  std::vector<Var> params, model_inputs;
  for (size_t i = 0; i < call->args.size(); ++i) {
    params.push_back(MakeVar("p" + std::to_string(i), call->args[i].type()));
    model_inputs.push_back(MakeVar("x" + std::to_string(i), call->args[i].type()));
  }
  Expr inner = MakeCall(call->op, std::vector<Expr>(params.begin(), params.end()), call->attrs,
                        call->name_hint);
  Function group = MakeFunction(params, MakeCall("nn.relu", {inner}),
                                {{"Primitive", int64_t{1}}, {"name", std::string("with_relu")}});
  IRModule fused = IRModule::FromFunction(MakeFunction(
      model_inputs, MakeCall(group, std::vector<Expr>(model_inputs.begin(), model_inputs.end()))));
  runtime::Module module = build(LowerToTIR(fused, HostTarget()).tir, HostTarget());

  runtime::NDArray result =
      runtime::NDArray::Empty(call->checked_type.ConstShape().value(), call->checked_type.dtype());
  std::vector<runtime::NDArray> args = inputs;
  args.push_back(result);
  module.GetRequiredFunction("with_relu").CallWithArrays(args);
  return result;
}

// `got` within `tolerance` of `want` element by element (relative, absolute near 0), with
// the same element count; at most 5 failures reported.
inline void ExpectClose(const runtime::NDArray& got, const std::vector<double>& want,
                        double tolerance, const std::string& label) {
  ASSERT_EQ(got.NumElements(), static_cast<int64_t>(want.size())) << label;
  int failures = 0;
  for (int64_t i = 0; i < got.NumElements() && failures < 5; ++i) {
    double actual = GetFloat(got, i);
    double expected = want[i];
    if (std::abs(actual - expected) > tolerance * std::max(1.0, std::abs(expected))) {
      ++failures;
      ADD_FAILURE() << label << " element " << i << ": got " << actual << ", want " << expected;
    }
  }
}

// Every element of `a` as doubles.
inline std::vector<double> Values(const runtime::NDArray& a) {
  std::vector<double> values;
  for (int64_t i = 0; i < a.NumElements(); ++i) values.push_back(GetFloat(a, i));
  return values;
}

}  // namespace loom::graph::test
