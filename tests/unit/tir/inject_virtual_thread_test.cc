// InjectVirtualThread: golden before/after text for each rule, the user errors, and a
// differential test against the meaning of a virtual thread scope -- the body run once per
// thread value, each run with its own fresh copy of the allocations inside -- written by
// hand as a serial loop around the body.
#include <gtest/gtest.h>

#include <array>
#include <random>

#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"
#include "loom/tir/interpreter.h"
#include "loom/tir/transform.h"

namespace loom::tir::transform {
namespace {

const DataType kInt32 = DataType::Int(32);

Stmt Loop(const Var& v, PrimExpr extent, Stmt body) {
  return For(v, 0, extent, ForKind::kSerial, body, IterVar(), {});
}

Stmt VirtualThreads(const Var& v, PrimExpr count, Stmt body, const std::string& tag = "vthread") {
  return AttrStmt(IterVar(Range(), v, IterVarType::kVirtualThread, tag), attr::kVirtualThread,
                  count, body);
}

// A flat local allocation and the buffer that accesses it.
struct Local {
  Buffer buffer;
  Stmt Allocate(Stmt body) const {
    return loom::Allocate(buffer->data, buffer->dtype, buffer->shape, PrimExpr(), body, "local");
  }
};

Local MakeLocal(const std::string& name, Array<PrimExpr> shape) {
  return Local{DeclBuffer(std::move(shape), kInt32, name, "local")};
}

class InjectVirtualThreadTest : public ::testing::Test {
 protected:
  PrimFunc Func(Stmt body) const {
    return PrimFunc({x->data, out->data}, {{x->data, x}, {out->data, out}}, body,
                    DataType::Void(), {});
  }
  static std::string Body(const PrimFunc& func) {
    std::string text = ToScript(func);
    return text.substr(text.find('\n', text.find("def ")) + 1);
  }
  std::string Run(Stmt body) const { return Body(InjectVirtualThread()(Func(body))); }
  std::string RunSimplified(Stmt body) const {
    return Body(Sequential({InjectVirtualThread(), Simplify(), RemoveNoOp()})(Func(body)));
  }
  std::string Error(Stmt body) const {
    try {
      InjectVirtualThread()(Func(body));
    } catch (const loom::Error& e) {
      return e.what();
    }
    return "no error";
  }

  // Two threads of `tag`: S filled from X by a statement the same in both, then read by
  // each thread into its own half of Out.
  Stmt FillAndOffset(const std::string& tag) const {
    Local s = MakeLocal("S", {4});
    return VirtualThreads(
        vx, 2,
        s.Allocate(Loop(j, 4, SeqStmt({BufferStore(s.buffer, BufferLoad(x, {j}), {j}),
                                       BufferStore(out, Add(BufferLoad(s.buffer, {j}), vx),
                                                   {Add(Mul(vx, 4), j)})}))),
        tag);
  }

  Var vx{"vx"}, j{"j"}, k{"k"};
  Buffer x = DeclBuffer({64}, kInt32, "X");
  Buffer out = DeclBuffer({64}, kInt32, "Out");
};

TEST_F(InjectVirtualThreadTest, LoopWithLocalAllocationGetsACopyPerThread) {
  Local l = MakeLocal("L", {4});
  Stmt body = VirtualThreads(
      vx, 2,
      l.Allocate(SeqStmt({
          Loop(j, 4, BufferStore(l.buffer, Mul(BufferLoad(x, {Add(Mul(vx, 4), j)}), 2), {j})),
          Loop(j, 4, BufferStore(out, Add(BufferLoad(l.buffer, {j}), 1), {Add(Mul(vx, 4), j)})),
      })));
  EXPECT_EQ(Run(body),
            "    L = T.allocate([8], \"int32\", \"local\")\n"
            "    for j in range(4):\n"
            "        L_1[j] = X[0 * 4 + j] * 2\n"
            "        L_1[4 + j] = X[1 * 4 + j] * 2\n"
            "    for j in range(4):\n"
            "        Out[0 * 4 + j] = L_1[j] + 1\n"
            "        Out[1 * 4 + j] = L_1[4 + j] + 1\n")
      << "the threads' statements alternate inside each loop; thread t uses L[t * 4 + j]";
  EXPECT_EQ(RunSimplified(body),
            "    L = T.allocate([8], \"int32\", \"local\")\n"
            "    for j in range(4):\n"
            "        L_1[j] = X[j] * 2\n"
            "        L_1[j + 4] = X[j + 4] * 2\n"
            "    for j in range(4):\n"
            "        Out[j] = L_1[j] + 1\n"
            "        Out[j + 4] = L_1[j + 4] + 1\n");
}

TEST_F(InjectVirtualThreadTest, StatementsAlternateBetweenThreads) {
  // Load, compute, store per thread: VTA overlaps thread 1's load with thread 0's compute.
  Local a = MakeLocal("A", {1}), c = MakeLocal("C", {1});
  Stmt body = VirtualThreads(
      vx, 2,
      a.Allocate(c.Allocate(SeqStmt({
          BufferStore(a.buffer, BufferLoad(x, {vx}), {0}),
          BufferStore(c.buffer, Mul(BufferLoad(a.buffer, {0}), 3), {0}),
          BufferStore(out, BufferLoad(c.buffer, {0}), {vx}),
      }))));
  EXPECT_EQ(RunSimplified(body),
            "    A = T.allocate([2], \"int32\", \"local\")\n"
            "    C = T.allocate([2], \"int32\", \"local\")\n"
            "    A_1[0] = X[0]\n"
            "    A_1[1] = X[1]\n"
            "    C_1[0] = A_1[0] * 3\n"
            "    C_1[1] = A_1[1] * 3\n"
            "    Out[0] = C_1[0]\n"
            "    Out[1] = C_1[1]\n");
}

TEST_F(InjectVirtualThreadTest, AllocationTheSameInEveryThreadIsShared) {
  EXPECT_EQ(RunSimplified(FillAndOffset("vthread")),
            "    S = T.allocate([4], \"int32\", \"local\")\n"
            "    for j in range(4):\n"
            "        S_1[j] = X[j]\n"
            "        Out[j] = S_1[j]\n"
            "        Out[j + 4] = S_1[j] + 1\n")
      << "S is written only by a statement that does not depend on the thread: it runs once";
}

// The same body under a co-processor's virtual threads ("cthread"): every thread fills its own
// copy of S, so that one thread's load can overlap another's compute.
TEST_F(InjectVirtualThreadTest, CoprocessorThreadsEachOwnEveryAllocation) {
  EXPECT_EQ(RunSimplified(FillAndOffset("cthread")),
            "    S = T.allocate([8], \"int32\", \"local\")\n"
            "    for j in range(4):\n"
            "        S_1[j] = X[j]\n"
            "        S_1[j + 4] = X[j]\n"
            "        Out[j] = S_1[j]\n"
            "        Out[j + 4] = S_1[j + 4] + 1\n");
}

// Under co-processor threads a co-processor scope is replicated whole, though nothing in it
// varies: each thread's instructions keep their dependency tokens, and the threads' scopes
// alternate. Under plain virtual threads the same scope runs once.
TEST_F(InjectVirtualThreadTest, CoprocessorScopesAreReplicatedWholeUnderCoprocessorThreads) {
  auto scope = [](const char* call) {
    return AttrStmt(StringImm("vta"), attr::kCoprocScope, 1,
                    SeqStmt({Evaluate(call_extern(kInt32, "pop", {})),
                             Evaluate(call_extern(kInt32, call, {})),
                             Evaluate(call_extern(kInt32, "push", {}))}));
  };
  Stmt body = SeqStmt({scope("load"), BufferStore(out, 1, {vx})});
  const std::string once =
      "    with T.attr(\"vta\", \"coproc_scope\", 1):\n"
      "        T.evaluate(T.call_extern(\"int32\", \"pop\"))\n"
      "        T.evaluate(T.call_extern(\"int32\", \"load\"))\n"
      "        T.evaluate(T.call_extern(\"int32\", \"push\"))\n";
  const std::string stores = "    Out[0] = 1\n    Out[1] = 1\n";
  EXPECT_EQ(Run(VirtualThreads(vx, 2, body, "cthread")), once + once + stores);
  EXPECT_EQ(Run(VirtualThreads(vx, 2, body, "vthread")), once + stores);
}

TEST_F(InjectVirtualThreadTest, WriteUnderAThreadDependentBranchMakesTheAllocationPerThread) {
  Local s = MakeLocal("S", {1});
  Stmt body = VirtualThreads(
      vx, 2,
      s.Allocate(SeqStmt({IfThenElse(EQ(vx, 0), BufferStore(s.buffer, 7, {0}), Stmt()),
                          BufferStore(out, BufferLoad(s.buffer, {0}), {vx})})));
  EXPECT_EQ(RunSimplified(body),
            "    S = T.allocate([2], \"int32\", \"local\")\n"
            "    S_1[0] = 7\n"
            "    Out[0] = S_1[0]\n"
            "    Out[1] = S_1[1]\n")
      << "thread 1 must not see thread 0's write (Simplify and RemoveNoOp removed the dead "
         "branches)";
}

TEST_F(InjectVirtualThreadTest, LetBindingAThreadValueIsReplicatedWithItsBody) {
  Var t("t");
  Stmt body = VirtualThreads(vx, 2, LetStmt(t, Mul(vx, 8), BufferStore(out, 1, {t})));
  EXPECT_EQ(Run(body),
            "    t: T.int32 = 0 * 8\n"
            "    Out[t] = 1\n"
            "    t: T.int32 = 1 * 8\n"
            "    Out[t] = 1\n");
}

TEST_F(InjectVirtualThreadTest, ThreadDependentLoopBecomesASerialLoopOverTheThreads) {
  Stmt body = VirtualThreads(vx, 3, Loop(j, Add(vx, 1), BufferStore(out, j, {Add(Mul(vx, 4), j)})));
  EXPECT_EQ(Run(body),
            "    for vx in range(3):\n"
            "        for j in range(vx + 1):\n"
            "            Out[vx * 4 + j] = j\n")
      << "loops whose bounds differ per thread cannot be interleaved";
}

TEST_F(InjectVirtualThreadTest, ManyThreadsBecomeASerialLoop) {
  Stmt body = VirtualThreads(vx, 17, BufferStore(out, 1, {vx}));
  EXPECT_EQ(Run(body),
            "    for vx in range(17):\n"
            "        Out[vx] = 1\n");
  EXPECT_EQ(Run(VirtualThreads(vx, 16, BufferStore(out, 1, {vx}))).find("for"), std::string::npos)
      << "up to 16 threads unroll";
}

TEST_F(InjectVirtualThreadTest, BodyWithoutTheThreadVariableRunsOnce) {
  Stmt body = VirtualThreads(vx, 4, BufferStore(out, Add(BufferLoad(out, {0}), 1), {0}));
  EXPECT_EQ(Run(body), "    Out[0] = Out[0] + 1\n");
}

TEST_F(InjectVirtualThreadTest, MultiDimensionalAllocationGetsALeadingDimension) {
  Local l = MakeLocal("L", {2, 3});
  Stmt body = VirtualThreads(
      vx, 2,
      l.Allocate(SeqStmt({BufferStore(l.buffer, vx, {1, 2}),
                          BufferStore(out, BufferLoad(l.buffer, {1, 2}), {vx})})));
  EXPECT_EQ(Run(body),
            "    L = T.allocate([2, 2, 3], \"int32\", \"local\")\n"
            "    L_1[0, 1, 2] = 0\n"
            "    L_1[1, 1, 2] = 1\n"
            "    Out[0] = L_1[0, 1, 2]\n"
            "    Out[1] = L_1[1, 1, 2]\n");
}

TEST_F(InjectVirtualThreadTest, NestedScopesInterleaveBoth) {
  Var vy("vy");
  Stmt body = VirtualThreads(
      vx, 2, VirtualThreads(vy, 2, BufferStore(out, 1, {Add(Mul(vx, 2), vy)})));
  EXPECT_EQ(RunSimplified(body),
            "    Out[0] = 1\n"
            "    Out[2] = 1\n"
            "    Out[1] = 1\n"
            "    Out[3] = 1\n");
}

TEST_F(InjectVirtualThreadTest, UserErrors) {
  Var n("n");
  EXPECT_EQ(Error(VirtualThreads(vx, n, BufferStore(out, 1, {vx}))),
            "virtual thread 'vx' needs a constant positive number of threads; got n");
  EXPECT_EQ(Error(VirtualThreads(vx, 0, BufferStore(out, 1, {vx}))),
            "virtual thread 'vx' needs a constant positive number of threads; got 0");
  EXPECT_EQ(Error(AttrStmt(vx, attr::kVirtualThread, 2, BufferStore(out, 1, {vx}))),
            "a \"virtual_thread\" attribute must be about the IterVar of the virtual thread "
            "axis; got vx");
  Local l = MakeLocal("L", {4});
  Stmt handle = VirtualThreads(
      vx, 2,
      l.Allocate(SeqStmt({BufferStore(l.buffer, vx, {0}),
                          Evaluate(call_extern(kInt32, "consume", {l.buffer->data}))})));
  EXPECT_EQ(Error(handle),
            "cannot give allocation 'L' 2 copies (one per virtual thread of 'vx'): its handle "
            "is used directly in T.call_extern(\"int32\", \"consume\", L), and only element "
            "accesses L[...] can be sent to a copy");
}

// ---------------------------------------------------------------- differential

constexpr int kRegion = 8;  // elements of Out each thread owns
constexpr int kInputs = 32;

// Random bodies of a virtual thread scope: loops (some bounded by the thread), branches
// (some on the thread or on memory), lets, and stores to two local allocations (with or
// without per-thread values) and to the thread's own region of Out.
class BodyGenerator {
 public:
  BodyGenerator(uint64_t seed, Var vthread) : rng_(seed), vthread_(std::move(vthread)) {}

  Stmt Generate() {
    scalars_ = {vthread_};
    // Several top-level statements, so that later ones read what earlier ones wrote.
    Array<Stmt> seq;
    for (int count = 0; count < 3; ++count) seq.push_back(Statement(3));
    return l0_.Allocate(l1_.Allocate(SeqStmt(seq)));
  }

  const Buffer& in() const { return in_; }
  const Buffer& out() const { return out_; }

 private:
  int64_t Uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  bool Chance(double p) { return std::bernoulli_distribution(p)(rng_); }

  PrimExpr Value(int depth) {
    if (depth <= 0 || Chance(0.3)) {
      switch (Uniform(0, 4)) {
        case 0:
          return IntImm(kInt32, Uniform(-3, 5));
        case 1:
        case 2:
          return scalars_[Uniform(0, static_cast<int64_t>(scalars_.size()) - 1)];
        case 3:
          return BufferLoad(in_, {floormod(Value(depth - 1), kInputs)});
        default:
          return Load(depth - 1);
      }
    }
    PrimExpr a = Value(depth - 1), b = Value(depth - 1);
    switch (Uniform(0, 3)) {
      case 0:
        return Add(a, b);
      case 1:
        return Sub(a, b);
      case 2:
        return Mul(a, b);
      default:
        return Max(a, b);
    }
  }

  PrimExpr Load(int depth) {
    switch (Uniform(0, 3)) {
      case 0:
      case 1:
        return BufferLoad(l0_.buffer, {floormod(Value(depth), 4)});
      case 2:
        return BufferLoad(l1_.buffer, {floormod(Value(depth), 2), floormod(Value(depth), 3)});
      default:
        return BufferLoad(out_, {OwnElement(depth)});
    }
  }

  PrimExpr OwnElement(int depth) { return vthread_ * kRegion + floormod(Value(depth), kRegion); }

  // A value without the thread variable or per-thread data, for statements that run once.
  PrimExpr Shared() {
    return scalars_.size() > 1 ? PrimExpr(scalars_.back()) : PrimExpr(IntImm(kInt32, 2));
  }

  Stmt Statement(int depth) {
    int64_t choice = Uniform(0, depth <= 0 ? 3 : 8);
    switch (choice) {
      case 0:
        return BufferStore(out_, Value(2), {OwnElement(1)});
      case 1:
        // Mostly thread-independent, so that whether L0 is per-thread hinges on where the
        // store stands (under a thread-dependent loop, branch or let, or not).
        return BufferStore(l0_.buffer, Chance(0.2) ? Value(2) : Shared(),
                           {floormod(Chance(0.2) ? Value(1) : Shared(), 4)});
      case 2:
        return BufferStore(l1_.buffer, Value(2),
                           {floormod(Value(1), 2), floormod(Value(1), 3)});
      case 3:
        return BufferStore(out_, Add(BufferLoad(out_, {OwnElement(0)}), Value(1)),
                           {OwnElement(1)});
      case 4:
      case 5: {
        Var v("k" + std::to_string(scalars_.size()));
        PrimExpr extent = Chance(0.2) ? floormod(vthread_, 3) + 1
                                      : PrimExpr(IntImm(kInt32, Uniform(0, 3)));
        scalars_.push_back(v);
        Stmt body = Statement(depth - 1);
        scalars_.pop_back();
        return For(v, 0, extent, ForKind::kSerial, body, IterVar(), {});
      }
      case 6: {
        PrimExpr condition = Chance(0.4) ? PrimExpr(LT(vthread_, 1)) : PrimExpr(GT(Value(2), 1));
        Stmt else_case = Chance(0.5) ? Statement(depth - 1) : Stmt();
        return IfThenElse(condition, Statement(depth - 1), else_case);
      }
      case 7: {
        Var t("t" + std::to_string(scalars_.size()));
        PrimExpr value = Value(2);
        scalars_.push_back(t);
        Stmt body = Statement(depth - 1);
        scalars_.pop_back();
        return LetStmt(t, value, body);
      }
      default: {
        Array<Stmt> seq;
        for (int64_t count = Uniform(2, 3); count > 0; --count) seq.push_back(Statement(depth - 1));
        return SeqStmt(seq);
      }
    }
  }

  std::mt19937_64 rng_;
  Var vthread_;
  std::vector<Var> scalars_;
  Buffer in_ = DeclBuffer({kInputs}, kInt32, "In");
  Buffer out_ = DeclBuffer({17 * kRegion}, kInt32, "Out");
  Local l0_ = MakeLocal("L0", {4});
  Local l1_ = MakeLocal("L1", {2, 3});
};

std::vector<int64_t> RunOn(const PrimFunc& func, uint64_t seed) {
  std::mt19937_64 rng(seed);
  HostArray in(kInt32, {kInputs}), out(kInt32, {17 * kRegion});
  for (int i = 0; i < kInputs; ++i) in.SetInt(i, std::uniform_int_distribution<int>(-9, 9)(rng));
  Interpreter().Run(func, {in, out});
  std::vector<int64_t> result;
  for (int i = 0; i < 17 * kRegion; ++i) result.push_back(out.GetInt(i));
  return result;
}

TEST(InjectVirtualThreadDifferentialTest, MatchesOneRunPerThreadWithPrivateAllocations) {
  int interleaved = 0;
  for (int seed = 0; seed < 1000; ++seed) {
    int64_t threads = std::array<int64_t, 5>{1, 2, 3, 4, 17}[seed % 5];
    Var vx("vx");
    BodyGenerator generator(seed, vx);
    Stmt body = generator.Generate();
    auto func = [&](Stmt stmt) {
      const Buffer& in = generator.in();
      const Buffer& out = generator.out();
      return PrimFunc({in->data, out->data}, {{in->data, in}, {out->data, out}}, stmt,
                      DataType::Void(), {});
    };
    // The meaning: the body once per thread, allocations (inside the body) fresh each time.
    PrimFunc reference = func(For(vx, 0, IntImm(kInt32, threads), ForKind::kSerial, body,
                                  IterVar(), {}));
    PrimFunc transformed = InjectVirtualThread()(
        func(VirtualThreads(vx, IntImm(kInt32, threads), body)));
    std::vector<int64_t> expected = RunOn(reference, seed);
    std::vector<int64_t> actual;
    try {
      actual = RunOn(transformed, seed);
    } catch (const loom::Error& e) {
      FAIL() << "program " << seed << " failed after the pass: " << e.what() << "\n"
             << ToScript(transformed);
    }
    ASSERT_EQ(actual, expected) << "program " << seed << " with " << threads << " threads\n"
                                << "reference:\n" << ToScript(reference) << "transformed:\n"
                                << ToScript(transformed);
    interleaved += ToScript(transformed).find("for vx in") == std::string::npos;
  }
  EXPECT_GT(interleaved, 300) << "too few programs were interleaved rather than looped";
}

}  // namespace
}  // namespace loom::tir::transform
