// StorageRewrite: golden text before/after for each planning rule (a chain whose first and
// last temporaries share storage, interleaved uses, scopes and dtypes, loops, parallel
// loops, allocations the pass must leave alone), AllocatedBytes, and a differential test:
// random producer/consumer stages over temporaries give the same outputs in the
// interpreter before and after the rewrite, with fewer bytes allocated.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"
#include "loom/ir/printer.h"
#include "loom/tir/interpreter.h"
#include "loom/tir/transform.h"

namespace loom::tir::transform {
namespace {

const DataType kInt32 = DataType::Int(32);
const DataType kFloat32 = DataType::Float(32);

Stmt Loop(const Var& v, PrimExpr extent, Stmt body, ForKind kind = ForKind::kSerial) {
  return For(v, 0, extent, kind, body, IterVar(), {});
}

// A temporary: its buffer and the handle an Allocate binds (named in lower case, so the
// text shows which storage a buffer uses).
struct Temp {
  Buffer buffer;
  int64_t size;
  std::string scope;
  DataType dtype;
};

Temp MakeTemp(const std::string& name, int64_t size, std::string scope = "global",
              DataType dtype = kInt32) {
  std::string handle = name;
  for (char& ch : handle) ch = static_cast<char>(std::tolower(ch));
  Var data(handle, DataType::Handle());
  Buffer buffer(data, dtype, {static_cast<int>(size)}, {}, PrimExpr(), name, scope, 64, 1);
  return Temp{buffer, size, scope, dtype};
}

Stmt Alloc(const Temp& t, Stmt body) {
  return Allocate(t.buffer->data, t.dtype, {static_cast<int>(t.size)}, PrimExpr(), body, t.scope);
}

// The storage (data variable name) each accessed buffer uses, as "A:a B:b".
std::string StorageMap(const PrimFunc& func) {
  std::map<std::string, std::string> storage;
  PostOrderVisit(func->body, [&](const ObjectRef& node) {
    if (const auto* load = node.as<BufferLoadNode>()) {
      storage[load->buffer->name] = load->buffer->data.name();
    } else if (const auto* store = node.as<BufferStoreNode>()) {
      storage[store->buffer->name] = store->buffer->data.name();
    }
  });
  std::string text;
  for (const auto& [buffer, data] : storage)
    text += (text.empty() ? "" : " ") + buffer + ":" + data;
  return text;
}

std::string Body(const PrimFunc& func) {
  std::string text = ToScript(func);
  return text.substr(text.find('\n', text.find("def ")) + 1);
}

class StorageRewriteTest : public ::testing::Test {
 protected:
  PrimFunc Func(Stmt body) {
    return PrimFunc({in->data, out->data}, {{in->data, in}, {out->data, out}}, body,
                    DataType::Void(), {});
  }
  // for i in range(size): dst[i] = src[i] + delta
  Stmt Stage(const Buffer& dst, const Buffer& src, int delta, int64_t size = 16) {
    return Loop(i, static_cast<int>(size), BufferStore(dst, BufferLoad(src, {i}) + delta, {i}));
  }

  Var i{"i"}, j{"j"};
  Buffer in = DeclBuffer({16}, kInt32, "In");
  Buffer out = DeclBuffer({16}, kInt32, "Out");
};

TEST_F(StorageRewriteTest, ChainReusesTheFirstTemporaryForTheLast) {
  Temp a = MakeTemp("A", 16), b = MakeTemp("B", 16), c = MakeTemp("C", 16);
  Stmt body = Alloc(
      a, Alloc(b, Alloc(c, SeqStmt({Stage(a.buffer, in, 1), Stage(b.buffer, a.buffer, 2),
                                    Stage(c.buffer, b.buffer, 3), Stage(out, c.buffer, 4)}))));
  PrimFunc before = Func(body);
  PrimFunc after = StorageRewrite()(before);
  EXPECT_EQ(Body(after),
            "    a = T.allocate([16], \"int32\", \"global\")\n"
            "    b = T.allocate([16], \"int32\", \"global\")\n"
            "    for i in range(16):\n"
            "        A[i] = In[i] + 1\n"
            "    for i in range(16):\n"
            "        B[i] = A[i] + 2\n"
            "    for i in range(16):\n"
            "        C[i] = B[i] + 3\n"
            "    for i in range(16):\n"
            "        Out[i] = C[i] + 4\n");
  EXPECT_EQ(StorageMap(after), "A:a B:b C:a In:In Out:Out");
  EXPECT_EQ(AllocatedBytes(before), 3 * 16 * 4);
  EXPECT_EQ(AllocatedBytes(after), 2 * 16 * 4);
  EXPECT_TRUE(StorageRewrite()(after).same_as(after)) << "nothing left to share";
}

TEST_F(StorageRewriteTest, InterleavedUsesKeepTheirOwnStorage) {
  Temp a = MakeTemp("A", 16), c = MakeTemp("C", 16);
  // A is still read after C is first written: both are live at once.
  Stmt body = Alloc(a, Alloc(c, SeqStmt({Stage(a.buffer, in, 1), Stage(c.buffer, in, 2),
                                         Stage(out, a.buffer, 3), Stage(out, c.buffer, 4)})));
  PrimFunc before = Func(body);
  EXPECT_TRUE(StorageRewrite()(before).same_as(before));
  // One statement touching both makes them overlap too.
  Stmt same_statement =
      Alloc(a, Alloc(c, SeqStmt({Stage(a.buffer, in, 1),
                                 Loop(i, 16, BufferStore(c.buffer, BufferLoad(a.buffer, {i}), {i})),
                                 Stage(out, c.buffer, 4)})));
  PrimFunc touching = Func(same_statement);
  EXPECT_TRUE(StorageRewrite()(touching).same_as(touching));
  // Also outside any loop: the last read of A and the first write of C are one statement.
  Stmt scalar = Alloc(a, Alloc(c, SeqStmt({BufferStore(a.buffer, BufferLoad(in, {0}), {3}),
                                           BufferStore(c.buffer, BufferLoad(a.buffer, {3}), {0}),
                                           BufferStore(out, BufferLoad(c.buffer, {0}), {0})})));
  PrimFunc one_statement = Func(scalar);
  EXPECT_TRUE(StorageRewrite()(one_statement).same_as(one_statement));
}

TEST_F(StorageRewriteTest, DifferentScopesOrTypesAreNotMerged) {
  Temp a = MakeTemp("A", 16), c = MakeTemp("C", 16, "local");
  Stmt body = Alloc(a, Alloc(c, SeqStmt({Stage(a.buffer, in, 1), Stage(out, a.buffer, 2),
                                         Stage(c.buffer, in, 3), Stage(out, c.buffer, 4)})));
  PrimFunc scopes = Func(body);
  EXPECT_TRUE(StorageRewrite()(scopes).same_as(scopes));

  Temp f = MakeTemp("F", 16, "global", kFloat32);
  Stmt float_stage = Loop(i, 16, BufferStore(f.buffer, cast(kFloat32, BufferLoad(in, {i})), {i}));
  Stmt back = Loop(i, 16, BufferStore(out, cast(kInt32, BufferLoad(f.buffer, {i})), {i}));
  Stmt types = Alloc(
      a, Alloc(f, SeqStmt({Stage(a.buffer, in, 1), Stage(out, a.buffer, 2), float_stage, back})));
  PrimFunc dtypes = Func(types);
  EXPECT_TRUE(StorageRewrite()(dtypes).same_as(dtypes));
}

TEST_F(StorageRewriteTest, MergedStorageTakesTheLargerSize) {
  Temp a = MakeTemp("A", 8), c = MakeTemp("C", 16), d = MakeTemp("D", 12);
  Stmt body = Alloc(
      a, Alloc(c, Alloc(d, SeqStmt({Stage(a.buffer, in, 1, 8), Stage(out, a.buffer, 2, 8),
                                    Stage(c.buffer, in, 3), Stage(out, c.buffer, 4),
                                    Stage(d.buffer, in, 5, 12), Stage(out, d.buffer, 6, 12)}))));
  PrimFunc after = StorageRewrite()(Func(body));
  EXPECT_EQ(Body(after).substr(0, Body(after).find('\n') + 1),
            "    a = T.allocate([16], \"int32\", \"global\")\n");
  EXPECT_EQ(StorageMap(after), "A:a C:a D:a In:In Out:Out");
  EXPECT_EQ(AllocatedBytes(after), 16 * 4);
}

TEST_F(StorageRewriteTest, LoopsInsideAnAllocationCountAsAWhole) {
  Temp a = MakeTemp("A", 16), c = MakeTemp("C", 16);
  // A, written before the loop, is read in every iteration: its range covers the loop, so
  // C (used only inside, after A's last read in program order) cannot take its storage:
  // the second iteration would read C's values as A.
  Stmt body =
      Alloc(a, Alloc(c, SeqStmt({Stage(a.buffer, in, 1),
                                 Loop(j, 4,
                                      SeqStmt({Stage(out, a.buffer, 4), Stage(c.buffer, out, 2),
                                               Stage(out, c.buffer, 3)}))})));
  PrimFunc reads_across = Func(body);
  EXPECT_TRUE(StorageRewrite()(reads_across).same_as(reads_across));
}

TEST_F(StorageRewriteTest, AllocationsInsideALoopBodyAreHoistedAndShared) {
  Temp a = MakeTemp("A", 16), c = MakeTemp("C", 16);
  // Each iteration allocated both afresh: A is dead before C is written, in every iteration.
  Stmt body = Loop(j, 4,
                   Alloc(a, Alloc(c, SeqStmt({Stage(a.buffer, in, 1), Stage(out, a.buffer, 2),
                                              Stage(c.buffer, in, 3), Stage(out, c.buffer, 4)}))));
  PrimFunc after = StorageRewrite()(Func(body));
  EXPECT_EQ(Body(after),
            "    a = T.allocate([16], \"int32\", \"global\")\n"
            "    for j in range(4):\n"
            "        for i in range(16):\n"
            "            A[i] = In[i] + 1\n"
            "        for i in range(16):\n"
            "            Out[i] = A[i] + 2\n"
            "        for i in range(16):\n"
            "            C[i] = In[i] + 3\n"
            "        for i in range(16):\n"
            "            Out[i] = C[i] + 4\n");
  EXPECT_EQ(StorageMap(after), "A:a C:a In:In Out:Out");
}

TEST_F(StorageRewriteTest, ParallelLoopBodiesAreTheirOwnScope) {
  Temp outer = MakeTemp("O", 16), a = MakeTemp("A", 16), c = MakeTemp("C", 16);
  // O is dead before the parallel loop, but the per-iteration A and C must stay inside it
  // (each thread needs its own); they share with each other.
  Stmt parallel = Loop(
      j, 4,
      Alloc(a, SeqStmt({Stage(a.buffer, in, 1), Stage(out, a.buffer, 2),
                        Alloc(c, SeqStmt({Stage(c.buffer, in, 3), Stage(out, c.buffer, 4)}))})),
      ForKind::kParallel);
  Stmt body =
      Alloc(outer, SeqStmt({Stage(outer.buffer, in, 0), Stage(out, outer.buffer, 0), parallel}));
  PrimFunc after = StorageRewrite()(Func(body));
  EXPECT_EQ(Body(after),
            "    o = T.allocate([16], \"int32\", \"global\")\n"
            "    for i in range(16):\n"
            "        O[i] = In[i]\n"
            "    for i in range(16):\n"
            "        Out[i] = O[i]\n"
            "    for j in T.parallel(0, 4):\n"
            "        a = T.allocate([16], \"int32\", \"global\")\n"
            "        for i in range(16):\n"
            "            A[i] = In[i] + 1\n"
            "        for i in range(16):\n"
            "            Out[i] = A[i] + 2\n"
            "        for i in range(16):\n"
            "            C[i] = In[i] + 3\n"
            "        for i in range(16):\n"
            "            Out[i] = C[i] + 4\n");
  EXPECT_EQ(StorageMap(after), "A:a C:a In:In O:o Out:Out");
}

TEST_F(StorageRewriteTest, AllocationsThePassCannotFollowStayInPlace) {
  Temp a = MakeTemp("A", 16), c = MakeTemp("C", 16);
  // C's handle is bound to another name: accesses through it would be invisible.
  Var alias("alias", DataType::Handle());
  Stmt escapes = Alloc(a, Alloc(c, SeqStmt({Stage(a.buffer, in, 1), Stage(out, a.buffer, 2),
                                            LetStmt(alias, c.buffer->data,
                                                    Evaluate(call_extern(kInt32, "fill", {alias}))),
                                            Stage(out, c.buffer, 4)})));
  PrimFunc escaping = Func(escapes);
  EXPECT_TRUE(StorageRewrite()(escaping).same_as(escaping));

  // A size computed inside the scope cannot move to its top.
  Var n("n");
  Buffer sized = DeclBuffer({n}, kInt32, "S");
  Stmt local_size = Alloc(a, SeqStmt({Stage(a.buffer, in, 1), Stage(out, a.buffer, 2),
                                      LetStmt(n, BufferLoad(in, {0}),
                                              Allocate(sized->data, kInt32, {n}, PrimExpr(),
                                                       BufferStore(sized, 1, {0}), "global"))}));
  PrimFunc sized_inside = Func(local_size);
  EXPECT_TRUE(StorageRewrite()(sized_inside).same_as(sized_inside));

  // A handle passed to an external call is an access at that statement only.
  Stmt call = Alloc(a, Alloc(c, SeqStmt({Evaluate(call_extern(kInt32, "fill", {a.buffer->data})),
                                         Stage(out, a.buffer, 2),
                                         Evaluate(call_extern(kInt32, "fill", {c.buffer->data})),
                                         Stage(out, c.buffer, 4)})));
  EXPECT_EQ(StorageMap(StorageRewrite()(Func(call))), "A:a C:a Out:Out");
  EXPECT_EQ(
      Body(StorageRewrite()(Func(call))).substr(0, 200).find("fill\", a)") != std::string::npos,
      true);
}

TEST_F(StorageRewriteTest, AfterStorageFlattenMultiDimensionalTemporariesShare) {
  // A 4x4 and a 2x8 temporary become 16-element allocations that one storage serves.
  Buffer a = DeclBuffer({4, 4}, kInt32, "A"), c = DeclBuffer({2, 8}, kInt32, "C");
  Stmt write_a =
      Loop(i, 16, BufferStore(a, BufferLoad(in, {i}) * 2, {floordiv(i, 4), floormod(i, 4)}));
  Stmt read_a = Loop(i, 16, BufferStore(out, BufferLoad(a, {floormod(i, 4), floordiv(i, 4)}), {i}));
  Stmt write_c =
      Loop(i, 16, BufferStore(c, BufferLoad(out, {i}) + 1, {floordiv(i, 8), floormod(i, 8)}));
  Stmt read_c =
      Loop(i, 16, BufferStore(out, BufferLoad(c, {floordiv(15 - i, 8), floormod(i, 8)}), {i}));
  Stmt body = Allocate(a->data, kInt32, {4, 4}, PrimExpr(),
                       Allocate(c->data, kInt32, {2, 8}, PrimExpr(),
                                SeqStmt({write_a, read_a, write_c, read_c}), "global"),
                       "global");
  PrimFunc before = Func(body);
  PrimFunc after = Sequential({StorageFlatten(), StorageRewrite()})(before);
  EXPECT_EQ(Body(after).substr(0, Body(after).find('\n') + 1),
            "    A = T.allocate([16], \"int32\", \"global\")\n");
  EXPECT_EQ(AllocatedBytes(after), 16 * 4);
  auto run = [&](const PrimFunc& func) {
    HostArray input(kInt32, {16}), output(kInt32, {16});
    for (int e = 0; e < 16; ++e) input.SetInt(e, e * 7 - 40);
    Interpreter().Run(func, {input, output});
    std::vector<int64_t> values;
    for (int e = 0; e < 16; ++e) values.push_back(output.GetInt(e));
    return values;
  };
  EXPECT_EQ(run(after), run(before));
}

TEST_F(StorageRewriteTest, AllocatedBytesNeedsConstantExtents) {
  Var n("n");
  Buffer sized = DeclBuffer({n}, kInt32, "S");
  PrimFunc func =
      Func(Allocate(sized->data, kInt32, {n}, PrimExpr(), BufferStore(sized, 1, {0}), "global"));
  try {
    AllocatedBytes(func);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot count the bytes of allocation 'S': its extent n is not a constant");
  }
}

// ---------------------------------------------------------------- differential

constexpr int kSize = 16;

// Random programs of producer/consumer stages over temporaries declared at random depths:
// the function body, serial loops and parallel loops. A temporary is read only after a
// stage has written all of it (reading fresh storage is undefined).
class StageProgramGenerator {
 public:
  explicit StageProgramGenerator(uint64_t seed) : rng_(seed) {}

  PrimFunc Generate() {
    Stmt body = Block(2);
    return PrimFunc({in_->data, out_->data}, {{in_->data, in_}, {out_->data, out_}}, body,
                    DataType::Void(), {});
  }

 private:
  int64_t Uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }

  // dst[i] = sum of some written sources at shifted indices, + a constant.
  Stmt Produce(const Buffer& dst, int64_t size) {
    Var i("i");
    PrimExpr value = static_cast<int>(Uniform(-5, 5));
    for (int64_t count = Uniform(1, 2); count > 0; --count) {
      // Mostly the latest results, as pipelines read: earlier temporaries die.
      int64_t back = written_.size() > 1 && Uniform(0, 3) == 0 ? 1 : 0;
      const Buffer& src =
          written_.empty() || Uniform(0, 4) == 0 ? in_ : written_[written_.size() - 1 - back];
      int64_t src_size = 0;
      IsConstInt(src->shape[0], &src_size);
      PrimExpr index =
          floormod(i * static_cast<int>(Uniform(1, 3)) + static_cast<int>(Uniform(0, 7)),
                   static_cast<int>(src_size));
      value = value + BufferLoad(src, {index});
    }
    for (const Var& v : loop_vars_) value = value + v;
    return Loop(i, static_cast<int>(size), BufferStore(dst, value, {i}));
  }

  // A block declares 0-3 temporaries, then runs stages; nested blocks run inside loops.
  Stmt Block(int depth) {
    std::vector<Temp> temps;
    for (int64_t count = Uniform(depth == 2 ? 2 : 0, 4); count > 0; --count) {
      const char* scopes[] = {"global", "global", "local"};
      Temp t = MakeTemp("T" + std::to_string(next_temp_++), Uniform(8, 20), scopes[Uniform(0, 2)]);
      temps.push_back(t);
      unwritten_.push_back(t);
    }
    Array<Stmt> stages;
    for (int64_t count = Uniform(2, 6); count > 0; --count) {
      int64_t choice = Uniform(0, 5);
      if (choice <= 2 && !unwritten_.empty()) {
        // Any unwritten temporary in scope, an outer one too: then its first write is inside
        // a loop that it encloses.
        size_t pick = Uniform(0, unwritten_.size() - 1);
        Temp t = unwritten_[pick];
        unwritten_.erase(unwritten_.begin() + pick);
        stages.push_back(Produce(t.buffer, t.size));
        written_.push_back(t.buffer);
      } else if (choice == 3 && depth > 0) {
        Var v("j" + std::to_string(loop_vars_.size()));
        ForKind kind = Uniform(0, 1) ? ForKind::kParallel : ForKind::kSerial;
        loop_vars_.push_back(v);
        Stmt inner = Block(depth - 1);
        loop_vars_.pop_back();
        stages.push_back(Loop(v, static_cast<int>(Uniform(1, 3)), inner, kind));
      } else if (choice == 4 && !written_.empty()) {
        // Overwrite part of a written temporary (its first elements).
        const Buffer& t = written_[Uniform(0, written_.size() - 1)];
        stages.push_back(Produce(t, Uniform(1, 8)));
      } else {
        stages.push_back(Produce(out_, kSize));
      }
    }
    stages.push_back(Produce(out_, kSize));
    // The block's temporaries die with it.
    auto declared_here = [&](const Buffer& b) {
      for (const Temp& t : temps) {
        if (t.buffer.same_as(b)) return true;
      }
      return false;
    };
    std::erase_if(written_, declared_here);
    std::erase_if(unwritten_, [&](const Temp& t) { return declared_here(t.buffer); });
    Stmt body = SeqStmt(stages);
    for (auto t = temps.rbegin(); t != temps.rend(); ++t) body = Alloc(*t, body);
    return body;
  }

  std::mt19937_64 rng_;
  int next_temp_ = 0;
  std::vector<Buffer> written_;
  std::vector<Temp> unwritten_;
  std::vector<Var> loop_vars_;
  Buffer in_ = DeclBuffer({kSize}, kInt32, "In");
  Buffer out_ = DeclBuffer({kSize}, kInt32, "Out");
};

std::vector<int64_t> RunOn(const PrimFunc& func, uint64_t seed) {
  std::mt19937_64 rng(seed);
  HostArray in(kInt32, {kSize}), out(kInt32, {kSize});
  for (int e = 0; e < kSize; ++e) {
    in.SetInt(e, std::uniform_int_distribution<int>(-50, 50)(rng));
    out.SetInt(e, std::uniform_int_distribution<int>(-50, 50)(rng));
  }
  Interpreter().Run(func, {in, out});
  std::vector<int64_t> result;
  for (int e = 0; e < kSize; ++e) result.push_back(out.GetInt(e));
  return result;
}

TEST(StorageRewriteDifferentialTest, RandomStagesKeepTheirOutputs) {
  constexpr int kPrograms = 500;
  int saved = 0;
  for (int seed = 0; seed < kPrograms; ++seed) {
    PrimFunc original = StageProgramGenerator(seed).Generate();
    PrimFunc rewritten = StorageRewrite()(original);
    std::vector<int64_t> expected = RunOn(original, seed);
    std::vector<int64_t> actual;
    try {
      actual = RunOn(rewritten, seed);
    } catch (const Error& e) {
      FAIL() << "StorageRewrite made program " << seed << " fail: " << e.what() << "\nbefore:\n"
             << ToScript(original) << "after:\n"
             << ToScript(rewritten);
    }
    ASSERT_EQ(actual, expected) << "StorageRewrite changed the outputs of program " << seed
                                << "\nbefore:\n"
                                << ToScript(original) << "after:\n"
                                << ToScript(rewritten);
    int64_t before = AllocatedBytes(original), after = AllocatedBytes(rewritten);
    ASSERT_LE(after, before) << ToScript(rewritten);
    saved += after < before;
  }
  EXPECT_GT(saved, kPrograms / 4) << "too few programs shared storage to test the sharing";
}

}  // namespace
}  // namespace loom::tir::transform
