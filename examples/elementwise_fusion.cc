// Fusing the elementwise operations that follow a matrix multiply: a dense layer
//
//   C    = A x W            (the matmul, a reduction)
//   D    = C + bias[j]      (bias-add, elementwise)
//   Out  = max(D, 0)        (relu, elementwise: the function's output)
//
// written as three separate computations; scheduling fuses the two elementwise ones. After
// every step the program prints the lowered IR and runs it with the TIR interpreter,
// comparing with a plain C++ dense layer; it exits non-zero if any step differs.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <iterator>
#include <random>
#include <vector>

#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"
#include "loom/te/lower.h"
#include "loom/tir/interpreter.h"

namespace {

using namespace loom;
using namespace loom::te;

constexpr int kRows = 64, kReduce = 64, kCols = 64;
constexpr double kTolerance = 1e-3;

struct DenseLayer {
  Tensor A, W, bias, C, D, Out;
};

DenseLayer MakeDenseLayer() {
  const DataType f32 = DataType::Float(32);
  DenseLayer l;
  l.A = placeholder({kRows, kReduce}, f32, "A");
  l.W = placeholder({kReduce, kCols}, f32, "W");
  l.bias = placeholder({kCols}, f32, "bias");
  IterVar k = reduce_axis(Range(0, kReduce), "k");
  l.C = compute({kRows, kCols}, [&](Var i, Var j) { return sum(l.A(i, k->var) * l.W(k->var, j), {k}); },
                "C");
  l.D = compute({kRows, kCols}, [&](Var i, Var j) { return l.C(i, j) + l.bias(j); }, "D");
  l.Out = compute({kRows, kCols}, [&](Var i, Var j) { return max(l.D(i, j), 0.0f); }, "Out");
  return l;
}

// (0) One loop nest per operation: C and D are full 64 x 64 temporaries, each written to
// memory by one nest and read back by the next. For large layers they no longer fit in cache
// and the elementwise nests are pure memory traffic.
Schedule Separate(const DenseLayer& l) { return create_schedule({l.Out.op()}); }

// (1) compute_inline(D): the bias-add has no loops of its own any more; its expression is
// substituted where relu reads it, so Out = max(C + bias, 0) and D is never stored.
Schedule InlineBiasAdd(const DenseLayer& l) {
  Schedule s = create_schedule({l.Out.op()});
  s[l.D].compute_inline();
  return s;
}

// (2) A reduction cannot be inlined: the matmul keeps its own nest, and both nests are now
// scheduled for the CPU. Rows are independent in both, so their outer loops run in
// parallel. In the matmul, k is moved outside j so that the innermost loop walks rows of W
// and C contiguously and can be vectorized; the relu's columns are contiguous too.
Schedule VectorizeAndParallelize(const DenseLayer& l) {
  Schedule s = InlineBiasAdd(l);
  Stage matmul = s[l.C], relu = s[l.Out];
  IterVar i = matmul->leaf_iter_vars[0], j = matmul->leaf_iter_vars[1];
  IterVar k = matmul->leaf_iter_vars[2];
  matmul.reorder({i, k, j});
  matmul.vectorize(j);
  matmul.parallel(i);
  relu.parallel(relu->leaf_iter_vars[0]);
  relu.vectorize(relu->leaf_iter_vars[1]);
  return s;
}

tir::HostArray RandomArray(std::vector<int64_t> shape, uint32_t seed) {
  tir::HostArray a(DataType::Float(32), std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t i = 0; i < a.NumElements(); ++i) a.SetFloat(i, dist(rng));
  return a;
}

std::vector<float> ReferenceDense(const tir::HostArray& a, const tir::HostArray& w,
                                  const tir::HostArray& bias) {
  std::vector<float> out(kRows * kCols);
  for (int64_t i = 0; i < kRows; ++i) {
    for (int64_t j = 0; j < kCols; ++j) {
      float acc = 0.0f;
      for (int64_t k = 0; k < kReduce; ++k) acc += a.GetFloat(i * kReduce + k) * w.GetFloat(k * kCols + j);
      out[i * kCols + j] = std::max(acc + static_cast<float>(bias.GetFloat(j)), 0.0f);
    }
  }
  return out;
}

struct Step {
  const char* title;
  Schedule (*schedule)(const DenseLayer&);
};

}  // namespace

int main() {
  const Step steps[] = {
      {"one loop nest per operation", Separate},
      {"compute_inline the bias-add into relu", InlineBiasAdd},
      {"vectorize columns, parallel rows", VectorizeAndParallelize},
  };
  try {
    tir::HostArray a = RandomArray({kRows, kReduce}, 1), w = RandomArray({kReduce, kCols}, 2),
                   bias = RandomArray({kCols}, 3);
    std::vector<float> expected = ReferenceDense(a, w, bias);
    bool all_ok = true;
    for (int index = 0; index < static_cast<int>(std::size(steps)); ++index) {
      DenseLayer l = MakeDenseLayer();
      Schedule schedule = steps[index].schedule(l);
      Array<Tensor> args{l.A, l.W, l.bias, l.Out};
      std::cout << "\n==== Step " << index << ": " << steps[index].title << "\n"
                << ToScript(ScheduleToPrimFunc(schedule, args, "dense_relu"));
      // What runs is the fully lowered function, the one code generation receives.
      PrimFunc func = lower(schedule, args, "dense_relu");

      tir::HostArray out(DataType::Float(32), {kRows, kCols});
      tir::Interpreter().Run(func, {a, w, bias, out});
      double max_error = 0;
      bool ok = true;
      for (int64_t i = 0; i < kRows * kCols; ++i) {
        double error = std::fabs(out.GetFloat(i) - static_cast<double>(expected[i]));
        max_error = std::max(max_error, error);
        ok = ok && error <= kTolerance;  // a NaN fails too
      }
      std::cout << "-> max abs error vs C++ dense + relu: " << max_error
                << (ok ? "  (ok)\n" : "  (MISMATCH)\n");
      all_ok = all_ok && ok;
    }
    std::cout << (all_ok ? "\nEvery step computes the same output.\n" : "\nSome step differs.\n");
    return all_ok ? 0 : 1;
  } catch (const std::exception& err) {
    std::cerr << "error: " << err.what() << "\n";
    return 1;
  }
}
