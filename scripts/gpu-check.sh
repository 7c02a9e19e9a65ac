#!/usr/bin/env bash
# The CUDA check for a machine with an NVIDIA GPU, in two steps, because such a machine may
# lack what Loom's compiler needs (LLVM) while this project's machines lack a GPU:
#
#   scripts/gpu-check.sh prepare [BUNDLE]   here: builds Loom, compiles the checks' kernels
#                                           for cuda (NVRTC, -arch=sm_90 unless GPU_ARCH is set)
#                                           into BUNDLE (default gpu-bundle/) with the runtime
#                                           and loom-gpu-check, stripped (a few MiB)
#   scripts/gpu-check.sh run [BUNDLE]       on the GPU machine: runs every kernel there and
#                                           compares it with the host's output, then times
#                                           float32 GEMM (1024^3, 4096^3) at several tilings
#                                           against cuBLAS in the same process; then each
#                                           model of GPU_CHECK_MODELS (default resnet18;
#                                           set but empty: none) against ONNX Runtime and
#                                           its latency beside PyTorch's (cuDNN); then each
#                                           distinct convolution of ResNet-50 and MobileNetV2
#                                           (tiled and not, Winograd) against cuDNN's
#                                           (output, latency, geometric mean of the
#                                           ratios); then the shared-memory kernels (tiles,
#                                           cross-thread reductions) under
#                                           compute-sanitizer's race detector; under 5
#                                           minutes
#
# What `run` prints is also written to $OUT/gpu-check.log when OUT is set (the device tool's
# output folder). Exit status: 0 when every output is correct.
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-}"
bundle="${2:-gpu-bundle}"

case "$mode" in
  prepare)
    cmake --build build -j"$(nproc)" --target loom-gpu-prepare loom-gpu-check
    rm -rf "$bundle"
    mkdir -p "$bundle/lib"
    build/bench/loom-gpu-prepare "$bundle/cases" --arch "${GPU_ARCH:-sm_90}"
    cp build/bench/loom-gpu-check build/tools/loom/loom "$bundle/"
    cp -L build/libloom_runtime.so build/libloom_vta.so "$bundle/lib/"
    strip --strip-debug "$bundle/loom-gpu-check" "$bundle/loom" "$bundle/lib/"*.so
    cp bench/gpu/compare_outputs.py bench/gpu/torch_latency.py bench/gpu/conv_layers.py "$bundle/"
    # Whole models (each artifact holds its weights: ResNet-18's 47 MB is about what one
    # device call can carry).
    if [[ -n "${GPU_CHECK_MODELS-resnet18}" ]]; then
      .venv/bin/python3 bench/gpu/prepare_models.py --loom build/tools/loom/loom \
        --out "$bundle/models" --arch "${GPU_ARCH:-sm_90}" ${GPU_CHECK_MODELS-resnet18}
    fi
    # ResNet-50's and MobileNetV2's convolutions, data and weights both inputs (no weights
    # carried).
    if [[ "${GPU_CHECK_CONV_LAYERS:-1}" == 1 ]]; then
      .venv/bin/python3 bench/gpu/prepare_conv_layers.py --loom build/tools/loom/loom \
        --out "$bundle/conv_layers" --arch "${GPU_ARCH:-sm_90}"
    fi
    du -sh "$bundle"
    ;;
  run)
    [[ -x "$bundle/loom-gpu-check" ]] || {
      echo "gpu-check: $bundle/loom-gpu-check is missing; run 'scripts/gpu-check.sh prepare' first" >&2
      exit 2
    }
    log="${OUT:-/tmp}/gpu-check.log"
    {
      nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader || true
      # cuBLAS: the toolkit's, else PyTorch's copy.
      cublas_dir=""
      for candidate in /usr/local/cuda/lib64 $(python3 -c 'import nvidia.cublas, os; print(os.path.dirname(nvidia.cublas.__file__) + "/lib")' 2>/dev/null); do
        if ls "$candidate"/libcublas.so* >/dev/null 2>&1; then cublas_dir="$candidate"; break; fi
      done
      echo "cuBLAS from: ${cublas_dir:-not found}"
      export LD_LIBRARY_PATH="$bundle/lib:${cublas_dir}:${LD_LIBRARY_PATH:-}"
      "$bundle/loom-gpu-check" "$bundle/cases"
      # The barriers ThreadSync placed, checked by the hardware's race detector where it runs.
      # Whole models: Loom's outputs against ONNX Runtime's (computed when prepared), then
      # batch-1 latency beside PyTorch's (cuDNN) on the same GPU.
      for model_dir in "$bundle"/models/*/; do
        [[ -f "$model_dir/model.so" ]] || continue
        model="$(basename "$model_dir")"
        inputs=()
        for input in "$model_dir"/inputs/*.npy; do
          inputs+=(--input "$(basename "$input" .npy)=$input")
        done
        echo "== $model"
        "$bundle/loom" run "$model_dir/model.so" "${inputs[@]}" --output-dir "/tmp/$model.out" \
          --values 4
        python3 "$bundle/compare_outputs.py" "/tmp/$model.out" "$model_dir/expected"
        "$bundle/loom" bench "$model_dir/model.so" --repeat 50 --warmup 10 --profile | head -40
        python3 "$bundle/torch_latency.py" "$model" || true
      done
      status=0
      if [[ -f "$bundle/conv_layers/layers.json" ]]; then
        echo "== resnet50 and mobilenet_v2 convolutions against cuDNN"
        python3 "$bundle/conv_layers.py" "$bundle/loom" "$bundle/conv_layers" || status=1
      fi
      if command -v compute-sanitizer >/dev/null; then
        compute-sanitizer --tool racecheck --racecheck-report hazard --error-exitcode 3 \
          "$bundle/loom-gpu-check" "$bundle/cases" shared_matmul row_sum total_sum tensor_core
      fi
      exit "$status"
    } 2>&1 | tee "$log"
    exit "${PIPESTATUS[0]}"
    ;;
  *)
    echo "usage: scripts/gpu-check.sh prepare|run [BUNDLE]" >&2
    exit 2
    ;;
esac
