// `make demo` until the ONNX path exists: a short tour of the foundation. It builds the
// index expression that splitting a fused loop produces, simplifies it, asks the analyses
// what they know, and prints a small loop nest as TVMScript-like text. Then it compiles an
// operator of the library (softmax) for this CPU, runs it and checks every row sums to 1.
#include <cmath>
#include <iostream>

#include "loom/arith/analyzer.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"
#include "loom/runtime/ndarray.h"
#include "loom/target/build.h"
#include "loom/te/lower.h"
#include "loom/topi/reduction.h"
#include "loom/topi/schedule.h"

namespace {

void Section(const char* title) { std::cout << "\n== " << title << "\n"; }

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
    return 0;
  } catch (const std::exception& err) {
    std::cerr << "loom-demo: " << err.what() << "\n";
    return 1;
  }
}
