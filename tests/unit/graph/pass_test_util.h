// Helpers for the graph pass tests: running one pass on a function, a reference interpreter
// of graphs (each call compiled and run by EvaluateCall, the function walked operands
// first), and comparing a function before and after a pass on random inputs.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <unordered_map>
#include <vector>

#include "graph_test_util.h"
#include "loom/graph/evaluate.h"
#include "loom/graph/functor.h"
#include "loom/graph/transform.h"
#include "occurrences.h"

namespace loom::graph::test {

// How many times `what` occurs in `text` (calls of an operator in a printed graph).
using ::loom::testing::Occurrences;

// `pass` applied to the module whose main is `function`; its new main.
inline Function RunPass(const Pass& pass, const Function& function) {
  return pass.run(IRModule::FromFunction(function)).main();
}

// The value of an expression: one array, or the values of a tuple's fields.
struct Value {
  runtime::NDArray tensor;
  std::vector<Value> fields;
};

// The result of `function` on `args` (one array per parameter).
inline Value Interpret(const Function& function, const std::vector<runtime::NDArray>& args) {
  EXPECT_EQ(args.size(), function->params.size());
  std::unordered_map<const Object*, Value> values;
  for (size_t i = 0; i < function->params.size() && i < args.size(); ++i) {
    values[function->params[i].get()].tensor = args[i];
  }
  PostOrderVisit(function->body, [&](const Expr& e) {
    Value& value = values[e.get()];
    if (const auto* constant = e.as<ConstantNode>()) {
      value.tensor = constant->data;
    } else if (const auto* call = e.as<CallNode>()) {
      ASSERT_NE(call->op, nullptr) << "the test interpreter runs operator calls only";
      std::vector<runtime::NDArray> inputs;
      for (const Expr& arg : call->args) inputs.push_back(values.at(arg.get()).tensor);
      std::vector<runtime::NDArray> outputs = EvaluateCallOutputs(*call, inputs, HostTarget());
      if (!call->checked_type.is_tuple()) {
        value.tensor = outputs.at(0);
        return;
      }
      for (const runtime::NDArray& output : outputs) value.fields.push_back({output, {}});
    } else if (const auto* tuple = e.as<TupleNode>()) {
      for (const Expr& field : tuple->fields) value.fields.push_back(values.at(field.get()));
    } else if (const auto* item = e.as<TupleGetItemNode>()) {
      value = values.at(item->tuple.get()).fields.at(item->index);
    }
  });
  return values.at(function->body.get());
}

// A random array of `type`'s (constant) shape and dtype.
inline runtime::NDArray RandomOf(const Type& type, unsigned seed) {
  return RandomArray(type.ConstShape().value(), type.dtype(), seed);
}

// Equal structure, and equal arrays within `tolerance` (relative, absolute near 0).
inline void ExpectCloseValues(const Value& got, const Value& want, double tolerance,
                              const std::string& label) {
  ASSERT_EQ(got.fields.size(), want.fields.size()) << label;
  if (want.fields.empty()) {
    ASSERT_EQ(got.tensor.Shape(), want.tensor.Shape()) << label;
    ExpectClose(got.tensor, Values(want.tensor), tolerance, label);
  }
  for (size_t i = 0; i < want.fields.size(); ++i) {
    ExpectCloseValues(got.fields[i], want.fields[i], tolerance,
                      label + " field " + std::to_string(i));
  }
}

// `before` and `after` compute the same values (within `tolerance`) on `args`.
inline void ExpectSameResults(const Function& before, const Function& after,
                              const std::vector<runtime::NDArray>& args, double tolerance) {
  ExpectCloseValues(Interpret(after, args), Interpret(before, args), tolerance, "after the pass");
}

// The same on random arrays of the parameters' types.
inline void ExpectSameResults(const Function& before, const Function& after, double tolerance = 0) {
  std::vector<runtime::NDArray> args;
  for (size_t i = 0; i < before->params.size(); ++i) {
    args.push_back(RandomOf(before->params[i].type(), 17 + static_cast<unsigned>(i)));
  }
  ExpectSameResults(before, after, args, tolerance);
}

}  // namespace loom::graph::test
