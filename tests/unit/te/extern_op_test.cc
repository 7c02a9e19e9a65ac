// Extern operations: a library call between compute stages, run by the interpreter with the
// call implemented on host memory, against naive references; and the schedule errors.
#include "loom/te/tensor_intrin.h"
#include "te_test_util.h"

namespace loom::te::test {
namespace {

// Element `index` counted from the address a handle argument points to (address_of passes
// the byte offset as the handle's integer lane).
float* FloatAt(const tir::Value& handle, int64_t index) {
  int64_t byte_offset = handle.ints.empty() ? 0 : handle.ints[0];
  return handle.memory->As<float>(byte_offset / int64_t{sizeof(float)} + index, 1);
}

// out[i] = x[i] + y[i] for i < n: args (out, x, y, n).
tir::Value VectorAdd(const std::vector<tir::Value>& args, DataType) {
  for (int64_t i = 0; i < args[3].AsInt(); ++i) {
    *FloatAt(args[0], i) = *FloatAt(args[1], i) + *FloatAt(args[2], i);
  }
  return tir::Value::Int(kI32, 0);
}

// c[n, m] = a[n, l] * b[l, m], row-major: args (c, a, b, n, l, m).
tir::Value Gemm(const std::vector<tir::Value>& args, DataType) {
  int64_t n = args[3].AsInt(), l = args[4].AsInt(), m = args[5].AsInt();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < m; ++j) {
      float acc = 0;
      for (int64_t k = 0; k < l; ++k) {
        acc += *FloatAt(args[1], i * l + k) * *FloatAt(args[2], k * m + j);
      }
      *FloatAt(args[0], i * m + j) = acc;
    }
  }
  return tir::Value::Int(kI32, 0);
}

std::vector<tir::HostArray> RunWithExterns(const PrimFunc& func,
                                           const std::vector<tir::HostArray>& inputs,
                                           const std::vector<std::vector<int64_t>>& output_shapes) {
  tir::Interpreter interpreter;
  interpreter.RegisterExtern("vector_add", VectorAdd);
  interpreter.RegisterExtern("gemm", Gemm);
  std::vector<tir::Argument> args(inputs.begin(), inputs.end());
  std::vector<tir::HostArray> outputs;
  for (const auto& shape : output_shapes) {
    outputs.emplace_back(kF32, shape);
    args.emplace_back(outputs.back());
  }
  interpreter.Run(func, args);
  return outputs;
}

Stmt CallVectorAdd(const Array<Buffer>& in, const Array<Buffer>& out) {
  return Evaluate(call_extern(kI32, "vector_add",
                              {access_ptr(out[0]), access_ptr(in[0]), access_ptr(in[1]),
                               out[0]->shape[0]}));
}

// D = (A * 2 +ext B) + 1: the extern reads an intermediate and is read by a compute.
struct AddPipeline {
  Tensor A = placeholder({24}, kF32, "A");
  Tensor B = placeholder({24}, kF32, "B");
  Tensor A2 = compute({24}, [&](Var i) { return A(i) * 2.0f; }, "A2");
  Tensor E = extern_op({24}, kF32, {A2, B}, CallVectorAdd, "E");
  Tensor D = compute({24}, [&](Var i) { return E(i) + 1.0f; }, "D");
  tir::HostArray a = RandomArray(kF32, {24}, 1), b = RandomArray(kF32, {24}, 2);

  tir::HostArray Reference() const {
    tir::HostArray out(kF32, {24});
    for (int i = 0; i < 24; ++i) out.SetFloat(i, a.GetFloat(i) * 2 + b.GetFloat(i) + 1);
    return out;
  }
};

TEST(TeExternOp, VectorAddBetweenComputeStagesMatchesReference) {
  AddPipeline p;
  Schedule s = create_schedule({p.D.op()});
  auto [io, ii] = s[p.D].split(s[p.D]->leaf_iter_vars[0], 8);
  s[p.D].vectorize(ii);
  PrimFunc f = lower(s, {p.A, p.B, p.D}, "add");
  ExpectSame(RunWithExterns(f, {p.a, p.b}, {{24}})[0], p.Reference(), "extern vector add");
}

TEST(TeExternOp, LoweredExternIsItsCallOnTheAllocatedBuffers) {
  AddPipeline p;
  Schedule s = create_schedule({p.D.op()});
  std::string text = ToScript(lower(s, {p.A, p.B, p.D}, "add"));
  // The intermediates are allocated whole (an extern reads and writes whole tensors) and
  // the call receives their first elements' addresses.
  EXPECT_NE(text.find("T.allocate([24], \"float32\", \"global\")"), std::string::npos) << text;
  EXPECT_NE(text.find("T.call_extern(\"int32\", \"vector_add\", T.address_of(E[0]), "
                      "T.address_of(A2[0]), T.address_of(B[0]), 24"),
            std::string::npos)
      << text;
}

TEST(TeExternOp, ExternOutputGemmOfComputedInputsMatchesReference) {
  Tensor A = placeholder({5, 7}, kF32, "A");
  Tensor B = placeholder({7, 3}, kF32, "B");
  Tensor A1 = compute({5, 7}, [&](Var i, Var j) { return A(i, j) - 1.0f; }, "A1");
  auto call_gemm = [](const Array<Buffer>& in, const Array<Buffer>& out) {
    return Evaluate(call_extern(kI32, "gemm", {access_ptr(out[0]), access_ptr(in[0]),
                                              access_ptr(in[1]), in[0]->shape[0],
                                              in[0]->shape[1], in[1]->shape[1]}));
  };
  Tensor C = extern_op({5, 3}, kF32, {A1, B}, call_gemm, "C");
  Schedule s = create_schedule({C.op()});
  tir::HostArray a = RandomArray(kF32, {5, 7}, 3), b = RandomArray(kF32, {7, 3}, 4);
  tir::HostArray got = RunWithExterns(lower(s, {A, B, C}, "gemm"), {a, b}, {{5, 3}})[0];
  tir::HostArray want(kF32, {5, 3});
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 3; ++j) {
      float acc = 0;
      for (int k = 0; k < 7; ++k) acc += (a.GetFloat(i * 7 + k) - 1) * b.GetFloat(k * 3 + j);
      want.SetFloat(i * 3 + j, acc);
    }
  }
  ExpectSame(got, want, "extern gemm");
}

TEST(TeExternOp, ProducerComputedAtItsConsumerStillSeesTheWholeExternOutput) {
  AddPipeline p;
  Schedule s = create_schedule({p.D.op()});
  auto [io, ii] = s[p.D].split(s[p.D]->leaf_iter_vars[0], 6);
  // A2 feeds the extern, which reads it whole at the root.
  PrimFunc f = lower(s, {p.A, p.B, p.D}, "add");
  ExpectSame(RunWithExterns(f, {p.a, p.b}, {{24}})[0], p.Reference(), "split consumer");
}

void ExpectError(const std::function<void()>& action, const std::string& expected) {
  try {
    action();
    FAIL() << "expected an error containing: " << expected;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
  }
}

TEST(TeExternOpErrors, DeclarationMistakesNameTheOperation) {
  Tensor A = placeholder({4}, kF32, "A");
  ExpectError([&] { extern_op({{4}}, {kF32, kF32}, {A}, CallVectorAdd, "E"); },
              "extern_op 'E': 1 output shapes but 2 dtypes");
  ExpectError([&] { extern_op({4}, kF32, {A, A}, CallVectorAdd, "E"); },
              "extern_op 'E': input 'A' is listed twice");
  ExpectError([&] {
    extern_op({4}, kF32, {A}, [](const Array<Buffer>&, const Array<Buffer>&) { return Stmt(); },
              "E");
  }, "extern_op 'E': the body builder returned no statement");
  ExpectError([&] { extern_op(Array<Array<PrimExpr>>{}, {}, {A}, CallVectorAdd, "E"); },
              "extern_op 'E': no outputs");
}

TEST(TeExternOpErrors, ScheduleRefusesLoopsAndAttachmentOfAnExternStage) {
  AddPipeline p;
  Schedule s = create_schedule({p.D.op()});
  IterVar d_axis = s[p.D]->leaf_iter_vars[0];
  ExpectError([&] { s[p.E].split(d_axis, 4); },
              "split of stage 'E': it is an extern operation, which has no loops to schedule");
  ExpectError([&] { s[p.E].vectorize(d_axis); },
              "vectorize of stage 'E': it is an extern operation");
  ExpectError([&] { s[p.E].compute_at(s[p.D], d_axis); },
              "compute_at of stage 'E' into 'D': an extern operation computes its outputs "
              "whole at the root");
  ExpectError([&] { s[p.E].compute_inline(); },
              "compute_inline of stage 'E': an extern operation computes its outputs whole");
  Tensor x = placeholder({4}, kF32, "x");
  Tensor y = compute({4}, [&](Var i) { return x(i) + 1.0f; }, "y");
  TensorIntrin add_one = decl_tensor_intrin(y.op(), [](const Array<Buffer>&, const Array<Buffer>&) {
    return TensorIntrinStmts{Evaluate(make_const(kI32, int64_t{0})), Stmt(), Stmt()};
  }, "add_one");
  ExpectError([&] { s[p.E].tensorize(d_axis, add_one); },
              "tensorize of stage 'E' with intrinsic 'add_one': only a compute has loops to "
              "tensorize");
}

TEST(TeExternOpErrors, InliningATensorAnExternReadsIsRefusedAtLowering) {
  AddPipeline p;
  Schedule s = create_schedule({p.D.op()});
  s[p.A2].compute_inline();
  ExpectError([&] { lower(s, {p.A, p.B, p.D}, "add"); },
              "compute_inline of stage 'A2': extern operation 'E' reads it through its buffer");
}

}  // namespace
}  // namespace loom::te::test
