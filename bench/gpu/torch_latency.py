#!/usr/bin/env python3
"""torch_latency.py MODEL: batch-1 latency of torchvision's MODEL in PyTorch on cuda:0
(cuDNN's convolutions, float32 without TF32), the median of 50 runs after 10, for
scripts/gpu-check.sh to print beside Loom's."""

import statistics
import sys
import time

import torch
import torchvision


def main():
    name = sys.argv[1]
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    model = getattr(torchvision.models, name)().eval().cuda()
    x = torch.randn(1, 3, 224, 224, device="cuda")
    times = []
    with torch.no_grad():
        for i in range(60):
            torch.cuda.synchronize()
            start = time.perf_counter()
            model(x)
            torch.cuda.synchronize()
            if i >= 10:
                times.append((time.perf_counter() - start) * 1e3)
    print(f"torch {torch.__version__} cuDNN {torch.backends.cudnn.version()} {name}: "
          f"median_ms={statistics.median(times):.3f} min_ms={min(times):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
