"""A reduced ResNet (and a small MLP) on VTA, end to end through the CLI: a model built here with onnx.helper (a
3-channel stem convolution, max pooling, a residual block of 16 channels, a strided block of 32
channels with a 1x1 downsample, global average pooling and a classifier; random weights),
quantized with the power-of-two scheme and compiled twice from the same calibration: for
`--target vta` (the convolutions on VTA's simulator, the rest on the host) and for the host
alone. On seeded inputs the two artifacts must give the same logits bit for bit; `loom
inspect` must list the packed convolutions, and `loom bench` the simulator's counters. The
MLP's two inner dense layers run on VTA as 1x1 convolutions, also bit for bit.

The same with tilings tuned on the simulator (`loom tune --target vta`, then `loom compile
--records`), with a GEMM core of 32x32 (vta/configs/block32.json: 16-channel layers padded
to 32 where that at most doubles their work), with the smaller buffers (half of each) of vta/configs/small_buffers.json (compiled with -config,
run on a device configured with --vta-config), with one virtual thread, and a batch of 2 on
a core of batch 2 (vta/configs/batch2.json); a model run on a device of another
configuration is refused with a message naming both.

Usage: vta_resnet_test.py LOOM_BINARY CONFIG_DIR. Exits 77 (skipped) without numpy or onnx.
"""

import os
import re
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as error:
    print(f"SKIP: {error}")
    sys.exit(77)

LOOM = sys.argv[1]
CONFIGS = sys.argv[2]
SMALL_BUFFERS = os.path.join(CONFIGS, "small_buffers.json")
BLOCK32 = os.path.join(CONFIGS, "block32.json")
RNG = np.random.RandomState(7)


def conv(nodes, inits, name, x, cin, cout, k, stride):
    w = (RNG.randn(cout, cin, k, k) * np.sqrt(2.0 / (cin * k * k))).astype(np.float32)
    b = (RNG.randn(cout) * 0.1).astype(np.float32)
    inits += [numpy_helper.from_array(w, f"{name}.w"), numpy_helper.from_array(b, f"{name}.b")]
    nodes.append(helper.make_node("Conv", [x, f"{name}.w", f"{name}.b"], [name], name=name,
                                  kernel_shape=[k, k], strides=[stride, stride],
                                  pads=[k // 2] * 4))
    return name


def relu(nodes, x, name):
    nodes.append(helper.make_node("Relu", [x], [name], name=name))
    return name


def block(nodes, inits, name, x, cin, cout, stride):
    y = relu(nodes, conv(nodes, inits, f"{name}.conv1", x, cin, cout, 3, stride), f"{name}.relu1")
    y = conv(nodes, inits, f"{name}.conv2", y, cout, cout, 3, 1)
    shortcut = x if stride == 1 and cin == cout else conv(nodes, inits, f"{name}.down", x, cin,
                                                          cout, 1, stride)
    nodes.append(helper.make_node("Add", [y, shortcut], [f"{name}.add"], name=f"{name}.add"))
    return relu(nodes, f"{name}.add", f"{name}.relu2")


def reduced_resnet(path, batch=1):
    nodes, inits = [], []
    x = relu(nodes, conv(nodes, inits, "stem", "image", 3, 16, 3, 2), "stem.relu")
    nodes.append(helper.make_node("MaxPool", [x], ["pool"], name="pool", kernel_shape=[3, 3],
                                  strides=[2, 2], pads=[1, 1, 1, 1]))
    x = block(nodes, inits, "layer1", "pool", 16, 16, 1)
    x = block(nodes, inits, "layer2", x, 16, 32, 2)
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["gap"], name="gap"))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], name="flat"))
    fc_w = (RNG.randn(10, 32) * 0.2).astype(np.float32)
    inits += [numpy_helper.from_array(fc_w, "fc.w"),
              numpy_helper.from_array(np.zeros(10, np.float32), "fc.b")]
    nodes.append(helper.make_node("Gemm", ["flat", "fc.w", "fc.b"], ["logits"], name="fc",
                                  transB=1))
    graph = helper.make_graph(
        nodes, "reduced_resnet",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [batch, 3, 64, 64])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, path)


def mlp(path):
    """Three dense layers (64 -> 40 -> 24 -> 10) with ReLUs: the first two requantize to int8
    for the next (VTA's, their 40 and 24 channels padded to blocks of 16), the last one's
    float output stays on the host."""
    nodes, inits, x = [], [], "features"
    for i, (k, m) in enumerate(((64, 40), (40, 24), (24, 10))):
        w = (RNG.randn(m, k) * np.sqrt(2.0 / k)).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"fc{i}.w"),
                  numpy_helper.from_array((RNG.randn(m) * 0.1).astype(np.float32), f"fc{i}.b")]
        nodes.append(helper.make_node("Gemm", [x, f"fc{i}.w", f"fc{i}.b"], [f"fc{i}"],
                                      name=f"fc{i}", transB=1))
        x = f"fc{i}"
        if i < 2:
            x = relu(nodes, x, f"relu{i}")
    graph = helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("features", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, path)


def loom(*args, status=0):
    result = subprocess.run([LOOM, *args], capture_output=True, text=True, timeout=600)
    if status != 0:
        return result.returncode, result.stderr
    if result.returncode != 0:
        print(f"FAIL: `loom {' '.join(args)}` exited {result.returncode}:\n{result.stderr}")
        sys.exit(1)
    return result.stdout


def main():
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "resnet.onnx")
        reduced_resnet(model)
        samples = os.path.join(tmp, "calibration.npy")
        np.save(samples, RNG.rand(4, 1, 3, 64, 64).astype(np.float32) * 2 - 1)
        quantize = ["--quantize", "int8", "--quantize-scheme", "power-of-two",
                    "--calibration", f"image={samples}", "--quantize-every-layer", "-q"]
        on_vta, on_host = os.path.join(tmp, "vta.so"), os.path.join(tmp, "host.so")
        small, one_thread = os.path.join(tmp, "small.so"), os.path.join(tmp, "one_thread.so")
        loom("compile", model, "-o", on_vta, "--target", "vta", *quantize)
        loom("compile", model, "-o", on_host, *quantize)
        loom("compile", model, "-o", small, "--target", f"vta -config={SMALL_BUFFERS}", *quantize)
        loom("compile", model, "-o", one_thread, "--target", "vta -virtual-threads=1", *quantize)
        # Blocks of 32 channels: the 16-channel layers would be padded to 32, four times the
        # work for layer1's convolutions (the host), twice for layer2's first ones (VTA).
        block32 = os.path.join(tmp, "block32.so")
        loom("compile", model, "-o", block32, "--target", f"vta -config={BLOCK32}", *quantize)
        placed32 = re.findall(r"^  (vta|host)\s+(\S+?)(?::|$)", loom("inspect", block32),
                              re.MULTILINE)
        if sorted(layer for device, layer in placed32 if device == "vta") != \
                ["layer2.conv1", "layer2.conv2", "layer2.down"]:
            failures.append(f"with blocks of 32 the layers were placed {placed32}")
        # The tilings tuned on the simulator (every space is small: the run ends early), then
        # compiled from the records.
        records, tuned = os.path.join(tmp, "vta.jsonl"), os.path.join(tmp, "tuned.so")
        tune_report = loom("tune", model, "--target", "vta", "--budget", "60s", "--records",
                           records, *quantize)
        if re.search(r"^tuned 5 tasks", tune_report, re.MULTILINE) is None:
            failures.append(f"tune found no 5 VTA convolutions:\n{tune_report}")
        loom("compile", model, "-o", tuned, "--target", "vta", "--records", records, *quantize)

        listing = loom("inspect", on_vta)
        packed = re.findall(r"fused_vta_conv2d_packed\S*", listing)
        # Five convolutions on VTA: the stem's 3 input channels padded to a block of 16
        # would multiply its work by 5.3.
        if len(packed) != 5:
            failures.append(f"{len(packed)} packed convolutions in the listing, expected 5:\n"
                            f"{listing}")
        if "fused_qnn_conv2d" not in listing:
            failures.append("the stem convolution is not on the host")
        placed = re.findall(r"^  (vta|host)\s+(\S+?)(?:: (.*))?$", listing, re.MULTILINE)
        vta_layers = [layer for device, layer, _ in placed if device == "vta"]
        host_layers = {layer: why for device, layer, why in placed if device == "host"}
        if len(vta_layers) != 5 or \
                "would multiply its work by 5.3" not in host_layers.get("stem", ""):
            failures.append(f"the placement listing is not 5 layers on vta and the stem on the "
                            f"host for its channels:\n{listing}")

        for seed in range(3):
            image = os.path.join(tmp, f"image{seed}.npy")
            np.save(image, np.random.RandomState(seed).rand(1, 3, 64, 64).astype(np.float32) * 2 - 1)
            outputs = {}
            for name, artifact, device in (("vta", on_vta, []), ("host", on_host, []),
                                           ("small", small, ["--vta-config", SMALL_BUFFERS]),
                                           ("one_thread", one_thread, []),
                                           ("tuned", tuned, []),
                                           ("block32", block32, ["--vta-config", BLOCK32])):
                out_dir = os.path.join(tmp, f"{name}{seed}")
                loom("run", artifact, "--input", f"image={image}", "--output-dir", out_dir,
                     *device)
                outputs[name] = np.load(os.path.join(out_dir, "logits.npy"))
            for name in ("vta", "small", "one_thread", "tuned", "block32"):
                if not np.array_equal(outputs[name], outputs["host"]):
                    failures.append(f"input {seed}: {name} logits {outputs[name]} differ from "
                                    f"the host's {outputs['host']}")

        status, error = loom("run", on_vta, "--vta-config", SMALL_BUFFERS, status=1)
        if status != 1 or "compiled for the vta configuration" not in error or \
                '"LOG_ACC_BUFF_SIZE": 17' not in error or '"LOG_ACC_BUFF_SIZE": 16' not in error:
            failures.append(f"a device of another configuration was not refused naming both: "
                            f"exit {status}, {error}")

        report = loom("bench", on_vta, "--repeat", "1", "--warmup", "0")
        counters = dict(re.findall(r"counter (\w+)=(\d+)", report))
        if re.search(r"vta_kernel_runs=5\b", report) is None:
            failures.append(f"bench reports no 5 VTA kernel runs:\n{report}")
        # Every multiply-accumulate of the five convolutions, 16x16 per GEMM micro-op.
        macs = (16 * 16 * 16 * 16 * 9 * 2 + 16 * 32 * 8 * 8 * 9 + 32 * 32 * 8 * 8 * 9 +
                16 * 32 * 8 * 8)
        if int(counters.get("gemm_counter", 0)) * 16 * 16 != macs:
            failures.append(f"gemm_counter {counters.get('gemm_counter')} is not {macs} / 256")
        if re.search(r"cycles total=\d+ gemm_utilization=0\.\d+", report) is None:
            failures.append(f"bench reports no cycles:\n{report}")
        profile = loom("bench", on_vta, "--repeat", "1", "--warmup", "0", "--profile")
        per_kernel = [int(c) for c in re.findall(r"^\s+\d+\s+[\d.]+\s+[\d.]+%\s+(\d+)  fused_vta",
                                                 profile, re.MULTILINE)]
        if len(per_kernel) != 5 or min(per_kernel) == 0:
            failures.append(f"the profile has no simulated cycles for each VTA kernel:\n{profile}")

        # A batch of 2 on a core of batch 2 (vta/configs/batch2.json): blocks of 2 images.
        batched = os.path.join(tmp, "resnet_batch2.onnx")
        reduced_resnet(batched, batch=2)
        batch_config = os.path.join(CONFIGS, "batch2.json")
        batch_samples = os.path.join(tmp, "calibration2.npy")
        np.save(batch_samples, RNG.rand(2, 2, 3, 64, 64).astype(np.float32) * 2 - 1)
        batch_quantize = quantize[:5] + [f"image={batch_samples}"] + quantize[6:]
        b2_vta, b2_host = os.path.join(tmp, "b2_vta.so"), os.path.join(tmp, "b2_host.so")
        loom("compile", batched, "-o", b2_vta, "--target", f"vta -config={batch_config}",
             *batch_quantize)
        loom("compile", batched, "-o", b2_host, *batch_quantize)
        images = os.path.join(tmp, "images2.npy")
        np.save(images, RNG.rand(2, 3, 64, 64).astype(np.float32) * 2 - 1)
        outputs = []
        for artifact, device in ((b2_vta, ["--vta-config", batch_config]), (b2_host, [])):
            out_dir = artifact + ".out"
            loom("run", artifact, "--input", f"image={images}", "--output-dir", out_dir, *device)
            outputs.append(np.load(os.path.join(out_dir, "logits.npy")))
        if not np.array_equal(outputs[0], outputs[1]):
            failures.append(f"batch 2: the VTA logits {outputs[0]} differ from the host's "
                            f"{outputs[1]}")
        if len(re.findall(r"^  vta ", loom("inspect", b2_vta), re.MULTILINE)) != 5:
            failures.append("batch 2: not 5 convolutions on VTA")

        # Dense layers on VTA: 1x1 convolutions of a 1x1 image.
        dense = os.path.join(tmp, "mlp.onnx")
        mlp(dense)
        features = os.path.join(tmp, "features.npy")
        np.save(features, RNG.rand(4, 1, 64).astype(np.float32) * 2 - 1)
        dense_quantize = quantize[:5] + [f"features={features}"] + quantize[6:]
        mlp_vta, mlp_host = os.path.join(tmp, "mlp_vta.so"), os.path.join(tmp, "mlp_host.so")
        loom("compile", dense, "-o", mlp_vta, "--target", "vta", *dense_quantize)
        loom("compile", dense, "-o", mlp_host, *dense_quantize)
        listing = loom("inspect", mlp_vta)
        placed = re.findall(r"^  (vta|host)\s+(\S+?)(?::|$)", listing, re.MULTILINE)
        if placed != [("vta", "fc0"), ("vta", "fc1"), ("host", "fc2")] or \
                "channels padded to whole blocks: 40 -> 48 in, 24 -> 32 out" not in listing:
            failures.append(f"the dense layers were placed {placed}, expected fc0 and fc1 on vta")
        outputs = []
        sample = os.path.join(tmp, "sample.npy")
        np.save(sample, RNG.rand(1, 64).astype(np.float32) * 2 - 1)
        for artifact in (mlp_vta, mlp_host):
            out_dir = artifact + ".out"
            loom("run", artifact, "--input", f"features={sample}", "--output-dir", out_dir)
            outputs.append(np.load(os.path.join(out_dir, os.listdir(out_dir)[0])))
        if not np.array_equal(outputs[0], outputs[1]):
            failures.append(f"the MLP's VTA output {outputs[0]} differs from the host's "
                            f"{outputs[1]}")

    for failure in failures:
        print(f"FAIL: {failure}")
    if failures:
        sys.exit(1)
    print("the reduced ResNet on VTA matches the host bit for bit")


if __name__ == "__main__":
    main()
