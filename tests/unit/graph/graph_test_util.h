// Helpers for the graph tests: compiling one operator call through its registered strategy
// (compute + ScheduleGroup + lower + build) and running it, random arrays, element access,
// comparison with a reference, and catching user errors.
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
#include "loom/graph/expr.h"
#include "loom/runtime/packed_func.h"
#include "loom/target/build.h"
#include "loom/te/lower.h"

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

// Stages a fused group adds after its master call's outputs (a ReLU after a conv2d), with
// the master's output types.
using Epilogue = std::function<std::vector<te::Tensor>(const std::vector<te::Tensor>&)>;

// Compiles `call` (an operator call of constant-shaped inputs) on its own: placeholders of
// its inputs' types (int32 dimensions), the operator's compute, the group schedule of the call as
// master (ScheduleGroup) for "llvm", te::lower and build. Runs it on `inputs` and returns its
// outputs (one per field of a tuple type). With an `epilogue`, the group computes the
// epilogue's outputs after the call's, of the call's output types.
inline std::vector<runtime::NDArray> RunCallOutputs(const Call& call,
                                                    const std::vector<runtime::NDArray>& inputs,
                                                    const Epilogue& epilogue = nullptr) {
  CallInfo info = call->Info();
  EXPECT_EQ(inputs.size(), info.input_types.size()) << info.where;
  std::vector<te::Tensor> placeholders;
  for (size_t i = 0; i < info.input_types.size(); ++i) {
    const Type& type = info.input_types[i];
    EXPECT_EQ(inputs[i].Shape(), type.ConstShape().value()) << info.where << " input " << i;
    EXPECT_EQ(inputs[i].dtype(), type.dtype()) << info.where << " input " << i;
    // Constant dimensions as int32, as the type relations build them (TE's convention).
    std::vector<int64_t> dims = type.ConstShape().value();
    Array<PrimExpr> shape;
    for (int64_t dim : dims) shape.push_back(static_cast<int>(dim));
    placeholders.push_back(te::placeholder(shape, type.dtype(), "in" + std::to_string(i)));
  }
  std::vector<te::Tensor> outputs = call->op->compute(info, placeholders);
  if (epilogue) outputs = epilogue(outputs);
  Target target = Target::Parse("llvm");
  te::Schedule schedule = ScheduleGroup(info, outputs, target);
  Array<te::Tensor> args(placeholders.begin(), placeholders.end());
  args.insert(args.end(), outputs.begin(), outputs.end());
  runtime::Module module = build(te::lower(schedule, args, "op"), target);

  std::vector<Type> out_types =
      info.output_type.is_tuple() ? info.output_type.fields() : std::vector<Type>{info.output_type};
  EXPECT_EQ(out_types.size(), outputs.size()) << info.where;
  std::vector<runtime::NDArray> results;
  for (const Type& type : out_types) {
    results.push_back(runtime::NDArray::Empty(type.ConstShape().value(), type.dtype()));
  }
  std::vector<LoomValue> values;
  for (const runtime::NDArray& array : inputs)
    values.push_back(LoomValue{.v_handle = array.tensor()});
  for (const runtime::NDArray& array : results)
    values.push_back(LoomValue{.v_handle = array.tensor()});
  std::vector<int32_t> codes(values.size(), kLoomDLTensorHandle);
  runtime::RetValue ret;
  module.GetRequiredFunction("op").CallPacked(
      runtime::PackedArgs(values.data(), codes.data(), static_cast<int>(values.size())), &ret);
  return results;
}

// The same for a call with one tensor output.
inline runtime::NDArray RunCall(const Call& call, const std::vector<runtime::NDArray>& inputs) {
  std::vector<runtime::NDArray> outputs = RunCallOutputs(call, inputs);
  EXPECT_EQ(outputs.size(), 1u) << call->Where();
  return outputs.at(0);
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
