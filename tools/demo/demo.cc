// `make demo` until the ONNX path exists: a short tour of the foundation. It builds the
// index expression that splitting a fused loop produces, simplifies it, asks the analyses
// what they know, and prints a small loop nest as TVMScript-like text. Then it compiles an
// operator of the library (softmax) for this CPU, runs it and checks every row sums to 1,
// and a ResNet-18 convolution layer with the x86 kernels, checked and timed.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <vector>

#include "loom/arith/analyzer.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"
#include "loom/runtime/ndarray.h"
#include "loom/target/build.h"
#include "loom/te/lower.h"
#include "loom/tir/analysis.h"
#include "loom/topi/reduction.h"
#include "loom/topi/schedule.h"
#include "loom/topi/x86/conv2d.h"

namespace {

void Section(const char* title) { std::cout << "\n== " << title << "\n"; }

// An NDArray shaped as parameter `index` of `func`.
loom::runtime::NDArray ArrayFor(const loom::PrimFunc& func, size_t index) {
  return loom::runtime::NDArray::Empty(loom::tir::ConstParamShape(func, index),
                                       loom::DataType::Float(32), {kDLCPU, 0});
}

// Compiles ResNet-18's 3x3 64 -> 64 layer at 56x56, checks sampled outputs against a direct
// sum, and prints the median time of 20 calls. Returns false on a wrong result.
bool ConvolutionLayer() {
  using namespace loom;
  topi::x86::Conv2DWorkload layer;
  layer.c = layer.k = 64;
  layer.h = layer.w = 56;
  layer.r = layer.s = 3;
  layer.attrs.pads = {1, 1, 1, 1};
  auto start = std::chrono::steady_clock::now();
  topi::x86::Conv2DKernel kernel = topi::x86::MakeConv2DKernel(layer);
  runtime::Module conv = build(kernel.module, Target::Parse("llvm"));
  double compile_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "  " << layer.str() << "\n  algorithm: " << kernel.algorithm
            << ", compiled in " << compile_s << " s\n";
  const IRModule& funcs = kernel.module;
  runtime::NDArray x = ArrayFor(funcs.Lookup("pack_data"), 0);
  runtime::NDArray w = ArrayFor(funcs.Lookup("pack_weight"), 0);
  runtime::NDArray xp = ArrayFor(funcs.Lookup("pack_data"), 1);
  runtime::NDArray wp = ArrayFor(funcs.Lookup("pack_weight"), 1);
  runtime::NDArray yp = ArrayFor(funcs.Lookup("conv"), 2);
  runtime::NDArray y = ArrayFor(funcs.Lookup("unpack_output"), 1);
  float* xd = static_cast<float*>(x.data());
  float* wd = static_cast<float*>(w.data());
  for (int64_t k = 0; k < x.NumElements(); ++k) xd[k] = static_cast<float>(std::sin(k * 0.1));
  for (int64_t k = 0; k < w.NumElements(); ++k) wd[k] = static_cast<float>(std::cos(k * 0.3)) / 24;
  conv.GetRequiredFunction("pack_data")(x, xp);
  conv.GetRequiredFunction("pack_weight")(w, wp);
  runtime::PackedFunc run = conv.GetRequiredFunction("conv");
  std::vector<double> times;
  for (int call = 0; call < 21; ++call) {
    auto begin = std::chrono::steady_clock::now();
    run(xp, wp, yp);
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
  }
  std::sort(times.begin(), times.end());
  conv.GetRequiredFunction("unpack_output")(yp, y);
  const float* yd = static_cast<const float*>(y.data());
  double worst = 0;
  for (int64_t sample = 0; sample < 200; ++sample) {
    int64_t k = sample * 7 % 64, p = sample * 13 % 56, q = sample * 29 % 56;
    double want = 0;
    for (int64_t c = 0; c < 64; ++c)
      for (int64_t r = 0; r < 3; ++r)
        for (int64_t t = 0; t < 3; ++t) {
          int64_t h = p + r - 1, col = q + t - 1;
          if (h < 0 || h >= 56 || col < 0 || col >= 56) continue;
          want += double(xd[(c * 56 + h) * 56 + col]) * wd[((k * 64 + c) * 3 + r) * 3 + t];
        }
    worst = std::max(worst, std::abs(yd[(k * 56 + p) * 56 + q] - want));
  }
  double flops = 2.0 * 64 * 64 * 9 * 56 * 56;
  std::cout << "  median of 21 calls: " << times[10] * 1e3 << " ms ("
            << flops / times[10] * 1e-9 << " GFLOP/s of direct-convolution work)\n"
            << "  largest error on 200 sampled outputs: " << worst << "\n";
  return worst < 1e-3;
}

}  // namespace

int main() {
  using namespace loom;
  try {
    std::cout << "Loom: a tour of the IR and the arithmetic layer\n";

    Section("Build an index expression");
    Var i("i"), j("j");
    PrimExpr fused = i * 16 + j;  // a loop over (i, j) fused into one
    // Splitting the fused loop again by 16 recovers (i, j) as fused // 16 and fused % 16.
    PrimExpr index = floordiv(fused, 16) * 64 + floormod(fused, 16) * 4 + 3;
    std::cout << "  i in [0, 32), j in [0, 16)\n  index = " << index << "\n";

    Section("Simplify it");
    arith::Analyzer analyzer;
    analyzer.Bind(i, Range(0, 32));
    analyzer.Bind(j, Range(0, 16));
    PrimExpr simple = analyzer.Simplify(index);
    std::cout << "  simplified = " << simple << "\n";

    Section("What the analyses know");
    arith::ConstIntBound bound = analyzer.const_int_bound(simple);
    std::cout << "  constant bounds: [" << bound.min_value << ", " << bound.max_value << "]\n";
    arith::ModularSet modular = analyzer.modular_set(simple);
    std::cout << "  modular set: every value is " << modular.coeff << " * k + " << modular.base
              << "\n";
    arith::VarIntSetMap dom{{i, arith::IntSet::FromRange(Range(0, 32))},
                            {j, arith::IntSet::FromRange(Range(0, 4))}};
    std::cout << "  over i in [0, 32), j in [0, 4): " << analyzer.int_set(simple, dom).str()
              << "\n";
    std::cout << "  can prove index < 2048: " << std::boolalpha
              << analyzer.CanProve(simple < 2048) << "\n";
    std::cout << "  can prove index is odd: "
              << analyzer.CanProve(floormod(simple, 2) == 1) << "\n";

    Section("A loop nest that uses it");
    Buffer out = DeclBuffer({2048}, DataType::Float(32), "Out");
    Stmt store = BufferStore(out, cast(DataType::Float(32), i + j), {simple});
    Stmt inner = For(j, 0, 16, ForKind::kVectorized, store, IterVar(), {});
    Stmt outer = For(i, 0, 32, ForKind::kParallel, inner, IterVar(), {});
    Var out_handle("out_handle", DataType::Handle());
    PrimFunc func({out_handle}, {{out_handle, out}}, outer, DataType::Void(),
                  {{"global_symbol", StringImm("scatter")}});
    std::cout << func;

    Section("An operator compiled for this CPU: softmax over rows of 1000");
    te::Tensor x = te::placeholder({4, 1000}, DataType::Float(32), "x");
    te::Tensor y = topi::softmax(x, -1);
    runtime::Module module =
        build(te::lower(topi::schedule_softmax(y), {x, y}, "softmax"), Target::Parse("llvm"));
    runtime::NDArray input = runtime::NDArray::Empty({4, 1000}, DataType::Float(32), {kDLCPU, 0});
    runtime::NDArray output = runtime::NDArray::Empty({4, 1000}, DataType::Float(32), {kDLCPU, 0});
    float* in = static_cast<float*>(input.data());
    for (int k = 0; k < 4000; ++k) in[k] = static_cast<float>(std::sin(k * 0.37) * 8);
    module.GetRequiredFunction("softmax")(input, output);
    const float* probabilities = static_cast<const float*>(output.data());
    for (int row = 0; row < 4; ++row) {
      double total = 0;
      for (int k = 0; k < 1000; ++k) total += probabilities[row * 1000 + k];
      std::cout << "  row " << row << ": sum of probabilities = " << total << "\n";
      if (std::abs(total - 1) > 1e-4) {
        std::cerr << "loom-demo: softmax row " << row << " sums to " << total << ", not 1\n";
        return 1;
      }
    }

    Section("A convolution layer with the x86 kernels");
    if (!ConvolutionLayer()) {
      std::cerr << "loom-demo: the convolution layer's result is wrong\n";
      return 1;
    }
    return 0;
  } catch (const std::exception& err) {
    std::cerr << "loom-demo: " << err.what() << "\n";
    return 1;
  }
}
