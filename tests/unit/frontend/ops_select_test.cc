// TopK's k: a constant over a constant axis is a constant size (the graph executor runs it);
// a constant over a symbolic axis, or a k given at run time, is a size the VM checks against
// the axis's length when the model runs.
#include <gtest/gtest.h>

#include <memory>

#include "loom/graph/compile.h"
#include "onnx_test_util.h"

namespace loom::frontend::onnx::test {
namespace {

runtime::NDArray K(int64_t k) { return ArrayOf({1}, kI64, {static_cast<double>(k)}); }

TEST(OnnxSelect, TopKOfAConstantKOverAConstantAxisIsStatic) {
  ModelBuilder model(11);
  model.Input("x", {2, 5}).Initializer("k", K(2));
  model.Node("TopK", {"x", "k"}, {"values", "indices"}, {}, "top").Output("values");
  model.Output("indices");
  graph::CompiledModel compiled = graph::Compile(model.Import().module, {});
  EXPECT_EQ(compiled.executor, "graph");
  ExpectOutputs(model, {ArrayOf({2, 5}, kF32, {3, 1, 4, 1, 5, 9, 2, 6, 5, 3})},
                {ArrayOf({2, 2}, kF32, {5, 4, 9, 6}), ArrayOf({2, 2}, kI64, {4, 2, 0, 2})});
}

TEST(OnnxSelect, TopKOfAConstantKOverASymbolicAxisIsCheckedWhenItRuns) {
  ModelBuilder model(11);
  model.Input("x", {2, -1}).Initializer("k", K(3));
  model.Node("TopK", {"x", "k"}, {"values", "indices"}, {}, "top").Output("values");
  ImportOptions options;
  options.symbolic_dimensions = true;
  std::unique_ptr<runtime::Executor> vm =
      graph::MakeExecutor(graph::Compile(model.Import(options).module, {}));
  vm->SetInput(0, ArrayOf({2, 4}, kF32, {1, 7, 3, 5, 8, 6, 4, 2}));
  vm->Run();
  EXPECT_EQ(Values(vm->GetOutput(0)), (std::vector<double>{7, 5, 3, 8, 6, 4}));
  vm->SetInput(0, ArrayOf({2, 2}, kF32, {1, 2, 3, 4}));
  EXPECT_EQ(ErrorOf([&] { vm->Run(); }),
            "VirtualMachine: the size top.k read at run time is 3, but it must lie in [0, 2] (d1 "
            "at these inputs)");
}

}  // namespace
}  // namespace loom::frontend::onnx::test
