// The host/device seam, end to end with a device of the test's own: `test_accel` (the device
// kind target_kind_test.cc registers) gets a code generator here that stands in for a GPU's
// -- each kernel's thread loops run serially on this CPU, compiled through the c target. So
// the test shows what a new device kind plugs into, with no edit elsewhere: SplitHostDevice
// outlines the thread-bound nests, the host (llvm) module launches them through its imports,
// and the exported library carries the device module and loads it back.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>

#include "error_of.h"
#include "loom/ir/functor.h"
#include "loom/ir/printer.h"
#include "loom/runtime/module.h"
#include "loom/runtime/ndarray.h"
#include "loom/target/build.h"
#include "loom/target/codegen.h"
#include "loom/te/lower.h"
#include "loom/te/operation.h"
#include "loom/te/schedule.h"
#include "loom/tir/transform.h"

namespace loom {
namespace {

class ThreadLoopsToSerial : public StmtExprMutator {
 public:
  Stmt VisitStmt_(const ForNode* op) override {
    Stmt body = VisitStmt(op->body);
    if (op->for_kind != ForKind::kThreadBinding) return StmtExprMutator::VisitStmt_(op);
    return For(op->loop_var, op->min, op->extent, ForKind::kSerial, body, IterVar(),
               op->annotations);
  }
};

// The stand-in device's code generator: a kernel takes its launch extents after its
// parameters (as a device module's launch does), runs its thread loops as serial loops, and
// is built for the c target.
runtime::Module BuildTestAccel(const IRModule& kernels, const Target&) {
  IRModule serial;
  for (const auto& [name, kernel] : kernels.functions()) {
    EXPECT_TRUE(tir::transform::IsDeviceKernel(kernel));
    std::vector<Var> params = kernel->params;
    std::string tags = kernel->attrs.at(tir::builtin::kThreadTags).as<StringImmNode>()->value;
    for (size_t start = 0; start <= tags.size();) {
      size_t end = std::min(tags.find(',', start), tags.size());
      params.push_back(Var("extent_" + tags.substr(start, end - start), DataType::Int(64)));
      start = end + 1;
    }
    serial.Add(name, PrimFunc(params, {}, ThreadLoopsToSerial().VisitStmt(kernel->body),
                              DataType::Void(), {{"global_symbol", StringImm(name)}}));
  }
  Target c = Target::Parse("c");
  return codegen::CodegenForTarget(c).build(tir::transform::MakePackedAPI()(serial), c);
}

LOOM_REGISTER_CODEGEN({.target_kind = "test_accel",
                       .module_type = "test_accel",
                       .build = BuildTestAccel,
                       .export_library = nullptr});

// C[i] = A[i] * 2 + B[i] over n elements, in blocks of 64 threads.
PrimFunc ScaleAdd(PrimExpr n) {
  te::Tensor a = te::placeholder({n}, DataType::Float(32), "A");
  te::Tensor b = te::placeholder({n}, DataType::Float(32), "B");
  te::Tensor c = te::compute({n}, [&](Var i) { return a(i) * 2.0f + b(i); }, "C");
  te::Schedule s = te::create_schedule({c.op()});
  auto [block, thread] = s[c].split(s[c]->leaf_iter_vars[0], 64);
  s[c].bind(block, te::thread_axis("blockIdx.x"));
  s[c].bind(thread, te::thread_axis("threadIdx.x"));
  return te::lower(s, {a, b, c}, "scale_add");
}

void ExpectScaleAdd(const runtime::Module& module, int64_t n) {
  runtime::NDArray a = runtime::NDArray::Empty({n}, DataType::Float(32));
  runtime::NDArray b = runtime::NDArray::Empty({n}, DataType::Float(32));
  runtime::NDArray c = runtime::NDArray::Empty({n}, DataType::Float(32));
  for (int64_t i = 0; i < n; ++i) {
    static_cast<float*>(a->data)[i] = static_cast<float>(i);
    static_cast<float*>(b->data)[i] = 0.5f;
    static_cast<float*>(c->data)[i] = -1;
  }
  module.GetRequiredFunction("scale_add")(a, b, c);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(static_cast<float*>(c->data)[i], static_cast<float>(i) * 2.0f + 0.5f) << i;
  }
}

TEST(SplitHostDevice, ThreadBoundNestBecomesAKernelTheHostLaunches) {
  IRModule module;
  module.Add("scale_add", ScaleAdd(200));
  IRModule split = tir::transform::SplitHostDevice()(module);
  ASSERT_TRUE(split.Contains("scale_add_kernel0"));
  const PrimFunc& kernel = split.Lookup("scale_add_kernel0");
  EXPECT_TRUE(tir::transform::IsDeviceKernel(kernel));
  EXPECT_EQ(kernel->attrs.at(tir::builtin::kThreadTags).as<StringImmNode>()->value,
            "blockIdx.x,threadIdx.x");
  // The three buffers' data, nothing else.
  EXPECT_EQ(kernel->params.size(), 3u);
  for (const Var& param : kernel->params) EXPECT_TRUE(param.dtype().is_handle());
  std::string host = ToScript(ObjectRef(split.Lookup("scale_add")));
  EXPECT_NE(host.find("loom_call_packed(\"scale_add_kernel0\""), std::string::npos) << host;
  EXPECT_EQ(host.find("threadIdx"), std::string::npos) << host;
}

TEST(SplitHostDevice, ASymbolicSizeIsAKernelParameterAndItsExtentsComeFromTheHost) {
  IRModule module;
  module.Add("scale_add", ScaleAdd(Var("n", DataType::Int(32))));
  IRModule split = tir::transform::SplitHostDevice()(module);
  const PrimFunc& kernel = split.Lookup("scale_add_kernel0");
  ASSERT_EQ(kernel->params.size(), 4u);  // three handles, then n
  EXPECT_EQ(kernel->params[3].dtype(), DataType::Int(32));
}

TEST(HostDevice, TheHostLaunchesTheDeviceKernelThroughItsImports) {
  runtime::Module module = build(ScaleAdd(200), Target::Parse("test_accel"));
  EXPECT_EQ(module->type_key(), "llvm");  // the host
  ASSERT_EQ(module->imports().size(), 1u);
  EXPECT_TRUE(module->imports()[0].GetFunction("scale_add_kernel0").defined());
  ExpectScaleAdd(module, 200);
}

TEST(HostDevice, TheHostMayBeTheCTarget) {
  ExpectScaleAdd(build(ScaleAdd(130), Target::Parse("test_accel -host=c")), 130);
}

TEST(HostDevice, OneExportedLibraryCarriesTheDeviceModule) {
  runtime::Module module = build(ScaleAdd(Var("n", DataType::Int(32))), Target::Parse("test_accel"));
  std::string path = ::testing::TempDir() + "loom_host_device_" + std::to_string(getpid()) + ".so";
  ExportLibrary(module, path);
  runtime::Module loaded = runtime::LoadModuleFromFile(path);
  std::remove(path.c_str());
  ASSERT_EQ(loaded->imports().size(), 1u);
  EXPECT_EQ(loaded->imports()[0]->type_key(), "dso");
  ExpectScaleAdd(loaded, 1000);
  ExpectScaleAdd(loaded, 65);
}

// The library's module context is one global: a second load of a loaded library is the same
// module, which stays valid while either handle lives.
TEST(HostDevice, ALibraryLoadedTwiceIsOneModule) {
  runtime::Module module = build(ScaleAdd(128), Target::Parse("test_accel"));
  std::string path = ::testing::TempDir() + "loom_host_device_twice_" + std::to_string(getpid()) +
                     ".so";
  ExportLibrary(module, path);
  runtime::Module second;
  {
    runtime::Module first = runtime::LoadModuleFromFile(path);
    second = runtime::LoadModuleFromFile(path);
    EXPECT_EQ(first.operator->(), second.operator->());
  }
  std::remove(path.c_str());
  ExpectScaleAdd(second, 128);
}

TEST(HostDevice, AKernelTheImportsLackIsAnErrorNamingIt) {
  // The host code of a device build, built without its device module.
  IRModule module;
  module.Add("scale_add", ScaleAdd(64));
  IRModule split = tir::transform::SplitHostDevice()(module);
  IRModule host;
  host.Add("scale_add", split.Lookup("scale_add"));
  runtime::Module orphan = build(host, Target::Parse("llvm"));
  runtime::NDArray x = runtime::NDArray::Empty({64}, DataType::Float(32));
  std::string error = testing::ErrorOf([&] { orphan.GetRequiredFunction("scale_add")(x, x, x); });
  EXPECT_NE(error.find("has a function 'scale_add_kernel0'"), std::string::npos) << error;
}

// B is computed per block of C: C's threads are 16 wide, B's 8, under one blockIdx.x.
TEST(SplitHostDevice, OneAxisBoundWithTwoExtentsIsAnError) {
  te::Tensor a = te::placeholder({64}, DataType::Float(32), "A");
  te::Tensor b = te::compute({64}, [&](Var i) { return a(i) + 1.0f; }, "B");
  te::Tensor c = te::compute({64}, [&](Var i) { return b(i) * 2.0f; }, "C");
  te::Schedule s = te::create_schedule({c.op()});
  auto [block, thread] = s[c].split(s[c]->leaf_iter_vars[0], 16);
  s[c].bind(block, te::thread_axis("blockIdx.x"));
  s[c].bind(thread, te::thread_axis("threadIdx.x"));
  s[b].compute_at(s[c], block);
  auto [outer, inner] = s[b].split(s[b]->leaf_iter_vars[0], 8);
  s[b].bind(inner, te::thread_axis("threadIdx.x"));
  IRModule module;
  module.Add("two", te::lower(s, {a, c}, "two"));
  std::string error = testing::ErrorOf([&] { tir::transform::SplitHostDevice()(module); });
  // B's loop comes first in the block.
  EXPECT_NE(error.find("kernel 'two_kernel0' binds 'threadIdx.x' with extent 8 and with "
                       "extent 16"),
            std::string::npos)
      << error;
}

}  // namespace
}  // namespace loom
