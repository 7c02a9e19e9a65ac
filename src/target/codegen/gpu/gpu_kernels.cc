// The GPU code generators' shared launch checks (gpu_kernels.h).
#include "target/codegen/gpu/gpu_kernels.h"

#include <map>

#include "loom/ir/functor.h"
#include "loom/ir/printer.h"
#include "loom/support/error.h"
#include "loom/tir/transform.h"
#include "target/codegen/codegen_util.h"

namespace loom::codegen {

namespace {

std::string KernelName(const PrimFunc& func) {
  auto it = func->attrs.find("global_symbol");
  const auto* name = it == func->attrs.end() ? nullptr : it->second.as<StringImmNode>();
  return name != nullptr ? name->value : "a kernel";
}

// Each threadIdx tag's extent, by tag.
std::map<std::string, int64_t> ThreadExtents(const PrimFunc& func) {
  std::map<std::string, int64_t> extents;
  PostOrderVisit(func->body, [&](const ObjectRef& node) {
    const auto* loop = node.as<ForNode>();
    if (loop == nullptr || loop->for_kind != ForKind::kThreadBinding) return;
    const std::string& tag = loop->thread_binding->thread_tag;
    if (tag.rfind("threadIdx.", 0) != 0) return;
    const auto* extent = loop->extent.as<IntImmNode>();
    LOOM_CHECK_USER(extent != nullptr)
        << "kernel '" << KernelName(func) << "': loop '" << loop->loop_var->name_hint
        << "' is bound to " << tag << " with extent " << ToScript(ObjectRef(loop->extent))
        << ", not a constant; a block's size is fixed when the kernel launches (split the "
        << "loop by a constant factor and bind the inner part)";
    extents[tag] = extent->value;
  });
  return extents;
}

// The bytes of the kernel's shared allocations (each rounded up to 8-byte words, as
// CodeGenGPU declares them).
int64_t SharedBytes(const PrimFunc& func) {
  int64_t bytes = 0;
  PostOrderVisit(func->body, [&](const ObjectRef& node) {
    const auto* op = node.as<AllocateNode>();
    if (op == nullptr || op->storage_scope != "shared") return;
    auto [elements, constant, count] = SizeOf(*op);
    if (constant) bytes += (count * op->dtype.bytes() + 7) / 8 * 8;
  });
  return bytes;
}

void CheckLaunchLimits(const std::string& name, const PrimFunc& func, const Target& target) {
  std::string shape;
  for (const auto& [tag, extent] : ThreadExtents(func)) {
    shape += (shape.empty() ? "" : " x ") + tag + " " + std::to_string(extent);
  }
  const int64_t threads = ThreadsPerBlock(func);
  const int64_t thread_limit = target.GetInt("max-threads-per-block");
  LOOM_CHECK_USER(threads <= thread_limit)
      << "kernel '" << name << "': a block of " << threads << " threads (" << shape
      << ") is more than the target's -max-threads-per-block=" << thread_limit
      << "; bind smaller thread extents";
  const int64_t shared = SharedBytes(func);
  const int64_t shared_limit = target.GetInt("max-shared-memory-per-block");
  LOOM_CHECK_USER(shared <= shared_limit)
      << "kernel '" << name << "': its shared allocations take " << shared
      << " bytes per block, more than the target's -max-shared-memory-per-block=" << shared_limit
      << "; make the tiles cached in shared memory smaller";
}

}  // namespace

int64_t ThreadsPerBlock(const PrimFunc& func) {
  int64_t threads = 1;
  for (const auto& [tag, extent] : ThreadExtents(func)) threads *= extent;
  return threads;
}

std::vector<runtime::DeviceKernelInfo> GenerateKernels(const IRModule& kernels,
                                                       const Target& target, CodeGenGPU& codegen) {
  // Warp matrix operations the device has no instructions for run as loops.
  IRModule native = tir::transform::EmulateMatrixOperations(
      [&](DataType operand) { return target.HasTensorCores(operand); })(kernels);
  IRModule scalar = tir::transform::ScalarizeVectors(kVectorAccessBytes)(native);
  std::vector<runtime::DeviceKernelInfo> infos;
  for (const auto& [name, func] : scalar.functions()) {
    CheckLaunchLimits(name, func, target);
    codegen.AddKernel(name, func);
    runtime::DeviceKernelInfo info{name, {}, tir::transform::KernelThreadTags(func)};
    for (const Var& param : func->params) info.params.push_back(param.dtype());
    infos.push_back(std::move(info));
  }
  return infos;
}

}  // namespace loom::codegen
