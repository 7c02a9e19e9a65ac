// InjectDma: the LOADs and STOREs of the tutorial's matrix multiply (one element, strided rows,
// a row of several elements), and the error of each copy that is not one LOAD or STORE.
#include <gtest/gtest.h>

#include "error_of.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"
#include "loom/te/lower.h"
#include "loom/te/schedule.h"
#include "loom/topi/transform.h"
#include "loom/vta/compiler/passes.h"
#include "prim_func.h"
#include "keep_sram_allocations.h"
#include "matrix_multiply.h"

namespace loom::vta {
namespace {

using loom::testing::ErrorOf;
using loom::testing::MakePrimFunc;

const DataType kI8 = DataType::Int(8);
const DataType kI32 = DataType::Int(32);

// The pad stage of a 3x3 convolution's input (14x14 pixels of 16 channels, padded by one on
// each side) as the copy into the input buffer: one LOAD of 14 rows of 14 elements, each
// padded by one element on every side.
TEST(VtaInjectDma, APadStageBecomesAPaddedLoad) {
  Environment env(VTAConfig::Default());
  te::Tensor data = te::placeholder({1, 14, 14, 16}, kI8, "data");
  te::Tensor padded = topi::pad(data, {0, 1, 1, 0}, {0, 1, 1, 0});
  te::Tensor out = te::compute(
      {1, 16, 16, 16}, [&](const Array<Var>& i) { return cast(kI32, padded(i)); }, "out");
  te::Schedule s = te::create_schedule({out.op()});
  s[padded].set_scope(Environment::kInpScope);
  s[padded].pragma(s[padded]->leaf_iter_vars[0], Environment::kDmaCopy);
  // `out` reads the buffer on the host: only lowering, not a whole VTA program.
  testing::KeepSramAllocations keep;
  std::string text = ToScript(lower(env, s, {data, out}, "main"));
  EXPECT_NE(text.find("T.call_extern(\"int32\", \"VTALoadBuffer2D\", T.call_extern(\"handle\", "
                      "\"VTATLSCommandHandle\"), data.data, 0, 14, 14, 14, 1, 1, 1, 1, 0, 2)"),
            std::string::npos)
      << text;
}

// The same pad stage copied per tile of 7 rows (the copy inside the loop over tiles): the
// first tile is padded above, the second below, so the rows' padding, count and start in DRAM
// are expressions of the tile.
TEST(VtaInjectDma, APadStageCopiedPerTileOfRowsHasTheTilesPadding) {
  Environment env(VTAConfig::Default());
  te::Tensor data = te::placeholder({1, 14, 14, 16}, kI8, "data");
  te::Tensor padded = topi::pad(data, {0, 1, 1, 0}, {0, 1, 1, 0});
  te::Tensor out = te::compute(
      {1, 14, 16, 16},
      [&](const Array<Var>& i) {
        return cast(kI32, padded(i) + padded(i[0], i[1] + 2, i[2], i[3]));
      },
      "out");
  te::Schedule s = te::create_schedule({out.op()});
  auto [tile, row] = s[out].split(s[out]->leaf_iter_vars[1], 7);
  s[padded].set_scope(Environment::kInpScope);
  s[padded].compute_at(s[out], tile);
  s[padded].pragma(s[padded]->leaf_iter_vars[0], Environment::kDmaCopy);
  testing::KeepSramAllocations keep;
  std::string text = ToScript(lower(env, s, {data, out}, "main"));
  const size_t call = text.find("VTALoadBuffer2D");
  ASSERT_NE(call, std::string::npos) << text;
  // Tile j: from row 7j - 1 (at least 0), 9 rows of which those above row 0 or below row 13 are
  // padding: 8 rows padded by one above for j = 0, by one below for j = 1.
  EXPECT_EQ(text.substr(call, text.find('\n', call) - call),
            "VTALoadBuffer2D\", T.call_extern(\"handle\", \"VTATLSCommandHandle\"), data.data, "
            "j.outer * 98 + T.max(1 - j.outer * 7, 0) * 14 - 14, 14, T.min(15 - j.outer * 7, 9) - "
            "T.max(1 - j.outer * 7, 0), 14, 1, T.max(1 - j.outer * 7, 0), 1, 9 - T.min(15 - "
            "j.outer * 7, 9), 0, 2))")
      << text;
}

// A LOAD into the accumulator that widens int8 values is an ACC_8BIT LOAD (memory type 5).
TEST(VtaInjectDma, AWideningCopyIntoTheAccumulatorLoadsEightBitValues) {
  Environment env(VTAConfig::Default());
  te::Tensor data = te::placeholder({4, 16}, kI8, "data");
  te::Tensor wide = te::compute(
      {4, 16}, [&](const Array<Var>& i) { return cast(kI32, data(i)); }, "wide");
  te::Tensor out = te::compute(
      {4, 16}, [&](const Array<Var>& i) { return wide(i) + 1; }, "out");
  te::Schedule s = te::create_schedule({out.op()});
  s[wide].set_scope(Environment::kAccScope);
  s[wide].pragma(s[wide]->leaf_iter_vars[0], Environment::kDmaCopy);
  testing::KeepSramAllocations keep;
  std::string text = ToScript(lower(env, s, {data, out}, "main"));
  EXPECT_NE(text.find("\"VTALoadBuffer2D\", T.call_extern(\"handle\", \"VTATLSCommandHandle\"), "
                      "data.data, 0, 4, 1, 4, 0, 0, 0, 0, 0, 5)"),
            std::string::npos)
      << text;
}

// The input tile A[0, ko] is one element (x 1, y 1, from element ko); the weight tile B[:, ko]
// is 4 rows of one element, 2 elements apart in DRAM (x 1, y 4, x_stride 2, from element ko);
// the output is one row of 4 elements. (FoldUopLoop has made the GEMM's loop over the 4 output
// blocks a hardware loop.)
// The tokens are the tutorial's: the loads of iteration ko > 0 wait for the GEMM of ko - 1, the
// GEMM for its loads, the STORE for the last GEMM.
TEST(VtaInjectDma, TheTutorialsCopiesBecomeLoadsAndStores) {
  example::TutorialGemm g(4, 2);
  std::string text = ToScript(lower(g.env, g.Scheduled(), {g.A, g.B, g.C}, "main"));
  const size_t loop = text.find("    for ko"), end = text.find("    T.evaluate(T.call_extern(\"int32\", \"VTASynchronize\"");
  EXPECT_EQ(text.substr(loop, end - loop), R"(    for ko in range(2):
        with T.attr("vta", "coproc_scope", 1):
            if ko != 0:
                T.evaluate(T.call_extern("int32", "VTADepPop", T.call_extern("handle", "VTATLSCommandHandle"), 2, 1))
            with T.attr("vta", "coproc_scope", 1):
                T.evaluate(T.call_extern("int32", "VTALoadBuffer2D", T.call_extern("handle", "VTATLSCommandHandle"), A.data, ko, 1, 1, 1, 0, 0, 0, 0, 0, 2))
            with T.attr("vta", "coproc_scope", 1):
                T.evaluate(T.call_extern("int32", "VTALoadBuffer2D", T.call_extern("handle", "VTATLSCommandHandle"), B.data, ko, 1, 4, 2, 0, 0, 0, 0, 0, 1))
            T.evaluate(T.call_extern("int32", "VTADepPush", T.call_extern("handle", "VTATLSCommandHandle"), 1, 2))
        with T.attr("vta", "coproc_scope", 2):
            T.evaluate(T.call_extern("int32", "VTADepPop", T.call_extern("handle", "VTATLSCommandHandle"), 1, 2))
            with T.attr("vta", "coproc_scope", 2):
                with T.attr("vta", "coproc_uop_scope", "VTAPushGEMMOp"):
                    T.evaluate(T.call_extern("int32", "VTAUopLoopBegin", 4, 1, 0, 1))
                    T.evaluate(T.call_extern("int32", "VTAUopPush", 0, 0, 0, 0, 0, 0, 0, 0))
                    T.evaluate(T.call_extern("int32", "VTAUopLoopEnd"))
            if ko != 1:
                T.evaluate(T.call_extern("int32", "VTADepPush", T.call_extern("handle", "VTATLSCommandHandle"), 2, 1))
    with T.attr("vta", "coproc_scope", 2):
        T.evaluate(T.call_extern("int32", "VTADepPush", T.call_extern("handle", "VTATLSCommandHandle"), 2, 3))
    with T.attr("vta", "coproc_scope", 3):
        T.evaluate(T.call_extern("int32", "VTADepPop", T.call_extern("handle", "VTATLSCommandHandle"), 2, 3))
        with T.attr("vta", "coproc_scope", 3):
            T.evaluate(T.call_extern("int32", "VTAStoreBuffer2D", T.call_extern("handle", "VTATLSCommandHandle"), 0, 4, C.data, 0, 4, 1, 4))
)");
}

// Copies written directly in TIR: an input-buffer allocation placed at element 5, and DRAM
// buffers of int8 and int32.
class VtaInjectDmaNest : public ::testing::Test {
 protected:
  struct Loop {
    Var var;
    int64_t extent;
  };
  // `store` under the loops (outermost first) and a dma_copy pragma, inside the on-chip
  // allocation of `chip`.
  Stmt Copy(const std::vector<Loop>& loops, Stmt store, const Buffer& chip) const {
    for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
      store = For(it->var, 0, make_const(kI32, it->extent), ForKind::kSerial, store, IterVar(), {});
    }
    Stmt copy = AttrStmt(IterVar(Range(), Var("i"), IterVarType::kDataPar, ""),
                         std::string("pragma_") + Environment::kDmaCopy,
                         make_const(kI32, int64_t{1}), store);
    Stmt allocate = Allocate(chip->data, chip->dtype, chip->shape, const_true(), copy, chip->scope);
    return AttrStmt(chip->data, kSramBase, make_const(kI32, int64_t{5}), allocate);
  }
  std::string Inject(Stmt body) const {
    std::string text = ToScript(InjectDma(env)(MakePrimFunc({a8, a32, out}, {}, body)));
    return text.substr(text.find('\n', text.find("def ")) + 1);
  }

  Environment env{VTAConfig::Default()};
  Buffer a8 = DeclBuffer({4096}, kI8, "A");
  Buffer a32 = DeclBuffer({4096}, kI32, "A32");
  Buffer out = DeclBuffer({4096}, kI8, "Out");
  Buffer inp = DeclBuffer({256}, kI8, "Inp", Environment::kInpScope);
  Buffer acc = DeclBuffer({256}, kI32, "Acc", Environment::kAccScope);
  Var y{"y"}, x{"x"}, l{"l"};
};

// Two rows of 3 elements, 5 elements apart in DRAM, from DRAM element 2, into the buffer at
// element 5 + 1; then an accumulator load (on the compute queue) and a store.
TEST_F(VtaInjectDmaNest, RowsAndStridesOfLoadsAndStores) {
  Stmt load = BufferStore(inp, BufferLoad(a8, {y * 80 + l + 32}), {y * 48 + l + 16});
  EXPECT_EQ(Inject(Copy({{y, 2}, {l, 48}}, load, inp)),
            R"(    with T.attr(Inp, "vta_sram_base", 5):
        Inp = T.allocate([256], "int8", "local.inp_buffer")
        with T.attr("vta", "coproc_scope", 1):
            T.evaluate(T.call_extern("int32", "VTALoadBuffer2D", T.call_extern("handle", "VTATLSCommandHandle"), A.data, 2, 3, 2, 5, 0, 0, 0, 0, 6, 2))
)");
  Stmt acc_load = BufferStore(acc, BufferLoad(a32, {x * 16 + l}), {x * 16 + l});
  EXPECT_NE(Inject(Copy({{x, 4}, {l, 16}}, acc_load, acc))
                .find("VTALoadBuffer2D\", T.call_extern(\"handle\", \"VTATLSCommandHandle\"), "
                      "A32.data, 0, 4, 1, 4, 0, 0, 0, 0, 5, 3"),
            std::string::npos);
  Stmt store = BufferStore(out, Cast(kI8, BufferLoad(acc, {y * 16 + l})), {y * 64 + l});
  EXPECT_NE(Inject(Copy({{y, 3}, {l, 16}}, store, acc))
                .find("with T.attr(\"vta\", \"coproc_scope\", 3):\n            "
                      "T.evaluate(T.call_extern(\"int32\", \"VTAStoreBuffer2D\", "
                      "T.call_extern(\"handle\", \"VTATLSCommandHandle\"), 5, 4, Out.data, 0, 1, "
                      "3, 4))"),
            std::string::npos);
}

// Padding rows only: 2 rows of one element, 3 elements apart in DRAM, with an empty row
// before and after; the DRAM side starts at the first row copied.
TEST_F(VtaInjectDmaNest, PaddedRowsOfOneElement) {
  PrimExpr inside = LE(make_const(kI32, int64_t{1}), y) && LT(y, make_const(kI32, int64_t{3}));
  PrimExpr value =
      Select(inside, BufferLoad(a8, {(y - 1) * 48 + l + 64}), make_const(kI8, int64_t{0}));
  EXPECT_NE(Inject(Copy({{y, 4}, {l, 16}}, BufferStore(inp, value, {y * 16 + l}), inp))
                .find("A.data, 4, 1, 2, 3, 0, 1, 0, 1, 5, 2)"),
            std::string::npos);
}

TEST_F(VtaInjectDmaNest, CopiesThatAreNoLoadOrStoreAreErrors) {
  auto error = [&](const std::vector<Loop>& loops, Stmt store, const Buffer& chip) {
    std::string message = ErrorOf([&] { Inject(Copy(loops, store, chip)); });
    return message.substr(0, message.find("; in\n"));
  };
  EXPECT_EQ(
      error({{x, 16}, {l, 16}}, BufferStore(inp, BufferLoad(a8, {l * 16 + x}), {x * 16 + l}), inp),
      "VTA dma_copy: the innermost loops contiguous on both sides copy 1 values, not a "
      "whole number of local.inp_buffer elements of 16 values");
  // A padded read clamped tighter than its condition (rows 1 to 14 read rows up to 5): the
  // clamp acts inside the interior, so it is no pad clamp to drop, and the read is no LOAD.
  const PrimExpr row = min(max(x - 1, 0), 5);
  EXPECT_EQ(error({{x, 16}, {l, 16}},
                  BufferStore(inp,
                              Select(1 <= x && x < 15, BufferLoad(a8, {row * 16 + l}),
                                     make_const(kI8, int64_t{0})),
                              {x * 16 + l}),
                  inp),
            "VTA dma_copy: index T.min(x - 1, 5) * 16 + l is not linear in the loops");
  EXPECT_EQ(
      error({{y, 2}, {x, 2}, {l, 16}},
            BufferStore(inp, BufferLoad(a8, {y * 1024 + x * 128 + l}), {y * 32 + x * 16 + l}), inp),
      "VTA dma_copy: the copy is not a 2-D pattern: after the rows, 2 loops remain that do "
      "not continue each other");
  EXPECT_EQ(
      error({{y, 2}, {l, 16}}, BufferStore(inp, BufferLoad(a8, {y * 16 + l}), {y * 32 + l}), inp),
      "VTA dma_copy: the rows must follow each other on chip (the on-chip side of a LOAD or "
      "STORE is contiguous)");
  EXPECT_EQ(error({{l, 16}}, BufferStore(inp, BufferLoad(a8, {l + 8}), {l}), inp),
            "VTA dma_copy: the copy starts at value 8 on the DRAM side, which is not provably a "
            "whole number of 16-value elements");
  EXPECT_EQ(error({{l, 16}}, BufferStore(inp, Cast(kI8, BufferLoad(a32, {l})), {l}), inp),
            "VTA dma_copy: a LOAD copies values unchanged, or widens int8 values into the "
            "accumulator; the cast to int8 needs the ALU");
  EXPECT_EQ(error({{l, 16}}, BufferStore(out, BufferLoad(inp, {l}), {l}), inp),
            "VTA dma_copy: only the accumulator buffer can be stored to DRAM, not "
            "local.inp_buffer");
  EXPECT_EQ(error({{l, 16}}, BufferStore(out, BufferLoad(a8, {l}), {l}), inp),
            "VTA dma_copy: neither buffer is in an on-chip scope (set_scope the stage copied into "
            "or out of)");
  PrimExpr padded =
      call_intrin(kI8, "if_then_else", {l < 8, BufferLoad(a8, {l}), make_const(kI8, int64_t{0})});
  EXPECT_EQ(error({{l, 16}}, BufferStore(inp, padded, {l}), inp),
            "VTA dma_copy: a padded copy's innermost loops must copy exactly one 16-value "
            "element, unpadded and contiguous on both sides; padding applies to whole elements");
  PrimExpr nonzero = call_intrin(
      kI8, "if_then_else", {x < 8, BufferLoad(a8, {x * 16 + l}), make_const(kI8, int64_t{1})});
  EXPECT_EQ(error({{x, 4}, {l, 16}}, BufferStore(inp, nonzero, {x * 16 + l}), inp),
            "VTA dma_copy: VTA pads with zeros, not T.int8(1)");
  EXPECT_EQ(error({{l, 16}}, BufferStore(inp, BufferLoad(a8, {l * l}), {l}), inp),
            "VTA dma_copy: index l * l is not linear in the loops");
}

}  // namespace
}  // namespace loom::vta
