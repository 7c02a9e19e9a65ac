"""float16 versions of the test models, as exporters that store a model in half precision
write them: every float32 tensor of the model (inputs, outputs, weights, constants and the
values between nodes) becomes float16, and a Cast to float32 becomes a Cast to float16.

Written here rather than taken from onnxconverter-common, which Debian does not package and
which would be one more test dependency for a few lines of graph editing.
"""

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper


def _to_half(tensor):
    if tensor.data_type != TensorProto.FLOAT:
        return tensor
    half = numpy_helper.from_array(numpy_helper.to_array(tensor).astype(np.float16), tensor.name)
    return half


def _retype(value_info):
    tensor_type = value_info.type.tensor_type
    if tensor_type.elem_type == TensorProto.FLOAT:
        tensor_type.elem_type = TensorProto.FLOAT16


def convert(src, dst):
    """Writes the float32 model `src` to `dst` in float16."""
    model = onnx.load(src)
    graph = model.graph
    for i, tensor in enumerate(graph.initializer):
        graph.initializer[i].CopyFrom(_to_half(tensor))
    for values in (graph.input, graph.output, graph.value_info):
        for value in values:
            _retype(value)
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.type == onnx.AttributeProto.TENSOR:
                attribute.t.CopyFrom(_to_half(attribute.t))
            elif node.op_type == "Cast" and attribute.name == "to" and \
                    attribute.i == TensorProto.FLOAT:
                attribute.i = TensorProto.FLOAT16
    onnx.checker.check_model(model)
    onnx.save(model, dst)
