// call_llvm_pure_intrin (an LLVM intrinsic by name) and reinterpret between same-size types:
// compiled results against references, the LLVM IR, and the errors for an unknown name,
// mismatched types, and the interpreter, which cannot run LLVM intrinsics.
#include "loom/ir/expr_ops.h"
#include "loom/support/error.h"
#include "loom/tir/transform.h"
#include "target/codegen/llvm/llvm_module.h"
#include "target_test_util.h"

namespace loom::target_test {
namespace {

const DataType kU8 = DataType::UInt(8);
const DataType kI8 = DataType::Int(8);
const DataType kI32 = DataType::Int(32);
const DataType kI32x16 = kI32.with_lanes(16);

PrimExpr Lanes(int lanes) { return Ramp(make_zero(kI32), make_const(kI32, int64_t{1}), lanes); }

// C[0:16] = `value` of the buffers A (uint8[64]), B (int8[64]), C (int32[16]).
PrimFunc StoreToC(const std::function<PrimExpr(const Buffer&, const Buffer&, const Buffer&)>& value) {
  Buffer A = DeclBuffer({64}, kU8, "A"), B = DeclBuffer({64}, kI8, "B");
  Buffer C = DeclBuffer({16}, kI32, "C");
  return MakePrimFunc({A, B, C}, {}, BufferStore(C, value(A, B, C), {Lanes(16)}), "main");
}

// C += vpdpbusd: lane j adds the 4 products of A's bytes 4j..4j+3 (unsigned) with B's.
PrimExpr Vpdpbusd(const Buffer& A, const Buffer& B, const Buffer& C) {
  return call_llvm_pure_intrin(kI32x16, "llvm.x86.avx512.vpdpbusd.512",
                               {BufferLoad(C, {Lanes(16)}),
                                call_intrin(kI32x16, "reinterpret", {BufferLoad(A, {Lanes(64)})}),
                                call_intrin(kI32x16, "reinterpret", {BufferLoad(B, {Lanes(64)})})});
}

bool HostHasVnni() { return Target::Parse("llvm").HasFeature("avx512vnni"); }

std::string BuildError(const PrimFunc& f) {
  try {
    build(f, Target::Parse("llvm"));
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(LLVMIntrinsic, VpdpbusdComputesUnsignedBySignedDotProducts) {
  if (!HostHasVnni()) GTEST_SKIP() << "the host has no avx512vnni";
  tir::HostArray a = RandomArray(kU8, {64}, 1), b = RandomArray(kI8, {64}, 2);
  a.SetInt(0, 255);  // where treating A as signed would show
  b.SetInt(0, -100);
  tir::HostArray c = RandomArray(kI32, {16}, 3);
  std::vector<int64_t> want(16);
  for (int j = 0; j < 16; ++j) {
    want[j] = c.GetInt(j);
    for (int k = 0; k < 4; ++k) want[j] += a.GetInt(4 * j + k) * b.GetInt(4 * j + k);
  }
  CallWithArrays(build(StoreToC(Vpdpbusd), Target::Parse("llvm")), "main", {a, b, c});
  for (int j = 0; j < 16; ++j) EXPECT_EQ(c.GetInt(j), want[j]) << "lane " << j;
}

TEST(LLVMIntrinsic, OverloadedIntrinsicTakesItsTypesFromTheName) {
  // fshl(x, y, 8): the high 32 bits of (x:y) << 8.
  PrimFunc f = StoreToC([](const Buffer& A, const Buffer&, const Buffer& C) {
    PrimExpr x = BufferLoad(C, {Lanes(16)});
    PrimExpr y = call_intrin(kI32x16, "reinterpret", {BufferLoad(A, {Lanes(64)})});
    return call_llvm_pure_intrin(kI32x16, "llvm.fshl.v16i32",
                                 {x, y, Broadcast(make_const(kI32, int64_t{8}), 16)});
  });
  tir::HostArray a = RandomArray(kU8, {64}, 4), b = RandomArray(kI8, {64}, 5);
  tir::HostArray c = RandomArray(kI32, {16}, 6);
  std::vector<uint32_t> want(16);
  for (int j = 0; j < 16; ++j) {
    uint32_t y = 0;
    for (int k = 0; k < 4; ++k) y |= static_cast<uint32_t>(a.GetInt(4 * j + k)) << (8 * k);
    want[j] = (static_cast<uint32_t>(c.GetInt(j)) << 8) | (y >> 24);
  }
  CallWithArrays(build(f, Target::Parse("llvm")), "main", {a, b, c});
  for (int j = 0; j < 16; ++j) EXPECT_EQ(static_cast<uint32_t>(c.GetInt(j)), want[j]);
}

// The operand shapes of a VNNI kernel: 4 bytes of A broadcast as one int32, B's 64 bytes as
// 16 int32 -- compiled as bitcasts, bit-identical to the interpreter.
TEST(LLVMIntrinsic, ReinterpretBetweenSameSizeTypesIsABitcast) {
  PrimFunc f = StoreToC([](const Buffer& A, const Buffer& B, const Buffer&) {
    PrimExpr word = call_intrin(kI32, "reinterpret", {BufferLoad(A, {Lanes(4)})});
    PrimExpr bytes = call_intrin(kI8.with_lanes(64), "reinterpret",
                                 {call_intrin(kI32x16, "reinterpret", {BufferLoad(B, {Lanes(64)})})});
    return Broadcast(word, 16) + call_intrin(kI32x16, "reinterpret", {bytes});
  });
  ExpectMatchesInterpreter(f, {RandomArray(kU8, {64}, 7), RandomArray(kI8, {64}, 8)},
                           {tir::HostArray(kI32, {16})}, "reinterpret");
  IRModule module;
  module.Add("main", f);
  std::string ir = codegen::LLVMIRText(tir::transform::MakePackedAPI()(module),
                                       Target::Parse("llvm -opt-level=0"));
  EXPECT_NE(ir.find("bitcast <4 x i8>"), std::string::npos) << ir;
  EXPECT_NE(ir.find("bitcast <64 x i8>"), std::string::npos) << ir;
}

// vdpbf16ps declares <32 x bfloat> operands, which Loom has no LLVM value of: integer lanes of
// the same 512 bits are bitcast to them. Lanes of other widths are still an error.
TEST(LLVMIntrinsic, BFloatLanesArePassedAsIntegerLanesOfTheSameBits) {
  const DataType f32x16 = DataType::Float(32).with_lanes(16);
  auto dpbf16ps = [&](int lanes) {
    Buffer A = DeclBuffer({64}, kU8, "A"), B = DeclBuffer({64}, kU8, "B");
    Buffer C = DeclBuffer({16}, DataType::Float(32), "C");
    const DataType words = kI32.with_lanes(lanes);
    PrimExpr sums = call_llvm_pure_intrin(
        f32x16, "llvm.x86.avx512bf16.dpbf16ps.512",
        {BufferLoad(C, {Lanes(16)}),
         call_intrin(words, "reinterpret", {BufferLoad(A, {Lanes(4 * lanes)})}),
         call_intrin(words, "reinterpret", {BufferLoad(B, {Lanes(4 * lanes)})})});
    return MakePrimFunc({A, B, C}, {}, BufferStore(C, sums, {Lanes(16)}), "main");
  };
  const Target cooperlake = Target::Parse("llvm -mcpu=cooperlake");
  EXPECT_NO_THROW(build(dpbf16ps(16), cooperlake));
  std::string message;
  try {
    build(dpbf16ps(8), cooperlake);
  } catch (const Error& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("do not match the intrinsic"), std::string::npos) << message;
}

TEST(LLVMIntrinsic, UnknownNameIsAnErrorNamingIt) {
  PrimFunc f = StoreToC([](const Buffer&, const Buffer&, const Buffer& C) {
    return call_llvm_pure_intrin(kI32x16, "llvm.x86.avx512.vpdpbusd.513",
                                 {BufferLoad(C, {Lanes(16)})});
  });
  std::string message = BuildError(f);
  EXPECT_NE(message.find("'llvm.x86.avx512.vpdpbusd.513'"), std::string::npos) << message;
  EXPECT_NE(message.find("has no intrinsic of that name"), std::string::npos) << message;
}

TEST(LLVMIntrinsic, MismatchedTypesAreAnErrorGivingTheExpectedSignature) {
  PrimFunc f = StoreToC([](const Buffer& A, const Buffer& B, const Buffer& C) {
    // The bytes themselves instead of their int32 reinterpretation.
    return call_llvm_pure_intrin(kI32x16, "llvm.x86.avx512.vpdpbusd.512",
                                 {BufferLoad(C, {Lanes(16)}), BufferLoad(A, {Lanes(64)}),
                                  BufferLoad(B, {Lanes(64)})});
  });
  std::string message = BuildError(f);
  EXPECT_NE(message.find("'llvm.x86.avx512.vpdpbusd.512'"), std::string::npos) << message;
  EXPECT_NE(message.find("int32x16 from int32x16, uint8x64, int8x64"), std::string::npos)
      << message;
  EXPECT_NE(message.find("it takes <16 x i32> (<16 x i32>, <16 x i32>, <16 x i32>)"),
            std::string::npos)
      << message;

  PrimFunc wrong_suffix = StoreToC([](const Buffer&, const Buffer&, const Buffer& C) {
    PrimExpr x = BufferLoad(C, {Lanes(16)});
    return call_llvm_pure_intrin(kI32x16, "llvm.fshl.v8i32", {x, x, x});
  });
  message = BuildError(wrong_suffix);
  EXPECT_NE(message.find("'llvm.fshl.v8i32'"), std::string::npos) << message;
  EXPECT_NE(message.find("its name is 'llvm.fshl.v16i32'"), std::string::npos) << message;
}

TEST(LLVMIntrinsic, InterpreterRefusesNamingTheIntrinsic) {
  PrimFunc f = StoreToC(Vpdpbusd);
  tir::HostArray a(kU8, {64}), b(kI8, {64}), c(kI32, {16});
  try {
    tir::Interpreter().Run(f, {a, b, c});
    ADD_FAILURE() << "the interpreter ran an LLVM intrinsic";
  } catch (const Error& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("cannot run the LLVM intrinsic 'llvm.x86.avx512.vpdpbusd.512'"),
              std::string::npos) << message;
  }
}

}  // namespace
}  // namespace loom::target_test
