// The opencl target's code generator: device kernels to one OpenCL C program, in a runtime
// OpenCL module (compiled by the driver when it first runs), which artifacts carry as its
// serialized bytes. Launch limits are checked against the target here.
#include "loom/runtime/opencl_module.h"

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "loom/ir/functor.h"
#include "loom/ir/printer.h"
#include "loom/support/error.h"
#include "loom/target/codegen.h"
#include "loom/tir/transform.h"
#include "target/codegen/opencl/codegen_opencl.h"

namespace loom::codegen {

namespace {

std::vector<std::string> ThreadTagsOf(const PrimFunc& func) {
  std::vector<std::string> tags;
  auto it = func->attrs.find(tir::builtin::kThreadTags);
  if (it == func->attrs.end()) return tags;
  std::istringstream list(it->second.as<StringImmNode>()->value);
  for (std::string tag; std::getline(list, tag, ',');) tags.push_back(tag);
  return tags;
}

// The work-items of one work-group: the product of the kernel's threadIdx extents, each
// constant, at most the target's -max-threads-per-block.
void CheckLaunchLimits(const std::string& name, const PrimFunc& func, const Target& target) {
  std::map<std::string, int64_t> thread_extents;
  PostOrderVisit(func->body, [&](const ObjectRef& node) {
    const auto* loop = node.as<ForNode>();
    if (loop == nullptr || loop->for_kind != ForKind::kThreadBinding) return;
    const std::string& tag = loop->thread_binding->thread_tag;
    if (tag.rfind("threadIdx.", 0) != 0) return;
    const auto* extent = loop->extent.as<IntImmNode>();
    LOOM_CHECK_USER(extent != nullptr)
        << "kernel '" << name << "': loop '" << loop->loop_var->name_hint << "' is bound to " << tag
        << " with extent " << ToScript(ObjectRef(loop->extent))
        << ", not a constant; a work-group's size is fixed when the kernel launches (split the "
        << "loop by a constant factor and bind the inner part)";
    thread_extents[tag] = extent->value;
  });
  int64_t threads = 1;
  std::string shape;
  for (const auto& [tag, extent] : thread_extents) {
    threads *= extent;
    shape += (shape.empty() ? "" : " x ") + tag + " " + std::to_string(extent);
  }
  const int64_t limit = target.GetInt("max-threads-per-block");
  LOOM_CHECK_USER(threads <= limit)
      << "kernel '" << name << "': a work-group of " << threads << " work-items (" << shape
      << ") is more than the target's -max-threads-per-block=" << limit
      << "; bind smaller thread extents";
}

runtime::Module BuildOpenCL(const IRModule& kernels, const Target& target) {
  IRModule scalar = tir::transform::ScalarizeVectors()(kernels);
  CodeGenOpenCL codegen;
  std::vector<runtime::OpenCLKernelInfo> infos;
  for (const auto& [name, func] : scalar.functions()) {
    CheckLaunchLimits(name, func, target);
    codegen.AddKernel(name, func);
    runtime::OpenCLKernelInfo info{name, {}, ThreadTagsOf(func)};
    for (const Var& param : func->params) info.params.push_back(param.dtype());
    infos.push_back(std::move(info));
  }
  return runtime::OpenCLModuleCreate(codegen.Finish(), std::move(infos));
}

}  // namespace

LOOM_REGISTER_CODEGEN({.target_kind = "opencl",
                       .module_type = "opencl",
                       .build = BuildOpenCL,
                       .export_library = nullptr,
                       .serialize = [](const runtime::Module& module) {
                         return std::make_pair(std::string("opencl"),
                                               runtime::SerializeOpenCLModule(module));
                       }});

}  // namespace loom::codegen
