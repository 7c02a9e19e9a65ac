"""Several Python threads running one model: each run has an executor of its own and the
GIL is released while it runs."""
import threading
import time

import numpy as np

import loom


def test_threads_share_one_model(compiled_cnn):
    rng = np.random.default_rng(5)
    images = [rng.uniform(-1, 1, (1, 3, 16, 16)).astype(np.float32) for _ in range(4)]
    expected = [compiled_cnn(image)["probs"] for image in images]
    errors = []
    mismatches = []

    def worker(index):
        try:
            for _ in range(25):
                got = compiled_cnn(images[index])["probs"]
                if not np.array_equal(got, expected[index]):
                    mismatches.append(index)
        except Exception as error:  # reported below, not lost in the thread
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and not mismatches


def test_runs_release_the_gil(compiled_cnn, image):
    # Thread A times many runs in one C++ call; the main thread, once A is inside it, sleeps a
    # little and runs Python code. It can finish before A's call returns only if the call
    # released the GIL: a call holding it would keep every other thread waiting until it
    # returned. (No timing threshold: only the order of two events.)
    times = {}
    inside = threading.Event()

    def timed_runs():
        inside.set()
        times["start"] = time.perf_counter()
        compiled_cnn._impl.time([("image", image)], 0, 100000, 1)
        times["end"] = time.perf_counter()

    runner = threading.Thread(target=timed_runs)
    runner.start()
    inside.wait()
    time.sleep(0.05)
    total = sum(range(10000))
    times["python"] = time.perf_counter()
    runner.join()
    assert total == 49995000
    assert times["python"] < times["end"], times


def test_compiles_on_threads(small_cnn, image):
    results = [None, None]

    def compile_and_run(i):
        results[i] = loom.compile(small_cnn, opt_level=i + 2)(image)["probs"]

    threads = [threading.Thread(target=compile_and_run, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    np.testing.assert_allclose(results[0], results[1], rtol=1e-5, atol=1e-7)
