#include "onnx_test_util.h"

#include "loom/graph/compile.h"
#include "loom/runtime/graph_executor.h"

namespace loom::frontend::onnx::test {

::onnx::AttributeProto IntAttr(const std::string& name, int64_t value) {
  ::onnx::AttributeProto attr;
  attr.set_name(name);
  attr.set_type(::onnx::AttributeProto::INT);
  attr.set_i(value);
  return attr;
}

::onnx::AttributeProto FloatAttr(const std::string& name, float value) {
  ::onnx::AttributeProto attr;
  attr.set_name(name);
  attr.set_type(::onnx::AttributeProto::FLOAT);
  attr.set_f(value);
  return attr;
}

::onnx::AttributeProto StringAttr(const std::string& name, const std::string& value) {
  ::onnx::AttributeProto attr;
  attr.set_name(name);
  attr.set_type(::onnx::AttributeProto::STRING);
  attr.set_s(value);
  return attr;
}

::onnx::AttributeProto IntsAttr(const std::string& name, const std::vector<int64_t>& values) {
  ::onnx::AttributeProto attr;
  attr.set_name(name);
  attr.set_type(::onnx::AttributeProto::INTS);
  for (int64_t v : values) attr.add_ints(v);
  return attr;
}

::onnx::AttributeProto FloatsAttr(const std::string& name, const std::vector<float>& values) {
  ::onnx::AttributeProto attr;
  attr.set_name(name);
  attr.set_type(::onnx::AttributeProto::FLOATS);
  for (float v : values) attr.add_floats(v);
  return attr;
}

::onnx::AttributeProto TensorAttr(const std::string& name, const runtime::NDArray& value) {
  ::onnx::AttributeProto attr;
  attr.set_name(name);
  attr.set_type(::onnx::AttributeProto::TENSOR);
  *attr.mutable_t() = TensorOf("", value);
  return attr;
}

int32_t OnnxElemType(DataType dtype) {
  if (dtype == DataType::Float(32)) return ::onnx::TensorProto::FLOAT;
  if (dtype == DataType::Float(64)) return ::onnx::TensorProto::DOUBLE;
  if (dtype == DataType::Float(16)) return ::onnx::TensorProto::FLOAT16;
  if (dtype == DataType::Int(64)) return ::onnx::TensorProto::INT64;
  if (dtype == DataType::Int(32)) return ::onnx::TensorProto::INT32;
  if (dtype == DataType::Int(16)) return ::onnx::TensorProto::INT16;
  if (dtype == DataType::Int(8)) return ::onnx::TensorProto::INT8;
  if (dtype == DataType::UInt(8)) return ::onnx::TensorProto::UINT8;
  if (dtype.is_bool()) return ::onnx::TensorProto::BOOL;
  ADD_FAILURE() << "OnnxElemType: no ONNX type for " << dtype.str();
  return ::onnx::TensorProto::UNDEFINED;
}

::onnx::TensorProto TensorOf(const std::string& name, const runtime::NDArray& value) {
  ::onnx::TensorProto tensor;
  tensor.set_name(name);
  tensor.set_data_type(OnnxElemType(value.dtype()));
  for (int64_t dim : value.Shape()) tensor.add_dims(dim);
  std::string bytes(value.NumBytes(), '\0');
  value.CopyToBytes(bytes.data(), bytes.size());
  tensor.set_raw_data(bytes);
  return tensor;
}

ModelBuilder::ModelBuilder(int64_t opset) {
  model_.set_ir_version(8);
  model_.set_producer_name("loom-test");
  ::onnx::OperatorSetIdProto* import = model_.add_opset_import();
  import->set_domain("");
  import->set_version(opset);
  model_.mutable_graph()->set_name("test");
}

ModelBuilder& ModelBuilder::Input(const std::string& name, const std::vector<int64_t>& shape,
                                  DataType dtype) {
  ::onnx::ValueInfoProto* input = model_.mutable_graph()->add_input();
  input->set_name(name);
  ::onnx::TypeProto_Tensor* tensor = input->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(OnnxElemType(dtype));
  ::onnx::TensorShapeProto* dims = tensor->mutable_shape();
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] >= 0) {
      dims->add_dim()->set_dim_value(shape[i]);
    } else {
      dims->add_dim()->set_dim_param("d" + std::to_string(i));
    }
  }
  return *this;
}

ModelBuilder& ModelBuilder::Initializer(const std::string& name, const runtime::NDArray& value) {
  *model_.mutable_graph()->add_initializer() = TensorOf(name, value);
  return *this;
}

ModelBuilder& ModelBuilder::Node(const std::string& op_type, const std::vector<std::string>& inputs,
                                 const std::vector<std::string>& outputs,
                                 const std::vector<::onnx::AttributeProto>& attrs,
                                 const std::string& name) {
  ::onnx::NodeProto* node = model_.mutable_graph()->add_node();
  node->set_op_type(op_type);
  node->set_name(name);
  for (const std::string& input : inputs) node->add_input(input);
  for (const std::string& output : outputs) node->add_output(output);
  for (const ::onnx::AttributeProto& attr : attrs) *node->add_attribute() = attr;
  return *this;
}

ModelBuilder& ModelBuilder::Output(const std::string& name) {
  model_.mutable_graph()->add_output()->set_name(name);
  return *this;
}

std::string ModelBuilder::Bytes() const {
  std::string bytes;
  EXPECT_TRUE(model_.SerializeToString(&bytes));
  return bytes;
}

ImportedModel ModelBuilder::Import(const ImportOptions& options) const {
  return ImportBytes(Bytes(), ".", options);
}

std::vector<runtime::NDArray> RunImported(const ImportedModel& model,
                                          const std::vector<runtime::NDArray>& inputs,
                                          int opt_level) {
  graph::CompiledModel compiled = graph::Compile(model.module, {.opt_level = opt_level});
  // The graph executor, or the VM for a model with sizes only a run knows.
  std::unique_ptr<runtime::Executor> run = graph::MakeExecutor(compiled);
  runtime::Executor& executor = *run;
  EXPECT_EQ(executor.NumInputs(), static_cast<int>(inputs.size()));
  for (int i = 0; i < executor.NumInputs() && i < static_cast<int>(inputs.size()); ++i) {
    executor.SetInput(i, inputs[static_cast<size_t>(i)]);
  }
  executor.Run();
  std::vector<runtime::NDArray> outputs;
  for (int i = 0; i < executor.NumOutputs(); ++i) {
    runtime::NDArray output = executor.GetOutput(i);
    outputs.push_back(output.CopyTo(runtime::kHostDevice));
  }
  return outputs;
}

void ExpectRunGives(runtime::Executor& executor, const std::vector<runtime::NDArray>& inputs,
                    const std::vector<runtime::NDArray>& want, double tolerance,
                    const std::string& label) {
  for (size_t i = 0; i < inputs.size(); ++i) executor.SetInput(static_cast<int>(i), inputs[i]);
  executor.Run();
  ASSERT_EQ(static_cast<size_t>(executor.NumOutputs()), want.size()) << label;
  for (size_t o = 0; o < want.size(); ++o) {
    const std::string what = label + ", output " + std::to_string(o);
    runtime::NDArray got = executor.GetOutput(static_cast<int>(o));
    ASSERT_EQ(got.Shape(), want[o].Shape()) << what;
    ExpectClose(got, Values(want[o]), tolerance, what);
  }
}

void ExpectOutputs(const ModelBuilder& model, const std::vector<runtime::NDArray>& inputs,
                   const std::vector<runtime::NDArray>& expected, double tolerance,
                   const ImportOptions& options) {
  ImportedModel imported = model.Import(options);
  for (int opt_level : {0, 3}) {
    std::vector<runtime::NDArray> got = RunImported(imported, inputs, opt_level);
    ASSERT_EQ(got.size(), expected.size()) << "outputs at -O" << opt_level;
    for (size_t i = 0; i < got.size(); ++i) {
      std::string label = "output " + std::to_string(i) + " at -O" + std::to_string(opt_level);
      EXPECT_EQ(got[i].Shape(), expected[i].Shape()) << label;
      EXPECT_EQ(got[i].dtype(), expected[i].dtype()) << label;
      double exactness = expected[i].dtype().is_float() ? tolerance : 0;
      ExpectClose(got[i], Values(expected[i]), exactness, label);
    }
  }
}

}  // namespace loom::frontend::onnx::test
