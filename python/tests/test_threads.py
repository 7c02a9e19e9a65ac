"""Several Python threads running one model: each run has an executor of its own and the
GIL is released while it runs."""
import threading

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
    # While the C++ loop of benchmark runs (the GIL released), another thread keeps running
    # Python code: its count grows during the call, not only before and after it. A call
    # holding the GIL for its whole C++ loop would let it grow only in the few Python steps
    # around the loop (the interpreter switches threads every 5 ms).
    started = threading.Event()
    stop = threading.Event()
    ticks = [0]

    def python_work():
        started.set()
        while not stop.is_set():
            ticks[0] += 1

    ticker = threading.Thread(target=python_work)
    ticker.start()
    started.wait()
    runs = 400
    before = ticks[0]
    result = compiled_cnn.benchmark(repeat=runs, warmup=0, inputs={"image": image})
    during = ticks[0] - before
    stop.set()
    ticker.join()
    # At least one tick per run of the model (each run takes tens of microseconds; a Python
    # loop ticks millions of times a second).
    assert during > runs, (during, result)


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
