// The packed calling convention: argument checks fail with a message naming the function,
// the argument, what was expected and what was passed; symbolic shapes bind at call time;
// JIT and exported library give the same bits.
#include <dlfcn.h>
#include <unistd.h>

#include "loom/ir/expr_ops.h"
#include "loom/runtime/c_runtime_api.h"
#include "loom/te/lower.h"
#include "loom/te/operation.h"
#include "loom/te/schedule.h"
#include "loom/tir/transform.h"
#include "target_test_util.h"

namespace loom::target_test {
namespace {

using te::compute;
using te::placeholder;
using te::Tensor;

// scale(A: float32[n, 4], B: float32[n, 4], s: float32): B = A * s + i
runtime::Module BuildScale() {
  Var n = SizeVar("n");
  Tensor A = placeholder({n, 4}, DataType::Float(32), "A");
  Var s("s", DataType::Float(32));
  Tensor B = compute({n, 4}, [&](Var i, Var j) { return A(i, j) * s + cast(DataType::Float(32), i); }, "B");
  PrimFunc f = te::lower(te::create_schedule({B.op()}), {A, B}, "scale");
  Array<Var> params = f->params;
  params.push_back(s);
  PrimFunc with_scalar(params, f->buffer_map, f->body, f->ret_type, f->attrs);
  return build(with_scalar, Target::Parse("llvm"));
}

struct Call {
  tir::HostArray a = RandomArray(DataType::Float(32), {5, 4}, 1);
  tir::HostArray b = tir::HostArray(DataType::Float(32), {5, 4});
  std::vector<int64_t> a_shape, b_shape;
  DLTensor ta = Describe(a, &a_shape), tb = Describe(b, &b_shape);
  std::vector<LoomValue> values{LoomValue{}, LoomValue{}, LoomValue{}};
  std::vector<int32_t> codes{kLoomDLTensorHandle, kLoomDLTensorHandle, kLoomArgFloat};
  Call() {
    values[0].v_handle = &ta;
    values[1].v_handle = &tb;
    values[2].v_float64 = 0.5;
  }
  // The error message of the call, or "" when it succeeds.
  std::string Run(const runtime::Module& m, int num_args = 3) {
    try {
      runtime::RetValue ret;
      m.GetRequiredFunction("scale").CallPacked(
          runtime::PackedArgs(values.data(), codes.data(), num_args), &ret);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
};

TEST(PackedAPI, SymbolicShapeBindsAndScalarsArrive) {
  runtime::Module m = BuildScale();
  Call call;
  ASSERT_EQ(call.Run(m), "");
  for (int64_t k = 0; k < 20; ++k) {
    ASSERT_EQ(call.b.GetFloat(k), static_cast<float>(call.a.GetFloat(k) * 0.5f + float(k / 4))) << k;
  }
}

void ExpectError(const std::string& message, const std::string& expected) {
  EXPECT_NE(message.find(expected), std::string::npos) << "got: " << message;
}

TEST(PackedAPI, EachWrongArgumentIsAClearError) {
  runtime::Module m = BuildScale();
  { Call c; ExpectError(c.Run(m, 2), "scale: expected 3 argument(s), got 2"); }
  { Call c; c.codes[0] = kLoomArgInt;
    ExpectError(c.Run(m), "scale: argument 0 ('A') must be a tensor (DLTensor*, type code 7), got type code 0"); }
  { Call c; c.codes[2] = kLoomArgInt;
    ExpectError(c.Run(m), "scale: argument 2 ('s') must be a float (type code 2), got type code 0"); }
  { Call c; c.values[1].v_handle = nullptr;
    ExpectError(c.Run(m), "scale: argument 1 ('B') is a null DLTensor pointer"); }
  { Call c; c.ta.ndim = 1;
    ExpectError(c.Run(m), "scale: argument 0 ('A') must have rank 2, got 1"); }
  { Call c; c.tb.dtype.bits = 64;
    ExpectError(c.Run(m), "scale: argument 1 ('B') must have dtype float32 (code 2, bits 32, lanes 1), got code 2, bits 64, lanes 1"); }
  { Call c; c.b_shape[1] = 3;
    ExpectError(c.Run(m), "scale: argument 1 ('B') dimension 1 must be 4, got 3"); }
  { Call c; c.b_shape[0] = 6;
    ExpectError(c.Run(m), "scale: argument 1 ('B') dimension 0 must be 5, got 6"); }
  { Call c; c.ta.data = nullptr;
    ExpectError(c.Run(m), "scale: argument 0 ('A') has a null data pointer"); }
  { Call c; c.ta.device.device_type = kDLCUDA;
    ExpectError(c.Run(m), "scale: argument 0 ('A') must be on device 'cpu' (device type 1), got device type 2"); }
  { Call c; c.ta.data = static_cast<char*>(c.ta.data) + 4;
    ExpectError(c.Run(m), "scale: argument 0 ('A') must have data aligned to 64 bytes"); }
  { Call c; std::vector<int64_t> strides{1, 5}; c.ta.strides = strides.data();
    ExpectError(c.Run(m), "scale: argument 0 ('A') must be compact (row-major strides or NULL strides)"); }
  { Call c; std::vector<int64_t> strides{4, 1}; c.ta.strides = strides.data();
    EXPECT_EQ(c.Run(m), "") << "compact explicit strides are accepted"; }
}

// scale's result for A's row `row`, column `column`, with A's data starting at `a`.
float ScaleResult(const float* a, int64_t row, int64_t column, float s) {
  return a[row * 4 + column] * s + static_cast<float>(row);
}

TEST(PackedAPI, ByteOffsetViewsAreReadAndWrittenInPlace) {
  runtime::Module m = BuildScale();
  // 64-byte offsets (4 rows of 4 floats) keep the data aligned: A is rows 4..8 of a 9-row
  // array, B rows 8..12 of a 13-row one, whose first 8 rows must stay untouched.
  tir::HostArray a_base = RandomArray(DataType::Float(32), {9, 4}, 8);
  tir::HostArray b_base(DataType::Float(32), {13, 4});
  Call c;
  c.ta.data = a_base.memory()->data();
  c.ta.byte_offset = 64;
  c.tb.data = b_base.memory()->data();
  c.tb.byte_offset = 128;
  ASSERT_EQ(c.Run(m), "");
  const float* a_view = a_base.data<float>() + 16;
  for (int64_t k = 0; k < 13 * 4; ++k) {
    float expected = k < 32 ? 0.0f : ScaleResult(a_view, k / 4 - 8, k % 4, 0.5f);
    ASSERT_EQ(b_base.GetFloat(k), expected) << k;
  }
}

TEST(PackedAPI, ByteOffsetCountsTowardsAlignment) {
  runtime::Module m = BuildScale();
  Call c;
  c.ta.byte_offset = 4;
  uintptr_t address = reinterpret_cast<uintptr_t>(c.ta.data) + 4;
  ExpectError(c.Run(m), "scale: argument 0 ('A') must have data aligned to 64 bytes, got address " +
                            std::to_string(address));
}

TEST(PackedAPI, ByteOffsetViewsThroughTheCApi) {
  std::string path = "/tmp/loom_byte_offset_test_" + std::to_string(getpid()) + ".so";
  ExportLibrary(BuildScale(), path);
  LoomModuleHandle module = nullptr;
  LoomFunctionHandle scale = nullptr;
  ASSERT_EQ(LoomModLoadFromFile(path.c_str(), &module), 0) << LoomGetLastError();
  ASSERT_EQ(LoomModGetFunction(module, "scale", 0, &scale), 0) << LoomGetLastError();
  int64_t base_shape[2] = {9, 4}, view_shape[2] = {5, 4};
  LoomArrayHandle base = nullptr, out = nullptr;
  ASSERT_EQ(LoomArrayAlloc(base_shape, 2, kDLFloat, 32, 1, kDLCPU, 0, &base), 0);
  ASSERT_EQ(LoomArrayAlloc(view_shape, 2, kDLFloat, 32, 1, kDLCPU, 0, &out), 0);
  std::vector<float> input(36);
  for (size_t k = 0; k < input.size(); ++k) input[k] = static_cast<float>(k) * 0.25f;
  ASSERT_EQ(LoomArrayCopyFromBytes(base, input.data(), input.size() * sizeof(float)), 0);
  // A zero-copy view of rows 4..8: the same allocation, 64 bytes in.
  DLTensor view = *base;
  view.shape = view_shape;
  view.byte_offset = 64;
  LoomValue args[3];
  args[0].v_handle = &view;
  args[1].v_handle = out;
  args[2].v_float64 = 2.0;
  int32_t codes[3] = {kLoomDLTensorHandle, kLoomDLTensorHandle, kLoomArgFloat};
  LoomValue ret{};
  int32_t ret_code = kLoomNullptr;
  ASSERT_EQ(LoomFuncCall(scale, args, codes, 3, &ret, &ret_code), 0) << LoomGetLastError();
  std::vector<float> result(20);
  ASSERT_EQ(LoomArrayCopyToBytes(out, result.data(), result.size() * sizeof(float)), 0);
  for (int64_t k = 0; k < 20; ++k) {
    EXPECT_EQ(result[k], ScaleResult(input.data() + 16, k / 4, k % 4, 2.0f)) << k;
  }
  LoomArrayFree(out);
  LoomArrayFree(base);
  LoomFuncFree(scale);
  LoomModFree(module);
  std::remove(path.c_str());
}

TEST(PackedAPI, CodegenRejectsUnpackedFunctions) {
  Tensor A = placeholder({4}, DataType::Float(32), "A");
  Tensor B = compute({4}, [&](Var i) { return A(i); }, "B");
  PrimFunc f = te::lower(te::create_schedule({B.op()}), {A, B}, "f");
  PrimFunc packed = tir::transform::MakePackedAPI()(f);
  EXPECT_EQ(packed->params.size(), 6u);
  EXPECT_EQ(packed->ret_type, DataType::Int(32));
  // Running the pass again leaves a packed function alone.
  EXPECT_TRUE(tir::transform::MakePackedAPI()(packed).same_as(packed));
}

TEST(PackedAPI, JitAndExportedLibraryAreBitIdentical) {
  Tensor A = placeholder({8, 37}, DataType::Float(32), "A");
  Tensor B = placeholder({8, 38}, DataType::Float(32), "B");
  Tensor C = compute({8, 37}, [&](Var i, Var j) {
    return exp(A(i, j)) * B(i, j + 1) + tanh(B(i, j + 1)) / (A(i, j) * A(i, j) + 1.0f);
  }, "C");
  te::Schedule s = te::create_schedule({C.op()});
  auto [o, in] = s[C].split(s[C]->leaf_iter_vars[1], 8);
  s[C].vectorize(in);
  s[C].parallel(s[C]->leaf_iter_vars[0]);
  (void)o;
  PrimFunc f = te::lower(s, {A, B, C}, "fused");
  runtime::Module jit = build(f, Target::Parse("llvm -fast-math"));
  std::string path = "/tmp/loom_target_test_" + std::to_string(getpid()) + ".so";
  ExportLibrary(jit, path);
  runtime::Module library = runtime::LoadModuleFromFile(path);
  tir::HostArray a = RandomArray(DataType::Float(32), {8, 37}, 3);
  tir::HostArray b = RandomArray(DataType::Float(32), {8, 38}, 4);
  tir::HostArray from_jit(DataType::Float(32), {8, 37}), from_library(DataType::Float(32), {8, 37});
  CallWithArrays(jit, "fused", {a, b, from_jit});
  CallWithArrays(library, "fused", {a, b, from_library});
  EXPECT_TRUE(SameBytes(from_jit, from_library));
  EXPECT_NE(from_jit.GetFloat(5), 0.0);
  // Nothing from libloom is needed: the library's undefined symbols are libc/libm only.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  EXPECT_NE(dlsym(handle, LOOM_BACKEND_PARALLEL_LAUNCH_SHARED_SYMBOL), nullptr);
  dlclose(handle);
  std::remove(path.c_str());
}

TEST(PackedAPI, ExportingAForeignModuleIsAnError) {
  try {
    ExportLibrary(runtime::Module(), "/tmp/never.so");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    ExpectError(e.what(), "ExportLibrary('/tmp/never.so'): the module is undefined; only modules "
                          "made by loom::build can be exported (types: c, cuda, llvm");
  }
}

// A module of a type no code generator registered (a loaded library, say) is refused too.
class ForeignModule final : public runtime::ModuleNode {
 public:
  std::string type_key() const override { return "foreign"; }
  runtime::PackedFunc GetFunction(const std::string&) override { return {}; }
};

TEST(PackedAPI, ExportingAModuleOfAnUnknownTypeIsAnError) {
  try {
    ExportLibrary(runtime::Module(std::make_shared<ForeignModule>()), "/tmp/never.so");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    ExpectError(e.what(), "the module is a 'foreign' module; only modules made by loom::build");
  }
}

// A kind of this test's own, which no code generator serves.
LOOM_REGISTER_TARGET_KIND("test_no_codegen").Describe("a kind without a code generator");

TEST(PackedAPI, BuildingForAKindWithoutCodeGeneratorIsAnError) {
  IRModule empty;
  try {
    build(empty, Target::Parse("test_no_codegen"));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    ExpectError(e.what(), "build: no code generator for target kind 'test_no_codegen'");
    ExpectError(e.what(), "code generators exist for: c, cuda, llvm");
  }
}

}  // namespace
}  // namespace loom::target_test
