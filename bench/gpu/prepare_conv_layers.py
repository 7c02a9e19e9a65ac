#!/usr/bin/env python3
"""ResNet-50's and MobileNetV2's convolutions, one artifact each, for scripts/gpu-check.sh:
every distinct conv2d of torchvision's resnet50 and mobilenet_v2 at batch 1 (224 x 224), found
by running the models here, becomes an ONNX model of that convolution alone (no bias) with
the data and the weight both inputs, so that the artifacts carry no weights; each is compiled
by `loom compile --target "cuda -arch=ARCH"` into OUT/<layer>.so. OUT/layers.json lists the
layers (model, shape, stride, padding, groups and how many times the network has each),
which bench/gpu/conv_layers.py times there against PyTorch's cuDNN convolution. Each layer is compiled twice: with the target's default
schedules (OUT/<layer>.so) and with the tiled implicit product turned off
(`-conv2d-tiled=false`, OUT/<layer>_untiled.so), and a 3x3 one of stride 1 and one group
also as Winograd F(4x4, 3x3) (`-conv2d-winograd=true`, OUT/<layer>_winograd.so: its weight,
an input here, is transformed by a kernel on every run, which a model's constant weight is
not), so that the run shows which is faster where."""

import argparse
import json
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "python"))


MODELS = ("resnet50", "mobilenet_v2")


def convolutions(model_name):
    """The distinct convolutions of torchvision's `model_name` at batch 1, in order of first
    use, each with how many times it occurs."""
    import torch
    import torchvision

    model = getattr(torchvision.models, model_name)().eval()
    layers = {}

    def record(module, inputs, _output):
        x = inputs[0]
        key = (tuple(x.shape), module.out_channels, module.kernel_size, module.stride,
               module.padding, module.groups)
        layers[key] = layers.get(key, 0) + 1

    for module in model.modules():
        if isinstance(module, torch.nn.Conv2d):
            module.register_forward_hook(record)
    with torch.no_grad():
        model(torch.zeros(1, 3, 224, 224))
    return layers


def conv_model(path, input_shape, out_channels, kernel, stride, padding, groups):
    import onnx
    from onnx import TensorProto, helper

    n, c, h, w = input_shape
    weight_shape = [out_channels, c // groups, kernel[0], kernel[1]]
    out_h = (h + 2 * padding[0] - kernel[0]) // stride[0] + 1
    out_w = (w + 2 * padding[1] - kernel[1]) // stride[1] + 1
    node = helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=list(kernel),
                            strides=list(stride), group=groups,
                            pads=[padding[0], padding[1], padding[0], padding[1]])
    graph = helper.make_graph(
        [node], "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(input_shape)),
         helper.make_tensor_value_info("w", TensorProto.FLOAT, weight_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n, out_channels, out_h, out_w])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return weight_shape


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loom", required=True, help="the loom binary")
    parser.add_argument("--out", required=True, help="the bundle's conv_layers folder")
    parser.add_argument("--arch", default="sm_90", help="the cuda target's -arch")
    args = parser.parse_args()

    from loom_models import loom_tool

    os.makedirs(args.out, exist_ok=True)
    manifest = []
    layers = [(model, key, count) for model in MODELS for key, count in convolutions(model).items()]
    for index, (model, key, count) in enumerate(layers):
        input_shape, out_channels, kernel, stride, padding, groups = key
        name = (f"{model}_{index:02d}_c{input_shape[1]}_{input_shape[2]}x{input_shape[3]}"
                f"_k{out_channels}_{kernel[0]}x{kernel[1]}_s{stride[0]}"
                + (f"_g{groups}" if groups > 1 else ""))
        onnx_path = os.path.join(args.out, name + ".onnx")
        weight_shape = conv_model(onnx_path, input_shape, out_channels, kernel, stride, padding,
                                  groups)
        variants = [("", ""), ("_untiled", " -conv2d-tiled=false")]
        if tuple(kernel) == (3, 3) and tuple(stride) == (1, 1) and groups == 1:
            variants.append(("_winograd", " -conv2d-winograd=true"))
        for suffix, options in variants:
            loom_tool.compile_model(args.loom, onnx_path, os.path.join(args.out, name + suffix + ".so"),
                                    extra_args=["--target", f"cuda -arch={args.arch}{options}"])
        os.remove(onnx_path)
        manifest.append({"model": model, "name": name, "input": list(input_shape),
                         "weight": weight_shape, "stride": list(stride), "padding": list(padding),
                         "groups": groups, "count": count})
        print(f"{name}: x {list(input_shape)} w {weight_shape} stride {stride[0]} "
              f"(x{count} in {model})")
    with open(os.path.join(args.out, "layers.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
