#!/usr/bin/env python3
"""Writes the fuzz harnesses' checked-in inputs:

* tests/fuzz/corpus/model/*.onnx, the model harness's seeds: small models, a few hundred bytes
  to a few KB each, that together use most of the importer's operator families, so that
  mutations start from inputs that reach lowering and code generation (each compiles);
* tests/fuzz/findings/model/*.onnx, the bad models of the hardening issue's hostile run (each
  must be refused with a clear error);
* tests/fuzz/findings/artifact/*.so, the graph executor's fixture model (graph_model.so,
  written by the build) with the corruptions of that run: flipped bytes in the ELF header,
  the dynamic section and the dynamic symbol table (each crashed inside dlopen before the
  digest).

    .venv/bin/python3 tests/fuzz/make_fuzz_inputs.py tests/fuzz build/tests/graph_fixture/graph_model.so

They are checked in; rerun this only to change them. New findings of the fuzzers are added
beside these, minimized (libFuzzer's -minimize_crash=1).
"""
import os
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(20261130)


def weight(name, *shape):
    return numpy_helper.from_array(RNG.standard_normal(shape).astype(np.float32), name)


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def value(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def model(name, nodes, inputs, outputs, initializers=(), opset=17, check=True):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
    result = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                               producer_name="loom-fuzz-seeds")
    if check:
        onnx.checker.check_model(result, full_check=True)
    return result


def seeds():
    n = helper.make_node
    yield "conv_relu_pool_gemm", model(
        "conv_relu_pool_gemm",
        [n("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]), n("Relu", ["c"], ["r"]),
         n("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
         n("Flatten", ["p"], ["f"]), n("Gemm", ["f", "fw", "fb"], ["g"], transB=1),
         n("Softmax", ["g"], ["y"], axis=1)],
        [value("x", [1, 3, 8, 8])], [value("y", [1, 5])],
        [weight("w", 4, 3, 3, 3), weight("b", 4), weight("fw", 5, 64), weight("fb", 5)])
    yield "elementwise_broadcast", model(
        "elementwise_broadcast",
        [n("Add", ["a", "b"], ["s"]), n("Mul", ["s", "k"], ["m"]), n("Sub", ["m", "a"], ["d"]),
         n("Div", ["d", "k"], ["q"]), n("Sigmoid", ["q"], ["g"]), n("Tanh", ["g"], ["t"]),
         n("Exp", ["t"], ["e"]), n("Sqrt", ["e"], ["y"])],
        [value("a", [2, 3, 4]), value("b", [3, 1])], [value("y", [2, 3, 4])],
        [weight("k", 4)])
    yield "matmul_layernorm", model(
        "matmul_layernorm",
        [n("MatMul", ["x", "w"], ["m"]),
         n("LayerNormalization", ["m", "gamma", "beta"], ["l"], axis=-1, epsilon=1e-5),
         n("Erf", ["l"], ["e"]), n("Add", ["l", "e"], ["y"])],
        [value("x", [2, 4, 8])], [value("y", [2, 4, 6])],
        [weight("w", 8, 6), weight("gamma", 6), weight("beta", 6)])
    yield "reshape_transpose_concat_slice", model(
        "reshape_transpose_concat_slice",
        [n("Reshape", ["x", "shape"], ["r"]), n("Transpose", ["r"], ["t"], perm=[0, 2, 1]),
         n("Concat", ["t", "t"], ["c"], axis=1),
         n("Slice", ["c", "starts", "ends", "axes"], ["s"]),
         n("Split", ["s", "split"], ["y0", "y1"], axis=2)],
        [value("x", [2, 12])], [value("y0", [2, 3, 1]), value("y1", [2, 3, 3])],
        [ints("shape", [2, 4, 3]), ints("starts", [1]), ints("ends", [4]), ints("axes", [1]),
         ints("split", [1, 3])])
    yield "shape_gather_unsqueeze", model(
        "shape_gather_unsqueeze",
        [n("Shape", ["x"], ["shape"]), n("Gather", ["shape", "zero"], ["batch"], axis=0),
         n("Unsqueeze", ["batch", "axes"], ["b1"]), n("Concat", ["b1", "minus1"], ["new"], axis=0),
         n("Reshape", ["x", "new"], ["flat"]), n("Gather", ["table", "idx"], ["emb"], axis=0),
         n("MatMul", ["flat", "emb"], ["y"])],
        [value("x", [2, 3, 2]), value("idx", [6], TensorProto.INT64)], [value("y", [2, 4])],
        [ints("zero", 0), ints("axes", [0]), ints("minus1", [-1]), weight("table", 10, 4)])
    yield "reductions", model(
        "reductions",
        [n("ReduceMean", ["x"], ["m"], axes=[2], keepdims=1), n("Sub", ["x", "m"], ["c"]),
         n("ReduceSumSquare", ["c"], ["v"], axes=[1, 2], keepdims=0),
         n("ReduceMax", ["x"], ["mx"], axes=[1], keepdims=0),
         n("ArgMax", ["x"], ["am"], axis=2, keepdims=0)],
        [value("x", [2, 3, 5])],
        [value("v", [2]), value("mx", [2, 5]), value("am", [2, 3], TensorProto.INT64)])
    yield "batchnorm_depthwise_avgpool", model(
        "batchnorm_depthwise_avgpool",
        [n("Conv", ["x", "w"], ["c"], group=4, pads=[1, 1, 1, 1]),
         n("BatchNormalization", ["c", "s", "bias", "mean", "var"], ["bn"]),
         n("Clip", ["bn", "lo", "hi"], ["r6"]),
         n("AveragePool", ["r6"], ["ap"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
         n("GlobalAveragePool", ["ap"], ["y"])],
        [value("x", [1, 4, 6, 6])], [value("y", [1, 4, 1, 1])],
        [weight("w", 4, 1, 3, 3), weight("s", 4), weight("bias", 4), weight("mean", 4),
         numpy_helper.from_array(np.abs(RNG.standard_normal(4)).astype(np.float32) + 0.5, "var"),
         numpy_helper.from_array(np.array(0.0, dtype=np.float32), "lo"),
         numpy_helper.from_array(np.array(6.0, dtype=np.float32), "hi")])
    yield "compare_where_cast", model(
        "compare_where_cast",
        [n("Greater", ["a", "b"], ["gt"]), n("Where", ["gt", "a", "b"], ["w"]),
         n("Cast", ["w"], ["i"], to=TensorProto.INT32), n("Cast", ["i"], ["f"], to=TensorProto.FLOAT),
         n("Abs", ["f"], ["ab"]), n("Neg", ["ab"], ["y"])],
        [value("a", [3, 4]), value("b", [4])], [value("y", [3, 4])])
    yield "pad_resize_convtranspose", model(
        "pad_resize_convtranspose",
        [n("Pad", ["x", "pads"], ["p"], mode="constant"),
         n("Resize", ["p", "", "scales"], ["r"], mode="nearest"),
         n("ConvTranspose", ["r", "w"], ["y"], strides=[2, 2])],
        [value("x", [1, 2, 3, 3])], [value("y", [1, 3, 21, 21])],
        [ints("pads", [0, 0, 1, 1, 0, 0, 1, 1]),
         numpy_helper.from_array(np.array([1, 1, 2, 2], dtype=np.float32), "scales"),
         weight("w", 2, 3, 3, 3)])
    yield "attention_block", model(
        "attention_block",
        [n("MatMul", ["x", "wq"], ["q"]), n("MatMul", ["x", "wk"], ["k"]),
         n("Transpose", ["k"], ["kt"], perm=[0, 2, 1]), n("MatMul", ["q", "kt"], ["s"]),
         n("Mul", ["s", "scale"], ["ss"]), n("Softmax", ["ss"], ["a"], axis=-1),
         n("MatMul", ["a", "x"], ["y"])],
        [value("x", [1, 4, 8])], [value("y", [1, 4, 8])],
        [weight("wq", 8, 8), weight("wk", 8, 8),
         numpy_helper.from_array(np.array(0.35, dtype=np.float32), "scale")])


def past_findings():
    n = helper.make_node
    relu = [n("Relu", ["x"], ["y"])]
    yield "gather_constant_indices_out_of_range", model(
        "gather_constant_indices_out_of_range", [n("Gather", ["table", "idx"], ["y"], axis=0)],
        [], [value("y", [2, 3])], [weight("table", 4, 3), ints("idx", [100, -100])])
    yield "input_dimension_2_pow_40", model(
        "input_dimension_2_pow_40", relu, [value("x", [1 << 40, 2])], [value("y", [1 << 40, 2])])
    yield "memory_plan_57000_gib", model(
        "memory_plan_57000_gib", relu, [value("x", [1 << 20, 1 << 20, 14])],
        [value("y", [1 << 20, 1 << 20, 14])])
    for opset in (1000, 0, -1):
        name = "opset_" + str(opset).replace("-", "minus_")
        found = model(name, relu, [value("x", [2])], [value("y", [2])], check=False)
        found.opset_import[0].version = opset
        yield name, found
    # The input's name is made invalid UTF-8 when written (main).
    yield "non_utf8_names", model("non_utf8_names", [n("Relu", ["in_name"], ["y"])],
                                  [value("in_name", [2])], [value("y", [2])])


def corrupt_artifacts(fixture):
    """The fixture library with the hostile run's corruptions, by what they hit."""
    with open(fixture, "rb") as f:
        data = bytearray(f.read())
    header = struct.unpack_from("<16sHHIQQQIHHHHHH", data, 0)
    shoff, shentsize, shnum = header[6], header[11], header[12]
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    by_type = {section[1]: section for section in sections}
    flips = {"elf_header": 0x28,  # e_shoff
             "dynamic_section": by_type[6][4] + 8,  # SHT_DYNAMIC: the first entry's value
             "dynamic_symbols": by_type[11][4] + 24 + 8}  # SHT_DYNSYM: a symbol's value
    for name, offset in flips.items():
        corrupt = bytearray(data)
        for k in range(8):
            corrupt[offset + k] ^= 0x5A
        yield "flipped_" + name, bytes(corrupt)


def write(folder, name, data):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as out:
        out.write(data)
    print(os.path.join(folder, name), len(data), "bytes")


def main():
    root, fixture = sys.argv[1], sys.argv[2]
    for name, seed in seeds():
        write(os.path.join(root, "corpus", "model"), name + ".onnx", seed.SerializeToString())
    for name, found in past_findings():
        data = found.SerializeToString()
        if name == "non_utf8_names":
            data = data.replace(b"in_name", b"in_\xff\xfe\x80e")
        write(os.path.join(root, "findings", "model"), name + ".onnx", data)
    for name, data in corrupt_artifacts(fixture):
        write(os.path.join(root, "findings", "artifact"), name + ".so", data)


if __name__ == "__main__":
    main()
