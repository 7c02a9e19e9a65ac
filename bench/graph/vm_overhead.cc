// The virtual machine's own cost per kernel call, against the graph executor on the same
// static model, in one process: a chain of K tiny kernels (exp of 16 floats, one kernel per
// operator at -O0), compiled for each executor, each run timed as the median of many runs.
// The difference per kernel is what the VM adds: computing each output's shape, taking its
// tensor from the pool and giving it back, and packing the call's arguments.
//
//   build/bench/loom-bench-vm-overhead [--kernels 256] [--runs 2000]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "loom/graph/compile.h"
#include "loom/runtime/ndarray.h"

namespace {

using loom::DataType;
using namespace loom::graph;  // NOLINT: a benchmark's main
namespace runtime = loom::runtime;

double MedianRunMicroseconds(runtime::Executor& executor, int runs) {
  std::vector<double> times;
  for (int r = 0; r < runs; ++r) {
    auto start = std::chrono::steady_clock::now();
    executor.Run();
    times.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
            .count());
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int kernels = 256, runs = 2000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--kernels") == 0) kernels = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--runs") == 0) runs = std::atoi(argv[i + 1]);
  }
  Var x = MakeVar("x", TensorType({16}, DataType::Float(32)));
  Expr y = x;
  for (int k = 0; k < kernels; ++k) y = MakeCall(k % 2 ? "exp" : "negative", {y});
  IRModule module = IRModule::FromFunction(MakeFunction({x}, y));
  runtime::NDArray input = runtime::NDArray::Empty({16}, DataType::Float(32));
  std::vector<float> zeros(16, 0.0f);
  input.CopyFromBytes(zeros.data(), zeros.size() * sizeof(float));
  double graph_us = 0, vm_us = 0;
  for (const char* executor : {"graph", "vm"}) {
    CompiledModel compiled = Compile(module, {.opt_level = 0, .executor = executor});
    std::unique_ptr<runtime::Executor> run = MakeExecutor(compiled);
    run->SetNumThreads(1);
    run->SetInput(0, input);
    for (int w = 0; w < runs / 10; ++w) run->Run();
    (std::string(executor) == "vm" ? vm_us : graph_us) = MedianRunMicroseconds(*run, runs);
  }
  std::printf("kernels=%d graph_us=%.2f vm_us=%.2f vm/graph=%.2f vm_overhead_per_call_us=%.3f\n",
              kernels, graph_us, vm_us, vm_us / graph_us, (vm_us - graph_us) / kernels);
  return 0;
}
