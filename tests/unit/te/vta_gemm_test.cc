// The matrix multiplies of the VTA tutorials (../shared/seeds/004_4a18f7cf4c5c77b6.txt,
// "Simple GEMM" and "Matrix Multiply Blocking"), schedule step by step as printed there:
// each step's fully lowered function has the loop nest printed in the tutorial (same loop
// order and extents, dma_copy/alu pragmas in the same places, buffers in the same scopes;
// allocations hoisted to the top as StorageRewrite leaves them), and every step computes the
// int8 x int8 -> int32 product of a naive reference, before and after the TIR pipeline.
// Sizes: the tutorials' for the goldens; smaller ones for running.
#include <algorithm>
#include <functional>
#include <tuple>

#include "te_test_util.h"

namespace loom::te::test {
namespace {

const DataType kI8 = DataType::Int(8);

// Runs `schedule` on random int8 inputs of the given shapes (both forms, see RunFunc) and
// compares the int8 output with `reference` applied to the same inputs. With virtual threads
// only the lowered form has a meaning: InjectVirtualThread gives it one.
void ExpectMatchesReference(
    const Schedule& schedule, const Array<Tensor>& args,
    const std::vector<std::vector<int64_t>>& input_shapes, const std::vector<int64_t>& out_shape,
    const std::function<tir::HostArray(const std::vector<tir::HostArray>&)>& reference,
    bool virtual_threads, const std::string& what) {
  std::vector<tir::HostArray> inputs;
  for (size_t k = 0; k < input_shapes.size(); ++k) {
    inputs.push_back(RandomArray(kI8, input_shapes[k], 100 + static_cast<uint32_t>(k)));
  }
  PrimFunc f = virtual_threads ? lower(schedule, args, "f") : ScheduleToPrimFunc(schedule, args, "f");
  auto run = virtual_threads ? RunOnce : RunFunc;
  ExpectSame(run(f, inputs, {{kI8, out_shape}})[0], reference(inputs), what + "\n" + ToScript(f));
}

// ---- "Simple GEMM": C[0, co, 0, ci] = sum(A[0, ko, 0, ki] * B[co, ko, ci, ki]), copies of A
// and B staged in buffers, the product accumulated in int32 and cast back to int8.
struct SimpleGemm {
  int m, n;  // output and input channel blocks of 16
  Tensor A, B, A_buf, B_buf, C_buf, C;
  IterVar ko, ki;

  SimpleGemm(int out_blocks, int in_blocks) : m(out_blocks), n(in_blocks) {
    A = placeholder({1, n, 1, 16}, kI8, "A");
    B = placeholder({m, n, 16, 16}, kI8, "B");
    A_buf = compute({1, n, 1, 16}, [&](const Array<Var>& i) { return A(i); }, "A_buf");
    B_buf = compute({m, n, 16, 16}, [&](const Array<Var>& i) { return B(i); }, "B_buf");
    ko = reduce_axis(Range(0, n), "ko");
    ki = reduce_axis(Range(0, 16), "ki");
    C_buf = compute(
        {1, m, 1, 16},
        [&](Var bo, Var co, Var bi, Var ci) {
          return sum(cast(kI32, A_buf(bo, ko->var, bi, ki->var)) *
                         cast(kI32, B_buf(co, ko->var, ci, ki->var)),
                     {ko, ki});
        },
        "C_buf");
    C = compute({1, m, 1, 16}, [&](const Array<Var>& i) { return cast(kI8, C_buf(i)); }, "C");
  }

  // The schedule after `steps` of the tutorial: 1 = on-chip scopes, copies at ko and DMA
  // pragmas; 2 = ko moved outermost.
  Schedule Scheduled(int steps) const {
    Schedule s = create_schedule({C.op()});
    if (steps >= 1) {
      s[A_buf].set_scope("local.inp_buffer");
      s[B_buf].set_scope("local.wgt_buffer");
      s[C_buf].set_scope("local.acc_buffer");
      s[A_buf].compute_at(s[C_buf], ko);
      s[B_buf].compute_at(s[C_buf], ko);
      s[A_buf].pragma(OpAxis(A_buf, 0), "dma_copy");
      s[B_buf].pragma(OpAxis(B_buf, 0), "dma_copy");
      s[C].pragma(OpAxis(C, 0), "dma_copy");
    }
    if (steps >= 2) {
      s[C_buf].reorder({ko, OpAxis(C_buf, 0), OpAxis(C_buf, 1), OpAxis(C_buf, 2), OpAxis(C_buf, 3), ki});
    }
    return s;
  }

  tir::HostArray Reference(const std::vector<tir::HostArray>& in) const {
    tir::HostArray out(kI8, {1, m, 1, 16});
    for (int co = 0; co < m; ++co) {
      for (int ci = 0; ci < 16; ++ci) {
        int32_t acc = 0;
        for (int k = 0; k < n * 16; ++k) {
          acc += static_cast<int32_t>(in[0].GetFloat(k)) *
                 static_cast<int32_t>(in[1].GetFloat(((co * n + k / 16) * 16 + ci) * 16 + k % 16));
        }
        out.SetFloat(co * 16 + ci, static_cast<int8_t>(acc));
      }
    }
    return out;
  }

  void Check(int steps) const {
    ExpectMatchesReference(Scheduled(steps), {A, B, C}, {{1, n, 1, 16}, {m, n, 16, 16}},
                           {1, m, 1, 16}, [&](const auto& in) { return Reference(in); },
                           false, "simple GEMM step " + std::to_string(steps));
  }
};

TEST(TeVtaSimpleGemm, EveryStepMatchesTheReference) {
  SimpleGemm gemm(3, 2);
  for (int steps = 0; steps <= 2; ++steps) gemm.Check(steps);
}

// The tutorial's first listing (m = n = 16; bo and bi have extent 1 and disappear).
TEST(TeVtaSimpleGemm, DefaultScheduleGolden) {
  SimpleGemm g(16, 16);
  EXPECT_EQ(ToScript(lower(g.Scheduled(0), {g.A, g.B, g.C}, "main")), R"(@T.prim_func
def main(A: T.Buffer((1, 16, 1, 16), "int8"), B: T.Buffer((16, 16, 16, 16), "int8"), C: T.Buffer((1, 16, 1, 16), "int8")):
    A_buf_data = T.allocate([256], "int8", "global")
    B_buf_data = T.allocate([65536], "int8", "global")
    C_buf_data = T.allocate([256], "int32", "global")
    for j in range(16):
        for l in range(16):
            A_buf[j * 16 + l] = A_1[j * 16 + l]
    for i in range(16):
        for j_1 in range(16):
            for k in range(16):
                for l_1 in range(16):
                    B_buf[i * 4096 + j_1 * 256 + k * 16 + l_1] = B_1[i * 4096 + j_1 * 256 + k * 16 + l_1]
    for j_2 in range(16):
        for l_2 in range(16):
            C_buf[j_2 * 16 + l_2] = 0
            for ko in range(16):
                for ki in range(16):
                    C_buf[j_2 * 16 + l_2] = C_buf[j_2 * 16 + l_2] + T.Cast("int32", A_buf[ko * 16 + ki]) * T.Cast("int32", B_buf[j_2 * 4096 + ko * 256 + l_2 * 16 + ki])
    for j_3 in range(16):
        for l_3 in range(16):
            C_1[j_3 * 16 + l_3] = T.Cast("int8", C_buf[j_3 * 16 + l_3])
)");
}

// The copies of A and B sit inside ko under a dma_copy pragma, sized one block of 16; the
// accumulator and the buffers carry VTA's scopes; the output copy has its dma_copy pragma.
TEST(TeVtaSimpleGemm, OnChipBuffersAndDmaCopiesGolden) {
  SimpleGemm g(16, 16);
  EXPECT_EQ(ToScript(lower(g.Scheduled(1), {g.A, g.B, g.C}, "main")), R"(@T.prim_func
def main(A: T.Buffer((1, 16, 1, 16), "int8"), B: T.Buffer((16, 16, 16, 16), "int8"), C: T.Buffer((1, 16, 1, 16), "int8")):
    C_buf_data = T.allocate([256], "int32", "local.acc_buffer")
    A_buf_data = T.allocate([16], "int8", "local.inp_buffer")
    B_buf_data = T.allocate([16], "int8", "local.wgt_buffer")
    for j in range(16):
        for l in range(16):
            C_buf[j * 16 + l] = 0
            for ko in range(16):
                with T.attr(i, "pragma_dma_copy", 1):
                    for l_1 in range(16):
                        A_buf[l_1] = A_1[ko * 16 + l_1]
                with T.attr(i_1, "pragma_dma_copy", 1):
                    for l_2 in range(16):
                        B_buf[l_2] = B_1[j * 4096 + ko * 256 + l * 16 + l_2]
                for ki in range(16):
                    C_buf[j * 16 + l] = C_buf[j * 16 + l] + T.Cast("int32", A_buf[ki]) * T.Cast("int32", B_buf[ki])
    with T.attr(i_2, "pragma_dma_copy", 1):
        for j_1 in range(16):
            for l_3 in range(16):
                C_1[j_1 * 16 + l_3] = T.Cast("int8", C_buf[j_1 * 16 + l_3])
)");
}

// ko outermost: the accumulator is zeroed before it, and B's copy per ko covers every co.
TEST(TeVtaSimpleGemm, ReductionAxisReorderedOutwardGolden) {
  SimpleGemm g(16, 16);
  EXPECT_EQ(ToScript(lower(g.Scheduled(2), {g.A, g.B, g.C}, "main")), R"(@T.prim_func
def main(A: T.Buffer((1, 16, 1, 16), "int8"), B: T.Buffer((16, 16, 16, 16), "int8"), C: T.Buffer((1, 16, 1, 16), "int8")):
    C_buf_data = T.allocate([256], "int32", "local.acc_buffer")
    A_buf_data = T.allocate([16], "int8", "local.inp_buffer")
    B_buf_data = T.allocate([4096], "int8", "local.wgt_buffer")
    for j.init in range(16):
        for l.init in range(16):
            C_buf[j.init * 16 + l.init] = 0
    for ko in range(16):
        with T.attr(i, "pragma_dma_copy", 1):
            for l in range(16):
                A_buf[l] = A_1[ko * 16 + l]
        with T.attr(i_1, "pragma_dma_copy", 1):
            for i_1 in range(16):
                for k in range(16):
                    for l_1 in range(16):
                        B_buf[i_1 * 256 + k * 16 + l_1] = B_1[i_1 * 4096 + ko * 256 + k * 16 + l_1]
        for j in range(16):
            for l_2 in range(16):
                for ki in range(16):
                    C_buf[j * 16 + l_2] = C_buf[j * 16 + l_2] + T.Cast("int32", A_buf[ki]) * T.Cast("int32", B_buf[j * 256 + l_2 * 16 + ki])
    with T.attr(i_2, "pragma_dma_copy", 1):
        for j_1 in range(16):
            for l_3 in range(16):
                C_1[j_1 * 16 + l_3] = T.Cast("int8", C_buf[j_1 * 16 + l_3])
)");
}

// ---- "Matrix Multiply Blocking": res = clip(gemm(data, weight) >> 8, 0, 127) as int8, with
// the shift and clips as their own stages, blocked by 256 channels (16 blocks of 16).
struct BlockedGemm {
  int m, n, o_block, i_block;
  Tensor data, weight, data_buf, weight_buf, res_gemm, res_shr, res_max, res_min, res;
  IterVar ic, ic_tns;

  BlockedGemm(int out_blocks, int in_blocks, int out_tile, int in_tile)
      : m(out_blocks), n(in_blocks), o_block(out_tile), i_block(in_tile) {
    data = placeholder({1, n, 1, 16}, kI8, "data");
    weight = placeholder({m, n, 16, 16}, kI8, "weight");
    data_buf = compute({1, n, 1, 16}, [&](const Array<Var>& i) { return data(i); }, "data_buf");
    weight_buf = compute({m, n, 16, 16}, [&](const Array<Var>& i) { return weight(i); },
                         "weight_buf");
    ic = reduce_axis(Range(0, n), "ic");
    ic_tns = reduce_axis(Range(0, 16), "ic_tns");
    res_gemm = compute(
        {1, m, 1, 16},
        [&](Var bo, Var co, Var bi, Var ci) {
          return sum(cast(kI32, data_buf(bo, ic->var, bi, ic_tns->var)) *
                         cast(kI32, weight_buf(co, ic->var, ci, ic_tns->var)),
                     {ic, ic_tns});
        },
        "res_gem");
    res_shr = compute({1, m, 1, 16}, [&](const Array<Var>& i) {
      return call_intrin(kI32, "shift_right", {res_gemm(i), IntImm(kI32, 8)});
    },
                      "res_shr");
    res_max = compute({1, m, 1, 16}, [&](const Array<Var>& i) { return max(res_shr(i), 0); },
                      "res_max");
    res_min = compute({1, m, 1, 16}, [&](const Array<Var>& i) { return min(res_max(i), 127); },
                      "res_min");
    res = compute({1, m, 1, 16}, [&](const Array<Var>& i) { return cast(kI8, res_min(i)); },
                  "res");
  }

  // The schedule after `steps` of the tutorial: 1 = output tiled by o_block; 2 = the
  // intermediate stages computed per output tile; 3 = ic split by i_block; 4 = ic.outer
  // moved outermost in the GEMM; 5 = on-chip scopes, input copies per ic.outer, DMA
  // pragmas; 6 = ALU pragmas on the shift and clips; 7 = the output tiles split between two
  // virtual threads before everything else is attached (as the VTA convolution tutorial
  // does).
  // `thread_tag`: the virtual threads of step 7 ("vthread" as in the tutorial, or "cthread",
  // the co-processor's, whose threads own every buffer).
  Schedule Scheduled(int steps, const std::string& thread_tag = "vthread") const {
    Schedule s = create_schedule({res.op()});
    Stage r = s[res];
    IterVar b_out, b_inn, oc_out, oc_inn;
    if (steps >= 1) {
      std::tie(b_out, b_inn) = r.split(OpAxis(res, 0), 1);
      std::tie(oc_out, oc_inn) = r.split(OpAxis(res, 1), o_block);
      r.reorder({b_out, oc_out, b_inn, oc_inn});
    }
    if (steps >= 7) {
      IterVar tx;
      std::tie(oc_out, tx) = r.split(oc_out, 2);
      r.reorder({tx, b_out});
      r.bind(tx, thread_axis(thread_tag));
    }
    if (steps >= 2) {
      for (const Tensor& t : {res_gemm, res_shr, res_max, res_min}) s[t].compute_at(r, oc_out);
    }
    IterVar ic_out, ic_inn;
    Stage g = s[res_gemm];
    if (steps >= 3) std::tie(ic_out, ic_inn) = g.split(ic, i_block);
    if (steps >= 4) {
      g.reorder({ic_out, OpAxis(res_gemm, 0), OpAxis(res_gemm, 1), ic_inn, OpAxis(res_gemm, 2),
                 OpAxis(res_gemm, 3), ic_tns});
    }
    if (steps >= 5) {
      s[data_buf].set_scope("local.inp_buffer");
      s[weight_buf].set_scope("local.wgt_buffer");
      for (const Tensor& t : {res_gemm, res_shr, res_min, res_max}) {
        s[t].set_scope("local.acc_buffer");
      }
      s[data_buf].compute_at(g, ic_out);
      s[weight_buf].compute_at(g, ic_out);
      s[data_buf].pragma(OpAxis(data_buf, 0), "dma_copy");
      s[weight_buf].pragma(OpAxis(weight_buf, 0), "dma_copy");
      r.pragma(OpAxis(res, 2), "dma_copy");
    }
    if (steps >= 6) {
      for (const Tensor& t : {res_shr, res_min, res_max}) s[t].pragma(OpAxis(t, 0), "alu");
    }
    return s;
  }

  tir::HostArray Reference(const std::vector<tir::HostArray>& in) const {
    tir::HostArray out(kI8, {1, m, 1, 16});
    for (int co = 0; co < m; ++co) {
      for (int ci = 0; ci < 16; ++ci) {
        int32_t acc = 0;
        for (int k = 0; k < n * 16; ++k) {
          acc += static_cast<int32_t>(in[0].GetFloat(k)) *
                 static_cast<int32_t>(in[1].GetFloat(((co * n + k / 16) * 16 + ci) * 16 + k % 16));
        }
        out.SetFloat(co * 16 + ci, std::min(std::max(acc >> 8, 0), 127));
      }
    }
    return out;
  }

  void Check(int steps) const {
    ExpectMatchesReference(Scheduled(steps), {data, weight, res}, {{1, n, 1, 16}, {m, n, 16, 16}},
                           {1, m, 1, 16}, [&](const auto& in) { return Reference(in); },
                           steps >= 7, "blocked GEMM step " + std::to_string(steps));
  }
};

TEST(TeVtaBlockedGemm, EveryStepMatchesTheReference) {
  // 4 x 3 blocks of 16 channels, output tiles of 2 blocks, input tiles of 2 blocks (the last
  // one partial: 3 is not a multiple of 2).
  BlockedGemm gemm(4, 3, 2, 2);
  for (int steps = 0; steps <= 7; ++steps) gemm.Check(steps);
}

// With the co-processor's virtual threads every on-chip buffer gets a copy per thread (the
// input tile too, which "vthread" shares since both threads fill it alike), and the result is
// the same.
TEST(TeVtaBlockedGemm, CoprocessorThreadsOwnTheirBuffersAndMatchTheReference) {
  BlockedGemm gemm(4, 3, 2, 2);
  ASSERT_EQ(thread_axis("cthread")->iter_type, IterVarType::kVirtualThread);
  Schedule s = gemm.Scheduled(7, "cthread");
  ExpectMatchesReference(s, {gemm.data, gemm.weight, gemm.res}, {{1, 3, 1, 16}, {4, 3, 16, 16}},
                         {1, 4, 1, 16}, [&](const auto& in) { return gemm.Reference(in); }, true,
                         "blocked GEMM with cthread");
  std::string text = ToScript(lower(s, {gemm.data, gemm.weight, gemm.res}, "main"));
  for (const char* allocation : {"T.allocate([64], \"int8\", \"local.inp_buffer\")",
                                 "T.allocate([2048], \"int8\", \"local.wgt_buffer\")",
                                 "T.allocate([64], \"int32\", \"local.acc_buffer\")"}) {
    EXPECT_NE(text.find(allocation), std::string::npos) << allocation << " in\n" << text;
  }
  // Two threads of "vthread" share the input tile, which both fill alike.
  std::string shared = ToScript(lower(gemm.Scheduled(7), {gemm.data, gemm.weight, gemm.res}, "main"));
  EXPECT_NE(shared.find("T.allocate([32], \"int8\", \"local.inp_buffer\")"), std::string::npos)
      << shared;
}

// The tutorial's sizes: 1024 input and output channels, tiles of 256.
BlockedGemm TutorialSizes() { return BlockedGemm(64, 64, 16, 16); }

TEST(TeVtaBlockedGemm, DefaultScheduleGolden) {
  BlockedGemm g = TutorialSizes();
  EXPECT_EQ(ToScript(lower(g.Scheduled(0), {g.data, g.weight, g.res}, "main")), R"(@T.prim_func
def main(data: T.Buffer((1, 64, 1, 16), "int8"), weight: T.Buffer((64, 64, 16, 16), "int8"), res: T.Buffer((1, 64, 1, 16), "int8")):
    data_buf_data = T.allocate([1024], "int8", "global")
    weight_buf_data = T.allocate([1048576], "int8", "global")
    res_gem_data = T.allocate([1024], "int32", "global")
    res_shr_data = T.allocate([1024], "int32", "global")
    for j in range(64):
        for l in range(16):
            data_buf[j * 16 + l] = data_1[j * 16 + l]
    for i in range(64):
        for j_1 in range(64):
            for k in range(16):
                for l_1 in range(16):
                    weight_buf[i * 16384 + j_1 * 256 + k * 16 + l_1] = weight_1[i * 16384 + j_1 * 256 + k * 16 + l_1]
    for j_2 in range(64):
        for l_2 in range(16):
            res_gem[j_2 * 16 + l_2] = 0
            for ic in range(64):
                for ic_tns in range(16):
                    res_gem[j_2 * 16 + l_2] = res_gem[j_2 * 16 + l_2] + T.Cast("int32", data_buf[ic * 16 + ic_tns]) * T.Cast("int32", weight_buf[j_2 * 16384 + ic * 256 + l_2 * 16 + ic_tns])
    for j_3 in range(64):
        for l_3 in range(16):
            res_shr[j_3 * 16 + l_3] = T.shift_right(res_gem[j_3 * 16 + l_3], 8)
    for j_4 in range(64):
        for l_4 in range(16):
            res_max[j_4 * 16 + l_4] = T.max(res_shr[j_4 * 16 + l_4], 0)
    for j_5 in range(64):
        for l_5 in range(16):
            res_min[j_5 * 16 + l_5] = T.min(res_max[j_5 * 16 + l_5], 127)
    for j_6 in range(64):
        for l_6 in range(16):
            res_1[j_6 * 16 + l_6] = T.Cast("int8", res_min[j_6 * 16 + l_6])
)");
}

// The tutorial's last listing before tensorize: per output tile (i1.outer), the zeroed
// accumulator, per ic.outer the DMA copies of one block of data and of weights followed by
// the GEMM, then the shift and clips under alu pragmas and the DMA copy out along axis 2.
TEST(TeVtaBlockedGemm, OnChipBuffersDmaAndAluPragmasGolden) {
  BlockedGemm g = TutorialSizes();
  EXPECT_EQ(ToScript(lower(g.Scheduled(6), {g.data, g.weight, g.res}, "main")), R"(@T.prim_func
def main(data: T.Buffer((1, 64, 1, 16), "int8"), weight: T.Buffer((64, 64, 16, 16), "int8"), res: T.Buffer((1, 64, 1, 16), "int8")):
    res_gem_data = T.allocate([256], "int32", "local.acc_buffer")
    data_buf_data = T.allocate([256], "int8", "local.inp_buffer")
    weight_buf_data = T.allocate([65536], "int8", "local.wgt_buffer")
    res_shr_data = T.allocate([256], "int32", "local.acc_buffer")
    for j.outer in range(4):
        for j.init in range(16):
            for l.init in range(16):
                res_gem[j.init * 16 + l.init] = 0
        for ic.outer in range(4):
            with T.attr(i, "pragma_dma_copy", 1):
                for j in range(16):
                    for l in range(16):
                        data_buf[j * 16 + l] = data_1[ic.outer * 256 + j * 16 + l]
            with T.attr(i_1, "pragma_dma_copy", 1):
                for i_1 in range(16):
                    for j_1 in range(16):
                        for k in range(16):
                            for l_1 in range(16):
                                weight_buf[i_1 * 4096 + j_1 * 256 + k * 16 + l_1] = weight_1[j.outer * 262144 + i_1 * 16384 + ic.outer * 4096 + j_1 * 256 + k * 16 + l_1]
            for j_2 in range(16):
                for ic.inner in range(16):
                    for l_2 in range(16):
                        for ic_tns in range(16):
                            res_gem[j_2 * 16 + l_2] = res_gem[j_2 * 16 + l_2] + T.Cast("int32", data_buf[ic.inner * 16 + ic_tns]) * T.Cast("int32", weight_buf[j_2 * 4096 + ic.inner * 256 + l_2 * 16 + ic_tns])
        with T.attr(i_2, "pragma_alu", 1):
            for j_3 in range(16):
                for l_3 in range(16):
                    res_shr[j_3 * 16 + l_3] = T.shift_right(res_gem[j_3 * 16 + l_3], 8)
        with T.attr(i_3, "pragma_alu", 1):
            for j_4 in range(16):
                for l_4 in range(16):
                    res_max[j_4 * 16 + l_4] = T.max(res_shr[j_4 * 16 + l_4], 0)
        with T.attr(i_4, "pragma_alu", 1):
            for j_5 in range(16):
                for l_5 in range(16):
                    res_min[j_5 * 16 + l_5] = T.min(res_max[j_5 * 16 + l_5], 127)
        for j.inner in range(16):
            with T.attr(k_1, "pragma_dma_copy", 1):
                for l_6 in range(16):
                    res_1[j.outer * 256 + j.inner * 16 + l_6] = T.Cast("int8", res_min[j.inner * 16 + l_6])
)");
}

// Two virtual threads take alternate output tiles: each gets its own accumulator (twice the
// allocation) and their statements interleave inside the tile loop.
TEST(TeVtaBlockedGemm, VirtualThreadsGolden) {
  BlockedGemm g(4, 2, 1, 1);
  EXPECT_EQ(ToScript(ScheduleToPrimFunc(g.Scheduled(7), {g.data, g.weight, g.res}, "main")),
            R"(@T.prim_func
def main(data: T.Buffer((1, 2, 1, 16), "int8"), weight: T.Buffer((4, 2, 16, 16), "int8"), res: T.Buffer((1, 4, 1, 16), "int8")):
    with T.attr(T.iter_var(j.outer.inner, T.Range(0, 2), "VirtualThread", "vthread"), "virtual_thread", 2):
        for j.outer.outer in range(2):
            res_gem_data = T.allocate([1, 1, 1, 16], "int32", "local.acc_buffer")
            for l.init in range(16):
                res_gem[0, 0, 0, l.init] = 0
            for ic.outer in range(2):
                data_buf_data = T.allocate([1, 1, 1, 16], "int8", "local.inp_buffer")
                with T.attr(i, "pragma_dma_copy", 1):
                    for l in range(16):
                        data_buf[0, 0, 0, l] = data[0, ic.outer, 0, l]
                weight_buf_data = T.allocate([1, 1, 16, 16], "int8", "local.wgt_buffer")
                with T.attr(i_1, "pragma_dma_copy", 1):
                    for k in range(16):
                        for l_1 in range(16):
                            weight_buf[0, 0, k, l_1] = weight[j.outer.outer * 2 + j.outer.inner, ic.outer, k, l_1]
                for l_2 in range(16):
                    for ic_tns in range(16):
                        res_gem[0, 0, 0, l_2] = res_gem[0, 0, 0, l_2] + T.Cast("int32", data_buf[0, 0, 0, ic_tns]) * T.Cast("int32", weight_buf[0, 0, l_2, ic_tns])
            res_shr_data = T.allocate([1, 1, 1, 16], "int32", "local.acc_buffer")
            with T.attr(i_2, "pragma_alu", 1):
                for l_3 in range(16):
                    res_shr[0, 0, 0, l_3] = T.shift_right(res_gem[0, 0, 0, l_3], 8)
            res_max_data = T.allocate([1, 1, 1, 16], "int32", "local.acc_buffer")
            with T.attr(i_3, "pragma_alu", 1):
                for l_4 in range(16):
                    res_max[0, 0, 0, l_4] = T.max(res_shr[0, 0, 0, l_4], 0)
            res_min_data = T.allocate([1, 1, 1, 16], "int32", "local.acc_buffer")
            with T.attr(i_4, "pragma_alu", 1):
                for l_5 in range(16):
                    res_min[0, 0, 0, l_5] = T.min(res_max[0, 0, 0, l_5], 127)
            with T.attr(k_1, "pragma_dma_copy", 1):
                for l_6 in range(16):
                    res[0, j.outer.outer * 2 + j.outer.inner, 0, l_6] = T.Cast("int8", res_min[0, 0, 0, l_6])
)");
  EXPECT_EQ(ToScript(lower(g.Scheduled(7), {g.data, g.weight, g.res}, "main")), R"(@T.prim_func
def main(data: T.Buffer((1, 2, 1, 16), "int8"), weight: T.Buffer((4, 2, 16, 16), "int8"), res: T.Buffer((1, 4, 1, 16), "int8")):
    res_gem_data = T.allocate([32], "int32", "local.acc_buffer")
    data_buf_data = T.allocate([16], "int8", "local.inp_buffer")
    weight_buf_data = T.allocate([512], "int8", "local.wgt_buffer")
    res_shr_data = T.allocate([32], "int32", "local.acc_buffer")
    for j.outer.outer in range(2):
        for l.init in range(16):
            res_gem[l.init] = 0
            res_gem[l.init + 16] = 0
        for ic.outer in range(2):
            with T.attr(i, "pragma_dma_copy", 1):
                for l in range(16):
                    data_buf[l] = data_1[ic.outer * 16 + l]
            with T.attr(i_1, "pragma_dma_copy", 1):
                for k in range(16):
                    for l_1 in range(16):
                        weight_buf[k * 16 + l_1] = weight_1[j.outer.outer * 1024 + ic.outer * 256 + k * 16 + l_1]
                        weight_buf[k * 16 + l_1 + 256] = weight_1[j.outer.outer * 1024 + ic.outer * 256 + k * 16 + l_1 + 512]
            for l_2 in range(16):
                for ic_tns in range(16):
                    res_gem[l_2] = res_gem[l_2] + T.Cast("int32", data_buf[ic_tns]) * T.Cast("int32", weight_buf[l_2 * 16 + ic_tns])
                    res_gem[l_2 + 16] = res_gem[l_2 + 16] + T.Cast("int32", data_buf[ic_tns]) * T.Cast("int32", weight_buf[l_2 * 16 + ic_tns + 256])
        with T.attr(i_2, "pragma_alu", 1):
            for l_3 in range(16):
                res_shr[l_3] = T.shift_right(res_gem[l_3], 8)
                res_shr[l_3 + 16] = T.shift_right(res_gem[l_3 + 16], 8)
        with T.attr(i_3, "pragma_alu", 1):
            for l_4 in range(16):
                res_max[l_4] = T.max(res_shr[l_4], 0)
                res_max[l_4 + 16] = T.max(res_shr[l_4 + 16], 0)
        with T.attr(i_4, "pragma_alu", 1):
            for l_5 in range(16):
                res_min[l_5] = T.min(res_max[l_5], 127)
                res_min[l_5 + 16] = T.min(res_max[l_5 + 16], 127)
        with T.attr(k_1, "pragma_dma_copy", 1):
            for l_6 in range(16):
                res_1[j.outer.outer * 32 + l_6] = T.Cast("int8", res_min[l_6])
                res_1[j.outer.outer * 32 + l_6 + 16] = T.Cast("int8", res_min[l_6 + 16])
)");
}

}  // namespace
}  // namespace loom::te::test
