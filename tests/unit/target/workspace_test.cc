// Workspaces (allocations too large for the stack) are freed on every way out of a function,
// failures included: a check failing after an allocation, a refused allocation nested in
// another, a parallel task failing while its caller holds a workspace, a task failing while
// it holds one. The counts come from the backend services themselves: the test loads the
// exported library with dlopen and points its workspace globals at counting wrappers, which
// can also refuse large requests (a deterministic allocation failure, also under ASan).
#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <limits>

#include "loom/ir/expr_ops.h"
#include "loom/runtime/module.h"
#include "target_test_util.h"

namespace loom::target_test {
namespace {

DataType F32() { return DataType::Float(32); }
DataType I32() { return DataType::Int(32); }

// 20,000 bytes: above the stack limit, so a workspace.
constexpr int kWorkspaceFloats = 5000;

std::atomic<int> g_live_workspaces{0};
std::atomic<int> g_workspaces_allocated{0};
// Requests of at least this many bytes are refused.
std::atomic<uint64_t> g_refuse_from_bytes{std::numeric_limits<uint64_t>::max()};

void* CountingAllocWorkspace(int32_t device_type, int32_t device_id, uint64_t nbytes,
                             int32_t dtype_code_hint, int32_t dtype_bits_hint) {
  if (nbytes >= g_refuse_from_bytes) {
    LoomAPISetLastError("refused by the test");
    return nullptr;
  }
  void* ptr = LoomBackendAllocWorkspace(device_type, device_id, nbytes, dtype_code_hint,
                                        dtype_bits_hint);
  if (ptr != nullptr) {
    ++g_live_workspaces;
    ++g_workspaces_allocated;
  }
  return ptr;
}

int32_t CountingFreeWorkspace(int32_t device_type, int32_t device_id, void* ptr) {
  --g_live_workspaces;
  return LoomBackendFreeWorkspace(device_type, device_id, ptr);
}

// `func` exported, loaded, and wired to the runtime with counting workspace services.
class CountedLibrary {
 public:
  explicit CountedLibrary(const PrimFunc& func)
      : path_("/tmp/loom_workspace_test_" + std::to_string(getpid()) + "_" +
              std::to_string(next_id_++) + ".so") {
    ExportLibrary(build(func, Target::Parse("llvm")), path_);
    handle_ = dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
    LOOM_ICHECK(handle_ != nullptr) << dlerror();
    runtime::InitBackendServices([&](const char* symbol) { return dlsym(handle_, symbol); },
                                 /*context=*/nullptr);
    SetService(LOOM_BACKEND_ALLOC_WORKSPACE_SYMBOL,
               reinterpret_cast<void*>(&CountingAllocWorkspace));
    SetService(LOOM_BACKEND_FREE_WORKSPACE_SYMBOL,
               reinterpret_cast<void*>(&CountingFreeWorkspace));
    main_ = reinterpret_cast<LoomBackendPackedCFunc>(dlsym(handle_, "main"));
    LOOM_ICHECK(main_ != nullptr) << "the library has no 'main'";
  }
  ~CountedLibrary() {
    dlclose(handle_);
    std::remove(path_.c_str());
  }
  CountedLibrary(const CountedLibrary&) = delete;
  CountedLibrary& operator=(const CountedLibrary&) = delete;

  // Calls main(arrays..., scalars...) with fresh counts; returns its status.
  int32_t Call(const std::vector<tir::HostArray>& arrays,
               const std::vector<int64_t>& scalars = {}) {
    g_live_workspaces = 0;
    g_workspaces_allocated = 0;
    std::vector<std::vector<int64_t>> shapes(arrays.size());
    std::vector<DLTensor> tensors(arrays.size());
    std::vector<LoomValue> values;
    std::vector<int32_t> codes;
    for (size_t i = 0; i < arrays.size(); ++i) {
      tensors[i] = Describe(arrays[i], &shapes[i]);
      values.push_back(LoomValue{.v_handle = &tensors[i]});
      codes.push_back(kLoomDLTensorHandle);
    }
    for (int64_t scalar : scalars) {
      values.push_back(LoomValue{.v_int64 = scalar});
      codes.push_back(kLoomArgInt);
    }
    LoomValue ret{};
    int32_t ret_code = kLoomNullptr;
    LoomAPISetLastError("");
    return main_(values.data(), codes.data(), static_cast<int32_t>(values.size()), &ret, &ret_code,
                 nullptr);
  }

 private:
  void SetService(const char* symbol, void* implementation) {
    auto* global = static_cast<void**>(dlsym(handle_, symbol));
    LOOM_ICHECK(global != nullptr) << "the library does not use " << symbol;
    *global = implementation;
  }

  static inline std::atomic<int> next_id_{0};
  std::string path_;
  void* handle_ = nullptr;
  LoomBackendPackedCFunc main_ = nullptr;
};

// Expects a failed call that recorded `message` and left no workspace allocated.
void ExpectFailedWithoutLeak(int32_t status, const std::string& message, int allocated) {
  EXPECT_NE(status, 0);
  EXPECT_NE(std::string(LoomGetLastError()).find(message), std::string::npos)
      << LoomGetLastError();
  EXPECT_EQ(g_workspaces_allocated, allocated);
  EXPECT_EQ(g_live_workspaces, 0) << "workspaces leaked";
}

Stmt Workspace(const Buffer& buffer, PrimExpr elements, Stmt body) {
  return Allocate(buffer->data, buffer->dtype, {std::move(elements)}, const_true(), std::move(body),
                  "global");
}

TEST(Workspace, AFailedAssertAfterTheAllocationFreesIt) {
  Buffer A = DeclBuffer({4}, F32(), "A"), B = DeclBuffer({4}, F32(), "B");
  Buffer T = DeclBuffer({kWorkspaceFloats}, F32(), "T");
  Stmt body = Workspace(T, kWorkspaceFloats, SeqStmt({
      BufferStore(T, BufferLoad(A, {0}), {0}),
      AssertStmt(GT(BufferLoad(A, {0}), 100.0f), StringImm("A[0] must exceed 100"),
                 BufferStore(B, BufferLoad(T, {0}), {0})),
  }));
  CountedLibrary library(MakePrimFunc({A, B}, {}, body, "main"));
  tir::HostArray a(F32(), {4}), b(F32(), {4});
  a.SetFloat(0, 1.0);
  ExpectFailedWithoutLeak(library.Call({a, b}), "main: A[0] must exceed 100", 1);
  a.SetFloat(0, 200.0);
  EXPECT_EQ(library.Call({a, b}), 0) << LoomGetLastError();
  EXPECT_EQ(b.GetFloat(0), 200.0);
  EXPECT_EQ(g_live_workspaces, 0);
}

TEST(Workspace, ARefusedInnerAllocationFreesTheOuterOne) {
  Buffer A = DeclBuffer({4}, F32(), "A"), B = DeclBuffer({4}, F32(), "B");
  Buffer T = DeclBuffer({kWorkspaceFloats}, F32(), "T");
  Var n("n", DataType::Int(64));
  Buffer U = DeclBuffer({n}, F32(), "U");
  Stmt body = Workspace(T, kWorkspaceFloats, Workspace(U, n, SeqStmt({
      BufferStore(U, BufferLoad(A, {0}), {0}),
      BufferStore(T, BufferLoad(U, {0}), {0}),
      BufferStore(B, BufferLoad(T, {0}), {0}),
  })));
  CountedLibrary library(MakePrimFunc({A, B}, {n}, body, "main"));
  tir::HostArray a(F32(), {4}), b(F32(), {4});
  a.SetFloat(0, 3.0);
  g_refuse_from_bytes = uint64_t{1} << 20;
  ExpectFailedWithoutLeak(library.Call({a, b}, {int64_t{1} << 20}),
                          "main: could not allocate the workspace of 'U'", 1);
  EXPECT_EQ(library.Call({a, b}, {16}), 0) << LoomGetLastError();
  g_refuse_from_bytes = std::numeric_limits<uint64_t>::max();
  EXPECT_EQ(b.GetFloat(0), 3.0);
  EXPECT_EQ(g_workspaces_allocated, 2);
  EXPECT_EQ(g_live_workspaces, 0);
}

// for i in parallel(4): assert A[i] >= 0; B[i] = A[i] + `addend`
Stmt CheckedParallelCopy(const Buffer& A, const Buffer& B, const Var& i, PrimExpr addend) {
  return For(i, 0, IntImm(I32(), 4), ForKind::kParallel,
             AssertStmt(GE(BufferLoad(A, {i}), 0.0f), StringImm("A[i] must be non-negative"),
                        BufferStore(B, BufferLoad(A, {i}) + std::move(addend), {i})),
             IterVar(), {});
}

TEST(Workspace, AFailedParallelTaskFreesItsCallersWorkspace) {
  Buffer A = DeclBuffer({4}, F32(), "A"), B = DeclBuffer({4}, F32(), "B");
  Buffer T = DeclBuffer({kWorkspaceFloats}, F32(), "T");
  Var i("i");
  Stmt body = Workspace(T, kWorkspaceFloats, SeqStmt({
      BufferStore(T, 1.0f, {0}),
      CheckedParallelCopy(A, B, i, BufferLoad(T, {0})),
  }));
  CountedLibrary library(MakePrimFunc({A, B}, {}, body, "main"));
  tir::HostArray a(F32(), {4}), b(F32(), {4});
  a.SetFloat(2, -1.0);
  ExpectFailedWithoutLeak(library.Call({a, b}), "main: A[i] must be non-negative", 1);
}

TEST(Workspace, AParallelTaskFailingWithAWorkspaceFreesIt) {
  Buffer A = DeclBuffer({4}, F32(), "A"), B = DeclBuffer({4}, F32(), "B");
  Buffer T = DeclBuffer({kWorkspaceFloats}, F32(), "T");
  Var i("i");
  Stmt body = For(i, 0, IntImm(I32(), 4), ForKind::kParallel,
                  Workspace(T, kWorkspaceFloats, SeqStmt({
                      BufferStore(T, BufferLoad(A, {i}), {0}),
                      AssertStmt(GE(BufferLoad(T, {0}), 0.0f),
                                 StringImm("A[i] must be non-negative"),
                                 BufferStore(B, BufferLoad(T, {0}), {i})),
                  })),
                  IterVar(), {});
  CountedLibrary library(MakePrimFunc({A, B}, {}, body, "main"));
  tir::HostArray a(F32(), {4}), b(F32(), {4});
  a.SetFloat(3, -1.0);
  // However the 4 iterations fall into tasks, the failing one is the last: all 4 allocate.
  ExpectFailedWithoutLeak(library.Call({a, b}), "main: A[i] must be non-negative", 4);
}

}  // namespace
}  // namespace loom::target_test
