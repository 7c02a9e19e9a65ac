// Helpers for the importer's tests: ONNX models built in C++ with ONNX's own classes (the
// shape of onnx.helper's make_node / make_graph), imported, compiled at -O0 and -O3 and run,
// with outputs compared against references the tests compute.
//
//   ModelBuilder model;
//   model.Input("x", {1, 4}).Node("Relu", {"x"}, {"y"}).Output("y");
//   ExpectOutputs(model, {x}, {relu_of_x});
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "../graph/graph_test_util.h"
#include "loom/frontend/onnx.h"
#include "loom/runtime/executor.h"

namespace loom::frontend::onnx::test {

using graph::test::ArrayOf;
using graph::test::ExpectClose;
using graph::test::GetFloat;
using graph::test::RandomArray;
using graph::test::SetValue;
using graph::test::Values;
using loom::testing::ErrorOf;

inline const DataType kF32 = DataType::Float(32);
inline const DataType kI64 = DataType::Int(64);

// Node attributes.
::onnx::AttributeProto IntAttr(const std::string& name, int64_t value);
::onnx::AttributeProto FloatAttr(const std::string& name, float value);
::onnx::AttributeProto StringAttr(const std::string& name, const std::string& value);
::onnx::AttributeProto IntsAttr(const std::string& name, const std::vector<int64_t>& values);
::onnx::AttributeProto FloatsAttr(const std::string& name, const std::vector<float>& values);
::onnx::AttributeProto TensorAttr(const std::string& name, const runtime::NDArray& value);

// The ONNX element type of a Loom dtype.
int32_t OnnxElemType(DataType dtype);
// `value` as a TensorProto named `name`, its bytes in raw_data.
::onnx::TensorProto TensorOf(const std::string& name, const runtime::NDArray& value);

class ModelBuilder {
 public:
  // A model importing `opset` of the default domain, produced by "loom-test".
  explicit ModelBuilder(int64_t opset = 17);

  // A graph input; a negative dimension is the symbolic dimension "d<index>".
  ModelBuilder& Input(const std::string& name, const std::vector<int64_t>& shape,
                      DataType dtype = kF32);
  // An initializer (raw_data).
  ModelBuilder& Initializer(const std::string& name, const runtime::NDArray& value);
  ModelBuilder& Node(const std::string& op_type, const std::vector<std::string>& inputs,
                     const std::vector<std::string>& outputs,
                     const std::vector<::onnx::AttributeProto>& attrs = {},
                     const std::string& name = "");
  // A graph output (its type is left out: the importer reads only the name).
  ModelBuilder& Output(const std::string& name);

  ::onnx::ModelProto& proto() { return model_; }
  const ::onnx::ModelProto& proto() const { return model_; }
  std::string Bytes() const;
  ImportedModel Import(const ImportOptions& options = {}) const;

 private:
  ::onnx::ModelProto model_;
};

// Compiles an imported model at `opt_level`, runs it once on `inputs` (one per model input,
// in order) and returns copies of its outputs.
std::vector<runtime::NDArray> RunImported(const ImportedModel& model,
                                          const std::vector<runtime::NDArray>& inputs,
                                          int opt_level);

// Runs `executor` on `inputs` (one per input, in order) and checks every output's shape and
// values against `want` (relative tolerance, absolute near 0); `label` names the run.
void ExpectRunGives(runtime::Executor& executor, const std::vector<runtime::NDArray>& inputs,
                    const std::vector<runtime::NDArray>& want, double tolerance,
                    const std::string& label);

// Imports `model`, runs it at -O0 and at -O3 on `inputs`, and checks every output's shape
// and values against `expected` (relative tolerance, absolute near 0; exact for integers).
void ExpectOutputs(const ModelBuilder& model, const std::vector<runtime::NDArray>& inputs,
                   const std::vector<runtime::NDArray>& expected, double tolerance = 1e-4,
                   const ImportOptions& options = {});

}  // namespace loom::frontend::onnx::test
