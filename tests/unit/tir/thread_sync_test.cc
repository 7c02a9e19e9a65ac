// ThreadSync: where barriers go between a GPU block's threads (read after write, write after
// read across a serial loop's iterations, none without shared memory) and the error for a
// barrier that a branch on the thread index would hide from some threads. The kernels these
// barriers make correct run in tests/unit/target/gpu_codegen_test.cc.
#include <gtest/gtest.h>

#include <string>

#include "error_of.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"
#include "loom/ir/printer.h"
#include "loom/tir/transform.h"

namespace loom::tir::transform {
namespace {

const DataType kF32 = DataType::Float(32);

struct Kernel {
  Var tx{"tx", DataType::Int(32)};
  IterVar thread{Range(0, 32), Var("threadIdx.x", DataType::Int(32)), IterVarType::kThreadIndex,
                 "threadIdx.x"};
  Var a_data{"A", DataType::Handle()}, b_data{"B", DataType::Handle()};
  Buffer a{a_data, kF32, {128}, {}, PrimExpr(), "A", "global", 64, 1};
  Buffer b{b_data, kF32, {128}, {}, PrimExpr(), "B", "global", 64, 1};
  Var s_data{"S", DataType::Handle()};
  Buffer s{s_data, kF32, {32}, {}, PrimExpr(), "S", "shared", 64, 1};

  // `body` inside the shared allocation, inside the thread loop, as a device kernel.
  PrimFunc Wrap(Stmt body, const std::string& scope = "shared") const {
    Stmt allocated = Allocate(s_data, kF32, {32}, PrimExpr(), body, scope);
    Stmt loop = For(tx, 0, 32, ForKind::kThreadBinding, allocated, thread, {});
    Annotations attrs;
    attrs[builtin::kCallingConv] = StringImm(builtin::kDeviceKernel);
    attrs["global_symbol"] = StringImm("k_kernel0");
    return PrimFunc({a_data, b_data}, {}, loop, DataType::Void(), attrs);
  }
  Stmt WriteShared(PrimExpr from) const { return BufferStore(s, BufferLoad(a, {from}), {tx}); }
  Stmt ReadShared(PrimExpr to) const { return BufferStore(b, BufferLoad(s, {31 - tx}), {to}); }
};

int Barriers(const PrimFunc& func) {
  int count = 0;
  PostOrderVisit(func->body, [&](const ObjectRef& node) {
    const auto* call = node.as<CallNode>();
    if (call != nullptr && call->op.name() == builtin::kThreadSync) ++count;
  });
  return count;
}

PrimFunc Synced(const PrimFunc& func) {
  IRModule module;
  module.Add("k_kernel0", func);
  return ThreadSync()(module).Lookup("k_kernel0");
}

TEST(ThreadSync, AReadOfWhatOtherThreadsWroteWaitsForThem) {
  Kernel k;
  PrimFunc synced = Synced(k.Wrap(SeqStmt({k.WriteShared(k.tx), k.ReadShared(k.tx)})));
  EXPECT_EQ(Barriers(synced), 1) << ToScript(synced);
  const std::string text = ToScript(synced);
  const size_t write = text.find("S_1[tx] = "), barrier = text.find("loom_thread_sync"),
               read = text.find("B_1[tx] = ");
  EXPECT_LT(write, barrier) << text;
  EXPECT_LT(barrier, read) << text;
}

// A pointer into shared memory handed to a callee (a tensor intrinsic's address_of) is read
// or written as its access says, both when it says nothing.
TEST(ThreadSync, PointersHandedToACalleeAreTheAccessesTheyDeclare) {
  Kernel k;
  auto pass = [&](int access) {
    Array<PrimExpr> args{BufferLoad(k.s, {0})};
    if (access != 0) args.push_back(IntImm(DataType::Int(32), access));
    return Evaluate(call_extern(DataType::Int(32), "callee",
                                {call_intrin(DataType::Handle(), "address_of", args)}));
  };
  const int read = builtin::kAccessRead, write = builtin::kAccessWrite;
  // Written through the pointer, then read: one barrier between.
  EXPECT_EQ(Barriers(Synced(k.Wrap(SeqStmt({pass(write), k.ReadShared(k.tx)})))), 1);
  // Written, then read through the pointer: one.
  EXPECT_EQ(Barriers(Synced(k.Wrap(SeqStmt({k.WriteShared(k.tx), pass(read)})))), 1);
  // Two reads: none.
  EXPECT_EQ(Barriers(Synced(k.Wrap(SeqStmt({pass(read), k.ReadShared(k.tx)})))), 0);
  // Undeclared, or declared 0 (unknown): read and written, so a read after it waits.
  EXPECT_EQ(Barriers(Synced(k.Wrap(SeqStmt({pass(0), k.ReadShared(k.tx)})))), 1);
  const Stmt unknown =
      Evaluate(call_extern(DataType::Int(32), "callee",
                           {call_intrin(DataType::Handle(), "address_of",
                                        {BufferLoad(k.s, {0}), IntImm(DataType::Int(32), 0)})}));
  EXPECT_EQ(Barriers(Synced(k.Wrap(SeqStmt({unknown, k.ReadShared(k.tx)})))), 1);
}

TEST(ThreadSync, TheNextIterationsWriteWaitsForThisOnesReads) {
  Kernel k;
  Var i("i", DataType::Int(32));
  Stmt body = SeqStmt({k.WriteShared(i * 32 + k.tx), k.ReadShared(i * 32 + k.tx)});
  PrimFunc synced =
      Synced(k.Wrap(For(i, 0, 4, ForKind::kSerial, body, IterVar(), {})));
  // One between the write and the read, one at the end of each iteration.
  EXPECT_EQ(Barriers(synced), 2) << ToScript(synced);
  // Two writes in a row (a cooperative fetch of two tiles) need none between them.
  PrimFunc writes = Synced(k.Wrap(SeqStmt({k.WriteShared(k.tx), k.WriteShared(k.tx + 32)})));
  EXPECT_EQ(Barriers(writes), 0) << ToScript(writes);
}

// A loop pipelined by InjectDoubleBuffer: its producer of the next tile (marked
// double_buffer_write with the loop's variable) writes the half this iteration does not
// read, so only the next iteration waits for it: one barrier, at the end of the body. The
// same statements without the mark, or with one naming no enclosing loop (a loop unrolled
// or substituted away), keep the barrier between the write and the read.
TEST(ThreadSync, APipelinedLoopsNextTileWaitsOnlyAcrossIterations) {
  Kernel k;
  Var i("i", DataType::Int(32));
  auto next_tile = [&](const Var& loop) {
    return AttrStmt(k.s_data, attr::kDoubleBufferWrite, loop,
                    k.WriteShared(floormod(i + 1, 2) * 16 + floormod(k.tx, 16)));
  };
  Stmt read = k.ReadShared(floormod(i, 2) * 16 + floormod(k.tx, 16));
  auto pipeline = [&](const Stmt& produce) {
    // The prologue's tile, then the loop.
    return SeqStmt({k.WriteShared(floormod(k.tx, 16)),
                    For(i, 0, 3, ForKind::kSerial, SeqStmt({produce, read}), IterVar(), {})});
  };
  // The barriers in the loop's body.
  auto in_loop = [](const PrimFunc& func) {
    int count = 0;
    PostOrderVisit(func->body, [&](const ObjectRef& node) {
      if (const auto* loop = node.as<ForNode>(); loop && loop->for_kind == ForKind::kSerial) {
        count = Barriers(PrimFunc({}, {}, loop->body, DataType::Void(), {}));
      }
    });
    return count;
  };
  PrimFunc synced = Synced(k.Wrap(pipeline(next_tile(i))));
  // Before the loop (the prologue's tile), and at the end of each iteration.
  EXPECT_EQ(Barriers(synced), 2) << ToScript(synced);
  EXPECT_EQ(in_loop(synced), 1) << ToScript(synced);
  const std::string text = ToScript(synced);
  EXPECT_LT(text.find("B_1["), text.rfind("loom_thread_sync")) << text;
  EXPECT_EQ(in_loop(Synced(
                k.Wrap(pipeline(k.WriteShared(floormod(i + 1, 2) * 16 + floormod(k.tx, 16)))))),
            2);
  Var gone("gone", DataType::Int(32));
  EXPECT_EQ(in_loop(Synced(k.Wrap(pipeline(next_tile(gone))))), 2);
  EXPECT_EQ(Barriers(Synced(k.Wrap(SeqStmt({next_tile(i), read})))), 1);
  // A producer that reads what it wrote (another thread's element of the next tile) waits
  // for it inside: its own accesses are synchronized as any statement's.
  Stmt reads_own =
      AttrStmt(k.s_data, attr::kDoubleBufferWrite, i,
               SeqStmt({k.WriteShared(floormod(i + 1, 2) * 16 + floormod(k.tx, 16)),
                        k.ReadShared(floormod(i + 1, 2) * 16 + floormod(k.tx, 16) + 64)}));
  PrimFunc own = Synced(k.Wrap(pipeline(reads_own)));
  EXPECT_EQ(in_loop(own), 2) << ToScript(own);
}

TEST(ThreadSync, ABarrierOnOnePathOfABranchIsNoBarrierAfterIt) {
  Kernel k;
  // The branch's own barrier (between its write and read) is on one path only: when `flag`
  // is 0 nothing waited for the first write, so the read after the if needs one of its own.
  Var flag("flag", DataType::Int(32));
  Stmt branch =
      IfThenElse(flag > 0, SeqStmt({k.WriteShared(k.tx + 32), k.ReadShared(k.tx)}), Stmt());
  PrimFunc synced =
      Synced(k.Wrap(SeqStmt({k.WriteShared(k.tx), branch, k.ReadShared(k.tx + 64)})));
  EXPECT_EQ(Barriers(synced), 2) << ToScript(synced);
  // A shared load in a let's value counts as a read.
  Var loaded("loaded", kF32);
  Stmt let = LetStmt(loaded, BufferLoad(k.s, {31 - k.tx}),
                     BufferStore(k.b, loaded, {k.tx}));
  EXPECT_EQ(Barriers(Synced(k.Wrap(SeqStmt({k.WriteShared(k.tx), let})))), 1);
}

TEST(ThreadSync, KernelsWithoutSharedMemoryAreLeftAlone) {
  Kernel k;
  PrimFunc local = k.Wrap(SeqStmt({k.WriteShared(k.tx), k.ReadShared(k.tx)}), "local");
  EXPECT_TRUE(Synced(local).same_as(local));
}

TEST(ThreadSync, ABarrierSomeThreadsWouldSkipIsAnError) {
  Kernel k;
  Stmt guarded = IfThenElse(k.tx < 16, SeqStmt({k.WriteShared(k.tx), k.ReadShared(k.tx)}),
                            Stmt());
  EXPECT_EQ(testing::ErrorOf([&] { Synced(k.Wrap(guarded)); }),
            "ThreadSync: kernel 'k_kernel0' needs a barrier over the shared buffer 'S' inside "
            "`if tx < 16`, which depends on the thread index, so not every thread of the block "
            "would reach it as often; split the loops by factors that divide their extents (no "
            "guard), or keep the shared memory's writes and reads out of the guarded part");
  // So is one in a loop whose trip count differs between threads.
  Var i("i", DataType::Int(32));
  Stmt uneven =
      For(i, 0, 4 - k.tx / 8, ForKind::kSerial,
          SeqStmt({k.WriteShared(i * 32 + k.tx), k.ReadShared(i * 32 + k.tx)}), IterVar(), {});
  EXPECT_EQ(
      testing::ErrorOf([&] { Synced(k.Wrap(uneven)); }),
      "ThreadSync: kernel 'k_kernel0' needs a barrier over the shared buffer 'S' inside "
      "loop 'i' from 0 for 4 - T.truncdiv(tx, 8), which depends on the thread index, so not every "
      "thread of the block would reach it as often; split the loops by factors that "
      "divide their extents (no guard), or keep the shared memory's writes and reads out "
      "of the guarded part");
  // A guard around the write alone is fine: the barrier goes after the whole if.
  Stmt guarded_write = IfThenElse(k.tx < 16, k.WriteShared(k.tx), Stmt());
  EXPECT_EQ(Barriers(Synced(k.Wrap(SeqStmt({guarded_write, k.ReadShared(k.tx)})))), 1);
}

}  // namespace
}  // namespace loom::tir::transform
