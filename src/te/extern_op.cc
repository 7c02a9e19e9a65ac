// Extern operations: outputs computed by a statement the user builds, typically a call into
// a library.
#include "loom/te/operation.h"

#include <unordered_set>

namespace loom::te {

Array<Tensor> extern_op(const Array<Array<PrimExpr>>& shapes, const Array<DataType>& dtypes,
                        const Array<Tensor>& inputs, const ExternBodyBuilder& body,
                        std::string name, std::string tag) {
  std::string what = "extern_op '" + name + "'";
  LOOM_CHECK_USER(!shapes.empty())
      << what << ": no outputs; give one shape and one dtype per output";
  LOOM_CHECK_USER(shapes.size() == dtypes.size())
      << what << ": " << shapes.size() << " output shapes but " << dtypes.size()
      << " dtypes; give one dtype per output";
  LOOM_CHECK_USER(body != nullptr) << what << ": the body builder is empty";
  auto op = std::make_shared<ExternOpNode>(std::move(name), std::move(tag));
  std::unordered_set<const Object*> seen;
  Array<Buffer> input_buffers;
  for (const Tensor& t : inputs) {
    LOOM_CHECK_USER(t.defined()) << what << ": an input tensor is undefined";
    LOOM_CHECK_USER(seen.insert(t.buffer().get()).second)
        << what << ": input '" << t.name() << "' is listed twice";
    op->inputs.push_back(t);
    input_buffers.push_back(t.buffer());
  }
  op->MakeOutputs(shapes, dtypes);
  op->body = body(input_buffers, op->output_buffers);
  LOOM_CHECK_USER(op->body.defined())
      << what << ": the body builder returned no statement; return the call computing the "
      << "outputs, e.g. Evaluate(call_extern(...))";
  Array<Tensor> outputs;
  for (int i = 0; i < op->num_outputs(); ++i) outputs.push_back(op->output(i));
  return outputs;
}

Tensor extern_op(const Array<PrimExpr>& shape, DataType dtype, const Array<Tensor>& inputs,
                 const ExternBodyBuilder& body, std::string name, std::string tag) {
  return extern_op(Array<Array<PrimExpr>>{shape}, Array<DataType>{dtype}, inputs, body,
                   std::move(name), std::move(tag))
      .at(0);
}

}  // namespace loom::te
