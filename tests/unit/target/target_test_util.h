// Helpers for the target tests: random host arrays, calling compiled functions on them
// through the packed convention, and comparing with the TIR interpreter.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "loom/runtime/module.h"
#include "loom/target/build.h"
#include "loom/tir/host_array.h"
#include "loom/tir/interpreter.h"
#include "loom/tir/transform.h"
#include "prim_func.h"

namespace loom::target_test {

// Values every dtype holds exactly; nonzero when `nonzero` (divisors).
inline tir::HostArray RandomArray(DataType t, std::vector<int64_t> shape, unsigned seed,
                                  bool nonzero = false) {
  tir::HostArray array(t, std::move(shape));
  std::mt19937 rng(seed);
  for (int64_t i = 0; i < array.NumElements(); ++i) {
    if (t.is_float()) {
      double v = std::uniform_real_distribution<double>(-4, 4)(rng);
      array.SetFloat(i, nonzero && std::abs(v) < 0.25 ? 1.5 : v);
    } else if (t.is_bool()) {
      array.SetInt(i, static_cast<int64_t>(rng() % 2));
    } else {
      int64_t lo = t.is_uint() ? 0 : -100, hi = 100;
      int64_t v = std::uniform_int_distribution<int64_t>(lo, hi)(rng);
      if (nonzero && v == 0) v = 3;
      array.SetInt(i, v);
    }
  }
  return array;
}

// A DLTensor describing `array` (compact, on the CPU); the shape vector must outlive it.
inline DLTensor Describe(const tir::HostArray& array, std::vector<int64_t>* shape) {
  *shape = array.shape();
  DLTensor tensor{};
  tensor.data = array.memory()->data();
  tensor.device = {kDLCPU, 0};
  tensor.ndim = static_cast<int32_t>(shape->size());
  tensor.dtype = array.dtype().to_dlpack();
  tensor.shape = shape->data();
  return tensor;
}

// Calls `func` of `module` with the arrays as DLTensor arguments.
inline void CallWithArrays(const runtime::Module& module, const std::string& func,
                           const std::vector<tir::HostArray>& arrays) {
  std::vector<std::vector<int64_t>> shapes(arrays.size());
  std::vector<DLTensor> tensors(arrays.size());
  std::vector<LoomValue> values(arrays.size());
  std::vector<int32_t> codes(arrays.size(), kLoomDLTensorHandle);
  for (size_t i = 0; i < arrays.size(); ++i) {
    tensors[i] = Describe(arrays[i], &shapes[i]);
    values[i].v_handle = &tensors[i];
  }
  runtime::RetValue ret;
  module.GetRequiredFunction(func).CallPacked(
      runtime::PackedArgs(values.data(), codes.data(), static_cast<int>(values.size())), &ret);
}

using testing::MakePrimFunc;

inline bool SameBytes(const tir::HostArray& a, const tir::HostArray& b) {
  return a.memory()->nbytes() == b.memory()->nbytes() &&
         std::memcmp(a.memory()->data(), b.memory()->data(),
                     static_cast<size_t>(a.memory()->nbytes())) == 0;
}

// The TIR whose interpretation build(func, target) matches bit for bit: contracted as the
// target contracts, float32 math functions as their polynomials (see build.cc).
inline PrimFunc AsCompiled(const PrimFunc& func, const Target& target) {
  PrimFunc lowered = func;
  if (target.ContractsMultiplyAdd()) lowered = tir::transform::ContractMultiplyAdd()(lowered);
  return tir::transform::LowerMathIntrinsics()(lowered);
}

// Runs `func` (inputs then one output per `outputs` entry) compiled for `target` and in the
// interpreter (as compiled, AsCompiled), and expects bit-identical outputs.
inline void ExpectMatchesInterpreter(const PrimFunc& func, const std::vector<tir::HostArray>& inputs,
                                     const std::vector<tir::HostArray>& outputs,
                                     const std::string& label,
                                     const std::string& target_text = "llvm") {
  std::vector<tir::Argument> interp_args;
  std::vector<tir::HostArray> compiled_args;
  std::vector<tir::HostArray> expected, actual;
  for (const tir::HostArray& in : inputs) {
    interp_args.push_back(in);
    compiled_args.push_back(in);
  }
  for (const tir::HostArray& out : outputs) {
    expected.push_back(out.Copy());
    actual.push_back(out.Copy());
    interp_args.push_back(expected.back());
    compiled_args.push_back(actual.back());
  }
  Target target = Target::Parse(target_text);
  tir::Interpreter().Run(AsCompiled(func, target), interp_args);
  runtime::Module module = build(func, target);
  CallWithArrays(module, "main", compiled_args);
  for (size_t i = 0; i < outputs.size(); ++i) {
    EXPECT_TRUE(SameBytes(expected[i], actual[i])) << label << ": output " << i << " differs";
    if (!SameBytes(expected[i], actual[i])) {
      for (int64_t k = 0; k < expected[i].NumElements(); ++k) {
        if (expected[i].GetFloat(k) != actual[i].GetFloat(k)) {
          ADD_FAILURE() << label << " first difference at " << k << ": interpreter "
                        << expected[i].GetFloat(k) << ", compiled " << actual[i].GetFloat(k);
          break;
        }
      }
    }
  }
}

}  // namespace loom::target_test
