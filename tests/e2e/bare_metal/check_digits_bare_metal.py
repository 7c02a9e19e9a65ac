#!/usr/bin/env python3
"""The `make demo` digit classifier on bare metal, under emulation.

Trains the demo's CNN (seeded, as `make demo` does), then:
1. on the host: `loom compile` (llvm) and `loom run` classify the held-out digits;
2. for the micro-controller: `loom compile --target mps2-an386 --executor aot --runtime crt`
   writes C; arm-none-eabi-gcc builds it with examples/bare_metal/ (start-up code, linker
   script, classify_digits.c) into a Cortex-M4 image; qemu-system-arm runs it on the MPS2
   AN386 board, printing each prediction over semihosting.
Passes when every prediction equals the host's. Prints the logits' largest difference, the
image's flash and RAM use (text + const data; data + bss, the workspace among it), and the
micro runtime's own size.
Exit status: 0 pass, 1 fail, 77 skipped (the Python environment lacks a package).
"""

import argparse
import importlib
import os
import re
import shutil
import struct
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, os.path.join(REPO, "python", "demo"))
EXAMPLE = os.path.join(REPO, "examples", "bare_metal")

SKIP = 77
TOOLS = ("arm-none-eabi-gcc", "arm-none-eabi-size", "qemu-system-arm")
# The Cortex-M4 with its single-precision FPU, hard-float calling convention.
CPU_FLAGS = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"]


def run(command, timeout=600):
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        raise RuntimeError(f"`{' '.join(command)}` exited with {result.returncode}:\n"
                           f"{result.stdout}{result.stderr}")
    return result.stdout


def write_samples(path, images):
    """digit_samples.h: the images as float bit patterns (exact)."""
    lines = [f"#define NUM_SAMPLES {len(images)}",
             "#include <stdint.h>",
             "static const union { uint32_t bits; float value; } "
             f"sample_words[{len(images)}][64] = {{"]
    for image in images:
        words = struct.unpack("<64I", image.astype("<f4").tobytes())
        lines.append("  {" + ",".join(f"{{0x{w:08x}u}}" for w in words) + "},")
    lines.append("};")
    lines.append("#define samples ((const float (*)[64])sample_words)")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def section_sizes(elf):
    """{section: bytes} from arm-none-eabi-size -A."""
    sizes = {}
    for line in run(["arm-none-eabi-size", "-A", elf]).splitlines():
        fields = line.split()
        if len(fields) >= 2 and fields[0].startswith(".") and fields[1].isdigit():
            sizes[fields[0]] = int(fields[1])
    return sizes


def object_bytes(obj):
    """text + data + bss of one object file (arm-none-eabi-size -B)."""
    line = run(["arm-none-eabi-size", "-B", obj]).splitlines()[1].split()
    return int(line[0]), int(line[1]), int(line[2])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loom", required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--digits", type=int, default=None,
                        help="how many held-out digits to classify (default: all)")
    args = parser.parse_args()

    for package in ("numpy", "torch", "sklearn", "onnx"):
        try:
            importlib.import_module(package)
        except ImportError:
            print(f"skipped: this Python lacks {package} (`make deps` installs it)")
            return SKIP
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        print(f"FAIL: {', '.join(missing)} not found; `make deps` installs the packages "
              "gcc-arm-none-eabi, libnewlib-arm-none-eabi and qemu-system-arm")
        return 1

    import numpy as np
    import run_demo
    from loom_models import loom_tool

    os.makedirs(args.workdir, exist_ok=True)
    train_x, test_x, train_y, _ = run_demo.load_digits_split()
    model = run_demo.train_classifier(train_x, train_y)
    onnx_path = os.path.join(args.workdir, "digits_cnn.onnx")
    run_demo.export_classifier(model, onnx_path)
    images = test_x[:args.digits] if args.digits else test_x

    # 1. The host.
    host_artifact = os.path.join(args.workdir, "digits_host.so")
    loom_tool.compile_model(args.loom, onnx_path, host_artifact,
                            input_shapes={"digits": images.shape})
    host_logits = loom_tool.run_model(args.loom, host_artifact, {"digits": images},
                                      os.path.join(args.workdir, "host_run"))["logits"]
    host_classes = host_logits.argmax(1)

    # 2. The micro-controller.
    source_dir = os.path.join(args.workdir, "digits_c")
    shutil.rmtree(source_dir, ignore_errors=True)
    aot_command = [args.loom, "compile", onnx_path, "-q", "-o", source_dir,
                   "--input-shape", "digits=1x1x8x8", "--executor", "aot", "--runtime", "crt",
                   "--name", "digits", "--target"]
    # A board with too little RAM for the workspace is a compile error with the figures.
    small = subprocess.run(aot_command + ["mps2-an386 -ram-bytes=4096"], capture_output=True,
                           text=True)
    if small.returncode == 0 or "needs a workspace of 12 KiB (12288 bytes)" not in small.stderr \
            or "declares 4 KiB (4096 bytes) of RAM" not in small.stderr:
        print(f"FAIL: compiling for 4 KiB of RAM should fail naming both sizes:\n"
              f"{small.stdout}{small.stderr}")
        return 1
    summary = run(aot_command + ["mps2-an386"])
    print(summary.strip())
    write_samples(os.path.join(source_dir, "digit_samples.h"), images)
    compile_flags = CPU_FLAGS + ["-std=c99", "-O2", "-Wall", "-Werror", "-ffunction-sections",
                                 "-fdata-sections", "-I", source_dir]
    objects = []
    for source in (os.path.join(source_dir, "digits.c"), os.path.join(source_dir, "loom_crt.c"),
                   os.path.join(EXAMPLE, "classify_digits.c"), os.path.join(EXAMPLE, "startup.c")):
        obj = os.path.join(args.workdir, os.path.basename(source)[:-2] + ".o")
        run(["arm-none-eabi-gcc", *compile_flags, "-c", source, "-o", obj])
        objects.append(obj)
    elf = os.path.join(args.workdir, "classify_digits.elf")
    run(["arm-none-eabi-gcc", *CPU_FLAGS, "--specs=rdimon.specs", "-nostartfiles",
         "-T", os.path.join(EXAMPLE, "mps2_an386.ld"), "-Wl,--gc-sections", *objects,
         "-lm", "-o", elf])

    output = run(["qemu-system-arm", "-M", "mps2-an386", "-nographic", "-monitor", "none",
                  "-serial", "none", "-semihosting-config", "enable=on,target=native",
                  "-kernel", elf], timeout=600)
    classes, logits = {}, {}
    for match in re.finditer(r"^digit (\d+) class (\d+) logits((?: [0-9a-f]{8}){10})$", output,
                             re.MULTILINE):
        n = int(match.group(1))
        classes[n] = int(match.group(2))
        words = [int(w, 16) for w in match.group(3).split()]
        logits[n] = np.frombuffer(struct.pack("<10I", *words), dtype="<f4")
    done = re.search(r"^done: (\d+) digits, scratch peak (\d+) bytes$", output, re.MULTILINE)
    if done is None or len(classes) != len(images):
        print(f"FAIL: the board printed {len(classes)} of {len(images)} predictions:\n{output}")
        return 1

    device_classes = np.array([classes[n] for n in range(len(images))])
    device_logits = np.stack([logits[n] for n in range(len(images))])
    differ = int((device_classes != host_classes).sum())
    max_diff = float(np.abs(device_logits - host_logits).max())
    print(f"{len(images)} held-out digits on the emulated Cortex-M4: {differ} predictions "
          f"differ from the host's; max |logit difference| {max_diff:.2g}")

    sizes = section_sizes(elf)
    flash = sizes.get(".text", 0) + sizes.get(".ARM.exidx", 0) + sizes.get(".data", 0) + sum(
        sizes.get(s, 0) for s in (".init_array", ".preinit_array", ".fini_array"))
    ram = sizes.get(".data", 0) + sizes.get(".bss", 0)
    model_text, model_data, model_bss = object_bytes(objects[0])
    crt_text, crt_data, crt_bss = object_bytes(objects[1])
    header = open(os.path.join(source_dir, "digits.h")).read()
    workspace = int(re.search(r"#define DIGITS_WORKSPACE_SIZE (\d+)", header).group(1))
    weights = int(re.search(r"#define DIGITS_WEIGHT_SIZE (\d+)", header).group(1))
    print(f"image: flash {flash} bytes (text + const data + data's image), "
          f"RAM {ram} bytes (data + bss) plus the stack")
    print(f"model (digits.o): {model_text} bytes of code and const data, of which "
          f"{weights} weights; workspace {workspace} bytes (in the harness's bss)")
    print(f"micro runtime (loom_crt.o): {crt_text} bytes of code, {crt_data + crt_bss} bytes "
          f"of data; scratch peak {done.group(2)} bytes")
    if differ:
        print("FAIL: the board's predictions differ from the host's")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
