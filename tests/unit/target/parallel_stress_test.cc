// Generated parallel code under stress: many threads calling one compiled function at once,
// a parallel region inside a parallel task, the pool size LOOM_NUM_THREADS asks for, and a
// check failing inside a parallel task. Every result is compared with a serial computation,
// so the runs tests/CMakeLists.txt makes with LOOM_NUM_THREADS=1 and with four pinned threads
// agree with each other and with the default run. A deadlock aborts the run
// (tests/common/deadline.h); time decides nothing else.
#include <atomic>
#include <cstdlib>
#include <thread>

#include "deadline.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"
#include "loom/runtime/thread_pool.h"
#include "loom/te/lower.h"
#include "loom/te/operation.h"
#include "loom/te/schedule.h"
#include "target_test_util.h"

namespace loom::target_test {
namespace {

using te::compute;
using te::placeholder;
using te::Tensor;

constexpr int kRows = 48, kInner = 32, kCols = 40;

DataType I32() { return DataType::Int(32); }
DataType F32() { return DataType::Float(32); }

// C[i, j] = sum_k A[i, k] * B[k, j], its rows split among the pool's tasks when `parallel`.
PrimFunc Matmul(DataType t, bool parallel) {
  Tensor A = placeholder({kRows, kInner}, t, "A");
  Tensor B = placeholder({kInner, kCols}, t, "B");
  IterVar k = te::reduce_axis(Range(0, kInner), "k");
  Tensor C = compute({kRows, kCols}, [&](Var i, Var j) {
    return te::sum(A(i, k->var) * B(k->var, j), {k});
  }, "C");
  te::Schedule s = te::create_schedule({C.op()});
  if (parallel) s[C].parallel(s[C]->leaf_iter_vars[0]);
  return te::lower(s, {A, B, C}, "matmul");
}

// The int32 product computed here, exactly.
tir::HostArray ReferenceMatmul(const tir::HostArray& a, const tir::HostArray& b) {
  tir::HostArray c(I32(), {kRows, kCols});
  for (int64_t i = 0; i < kRows; ++i) {
    for (int64_t j = 0; j < kCols; ++j) {
      int64_t sum = 0;
      for (int64_t k = 0; k < kInner; ++k) {
        sum += a.GetInt(i * kInner + k) * b.GetInt(k * kCols + j);
      }
      c.SetInt(i * kCols + j, sum);
    }
  }
  return c;
}

TEST(ParallelStress, ThePoolHasTheThreadsLoomNumThreadsAsksFor) {
  EXPECT_EQ(runtime::ThreadPool::Global().num_threads(),
            runtime::NumThreadsFromEnvironment(std::getenv("LOOM_NUM_THREADS")));
}

TEST(ParallelStress, ConcurrentCallersEachGetTheirOwnCorrectResult) {
  runtime::Module m = build(Matmul(I32(), /*parallel=*/true), Target::Parse("llvm"));
  constexpr int kCallers = 8, kCalls = 200;
  std::atomic<int> wrong{0}, failed{0};
  test::RunWithDeadline("8 threads x 200 calls of a parallel function", [&] {
    std::vector<std::thread> callers;
    for (int c = 0; c < kCallers; ++c) {
      callers.emplace_back([&, c] {
        tir::HostArray a = RandomArray(I32(), {kRows, kInner}, 100 + c);
        tir::HostArray b = RandomArray(I32(), {kInner, kCols}, 200 + c);
        tir::HostArray expected = ReferenceMatmul(a, b);
        for (int call = 0; call < kCalls; ++call) {
          // A fresh (zeroed) output each call, so a task that did not run shows.
          tir::HostArray out(I32(), {kRows, kCols});
          try {
            CallWithArrays(m, "matmul", {a, b, out});
          } catch (const Error& error) {
            if (failed++ == 0) ADD_FAILURE() << "caller " << c << ": " << error.what();
            continue;
          }
          if (!SameBytes(out, expected)) ++wrong;
        }
      });
    }
    for (std::thread& caller : callers) caller.join();
  });
  EXPECT_EQ(failed, 0);
  EXPECT_EQ(wrong, 0) << "calls with a wrong result, of " << kCallers * kCalls;
}

TEST(ParallelStress, ParallelAndSerialBuildsAreBitIdentical) {
  // Floating-point sums depend on their order: equal bits mean each element was computed
  // by one task in the serial order, however many tasks there were.
  tir::HostArray a = RandomArray(F32(), {kRows, kInner}, 1);
  tir::HostArray b = RandomArray(F32(), {kInner, kCols}, 2);
  tir::HostArray serial(F32(), {kRows, kCols}), parallel(F32(), {kRows, kCols});
  CallWithArrays(build(Matmul(F32(), false), Target::Parse("llvm")), "matmul", {a, b, serial});
  runtime::Module m = build(Matmul(F32(), true), Target::Parse("llvm"));
  test::RunWithDeadline("a parallel float matmul", [&] {
    for (int call = 0; call < 20; ++call) {
      CallWithArrays(m, "matmul", {a, b, parallel});
      ASSERT_TRUE(SameBytes(serial, parallel)) << "call " << call;
    }
  });
}

bool NestsParallelLoops(const Stmt& body) {
  bool nested = false;
  PostOrderVisit(body, [&](const ObjectRef& node) {
    const auto* outer = node.as<ForNode>();
    if (outer == nullptr || outer->for_kind != ForKind::kParallel) return;
    PostOrderVisit(outer->body, [&](const ObjectRef& inner) {
      const auto* loop = inner.as<ForNode>();
      nested = nested || (loop != nullptr && loop->for_kind == ForKind::kParallel);
    });
  });
  return nested;
}

TEST(ParallelStress, AParallelLoopInsideAParallelTaskRunsSerially) {
  // B's row is computed inside C's parallel row loop, and B's own column loop is parallel:
  // every task of C launches B's loop, which must run on that task's thread.
  Tensor A = placeholder({kRows, kCols}, I32(), "A");
  Tensor B = compute({kRows, kCols}, [&](Var i, Var j) { return A(i, j) * 2 + 1; }, "B");
  Tensor C = compute({kRows, kCols}, [&](Var i, Var j) {
    return B(i, j) * B(i, kCols - 1 - j);
  }, "C");
  te::Schedule s = te::create_schedule({C.op()});
  s[C].parallel(s[C]->leaf_iter_vars[0]);
  s[B].compute_at(s[C], s[C]->leaf_iter_vars[0]);
  s[B].parallel(s[B]->leaf_iter_vars[1]);
  PrimFunc f = te::lower(s, {A, C}, "nested");
  ASSERT_TRUE(NestsParallelLoops(f->body)) << "the schedule must nest parallel loops";
  runtime::Module m = build(f, Target::Parse("llvm"));
  test::RunWithDeadline("nested parallel loops", [&] {
    for (int seed = 0; seed < 20; ++seed) {
      tir::HostArray a = RandomArray(I32(), {kRows, kCols}, seed), c(I32(), {kRows, kCols});
      CallWithArrays(m, "nested", {a, c});
      for (int64_t i = 0; i < kRows; ++i) {
        for (int64_t j = 0; j < kCols; ++j) {
          int64_t left = a.GetInt(i * kCols + j) * 2 + 1;
          int64_t right = a.GetInt(i * kCols + kCols - 1 - j) * 2 + 1;
          ASSERT_EQ(c.GetInt(i * kCols + j), left * right)
              << "seed " << seed << " at " << i << ", " << j;
        }
      }
    }
  });
}

// Each pool task calls the compiled parallel matmul on arrays of its own.
struct CallsFromTasks {
  const runtime::Module* module;
  std::vector<tir::HostArray> a, b, out;
};

int32_t CallMatmulInTask(int32_t task_id, LoomParallelGroupEnv*, void* cdata) {
  auto* work = static_cast<CallsFromTasks*>(cdata);
  // An error is a loom::Error; the pool turns it into this task's failure.
  CallWithArrays(*work->module, "matmul", {work->a[task_id], work->b[task_id], work->out[task_id]});
  return 0;
}

TEST(ParallelStress, ACompiledParallelFunctionCalledFromAPoolTaskRunsSerially) {
  runtime::Module m = build(Matmul(I32(), /*parallel=*/true), Target::Parse("llvm"));
  int tasks = runtime::ThreadPool::Global().num_threads();
  CallsFromTasks work{&m, {}, {}, {}};
  for (int t = 0; t < tasks; ++t) {
    work.a.push_back(RandomArray(I32(), {kRows, kInner}, 300 + t));
    work.b.push_back(RandomArray(I32(), {kInner, kCols}, 400 + t));
    work.out.emplace_back(I32(), std::vector<int64_t>{kRows, kCols});
  }
  test::RunWithDeadline("compiled parallel calls inside pool tasks", [&] {
    for (int round = 0; round < 20; ++round) {
      ASSERT_EQ(LoomBackendParallelLaunch(CallMatmulInTask, &work, 0), 0) << LoomGetLastError();
    }
  });
  for (int t = 0; t < tasks; ++t) {
    EXPECT_TRUE(SameBytes(work.out[t], ReferenceMatmul(work.a[t], work.b[t]))) << "task " << t;
  }
}

TEST(ParallelStress, AFailingTaskFailsTheCallAndThePoolKeepsWorking) {
  // B[i] = 2 * A[i] in a parallel loop whose body first asserts A[i] >= 0.
  constexpr int kN = 64;
  Buffer A = DeclBuffer({kN}, I32(), "A");
  Buffer B = DeclBuffer({kN}, I32(), "B");
  Var i("i");
  Stmt body = For(i, 0, IntImm(I32(), kN), ForKind::kParallel,
                  AssertStmt(GE(BufferLoad(A, {i}), 0), StringImm("A[i] must be non-negative"),
                             BufferStore(B, BufferLoad(A, {i}) * 2, {i})),
                  IterVar(), {});
  runtime::Module m = build(MakePrimFunc({A, B}, {}, body, "main"), Target::Parse("llvm"));
  runtime::Module matmul = build(Matmul(I32(), /*parallel=*/true), Target::Parse("llvm"));
  test::RunWithDeadline("calls whose parallel tasks fail", [&] {
    tir::HostArray a(I32(), {kN}), b(I32(), {kN});
    for (int64_t k = 0; k < kN; ++k) a.SetInt(k, k);
    for (int64_t bad = 0; bad < kN; ++bad) {  // the failing task differs with the pool size
      a.SetInt(bad, -1);
      try {
        CallWithArrays(m, "main", {a, b});
        ADD_FAILURE() << "a negative A[" << bad << "] must fail the call";
      } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find("main: A[i] must be non-negative"),
                  std::string::npos)
            << error.what();
      }
      a.SetInt(bad, bad);
    }
    CallWithArrays(m, "main", {a, b});
    for (int64_t k = 0; k < kN; ++k) ASSERT_EQ(b.GetInt(k), 2 * k);
    tir::HostArray x = RandomArray(I32(), {kRows, kInner}, 5);
    tir::HostArray y = RandomArray(I32(), {kInner, kCols}, 6);
    tir::HostArray z(I32(), {kRows, kCols});
    CallWithArrays(matmul, "matmul", {x, y, z});
    EXPECT_TRUE(SameBytes(z, ReferenceMatmul(x, y))) << "the pool still works after failures";
  });
}

}  // namespace
}  // namespace loom::target_test
