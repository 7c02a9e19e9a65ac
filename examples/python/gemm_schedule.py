"""Scheduling a matrix multiply step by step, the way one tunes GEMM for a CPU.

The Python port of examples/gemm_schedule.cc, through loom.te (the same schedule API, with
TVM's names). The algorithm, C = A x B, is written once and never changes; each step only
changes the schedule, i.e. the loop structure lowering builds. After every step the program
prints the loop nest and runs the fully lowered function with the TIR interpreter on random
inputs, comparing the result with NumPy's matmul; it then also compiles the step with
loom.build for this CPU (LLVM) and compares that too. It exits non-zero if any step computes a
different result.

    python gemm_schedule.py [N] [--print-only]

N (a multiple of 32, default 64) is the size of the square matrices. The schedule is the one
you would use for N = 1024; only the loop extents change with N. The interpreter runs every
loop serially, one element at a time, so it shows that a schedule is *correct*, not that it
is fast: use --print-only to read the IR of a large N without running it. With --print-only
the output is the C++ example's, line for line.
"""
import sys

import numpy as np

import loom
from loom import te

# The block of C one tile computes (32 x 32 floats = 4 KiB: it stays in L1 while the tile is
# being accumulated) and how many reduction steps run per block of k.
BLOCK = 32
REDUCE_FACTOR = 4
MAX_SIZE = 32768
# float32 sums of N products of values in [-1, 1] in a different order than the reference
# differ by far less than this.
TOLERANCE = 1e-3


class Matmul:
    """C[i, j] = sum over k of A[i, k] * B[k, j]. When `packed` is set, B is first copied into
    B_packed[j / 32, k, j % 32] (one contiguous K x 32 panel per block of columns) and C reads
    the panel instead of B."""

    def __init__(self, n, packed):
        self.A = te.placeholder((n, n), "float32", "A")
        self.B = te.placeholder((n, n), "float32", "B")
        self.k = k = te.reduce_axis((0, n), "k")
        self.B_packed = None
        if not packed:
            self.C = te.compute((n, n), lambda i, j: te.sum(self.A[i, k] * self.B[k, j], k), "C")
            return
        self.B_packed = te.compute((n // BLOCK, n, BLOCK),
                                   lambda jo, k, ji: self.B[k, jo * BLOCK + ji], "B_packed")

        def c(i, j):
            b = self.B_packed[j // BLOCK, k, j % BLOCK]  # floordiv, floormod
            return te.sum(self.A[i, k] * b, k)

        self.C = te.compute((n, n), c, "C")


class Blocked:
    """The loops of C after blocking: xo, yo pick a 32 x 32 block of C, ko a slice of 4 steps
    of the reduction, and xi, ki, yi walk inside them. The IR prints them as i.outer,
    j.outer, k.outer, i.inner, k.inner, j.inner."""

    def __init__(self, m):
        self.s = te.create_schedule(m.C.op)
        c = self.s[m.C]
        self.xo, self.yo, self.xi, self.yi = c.tile(c.leaf_iter_vars[0], c.leaf_iter_vars[1],
                                                    BLOCK, BLOCK)
        self.ko, self.ki = c.split(m.k, factor=REDUCE_FACTOR)
        c.reorder(self.xo, self.yo, self.ko, self.ki, self.xi, self.yi)


def default_schedule(m):
    """(0) The default schedule: the loops of the definition, i, j, then k innermost. The
    innermost loop walks B down a column, a new cache line every iteration, and once N is
    large nothing of B is still in cache when the next column starts."""
    return te.create_schedule(m.C.op)


def blocking(m):
    """(1) Blocking: compute C one 32 x 32 block at a time, so the rows of A and the columns
    of B a block reads are reused from cache while the block is in progress."""
    return Blocked(m).s


def vectorization(m):
    """(2) Vectorization: the innermost loop, yi (j.inner), runs over 32 consecutive columns
    of C and B; marked vectorized, it becomes SIMD instructions (8 floats per AVX2
    instruction)."""
    b = Blocked(m)
    b.s[m.C].vectorize(b.yi)
    return b.s


def permuted(m):
    """(3) Loop permutation: with ki outside xi, the inner loops touch 32 rows of C and 4 rows
    of B for every step of ki; with xi outside ki, one row of C (the vector being
    accumulated) stays in registers while the 4 rows of B stream past it."""
    b = Blocked(m)
    b.s[m.C].reorder(b.xo, b.yo, b.ko, b.xi, b.ki, b.yi)
    b.s[m.C].vectorize(b.yi)
    return b


def loop_permutation(m):
    return permuted(m).s


def packed(m):
    """(4) Array packing: B[k, yo * 32 + yi] jumps N floats for every step of k. Copying the
    K x 32 panel of B that a block reads into contiguous memory (B_packed), right before the
    block uses it, makes every access of the inner loops sequential. Bound inference sizes
    the copy to the one panel the block reads, [1, N, 32]. The copy is redone for every block
    of rows (xo), which costs 1/32 of the multiply-adds. (The packing loops print as j and k:
    te names a compute's axes i, j, k by position.)"""
    b = permuted(m)
    packing = b.s[m.B_packed]
    packing.compute_at(b.s[m.C], b.yo)
    packing.vectorize(packing.leaf_iter_vars[2])  # ji: 32 consecutive floats of a row of B
    return b


def array_packing(m):
    return packed(m).s


def parallel(m):
    """(5) Parallelism: blocks of rows of C are independent, so the outermost loop is spread
    over the cores. Each iteration packs into its own B_packed, allocated inside the loop."""
    b = packed(m)
    b.s[m.C].parallel(b.xo)
    return b.s


def random_matrix(n, seed):
    return np.random.default_rng(seed).uniform(-1.0, 1.0, (n, n)).astype(np.float32)


def naive_matmul(a, b):
    """The reference: NumPy's matmul, accumulated in float64."""
    return a.astype(np.float64) @ b.astype(np.float64)


STEPS = [
    ("default schedule", False, default_schedule),
    ("blocking (tile 32 x 32, split k by 4, reorder)", False, blocking),
    ("vectorize the innermost loop", False, vectorization),
    ("loop permutation (i.inner outside k.inner)", False, loop_permutation),
    ("array packing (B_packed computed at j.outer)", True, array_packing),
    ("parallel outer loop (i.outer)", True, parallel),
]


def report(label, c, expected):
    error = np.abs(c.astype(np.float64) - expected)
    max_error = float(np.max(error))
    ok = bool(np.all(error <= TOLERANCE))  # a NaN fails too
    print(f"-> max abs error vs NumPy matmul ({label}): {max_error:g}"
          f"{'  (ok)' if ok else '  (MISMATCH)'}")
    return ok


def run_step(index, step, n, print_only, a, b, expected):
    """Prints one step's loop nest; unless print_only, runs its fully lowered form (flat
    buffers, vector code: what code generation receives) with the interpreter, then the
    code loom.build compiles from it, and compares both with `expected`. Returns whether the
    results matched."""
    title, is_packed, make_schedule = step
    m = Matmul(n, is_packed)
    schedule = make_schedule(m)
    args = [m.A, m.B, m.C]
    sys.stdout.write(f"\n==== Step {index}: {title}\n")
    sys.stdout.write(str(te.schedule_to_primfunc(schedule, args, "gemm")))
    if print_only:
        return True
    func = loom.lower(schedule, args, "gemm")

    c = np.zeros((n, n), np.float32)
    loom.tir.interpret(func, a, b, c)
    ok = report("TIR interpreter", c, expected)

    module = loom.build(func, target="llvm")
    c = np.zeros((n, n), np.float32)
    module.gemm(a, b, c)
    return report("loom.build, llvm", c, expected) and ok


def main(argv):
    n = 64
    print_only = False
    valid = True
    for arg in argv[1:]:
        if arg == "--print-only":
            print_only = True
        else:
            try:
                n = int(arg, 10)
            except ValueError:
                valid = False
    # Indices are int32, so N * N must fit in one.
    if not valid or n <= 0 or n > MAX_SIZE or n % BLOCK != 0:
        sys.stderr.write(f"usage: gemm_schedule.py [N] [--print-only]  (N a multiple of "
                         f"{BLOCK} up to {MAX_SIZE})\n")
        return 2
    try:
        print(f"C = A x B with {n} x {n} float32 matrices")
        a, b = random_matrix(n, 1), random_matrix(n, 2)
        expected = None if print_only else naive_matmul(a, b)
        all_ok = True
        for index, step in enumerate(STEPS):
            all_ok = run_step(index, step, n, print_only, a, b, expected) and all_ok
        if not print_only:
            print("\nEvery step computes the same C." if all_ok else "\nSome step differs.")
        sys.stdout.flush()
        return 0 if all_ok else 1
    except loom.LoomError as err:
        sys.stderr.write(f"error: {err}\n")
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
