#!/usr/bin/env python3
"""`make demo`: Loom's main job, on a model trained here and on ResNet-18.

1. Trains a small CNN on scikit-learn's handwritten digits (the dataset ships with the
   package), exports it to ONNX, compiles it with `loom compile`, classifies the held-out
   digits with `loom run`, and checks that Loom's accuracy equals PyTorch's; then quantizes
   it to int8 (`loom compile --quantize int8`, calibrated on training digits, in ONNX
   Runtime's affine scheme and in the power-of-two form VTA computes) and checks that
   it loses at most 1 point of accuracy, showing both latencies.
2. Compiles ResNet-18 (random weights) and times it with `loom bench` beside ONNX Runtime,
   both on the same number of threads; and again with `--precision bf16` (bfloat16
   products: AMX tiles where the CPU has them), checking its top-1 class against ONNX
   Runtime's and timing it in the same alternation.
Exits non-zero if any step fails or if Loom's predictions disagree with PyTorch's.
"""

import argparse
import importlib.util
import os
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "python"))

SEED = 0


def banner(text):
    print(f"\n== {text}", flush=True)


def on_threads(threads):
    return f"on {threads} thread{'s' if threads > 1 else ''}"


def ascii_digit(image):
    """An 8x8 digit (values 0..16) as text, darker characters for more ink."""
    shades = " .:-=+*#%@"
    return "\n".join("    " + "".join(shades[int(v) * (len(shades) - 1) // 16] * 2 for v in row)
                     for row in image)


def load_digits_split():
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    images = (digits.images / 16.0).astype("float32")[:, None, :, :]  # [N, 1, 8, 8]
    return train_test_split(images, digits.target, test_size=0.25, random_state=SEED,
                            stratify=digits.target)


def train_classifier(train_images, train_labels):
    """A two-conv CNN trained for a few epochs with Adam; seeded, so runs agree."""
    import torch

    torch.manual_seed(SEED)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.ReLU(),
        torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Flatten(),
        torch.nn.Linear(32 * 4 * 4, 64), torch.nn.ReLU(),
        torch.nn.Linear(64, 10))
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
    images = torch.from_numpy(train_images)
    labels = torch.from_numpy(train_labels).long()
    generator = torch.Generator().manual_seed(SEED)
    model.train()
    for _ in range(25):
        order = torch.randperm(len(images), generator=generator)
        for start in range(0, len(images), 64):
            batch = order[start:start + 64]
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(images[batch]), labels[batch])
            loss.backward()
            optimizer.step()
    return model.eval()


def export_classifier(model, path):
    """ONNX with a symbolic batch dimension, bound per artifact by `--input-shape`."""
    import torch

    with torch.no_grad():
        torch.onnx.export(model, torch.zeros(1, 1, 8, 8), path, opset_version=13,
                          input_names=["digits"], output_names=["logits"],
                          dynamic_axes={"digits": {0: "batch"}, "logits": {0: "batch"}})


def digits_demo(loom, workdir, threads):
    import numpy as np
    import torch

    from loom_models import loom_tool

    banner("1. A digit classifier: trained with PyTorch, compiled and run by Loom")
    train_x, test_x, train_y, test_y = load_digits_split()
    start = time.perf_counter()
    model = train_classifier(train_x, train_y)
    print(f"trained on {len(train_x)} digits in {time.perf_counter() - start:.1f} s; "
          f"{len(test_x)} held out")
    with torch.no_grad():
        torch_predictions = model(torch.from_numpy(test_x)).argmax(1).numpy()
    torch_accuracy = float((torch_predictions == test_y).mean())

    onnx_path = os.path.join(workdir, "digits_cnn.onnx")
    export_classifier(model, onnx_path)
    batch_artifact = os.path.join(workdir, "digits_cnn_heldout.so")
    single_artifact = os.path.join(workdir, "digits_cnn_1.so")
    compile_s = loom_tool.compile_model(loom, onnx_path, batch_artifact,
                                        input_shapes={"digits": test_x.shape})
    loom_tool.compile_model(loom, onnx_path, single_artifact,
                            input_shapes={"digits": (1, 1, 8, 8)})
    print(f"loom compile {os.path.basename(onnx_path)} --input-shape "
          f"digits={'x'.join(map(str, test_x.shape))}: {compile_s:.1f} s")

    outputs = loom_tool.run_model(loom, batch_artifact, {"digits": test_x},
                                  os.path.join(workdir, "digits_run"))
    loom_predictions = outputs["logits"].argmax(1)
    loom_accuracy = float((loom_predictions == test_y).mean())

    print("\nthe first held-out digit:")
    print(ascii_digit(np.rint(test_x[0, 0] * 16)))
    print("\n  sample  label  pytorch  loom")
    for i in range(12):
        print(f"  {i:6d}  {test_y[i]:5d}  {torch_predictions[i]:7d}  {loom_predictions[i]:4d}")
    disagreements = int((loom_predictions != torch_predictions).sum())
    print(f"\naccuracy on {len(test_y)} held-out digits: loom {loom_accuracy:.2%}, "
          f"pytorch {torch_accuracy:.2%} ({disagreements} predictions differ)")

    figures, _ = loom_tool.bench(loom, single_artifact, threads, repeat=200, warmup=20)
    batch_figures, _ = loom_tool.bench(loom, batch_artifact, threads, repeat=20, warmup=3)
    print(f"loom latency {on_threads(threads)}: one digit {figures['median_ms'] * 1e3:.1f} us "
          f"(median of 200); all {len(test_x)} held-out digits "
          f"{batch_figures['median_ms']:.2f} ms")
    if loom_accuracy != torch_accuracy or disagreements:
        print("FAIL: Loom's predictions differ from PyTorch's")
        return False
    return int8_digits_demo(loom, workdir, threads, onnx_path, train_x, test_x, test_y,
                            loom_accuracy, figures["median_ms"])


def int8_digits_demo(loom, workdir, threads, onnx_path, train_x, test_x, test_y,
                     float_accuracy, float_ms):
    """The same classifier quantized to int8 by Loom (`--quantize int8`), calibrated on
    training digits, in both schemes: its accuracy beside float32's (at most 1 point lower)
    and its latency."""
    import numpy as np

    from loom_models import loom_tool

    banner("1b. The same classifier in int8, quantized by Loom")
    # A batch artifact's input is a whole batch: one calibration sample of as many training
    # digits; the one-digit artifact takes 64 samples of one digit.
    calibration_batch = os.path.join(workdir, "digits_calibration_batch.npy")
    calibration_single = os.path.join(workdir, "digits_calibration_single.npy")
    np.save(calibration_batch, train_x[:len(test_x)])
    np.save(calibration_single, train_x[:64, None])
    passed = True
    # affine: ONNX Runtime's scheme; power-of-two: the integer-only form VTA computes.
    for scheme, suffix in (("affine", "int8"), ("power-of-two", "int8_pow2")):
        quantize = ["--quantize", "int8", "--quantize-scheme", scheme]
        batch_artifact = os.path.join(workdir, f"digits_cnn_heldout_{suffix}.so")
        single_artifact = os.path.join(workdir, f"digits_cnn_1_{suffix}.so")
        compile_s = loom_tool.compile_model(
            loom, onnx_path, batch_artifact, input_shapes={"digits": test_x.shape},
            extra_args=[*quantize, "--calibration", f"digits={calibration_batch}"])
        loom_tool.compile_model(
            loom, onnx_path, single_artifact, input_shapes={"digits": (1, 1, 8, 8)},
            extra_args=[*quantize, "--calibration", f"digits={calibration_single}"])
        print(f"loom compile {os.path.basename(onnx_path)} {' '.join(quantize)} --calibration "
              f"digits=<{len(test_x)} training digits>: {compile_s:.1f} s")
        outputs = loom_tool.run_model(loom, batch_artifact, {"digits": test_x},
                                      os.path.join(workdir, f"digits_{suffix}_run"))
        accuracy = float((outputs["logits"].argmax(1) == test_y).mean())
        figures, _ = loom_tool.bench(loom, single_artifact, threads, repeat=200, warmup=20)
        print(f"  accuracy on {len(test_y)} held-out digits: int8 ({scheme}) {accuracy:.2%}, "
              f"float32 {float_accuracy:.2%}")
        print(f"  loom latency {on_threads(threads)}, one digit: int8 "
              f"{figures['median_ms'] * 1e3:.1f} us, float32 {float_ms * 1e3:.1f} us")
        if accuracy < float_accuracy - 0.01:
            print(f"FAIL: int8 ({scheme}) lost more than 1 point of accuracy")
            passed = False
    return passed


def resnet_demo(loom, workdir, threads):
    import numpy as np

    from loom_models import loom_tool, models, reference

    banner(f"2. ResNet-18 (random weights), Loom beside ONNX Runtime {on_threads(threads)}")
    onnx_path = models.cached("resnet18", workdir)
    artifact = os.path.join(workdir, "resnet18.so")
    compile_s = loom_tool.compile_model(loom, onnx_path, artifact)
    print(f"loom compile resnet18.onnx: {compile_s:.1f} s")
    inputs = models.random_inputs("resnet18", SEED)
    got = loom_tool.run_model(loom, artifact, inputs, os.path.join(workdir, "resnet18_run"))
    expected = reference.run(onnx_path, inputs)
    max_diff = float(np.abs(got["logits"] - expected["logits"]).max())
    print(f"max |loom - onnxruntime| over the 1000 logits: {max_diff:.2g} "
          f"(largest logit {float(np.abs(expected['logits']).max()):.3g})")

    bf16_artifact = os.path.join(workdir, "resnet18_bf16.so")
    loom_tool.compile_model(loom, onnx_path, bf16_artifact, extra_args=["--precision", "bf16"])
    bf16 = loom_tool.run_model(loom, bf16_artifact, inputs, os.path.join(workdir, "resnet18_bf16"))
    a, b = bf16["logits"].ravel().astype(np.float64), expected["logits"].ravel().astype(np.float64)
    cosine = float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))
    same_top1 = int(a.argmax()) == int(b.argmax())
    print(f"loom compile resnet18.onnx --precision bf16: logits' cosine similarity to "
          f"onnxruntime's {cosine:.5f}, top-1 {'the same' if same_top1 else 'DIFFERENT'}")

    # Alternate them so that all see the same load on a busy machine.
    loom_medians, bf16_medians, ort_medians = [], [], []
    for _ in range(3):
        figures, _ = loom_tool.bench(loom, artifact, threads, repeat=10, warmup=3)
        loom_medians.append(figures["median_ms"])
        figures, _ = loom_tool.bench(loom, bf16_artifact, threads, repeat=10, warmup=3)
        bf16_medians.append(figures["median_ms"])
        ort_times = reference.time_runs(onnx_path, threads, repeat=10, warmup=3, inputs=inputs)
        ort_medians.append(float(np.median(ort_times)))
    loom_ms, ort_ms = float(np.median(loom_medians)), float(np.median(ort_medians))
    bf16_ms = float(np.median(bf16_medians))
    print(f"latency (median of 3 rounds of 10 runs): loom {loom_ms:.2f} ms, "
          f"onnxruntime {ort_ms:.2f} ms, loom/onnxruntime = {loom_ms / ort_ms:.2f}; "
          f"loom bf16 {bf16_ms:.2f} ms ({loom_ms / bf16_ms:.1f}x float32)")
    if not same_top1 or cosine < 0.99:
        print("FAIL: the bf16 model's logits stray from float32's")
        return False
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loom", required=True, help="the loom binary")
    parser.add_argument("--workdir", required=True, help="where models and artifacts go")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    if args.threads < 1:
        parser.error(f"--threads must be at least 1, got {args.threads}")
    if not os.access(args.loom, os.X_OK):
        parser.error(f"the loom binary '{args.loom}' is not an executable file")
    missing = [p for p in ("onnxruntime", "sklearn", "torch", "torchvision")
               if importlib.util.find_spec(p) is None]
    if missing:
        print(f"demo: {sys.executable} lacks {', '.join(missing)}; `make deps` installs the "
              "demo's Python packages into .venv")
        return 1
    import torch

    from loom_models import loom_tool

    os.makedirs(args.workdir, exist_ok=True)
    torch.set_num_threads(1)  # training is tiny; one thread keeps it reproducible
    try:
        ok = digits_demo(args.loom, args.workdir, args.threads)
        ok = resnet_demo(args.loom, args.workdir, args.threads) and ok
    except loom_tool.LoomError as error:
        print(f"demo: {error}")
        return 1
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
