// Scheduling a matrix multiply step by step, the way one tunes GEMM for a CPU.
//
// The algorithm, C = A x B, is written once and never changes; each step only changes the
// schedule, i.e. the loop structure lowering builds. After every step the program prints the
// lowered IR and runs it with the TIR interpreter on random inputs, comparing the result
// with a naive C++ matmul. It exits non-zero if any step computes a different result.
//
//   gemm_schedule [N] [--print-only]
//
// N (a multiple of 32, default 64) is the size of the square matrices. The schedule is the
// one you would use for N = 1024; only the loop extents change with N. The interpreter runs
// every loop serially, one element at a time, so it shows that a schedule is *correct*, not
// that it is fast: use --print-only to read the IR of a large N without running it.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"
#include "loom/te/lower.h"
#include "loom/tir/interpreter.h"

namespace {

using namespace loom;
using namespace loom::te;

// The block of C one tile computes (32 x 32 floats = 4 KiB: it stays in L1 while the tile
// is being accumulated) and how many reduction steps run per block of k.
constexpr int kBlock = 32;
constexpr int kReduceFactor = 4;
constexpr long kMaxSize = 32768;
// float32 sums of N products of values in [-1, 1] in a different order than the reference
// differ by far less than this.
constexpr double kTolerance = 1e-3;

// C[i, j] = sum over k of A[i, k] * B[k, j]. When `packed` is set, B is first copied into
// B_packed[j / 32, k, j % 32] (one contiguous K x 32 panel per block of columns) and C reads
// the panel instead of B.
struct Matmul {
  Tensor A, B, B_packed, C;
  IterVar k;
};

Matmul MakeMatmul(int n, bool packed) {
  const DataType f32 = DataType::Float(32);
  Matmul m;
  m.A = placeholder({n, n}, f32, "A");
  m.B = placeholder({n, n}, f32, "B");
  m.k = reduce_axis(Range(0, n), "k");
  if (!packed) {
    m.C = compute({n, n}, [&](Var i, Var j) { return sum(m.A(i, m.k->var) * m.B(m.k->var, j), {m.k}); },
                  "C");
    return m;
  }
  m.B_packed = compute({n / kBlock, n, kBlock},
                       [&](Var jo, Var k, Var ji) { return m.B(k, jo * kBlock + ji); }, "B_packed");
  m.C = compute({n, n},
                [&](Var i, Var j) {
                  PrimExpr b = m.B_packed(floordiv(j, kBlock), m.k->var, floormod(j, kBlock));
                  return sum(m.A(i, m.k->var) * b, {m.k});
                },
                "C");
  return m;
}

// The loops of C after blocking: xo, yo pick a 32 x 32 block of C, ko a slice of 4 steps
// of the reduction, and xi, ki, yi walk inside them. The IR prints them as i.outer,
// j.outer, k.outer, i.inner, k.inner, j.inner.
struct Blocked {
  Schedule s;
  IterVar xo, yo, ko, xi, ki, yi;
};

Blocked Block(const Matmul& m) {
  Blocked b;
  b.s = create_schedule({m.C.op()});
  Stage c = b.s[m.C];
  auto [xo, yo, xi, yi] = c.tile(c->leaf_iter_vars[0], c->leaf_iter_vars[1], kBlock, kBlock);
  auto [ko, ki] = c.split(m.k, kReduceFactor);
  b.xo = xo, b.yo = yo, b.ko = ko, b.xi = xi, b.ki = ki, b.yi = yi;
  c.reorder({xo, yo, ko, ki, xi, yi});
  return b;
}

// (0) The default schedule: the loops of the definition, i, j, then k innermost. The
// innermost loop walks B down a column, a new cache line every iteration, and once N is
// large nothing of B is still in cache when the next column starts.
Schedule DefaultSchedule(const Matmul& m) { return create_schedule({m.C.op()}); }

// (1) Blocking: compute C one 32 x 32 block at a time, so the rows of A and the columns of
// B a block reads are reused from cache while the block is in progress.
Schedule Blocking(const Matmul& m) { return Block(m).s; }

// (2) Vectorization: the innermost loop, yi (j.inner), runs over 32 consecutive columns of C and B;
// marked vectorized, it becomes SIMD instructions (8 floats per AVX2 instruction).
Schedule Vectorization(const Matmul& m) {
  Blocked b = Block(m);
  b.s[m.C].vectorize(b.yi);
  return b.s;
}

// (3) Loop permutation: with ki outside xi, the inner loops touch 32 rows of C and 4 rows of
// B for every step of ki; with xi outside ki, one row of C (the vector being accumulated)
// stays in registers while the 4 rows of B stream past it.
Blocked Permuted(const Matmul& m) {
  Blocked b = Block(m);
  b.s[m.C].reorder({b.xo, b.yo, b.ko, b.xi, b.ki, b.yi});
  b.s[m.C].vectorize(b.yi);
  return b;
}
Schedule LoopPermutation(const Matmul& m) { return Permuted(m).s; }

// (4) Array packing: B[k, yo * 32 + yi] jumps N floats for every step of k. Copying the
// K x 32 panel of B that a block reads into contiguous memory (B_packed), right before the
// block uses it, makes every access of the inner loops sequential. Bound inference sizes
// the copy to the one panel the block reads, [1, N, 32]. The copy is redone for every block
// of rows (xo), which costs 1/32 of the multiply-adds. (The packing loops print as j and k:
// te names a compute's axes i, j, k by position.)
Blocked Packed(const Matmul& m) {
  Blocked b = Permuted(m);
  Stage packing = b.s[m.B_packed];
  packing.compute_at(b.s[m.C], b.yo);
  packing.vectorize(packing->leaf_iter_vars[2]);  // ji: 32 consecutive floats of a row of B
  return b;
}
Schedule ArrayPacking(const Matmul& m) { return Packed(m).s; }

// (5) Parallelism: blocks of rows of C are independent, so the outermost loop is spread over
// the cores. Each iteration packs into its own B_packed, allocated inside the loop.
Schedule Parallel(const Matmul& m) {
  Blocked b = Packed(m);
  b.s[m.C].parallel(b.xo);
  return b.s;
}

tir::HostArray RandomMatrix(int n, uint32_t seed) {
  tir::HostArray a(DataType::Float(32), {n, n});
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t i = 0; i < n * n; ++i) a.SetFloat(i, dist(rng));
  return a;
}

// The reference: the textbook triple loop, in plain C++.
std::vector<float> NaiveMatmul(const tir::HostArray& a, const tir::HostArray& b, int n) {
  std::vector<float> c(n * n, 0.0f);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int64_t k = 0; k < n; ++k) acc += a.GetFloat(i * n + k) * b.GetFloat(k * n + j);
      c[i * n + j] = acc;
    }
  }
  return c;
}

struct Step {
  const char* title;
  bool packed;
  Schedule (*schedule)(const Matmul&);
};

// Prints one step's loop nest; unless print_only, runs its fully lowered form (flat
// buffers, vector code: what code generation receives) and compares with `expected`.
// Returns whether the result matched.
bool RunStep(int index, const Step& step, int n, bool print_only, const tir::HostArray& a,
             const tir::HostArray& b, const std::vector<float>& expected) {
  Matmul m = MakeMatmul(n, step.packed);
  Schedule schedule = step.schedule(m);
  std::cout << "\n==== Step " << index << ": " << step.title << "\n"
            << ToScript(ScheduleToPrimFunc(schedule, {m.A, m.B, m.C}, "gemm"));
  if (print_only) return true;
  PrimFunc func = lower(schedule, {m.A, m.B, m.C}, "gemm");

  tir::HostArray c(DataType::Float(32), {n, n});
  tir::Interpreter().Run(func, {a, b, c});
  double max_error = 0;
  bool ok = true;
  for (int64_t i = 0; i < n * n; ++i) {
    double error = std::fabs(c.GetFloat(i) - static_cast<double>(expected[i]));
    max_error = std::max(max_error, error);
    ok = ok && error <= kTolerance;  // a NaN fails too
  }
  std::cout << "-> max abs error vs naive C++ matmul: " << max_error
            << (ok ? "  (ok)\n" : "  (MISMATCH)\n");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  long n = 64;
  bool print_only = false;
  bool valid = true;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    char* end = nullptr;
    if (arg == "--print-only") {
      print_only = true;
    } else {
      n = std::strtol(arg.c_str(), &end, 10);
      valid = valid && *end == '\0';
    }
  }
  // Indices are int32, so N * N must fit in one.
  if (!valid || n <= 0 || n > kMaxSize || n % kBlock != 0) {
    std::cerr << "usage: gemm_schedule [N] [--print-only]  (N a multiple of " << kBlock
              << " up to " << kMaxSize << ")\n";
    return 2;
  }

  const Step steps[] = {
      {"default schedule", false, DefaultSchedule},
      {"blocking (tile 32 x 32, split k by 4, reorder)", false, Blocking},
      {"vectorize the innermost loop", false, Vectorization},
      {"loop permutation (i.inner outside k.inner)", false, LoopPermutation},
      {"array packing (B_packed computed at j.outer)", true, ArrayPacking},
      {"parallel outer loop (i.outer)", true, Parallel},
  };
  try {
    std::cout << "C = A x B with " << n << " x " << n << " float32 matrices\n";
    tir::HostArray a = RandomMatrix(static_cast<int>(n), 1), b = RandomMatrix(static_cast<int>(n), 2);
    std::vector<float> expected = print_only ? std::vector<float>() : NaiveMatmul(a, b, static_cast<int>(n));
    bool all_ok = true;
    for (int i = 0; i < static_cast<int>(std::size(steps)); ++i) {
      all_ok = RunStep(i, steps[i], static_cast<int>(n), print_only, a, b, expected) && all_ok;
    }
    if (!print_only) {
      std::cout << (all_ok ? "\nEvery step computes the same C.\n" : "\nSome step differs.\n");
    }
    return all_ok ? 0 : 1;
  } catch (const std::exception& err) {
    std::cerr << "error: " << err.what() << "\n";
    return 1;
  }
}
