// tensorize onto GEMM intrinsics whose statements are extern calls, implemented here on host
// memory: tensorized vs untensorized vs naive results on random data, the lowered loop
// nests (the VTA tutorial's tensorize step), and the error of each kind of mismatch.
#include "loom/te/tensor_intrin.h"
#include "te_test_util.h"

namespace loom::te::test {
namespace {

const DataType kI8 = DataType::Int(8);

// Element `index` counted from the address a handle argument points to (address_of passes
// the byte offset as the handle's integer lane).
template <typename T>
T* At(const tir::Value& handle, int64_t index) {
  int64_t byte_offset = handle.ints.empty() ? 0 : handle.ints[0];
  return handle.memory->As<T>(byte_offset / int64_t{sizeof(T)} + index, 1);
}

// c[i, j] (= or +=) sum_k a[i, k] * b[j, k] over strided tiles:
// args (c, a, b, rows, cols, depth, c_stride, a_stride, b_stride).
template <typename In, typename Acc>
tir::ExternFunction GemmTile(bool reset) {
  return [=](const std::vector<tir::Value>& args, DataType) {
    int64_t rows = args[3].AsInt(), cols = args[4].AsInt(), depth = args[5].AsInt();
    int64_t cs = args[6].AsInt(), as = args[7].AsInt(), bs = args[8].AsInt();
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) {
        Acc acc = reset ? Acc(0) : *At<Acc>(args[0], i * cs + j);
        for (int64_t k = 0; k < depth; ++k) {
          acc += static_cast<Acc>(*At<In>(args[1], i * as + k)) *
                 static_cast<Acc>(*At<In>(args[2], j * bs + k));
        }
        *At<Acc>(args[0], i * cs + j) = acc;
      }
    }
    return tir::Value::Int(kI32, 0);
  };
}

// c[i, j] = 0 over a strided tile: args (c, rows, cols, c_stride).
template <typename Acc>
tir::Value GemmReset(const std::vector<tir::Value>& args, DataType) {
  for (int64_t i = 0; i < args[1].AsInt(); ++i) {
    for (int64_t j = 0; j < args[2].AsInt(); ++j) *At<Acc>(args[0], i * args[3].AsInt() + j) = 0;
  }
  return tir::Value::Int(kI32, 0);
}

tir::Interpreter GemmInterpreter() {
  tir::Interpreter interpreter;
  interpreter.RegisterExtern("gemm_f32", GemmTile<float, float>(true));
  interpreter.RegisterExtern("gemm_f32_reset", GemmReset<float>);
  interpreter.RegisterExtern("gemm_f32_update", GemmTile<float, float>(false));
  interpreter.RegisterExtern("gemm_i8", GemmTile<int8_t, int32_t>(true));
  interpreter.RegisterExtern("gemm_i8_reset", GemmReset<int32_t>);
  interpreter.RegisterExtern("gemm_i8_update", GemmTile<int8_t, int32_t>(false));
  return interpreter;
}

struct GemmIntrinOptions {
  int rows = 16, cols = 16, depth = 16;
  DataType in = kF32, acc = kF32;
  bool init = true, update = true;
  std::map<std::string, TensorIntrinBuffer> buffers = {};  // by tensor: "a", "b", "c"
};

// out[i, j] = sum_k acc(a[i, k]) * acc(b[j, k]), each statement one extern call.
TensorIntrin DeclGemm(const GemmIntrinOptions& o, const std::string& name) {
  Tensor a = placeholder({o.rows, o.depth}, o.in, "a");
  Tensor b = placeholder({o.cols, o.depth}, o.in, "b");
  IterVar k = reduce_axis(Range(0, o.depth), "k");
  Tensor c = compute({o.rows, o.cols}, [&](Var i, Var j) {
    return sum(cast(o.acc, a(i, k->var)) * cast(o.acc, b(j, k->var)), {k});
  }, "c");
  std::string fn = o.in == kI8 ? "gemm_i8" : "gemm_f32";
  return decl_tensor_intrin(c.op(), [=](const Array<Buffer>& in, const Array<Buffer>& out) {
    auto call = [&](const std::string& function) {
      return Evaluate(call_extern(kI32, function,
                                  {access_ptr(out[0]), access_ptr(in[0]), access_ptr(in[1]),
                                   o.rows, o.cols, o.depth, out[0]->strides[0],
                                   in[0]->strides[0], in[1]->strides[0]}));
    };
    TensorIntrinStmts stmts{call(fn), Stmt(), Stmt()};
    if (o.init) {
      stmts.reduce_init = Evaluate(call_extern(
          kI32, fn + "_reset", {access_ptr(out[0]), o.rows, o.cols, out[0]->strides[0]}));
    }
    if (o.update) stmts.reduce_update = call(fn + "_update");
    return stmts;
  }, name, o.buffers);
}

// C[i, j] = sum_k A[i, k] * B[j, k] in float32.
struct Matmul {
  int n, m, l;
  Tensor A, B, C;
  IterVar k;
  tir::HostArray a, b;
  Matmul(int n, int m, int l) : n(n), m(m), l(l) {
    A = placeholder({n, l}, kF32, "A");
    B = placeholder({m, l}, kF32, "B");
    k = reduce_axis(Range(0, l), "k");
    C = compute({n, m}, [&](Var i, Var j) { return sum(A(i, k->var) * B(j, k->var), {k}); }, "C");
    a = RandomArray(kF32, {n, l}, 11);
    b = RandomArray(kF32, {m, l}, 12);
  }
  tir::HostArray Run(const Schedule& s) const {
    tir::HostArray c(kF32, {n, m});
    GemmInterpreter().Run(lower(s, {A, B, C}, "matmul"), {a.Copy(), b.Copy(), c});
    return c;
  }
  tir::HostArray Reference() const {
    tir::HostArray c(kF32, {n, m});
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < m; ++j) {
        float acc = 0;
        for (int kk = 0; kk < l; ++kk) acc += a.GetFloat(i * l + kk) * b.GetFloat(j * l + kk);
        c.SetFloat(i * m + j, acc);
      }
    }
    return c;
  }
  // io, jo, ko outside; ii, ji, ki inside (16 each).
  std::array<IterVar, 6> Tile16(Schedule& s) const {
    auto [io, jo, ii, ji] = s[C].tile(s[C]->leaf_iter_vars[0], s[C]->leaf_iter_vars[1], 16, 16);
    auto [ko, ki] = s[C].split(s[C]->leaf_iter_vars[4], 16);
    s[C].reorder({io, jo, ko, ii, ji, ki});
    return {io, jo, ko, ii, ji, ki};
  }
};

TEST(TeTensorize, ReductionSplitOutsideUsesInitAndUpdate) {
  Matmul mm(32, 48, 64);
  Schedule plain = create_schedule({mm.C.op()});
  mm.Tile16(plain);
  Schedule s = create_schedule({mm.C.op()});
  auto loops = mm.Tile16(s);
  s[mm.C].tensorize(loops[3], DeclGemm({}, "gemm16"));
  PrimFunc f = lower(s, {mm.A, mm.B, mm.C}, "matmul");
  std::string text = ToScript(f);
  EXPECT_TRUE(LoopsNamed(f, "i.inner").empty()) << text;
  EXPECT_EQ(LoopsNamed(f, "k.outer").size(), 1u) << text;
  // The init sits outside the reduction loop, each call gets its tile's address (flattened
  // by StorageFlatten) and the row strides of the whole tensors.
  EXPECT_NE(text.find(R"(        for j.outer in range(3):
            T.evaluate(T.call_extern("int32", "gemm_f32_reset", T.address_of(C_1[i.outer * 768 + j.outer * 16]), 16, 16, 48))
            for k.outer in range(4):
                T.evaluate(T.call_extern("int32", "gemm_f32_update", T.address_of(C_1[i.outer * 768 + j.outer * 16]), T.address_of(A_1[i.outer * 1024 + k.outer * 16]), T.address_of(B_1[j.outer * 1024 + k.outer * 16]), 16, 16, 16, 48, 64, 64)))"),
            std::string::npos)
      << text;
  ExpectSame(mm.Run(s), mm.Run(plain), "tensorized vs untensorized");
  ExpectSame(mm.Run(s), mm.Reference(), "tensorized vs reference");
}

TEST(TeTensorize, ReadsOfABlockedLayoutMatchThroughDivAndMod) {
  // B stored as blocks of 16 rows, Bb[j / 16, j % 16, k]: inside a 16-column tile the block
  // index is the tile's and the row in it the intrinsic's, which tensorize proves from the
  // ranges of the intrinsic's axes.
  Matmul mm(32, 48, 64);
  Tensor Bb = placeholder({3, 16, 64}, kF32, "Bb");
  Tensor C = compute({32, 48}, [&](Var i, Var j) {
    return sum(mm.A(i, mm.k->var) * Bb(floordiv(j, 16), floormod(j, 16), mm.k->var), {mm.k});
  }, "C");
  Schedule s = create_schedule({C.op()});
  auto [io, jo, ii, ji] = s[C].tile(s[C]->leaf_iter_vars[0], s[C]->leaf_iter_vars[1], 16, 16);
  auto [ko, ki] = s[C].split(s[C]->leaf_iter_vars[4], 16);
  s[C].reorder({io, jo, ko, ii, ji, ki});
  s[C].tensorize(ii, DeclGemm({}, "gemm16"));
  PrimFunc f = lower(s, {mm.A, Bb, C}, "matmul");
  EXPECT_NE(ToScript(f).find("T.address_of(Bb_1[j.outer * 1024 + k.outer * 16])"),
            std::string::npos)
      << ToScript(f);
  tir::HostArray bb(kF32, {3, 16, 64}), c(kF32, {32, 48});
  for (int x = 0; x < 48 * 64; ++x) bb.SetFloat(x, mm.b.GetFloat(x));
  GemmInterpreter().Run(f, {mm.a.Copy(), bb, c});
  ExpectSame(c, mm.Reference(), "blocked B vs reference");
}

TEST(TeTensorize, WholeReductionInsideUsesTheBody) {
  Matmul mm(32, 16, 16);
  Schedule s = create_schedule({mm.C.op()});
  auto [io, ii] = s[mm.C].split(s[mm.C]->leaf_iter_vars[0], 16);
  s[mm.C].tensorize(ii, DeclGemm({.init = false, .update = false}, "gemm16"));
  PrimFunc f = lower(s, {mm.A, mm.B, mm.C}, "matmul");
  std::string text = ToScript(f);
  EXPECT_NE(text.find(R"(    for i.outer in range(2):
        T.evaluate(T.call_extern("int32", "gemm_f32", T.address_of(C_1[i.outer * 256]), T.address_of(A_1[i.outer * 256]), T.address_of(B_1[0]), 16, 16, 16, 16, 16, 16)))"),
            std::string::npos)
      << text;
  ExpectSame(mm.Run(s), mm.Reference(), "body only");
}

TEST(TeTensorize, WithoutInitTheBodyRunsAtTheFirstReductionStep) {
  Matmul mm(16, 32, 48);
  Schedule s = create_schedule({mm.C.op()});
  auto loops = mm.Tile16(s);
  s[mm.C].tensorize(loops[3], DeclGemm({.init = false}, "gemm16"));
  PrimFunc f = lower(s, {mm.A, mm.B, mm.C}, "matmul");
  std::string text = ToScript(f);
  EXPECT_NE(text.find("if k.outer == 0:"), std::string::npos) << text;
  ExpectSame(mm.Run(s), mm.Reference(), "body then update");
}

TEST(TeTensorize, SmallerIntrinsicOnRandomTilings) {
  // An 8x4x2 intrinsic under shuffled outer loops, some with a producer computed at the
  // innermost outer loop.
  std::mt19937 rng(5);
  for (int trial = 0; trial < 6; ++trial) {
    Matmul mm(16, 8, 12);
    Tensor A2 = compute({16, 12}, [&](Var i, Var j) { return mm.A(i, j) + 1.0f; }, "A2");
    Tensor C = compute({16, 8}, [&](Var i, Var j) {
      return sum(A2(i, mm.k->var) * mm.B(j, mm.k->var), {mm.k});
    }, "C2");
    Schedule s = create_schedule({C.op()});
    auto [io, jo, ii, ji] = s[C].tile(s[C]->leaf_iter_vars[0], s[C]->leaf_iter_vars[1], 8, 4);
    auto [ko, ki] = s[C].split(s[C]->leaf_iter_vars[4], 2);
    Array<IterVar> outer{io, jo, ko};
    std::shuffle(outer.begin(), outer.end(), rng);
    outer.insert(outer.end(), {ii, ji, ki});
    s[C].reorder(outer);
    if (trial % 2) s[A2].compute_at(s[C], outer[2]);
    s[C].tensorize(ii, DeclGemm({.rows = 8, .cols = 4, .depth = 2, .init = trial % 3 != 0},
                                "gemm842"));
    tir::HostArray c(kF32, {16, 8});
    GemmInterpreter().Run(lower(s, {mm.A, mm.B, C}, "f"), {mm.a.Copy(), mm.b.Copy(), c});
    tir::HostArray want(kF32, {16, 8});
    for (int i = 0; i < 16; ++i) {
      for (int j = 0; j < 8; ++j) {
        float acc = 0;
        for (int kk = 0; kk < 12; ++kk) {
          acc += (mm.a.GetFloat(i * 12 + kk) + 1) * mm.b.GetFloat(j * 12 + kk);
        }
        want.SetFloat(i * 8 + j, acc);
      }
    }
    ExpectSame(c, want, "trial " + std::to_string(trial));
  }
}

// c[i, j] += sum_k a[i, k] * b[j, k] on 16x16 tiles given as base pointers plus element
// offsets: args (c, c_offset, a, a_offset, b, b_offset, c_stride, a_stride, b_stride).
tir::Value GemmRawUpdate(const std::vector<tir::Value>& args, DataType) {
  int64_t co = args[1].AsInt(), ao = args[3].AsInt(), bo = args[5].AsInt();
  int64_t cs = args[6].AsInt(), as = args[7].AsInt(), bs = args[8].AsInt();
  for (int64_t i = 0; i < 16; ++i) {
    for (int64_t j = 0; j < 16; ++j) {
      float* c = At<float>(args[0], co + i * cs + j);
      for (int64_t k = 0; k < 16; ++k) {
        *c += *At<float>(args[2], ao + i * as + k) * *At<float>(args[4], bo + j * bs + k);
      }
    }
  }
  return tir::Value::Int(kI32, 0);
}

TEST(TeTensorize, BuffersBindThroughElementAccessesAndDataOffsetStrides) {
  // The body is loops over the intrinsic's buffers; the update passes each buffer's data,
  // elem_offset and strides, as TVM-style intrinsics do.
  Tensor a = placeholder({16, 16}, kF32, "a");
  Tensor b = placeholder({16, 16}, kF32, "b");
  IterVar k = reduce_axis(Range(0, 16), "k");
  Tensor c = compute({16, 16}, [&](Var i, Var j) { return sum(a(i, k->var) * b(j, k->var), {k}); },
                     "c");
  TensorIntrin intrin = decl_tensor_intrin(c.op(), [](const Array<Buffer>& in,
                                                      const Array<Buffer>& out) {
    Var i("i"), j("j"), kk("kk");
    auto loop = [](const Var& v, Stmt body) {
      return For(v, make_zero(kI32), make_const(kI32, int64_t{16}), ForKind::kSerial, body,
                 IterVar(), {});
    };
    Stmt accumulate = BufferStore(out[0],
                                  BufferLoad(out[0], {i, j}) +
                                      BufferLoad(in[0], {i, kk}) * BufferLoad(in[1], {j, kk}),
                                  {i, j});
    Stmt body = loop(i, loop(j, SeqStmt({BufferStore(out[0], make_const(kF32, 0.0), {i, j}),
                                         loop(kk, accumulate)})));
    Array<PrimExpr> args;
    for (const Buffer& buffer : {out[0], in[0], in[1]}) {
      args.push_back(buffer->data);
      args.push_back(buffer->elem_offset);
    }
    for (const Buffer& buffer : {out[0], in[0], in[1]}) args.push_back(buffer->strides[0]);
    return TensorIntrinStmts{body, Stmt(), Evaluate(call_extern(kI32, "gemm_raw_update", args))};
  }, "gemm_raw");
  Matmul mm(32, 48, 64);
  Schedule s = create_schedule({mm.C.op()});
  s[mm.C].tensorize(mm.Tile16(s)[3], intrin);
  tir::Interpreter interpreter = GemmInterpreter();
  interpreter.RegisterExtern("gemm_raw_update", GemmRawUpdate);
  tir::HostArray got(kF32, {32, 48});
  interpreter.Run(lower(s, {mm.A, mm.B, mm.C}, "matmul"), {mm.a.Copy(), mm.b.Copy(), got});
  ExpectSame(got, mm.Reference(), "loops body, raw-pointer update");
}

// The VTA tutorial's blocked GEMM (../shared/seeds/004_4a18f7cf4c5c77b6.txt): int8 inputs
// copied into on-chip buffers at the outer reduction loop, an int32 accumulator, and the
// 1x16x16 GEMM core as the intrinsic.
struct VtaGemm {
  static constexpr int kBatch = 1, kBlock = 16, kO = 1, kN = 2, kM = 3;
  Tensor A = placeholder({kO, kN, kBatch, kBlock}, kI8, "A");
  Tensor B = placeholder({kM, kN, kBlock, kBlock}, kI8, "B");
  Tensor A_buf = compute(A.shape(), [&](const Array<Var>& i) { return A(i); }, "A_buf");
  Tensor B_buf = compute(B.shape(), [&](const Array<Var>& i) { return B(i); }, "B_buf");
  IterVar ko = reduce_axis(Range(0, kN), "ko");
  IterVar ki = reduce_axis(Range(0, kBlock), "ki");
  Tensor C_buf = compute({kO, kM, kBatch, kBlock}, [&](Var bo, Var co, Var bi, Var ci) {
    return sum(cast(kI32, A_buf(bo, ko->var, bi, ki->var)) *
                   cast(kI32, B_buf(co, ko->var, ci, ki->var)),
               {ko, ki});
  }, "C_buf");
  Tensor C = compute(C_buf.shape(), [&](const Array<Var>& i) { return cast(kI8, C_buf(i)); }, "C");

  Schedule Scheduled() const {
    Schedule s = create_schedule({C.op()});
    s[A_buf].set_scope("local.inp_buffer");
    s[B_buf].set_scope("local.wgt_buffer");
    s[C_buf].set_scope("local.acc_buffer");
    s[A_buf].compute_at(s[C_buf], ko);
    s[B_buf].compute_at(s[C_buf], ko);
    s[A_buf].pragma(s[A_buf]->leaf_iter_vars[0], "dma_copy");
    s[B_buf].pragma(s[B_buf]->leaf_iter_vars[0], "dma_copy");
    s[C].pragma(s[C]->leaf_iter_vars[0], "dma_copy");
    const Array<IterVar>& axis = static_cast<const ComputeOpNode&>(*C_buf.op()).axis;
    s[C_buf].reorder({ko, axis[0], axis[1], axis[2], axis[3], ki});
    return s;
  }
};

TEST(TeTensorize, VtaTutorialTensorizeStepGolden) {
  VtaGemm v;
  Schedule plain = v.Scheduled();
  Schedule s = v.Scheduled();
  const Array<IterVar>& axis = static_cast<const ComputeOpNode&>(*v.C_buf.op()).axis;
  s[v.C_buf].tensorize(axis[2], DeclGemm({.rows = 1, .in = kI8, .acc = kI32}, "gemm"));
  PrimFunc f = lower(s, {v.A, v.B, v.C}, "main");
  // As in the tutorial: the accumulator reset before the outer reduction loop, the DMA
  // copies at ko, and one GEMM call per output block replacing the bi, ci and ki loops.
  EXPECT_EQ(ToScript(f), R"(@T.prim_func
def main(A: T.Buffer((1, 2, 1, 16), "int8"), B: T.Buffer((3, 2, 16, 16), "int8"), C: T.Buffer((1, 3, 1, 16), "int8")):
    C_buf_data = T.allocate([48], "int32", "local.acc_buffer")
    A_buf_data = T.allocate([16], "int8", "local.inp_buffer")
    B_buf_data = T.allocate([768], "int8", "local.wgt_buffer")
    for j.init in range(3):
        T.evaluate(T.call_extern("int32", "gemm_i8_reset", T.address_of(C_buf[j.init * 16]), 1, 16, 16))
    for ko in range(2):
        with T.attr(i, "pragma_dma_copy", 1):
            for l in range(16):
                A_buf[l] = A_1[ko * 16 + l]
        with T.attr(i_1, "pragma_dma_copy", 1):
            for i_1 in range(3):
                for k in range(16):
                    for l_1 in range(16):
                        B_buf[i_1 * 256 + k * 16 + l_1] = B_1[i_1 * 512 + ko * 256 + k * 16 + l_1]
        for j in range(3):
            T.evaluate(T.call_extern("int32", "gemm_i8_update", T.address_of(C_buf[j * 16]), T.address_of(A_buf[0]), T.address_of(B_buf[j * 256]), 1, 16, 16, 16, 16, 16))
    with T.attr(i_2, "pragma_dma_copy", 1):
        for j_1 in range(3):
            for l_2 in range(16):
                C_1[j_1 * 16 + l_2] = T.Cast("int8", C_buf[j_1 * 16 + l_2])
)");

  tir::HostArray a = RandomArray(kI8, {1, 2, 1, 16}, 7), b = RandomArray(kI8, {3, 2, 16, 16}, 8);
  tir::HostArray got(kI8, {1, 3, 1, 16}), want(kI8, {1, 3, 1, 16});
  GemmInterpreter().Run(f, {a.Copy(), b.Copy(), got});
  GemmInterpreter().Run(lower(plain, {v.A, v.B, v.C}, "main"), {a.Copy(), b.Copy(), want});
  ExpectSame(got, want, "tensorized vs untensorized");
  for (int co = 0; co < 3; ++co) {
    for (int ci = 0; ci < 16; ++ci) {
      int32_t acc = 0;
      for (int k = 0; k < 32; ++k) {
        acc += static_cast<int32_t>(a.GetInt((k / 16) * 16 + k % 16)) *
               static_cast<int32_t>(b.GetInt(((co * 2 + k / 16) * 16 + ci) * 16 + k % 16));
      }
      EXPECT_EQ(got.GetInt(co * 16 + ci), static_cast<int8_t>(acc)) << co << ", " << ci;
    }
  }
}

void ExpectError(const std::function<void()>& action, const std::string& expected) {
  try {
    action();
    FAIL() << "expected an error containing: " << expected;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
  }
}

// Tensorizes the 32x48x64 matmul after `schedule` and lowers it.
void LowerTensorized(const Matmul& mm, const TensorIntrin& intrin,
                     const std::function<IterVar(Schedule&)>& schedule) {
  Schedule s = create_schedule({mm.C.op()});
  IterVar at = schedule(s);
  s[mm.C].tensorize(at, intrin);
  lower(s, {mm.A, mm.B, mm.C}, "matmul");
}

TEST(TeTensorizeErrors, ExtentOfAnInnerLoopDiffers) {
  Matmul mm(32, 48, 64);
  ExpectError([&] {
    LowerTensorized(mm, DeclGemm({}, "gemm16"), [&](Schedule& s) {
      const Array<IterVar>& leaves = s[mm.C]->leaf_iter_vars;
      auto [io, jo, ii, ji] = s[mm.C].tile(leaves[0], leaves[1], 16, 8);
      auto [ko, ki] = s[mm.C].split(s[mm.C]->leaf_iter_vars[4], 16);
      s[mm.C].reorder({io, jo, ko, ii, ji, ki});
      return ii;
    });
  }, "tensorize of stage 'C' with intrinsic 'gemm16': axis 'j' takes 8 values inside the "
     "tensorized loops, but the intrinsic's axis 'j' has extent 16");
}

TEST(TeTensorizeErrors, ExpressionDiffers) {
  Matmul mm(32, 48, 64);
  Tensor C = compute({32, 48}, [&](Var i, Var j) {
    return sum(mm.A(i, mm.k->var) + mm.B(j, mm.k->var), {mm.k});
  }, "Cadd");
  Schedule s = create_schedule({C.op()});
  auto [io, jo, ii, ji] = s[C].tile(s[C]->leaf_iter_vars[0], s[C]->leaf_iter_vars[1], 16, 16);
  auto [ko, ki] = s[C].split(s[C]->leaf_iter_vars[4], 16);
  s[C].reorder({io, jo, ko, ii, ji, ki});
  s[C].tensorize(ii, DeclGemm({}, "gemm16"));
  ExpectError([&] { lower(s, {mm.A, mm.B, C}, "f"); },
              "tensorize of stage 'Cadd' with intrinsic 'gemm16': the expressions differ: "
              "inside the tensorized loops the stage reduces A[i.outer * 16 + i, k.outer * 16 + "
              "k] + B[j.outer * 16 + j, k.outer * 16 + k] but the intrinsic reduces a[i, k] * "
              "b[j, k]");
}

TEST(TeTensorizeErrors, ReductionAxisNotCovered) {
  Matmul mm(32, 48, 64);
  ExpectError([&] {
    LowerTensorized(mm, DeclGemm({}, "gemm16"), [&](Schedule& s) {
      auto loops = mm.Tile16(s);
      s[mm.C].reorder({loops[3], loops[4], loops[5], loops[2]});
      return loops[3];
    });
  }, "reduction axis 'k' takes 64 values inside the tensorized loops, but the intrinsic's "
     "reduction axis 'k' has extent 16");
}

TEST(TeTensorizeErrors, ReducerAndTypeAndUpdateMismatches) {
  Matmul mm(32, 48, 64);
  Tensor Cmax = compute({32, 48}, [&](Var i, Var j) {
    return max(mm.A(i, mm.k->var) * mm.B(j, mm.k->var), {mm.k});
  }, "Cmax");
  Schedule s = create_schedule({Cmax.op()});
  auto [io, ii] = s[Cmax].split(s[Cmax]->leaf_iter_vars[0], 16);
  auto [jo, ji] = s[Cmax].split(s[Cmax]->leaf_iter_vars[2], 16);
  auto [ko, ki] = s[Cmax].split(s[Cmax]->leaf_iter_vars[4], 16);
  s[Cmax].reorder({io, jo, ko, ii, ji, ki});
  s[Cmax].tensorize(ii, DeclGemm({}, "gemm16"));
  ExpectError([&] { lower(s, {mm.A, mm.B, Cmax}, "f"); },
              "tensorize of stage 'Cmax' with intrinsic 'gemm16': the reducers differ");

  ExpectError([&] {
    LowerTensorized(mm, DeclGemm({.in = kI8, .acc = kI32}, "gemm_i8"),
                    [&](Schedule& s2) { return mm.Tile16(s2)[3]; });
  }, "intrinsic 'gemm_i8': the reducers differ (the stage combines float32 values with x0 + "
     "y0, the intrinsic int32 values with x0 + y0)");

  ExpectError([&] {
    LowerTensorized(mm, DeclGemm({.update = false}, "gemm16"),
                    [&](Schedule& s2) { return mm.Tile16(s2)[3]; });
  }, "tensorize of stage 'C' with intrinsic 'gemm16': reduction loop 'k.outer' lies outside "
     "the tensorized loops, so the intrinsic must accumulate, but it declares no "
     "reduce_update");
}

TEST(TeTensorizeErrors, LoopStructureProblems) {
  Matmul mm(32, 48, 64);
  ExpectError([&] {
    LowerTensorized(mm, DeclGemm({}, "gemm16"), [&](Schedule& s) {
      auto loops = mm.Tile16(s);
      s[mm.C].fuse(loops[3], loops[4]);
      return s[mm.C]->leaf_iter_vars[3];
    });
  }, "runs over several axes of the stage (a fused loop)");

  Matmul odd(30, 48, 64);
  ExpectError([&] {
    LowerTensorized(odd, DeclGemm({}, "gemm16"), [&](Schedule& s) { return odd.Tile16(s)[3]; });
  }, "loop 'i.inner' needs the bound check");

  Tensor A2 = compute({32, 64}, [&](Var i, Var j) { return mm.A(i, j) * 2.0f; }, "A2");
  Tensor C = compute({32, 48}, [&](Var i, Var j) {
    return sum(A2(i, mm.k->var) * mm.B(j, mm.k->var), {mm.k});
  }, "C2");
  Schedule s = create_schedule({C.op()});
  auto [io, jo, ii, ji] = s[C].tile(s[C]->leaf_iter_vars[0], s[C]->leaf_iter_vars[1], 16, 16);
  auto [ko, ki] = s[C].split(s[C]->leaf_iter_vars[4], 16);
  s[C].reorder({io, jo, ko, ii, ji, ki});
  s[A2].compute_at(s[C], ji);
  s[C].tensorize(ii, DeclGemm({}, "gemm16"));
  ExpectError([&] { lower(s, {mm.A, mm.B, C}, "f"); },
              "tensorize of stage 'C2': stage 'A2' is computed at loop 'j.inner', which "
              "tensorize replaces; compute it at a loop outside 'i.inner'");
}

// An intrinsic that names a scope for a tensor takes only tiles of that scope; one with an
// offset factor only tiles that start at a multiple of it.
TEST(TeTensorizeErrors, TileInAnotherScopeOrOffTheIntrinsicsAlignment) {
  Matmul mm(32, 48, 64);
  auto lowered = [&](const GemmIntrinOptions& options) {
    Schedule s = create_schedule({mm.C.op()});
    s[mm.C].tensorize(mm.Tile16(s)[3], DeclGemm(options, "gemm16"));
    return s;
  };
  GemmIntrinOptions scoped;
  scoped.buffers["a"] = {"local.inp", 1};
  ExpectError([&] { lower(lowered(scoped), {mm.A, mm.B, mm.C}, "f"); },
              "tensorize: the intrinsic reads its tensor 'a' from scope 'local.inp', but the tile "
              "is in 'A', of scope 'global'; set_scope(\"local.inp\") on the stage of 'A'");
  // A's tiles start at io * 1024 + ko * 16: multiples of 16, not of 32.
  GemmIntrinOptions aligned16, aligned32;
  aligned16.buffers["a"] = {"global", 16};
  aligned32.buffers["a"] = {"global", 32};
  ExpectSame(mm.Run(lowered(aligned16)), mm.Reference(), "offset factor 16");
  ExpectError([&] { lower(lowered(aligned32), {mm.A, mm.B, mm.C}, "f"); },
              "tensorize: the intrinsic needs its tensor 'a' to start at a multiple of 32 "
              "elements of 'A' (its offset_factor), but the tile starts at element");
  GemmIntrinOptions unknown;
  unknown.buffers["z"] = {};
  ExpectError([&] { DeclGemm(unknown, "gemm16"); },
              "decl_tensor_intrin 'gemm16': buffers names 'z', which is neither an input nor an "
              "output of 'c'");
}

TEST(TeTensorizeErrors, PrimitiveAndDeclarationMisuse) {
  Matmul mm(32, 48, 64);
  TensorIntrin gemm = DeclGemm({}, "gemm16");
  Schedule s = create_schedule({mm.C.op()});
  auto loops = mm.Tile16(s);
  ExpectError([&] { s[mm.C].tensorize(s[mm.C]->leaf_iter_vars.size() ? mm.k : loops[0], gemm); },
              "tensorize of stage 'C' with intrinsic 'gemm16': 'k' is not a loop of the stage");
  s[mm.C].tensorize(loops[3], gemm);
  ExpectError([&] { s[mm.C].tensorize(loops[4], gemm); },
              "the stage is already tensorized at loop 'i.inner'");
  ExpectError([&] { s[mm.C].tensorize(loops[4], nullptr); },
              "tensorize of stage 'C': the intrinsic is undefined");
  Schedule resplit = create_schedule({mm.C.op()});
  IterVar ii = mm.Tile16(resplit)[3];
  resplit[mm.C].tensorize(ii, gemm);
  resplit[mm.C].split(ii, 4);
  ExpectError([&] { lower(resplit, {mm.A, mm.B, mm.C}, "f"); },
              "tensorize of stage 'C' with intrinsic 'gemm16': loop 'i.inner' was split or fused "
              "after tensorize");

  ExpectError([&] { decl_tensor_intrin(mm.A.op(), nullptr, "bad"); },
              "decl_tensor_intrin 'bad': the operation 'A' is not a compute");
  Tensor A2 = compute({32, 64}, [&](Var i, Var j) { return mm.A(i, j) * 2.0f; }, "A2");
  Tensor D = compute({32, 64}, [&](Var i, Var j) { return A2(i, j) + 1.0f; }, "D");
  auto builder = [](const Array<Buffer>&, const Array<Buffer>&) { return TensorIntrinStmts{}; };
  ExpectError([&] { decl_tensor_intrin(D.op(), builder, "bad"); },
              "decl_tensor_intrin 'bad': input 'A2' of 'D' is not a placeholder");
  ExpectError([&] { decl_tensor_intrin(A2.op(), builder, "bad"); },
              "decl_tensor_intrin 'bad': the builder returned no body");
  ExpectError([&] {
    decl_tensor_intrin(mm.C.op(), [](const Array<Buffer>& in, const Array<Buffer>& out) {
      Stmt call = Evaluate(call_extern(kI32, "f", {access_ptr(out[0]), in[1]->strides[0]}));
      return TensorIntrinStmts{call, call, call};
    }, "bad");
  }, "decl_tensor_intrin 'bad': reduce_init uses input 'B'; it runs before any input tile is "
     "chosen, so it may only set the outputs");
  ExpectError([&] { address_of(make_const(kI32, int64_t{1})); },
              "address_of: the argument must be a buffer element (BufferLoad), got 1");
}

}  // namespace
}  // namespace loom::te::test
