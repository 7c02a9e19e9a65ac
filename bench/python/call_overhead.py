"""What calling a model from Python costs, in one process: the median time of `model(x)`
(inputs converted, outputs copied to NumPy, an executor leased) against the C++ loop of
`model.benchmark` on the same model, for a small and a larger model; then the throughput of
two Python threads running one model against one thread.

    PYTHONPATH=build/python .venv/bin/python bench/python/call_overhead.py
"""
import statistics
import sys
import threading
import time

import numpy as np

import loom

sys.path.insert(0, "python/tests")
from conftest import make_small_cnn  # noqa: E402


def python_loop_ms(model, x, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        model(x)
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def throughput(model, x, threads, seconds=2.0):
    done = [0] * threads
    stop = time.perf_counter() + seconds

    def worker(i):
        while time.perf_counter() < stop:
            model(x)
            done[i] += 1

    workers = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return sum(done) / seconds


for batch in (1, 16):
    model = loom.compile(make_small_cnn(batch=batch))
    model.num_threads = 1
    x = np.random.default_rng(0).uniform(-1, 1, (batch, 3, 16, 16)).astype(np.float32)
    for _ in range(3):
        cpp = model.benchmark(repeat=200, warmup=20, threads=1).median_ms
        py = python_loop_ms(model, x, 200)
        print(f"small CNN batch {batch:>2}: C++ loop {cpp * 1e3:8.1f} us, model(x) from Python "
              f"{py * 1e3:8.1f} us, overhead {(py - cpp) * 1e3:6.1f} us ({py / cpp:.2f}x)")
model = loom.compile(make_small_cnn(batch=16))
model.num_threads = 1
x = np.random.default_rng(0).uniform(-1, 1, (16, 3, 16, 16)).astype(np.float32)
one, two = throughput(model, x, 1), throughput(model, x, 2)
print(f"batch 16, 1 kernel thread per run: 1 Python thread {one:.0f} runs/s, 2 Python threads "
      f"{two:.0f} runs/s ({two / one:.2f}x)")
