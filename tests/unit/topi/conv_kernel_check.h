// Checks of the x86 conv2d kernels shared by their tests: a workload in one line, and a kernel's
// four functions (MakeConv2DKernel) compiled and run on random data against the direct NCHW
// reference.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <functional>
#include <vector>

#include "conv_reference.h"
#include "loom/tir/analysis.h"
#include "loom/topi/x86/conv2d.h"
#include "topi_test_util.h"

namespace loom::topi::x86::conv_check {

using target_test::CallWithArrays;
using target_test::RandomArray;
using topi::test::ExpectClose;
using topi::test::ReferenceConv2D;

inline Conv2DWorkload Workload(std::vector<int64_t> nchw, std::vector<int64_t> krs, int64_t stride,
                               std::array<int64_t, 4> pads, int64_t groups = 1,
                               int64_t dilation = 1) {
  Conv2DWorkload wl;
  wl.n = nchw[0], wl.c = nchw[1], wl.h = nchw[2], wl.w = nchw[3];
  wl.k = krs[0], wl.r = krs[1], wl.s = krs[2];
  wl.attrs.strides = {stride, stride};
  wl.attrs.dilations = {dilation, dilation};
  wl.attrs.pads = pads;
  wl.attrs.groups = groups;
  return wl;
}

// The dtypes of a blocked convolution's intermediate arrays: the packed data and weight, and
// the convolution's blocked output.
struct PackedConvTypes {
  DataType data = DataType::Float(32), weight = DataType::Float(32), out = DataType::Float(32);
};

// Runs a blocked convolution's functions of `module`: "pack_data" and "pack_weight" on x and
// w, "conv" on their results, and `unpack` on its output, each output an array shaped as its
// function's parameter; returns the unpacked result.
inline tir::HostArray RunPackedConv(const IRModule& module, const runtime::Module& compiled,
                                    const tir::HostArray& x, const tir::HostArray& w,
                                    const PackedConvTypes& types, DataType result_type,
                                    const std::string& unpack = "unpack") {
  auto array_for = [&](const std::string& func, size_t index, DataType t) {
    return tir::HostArray(t, tir::ConstParamShape(module.Lookup(func), index));
  };
  tir::HostArray px = array_for("pack_data", 1, types.data);
  tir::HostArray pw = array_for("pack_weight", 1, types.weight);
  tir::HostArray blocked = array_for("conv", 2, types.out);
  tir::HostArray y = array_for(unpack, 1, result_type);
  CallWithArrays(compiled, "pack_data", {x, px});
  CallWithArrays(compiled, "pack_weight", {w, pw});
  CallWithArrays(compiled, "conv", {px, pw, blocked});
  CallWithArrays(compiled, unpack, {blocked, y});
  return y;
}

// Runs a bfloat16 convolution's module (RunPackedConv's four functions: bfloat16 data, a
// float32 weight packed to bfloat16, a float32 result) on values in [-2, 2) rounded to
// bfloat16 and compares it with the double reference on the same values times `scale` (an
// epilogue's): each product is exact, so only the float32 summation order differs.
inline void ExpectBf16ModuleMatches(const IRModule& module, const Conv2DWorkload& wl,
                                    double scale) {
  const DataType bf16 = DataType::BFloat16(), f32 = DataType::Float(32);
  runtime::Module compiled = build(module, Target::Parse("llvm"));
  tir::HostArray x = topi::test::BFloat16ValuedArray(bf16, {wl.n, wl.c, wl.h, wl.w}, 3);
  tir::HostArray w = topi::test::BFloat16ValuedArray(f32, {wl.k, wl.c, wl.r, wl.s}, 4);
  tir::HostArray y = RunPackedConv(module, compiled, x, w, {bf16, bf16, f32}, f32);
  tir::HostArray x_float(f32, {wl.n, wl.c, wl.h, wl.w});
  for (int64_t i = 0; i < x.NumElements(); ++i) x_float.SetFloat(i, x.GetFloat(i));
  std::vector<double> want = ReferenceConv2D(x_float, w, wl.attrs, wl.out_h(), wl.out_w());
  ASSERT_EQ(static_cast<int64_t>(want.size()), y.NumElements());
  // A float32 sum of a few hundred products below 4 in magnitude is within about
  // terms * 2^-24 * 4 of the exact one.
  ExpectClose(y, [&](int64_t i) { return want[size_t(i)] * scale; }, 1e-4, "conv");
}

// Runs an int8 convolution's module (RunPackedConv's four functions) on the full range of
// uint8 data and int8 weights and compares its int32 result exactly with the integer
// reference (the border reading `pad_value`) after `epilogue`.
inline void ExpectInt8ModuleMatches(const IRModule& module, const Conv2DWorkload& wl,
                                    int64_t pad_value,
                                    const std::function<int64_t(int64_t)>& epilogue) {
  const DataType u8 = DataType::UInt(8), i8 = DataType::Int(8), i32 = DataType::Int(32);
  runtime::Module compiled = build(module, Target::Parse("llvm"));
  tir::HostArray x = topi::test::FullRangeArray(u8, {wl.n, wl.c, wl.h, wl.w}, 3);
  tir::HostArray w =
      topi::test::FullRangeArray(i8, {wl.k, wl.c / wl.attrs.groups, wl.r, wl.s}, 4);
  tir::HostArray y = RunPackedConv(module, compiled, x, w, {u8, i8, i32}, i32);
  std::vector<int64_t> want = topi::test::ReferenceIntegerConv(x, w, wl, pad_value);
  ASSERT_EQ(static_cast<int64_t>(want.size()), y.NumElements());
  int mismatches = 0;
  for (int64_t i = 0; i < y.NumElements(); ++i) {
    int64_t expected = epilogue(want[static_cast<size_t>(i)]);
    if (y.GetInt(i) != expected && ++mismatches <= 5) {
      ADD_FAILURE() << "element " << i << ": " << y.GetInt(i) << ", want " << expected;
    }
  }
}

// Runs the kernel's pack, convolution and unpack functions on random data and compares the NCHW
// result with the reference.
inline void ExpectKernelMatchesReference(const Conv2DWorkload& wl, const Conv2DKernel& kernel) {
  SCOPED_TRACE(wl.str() + " " + kernel.algorithm + " " +
               (kernel.algorithm == "winograd" ? kernel.winograd.str() : kernel.config.str()));
  const IRModule& module = kernel.module;
  ASSERT_EQ(module.size(), 4u);
  runtime::Module compiled = build(module, Target::Parse("llvm"));
  tir::HostArray x = RandomArray(DataType::Float(32), {wl.n, wl.c, wl.h, wl.w}, 7);
  tir::HostArray w =
      RandomArray(DataType::Float(32), {wl.k, wl.c / wl.attrs.groups, wl.r, wl.s}, 8);
  tir::HostArray y = RunPackedConv(module, compiled, x, w, PackedConvTypes{}, DataType::Float(32),
                                   "unpack_output");
  std::vector<double> want = ReferenceConv2D(x, w, wl.attrs, wl.out_h(), wl.out_w());
  ASSERT_EQ(y.NumElements(), static_cast<int64_t>(want.size()));
  // Sums of up to C * R * S float32 products of values in [-1, 1]. Winograd's transforms scale the
  // rounding errors up by about ten (its own tests bound them per output).
  double tolerance = kernel.algorithm == "winograd" ? 1e-3 : 1e-4;
  ExpectClose(
      y, [&](int64_t i) { return want[i]; }, tolerance, "conv");
}

}  // namespace loom::topi::x86::conv_check
