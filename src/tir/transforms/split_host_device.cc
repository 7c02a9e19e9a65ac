// SplitHostDevice: thread-bound loop nests become device kernels, launched from the host
// function through loom_call_packed (see transform.h).
#include <set>
#include <sstream>
#include <string>
#include <unordered_set>
#include <vector>

#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"
#include "loom/ir/printer.h"
#include "loom/ir/structural.h"
#include "loom/tir/transform.h"

namespace loom::tir::transform {

namespace {

// What a kernel body uses from outside (in first-use order) and its thread axes.
struct KernelInterface {
  std::vector<Var> handles, scalars;
  std::vector<std::string> tags;
  std::vector<PrimExpr> extents;
};

class InterfaceCollector : public StmtExprVisitor {
 public:
  KernelInterface Collect(const Stmt& body, const std::string& kernel) {
    kernel_ = kernel;
    PostOrderVisit(body, [&](const ObjectRef& node) { Define(node); });
    VisitStmt(body);
    return std::move(interface_);
  }

 private:
  // Variables the kernel binds itself; thread axes' own variables are names, not values.
  void Define(const ObjectRef& node) {
    if (const auto* loop = node.as<ForNode>()) {
      defined_.insert(loop->loop_var.get());
      if (loop->thread_binding.defined()) defined_.insert(loop->thread_binding->var.get());
    } else if (const auto* let = node.as<LetStmtNode>()) {
      defined_.insert(let->var.get());
    } else if (const auto* let = node.as<LetNode>()) {
      defined_.insert(let->var.get());
    } else if (const auto* allocate = node.as<AllocateNode>()) {
      defined_.insert(allocate->buffer_var.get());
    }
  }

  // Outer loops first: the launch lists thread axes in the order they nest.
  void VisitStmt_(const ForNode* op) override {
    if (op->for_kind == ForKind::kThreadBinding) AddThreadAxis(*op);
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitExpr_(const VarNode* op) override { UseVar(Var(op)); }
  void VisitExpr_(const BufferLoadNode* op) override {
    UseBuffer(op->buffer);
    StmtExprVisitor::VisitExpr_(op);
  }
  void VisitStmt_(const BufferStoreNode* op) override {
    UseBuffer(op->buffer);
    StmtExprVisitor::VisitStmt_(op);
  }

  void UseVar(const Var& var) {
    if (defined_.count(var.get()) || !seen_.insert(var.get()).second) return;
    (var.dtype().is_handle() ? interface_.handles : interface_.scalars).push_back(var);
  }

  // Buffers are not walked by the visitors, but every access reads their data, shape,
  // strides and offset.
  void UseBuffer(const Buffer& buffer) {
    UseVar(buffer->data);
    for (const PrimExpr& e : buffer->shape) VisitExpr(e);
    for (const PrimExpr& e : buffer->strides) VisitExpr(e);
    if (buffer->elem_offset.defined()) VisitExpr(buffer->elem_offset);
  }

  void AddThreadAxis(const ForNode& loop) {
    const std::string& tag = loop.thread_binding->thread_tag;
    PostOrderVisit(loop.extent, [&](const ObjectRef& n) {
      const auto* var = n.as<VarNode>();
      LOOM_CHECK_USER(var == nullptr || !defined_.count(var))
          << "SplitHostDevice: the extent of '" << tag << "' in kernel '" << kernel_
          << "' reads '" << var->name_hint
          << "', which the kernel defines; a launch's extents must be known before it starts";
    });
    for (size_t i = 0; i < interface_.tags.size(); ++i) {
      if (interface_.tags[i] != tag) continue;
      LOOM_CHECK_USER(StructuralEqual(interface_.extents[i], loop.extent))
          << "SplitHostDevice: kernel '" << kernel_ << "' binds '" << tag << "' with extent "
          << ToScript(ObjectRef(interface_.extents[i])) << " and with extent "
          << ToScript(ObjectRef(loop.extent)) << "; one launch has one extent per thread axis";
      return;
    }
    interface_.tags.push_back(tag);
    interface_.extents.push_back(loop.extent);
  }

  std::string kernel_;
  std::unordered_set<const VarNode*> defined_, seen_;
  KernelInterface interface_;
};

class KernelOutliner : public StmtExprMutator {
 public:
  explicit KernelOutliner(std::string host) : host_(std::move(host)) {}

  Stmt VisitStmt_(const ForNode* op) override {
    if (op->for_kind != ForKind::kThreadBinding) return StmtExprMutator::VisitStmt_(op);
    std::string name = host_ + "_kernel" + std::to_string(kernels.size());
    Stmt body(op);
    KernelInterface interface = InterfaceCollector().Collect(body, name);

    std::vector<Var> params = interface.handles;
    params.insert(params.end(), interface.scalars.begin(), interface.scalars.end());
    std::string tags;
    for (const std::string& tag : interface.tags) tags += (tags.empty() ? "" : ",") + tag;
    Annotations attrs;
    attrs[builtin::kCallingConv] = StringImm(builtin::kDeviceKernel);
    attrs[builtin::kThreadTags] = StringImm(tags);
    attrs["global_symbol"] = StringImm(name);
    kernels.push_back({name, PrimFunc(params, {}, body, DataType::Void(), attrs)});

    Array<PrimExpr> args{StringImm(name)};
    for (const Var& param : params) args.push_back(param);
    for (const PrimExpr& extent : interface.extents) {
      args.push_back(cast(DataType::Int(64), extent));
    }
    return Evaluate(call_intrin(DataType::Int(32), "loom_call_packed", std::move(args)));
  }

  std::vector<std::pair<std::string, PrimFunc>> kernels;

 private:
  std::string host_;
};

}  // namespace

bool IsDeviceKernel(const PrimFunc& func) {
  auto it = func->attrs.find(builtin::kCallingConv);
  if (it == func->attrs.end()) return false;
  const auto* conv = it->second.as<StringImmNode>();
  return conv != nullptr && conv->value == builtin::kDeviceKernel;
}

std::vector<std::string> KernelThreadTags(const PrimFunc& func) {
  std::vector<std::string> tags;
  auto it = func->attrs.find(builtin::kThreadTags);
  if (it == func->attrs.end()) return tags;
  std::istringstream list(it->second.as<StringImmNode>()->value);
  for (std::string tag; std::getline(list, tag, ',');) tags.push_back(tag);
  return tags;
}

Pass SplitHostDevice() {
  return CreateModulePass(
      [](const IRModule& module, const PassContext&) {
        IRModule out = module;
        for (const auto& [name, func] : module.functions()) {
          if (IsDeviceKernel(func)) continue;
          KernelOutliner outliner(name);
          Stmt body = outliner.VisitStmt(func->body);
          if (outliner.kernels.empty()) continue;
          out.Add(name, WithBody(func, body), /*replace=*/true);
          for (const auto& [kernel_name, kernel] : outliner.kernels) {
            LOOM_CHECK_USER(!module.Contains(kernel_name))
                << "SplitHostDevice: the module already has a function '" << kernel_name
                << "', the name of a kernel split from '" << name << "'; rename it";
            out.Add(kernel_name, kernel);
          }
        }
        return out;
      },
      0, "SplitHostDevice");
}

}  // namespace loom::tir::transform
