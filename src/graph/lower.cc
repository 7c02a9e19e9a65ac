// LowerToTIR: each distinct primitive function of a fused main becomes one PrimFunc.
#include "loom/graph/lower.h"

#include <map>
#include <set>
#include <sstream>

#include "graph/attrs_key.h"
#include "loom/graph/functor.h"
#include "loom/graph/op_util.h"
#include "loom/graph/strategy.h"
#include "loom/ir/functor.h"
#include "loom/ir/printer.h"
#include "loom/te/lower.h"

namespace loom::graph {
namespace {

// The one tensor a value of a group is (a parameter, or a call or projection of a tensor).
const te::Tensor& Single(const std::vector<te::Tensor>& tensors, const Expr& e) {
  LOOM_ICHECK(tensors.size() == 1) << "a tuple of " << tensors.size()
                                   << " tensors used where one tensor is expected in a group ("
                                   << ExprKindName(e->expr_kind) << ")";
  return tensors[0];
}

// The placeholder shapes of a group's parameters. A kernel binds its size variables from the
// dimensions it is given, so a dimension that is an expression (b * s) of a variable no
// parameter has as a whole dimension becomes a variable of its own (one per distinct
// expression): the kernel computes with that size; the expression still holds outside.
std::vector<Array<PrimExpr>> KernelParamShapes(const Function& function) {
  std::vector<Array<PrimExpr>> shapes;
  std::set<const Object*> bound;
  for (const Var& param : function->params) {
    shapes.push_back(ops::PlaceholderShape(param.type()));
    for (const PrimExpr& dim : shapes.back()) {
      if (dim.as<loom::VarNode>() != nullptr) bound.insert(dim.get());
    }
  }
  std::map<std::string, loom::Var> abstracted;  // by the expression's text
  for (Array<PrimExpr>& shape : shapes) {
    for (size_t d = 0; d < shape.size(); ++d) {
      const PrimExpr& dim = shape[d];
      if (IsConstInt(dim) || dim.as<loom::VarNode>() != nullptr) continue;
      bool bindable = true;
      loom::PostOrderVisit(dim, [&](const ObjectRef& node) {
        if (node.as<loom::VarNode>() != nullptr && bound.count(node.get()) == 0) bindable = false;
      });
      if (bindable) continue;
      std::ostringstream text;
      text << dim;
      auto [it, fresh] = abstracted.emplace(text.str(), loom::Var());
      if (fresh) {
        it->second = SizeVar("size" + std::to_string(abstracted.size() - 1), dim.dtype());
      }
      shape[d] = it->second;
    }
  }
  return shapes;
}

// The group's computation in TE, scheduled by its master call and lowered: on the device
// when `target` is a device's and an implementation for it takes the group (*on_device), on
// the host otherwise.
PrimFunc LowerGroup(const CallNode& call, const std::string& name, const Target& target,
                    bool* on_device) {
  const Function function = Downcast<Function>(call.callee);
  std::unordered_map<const Object*, std::vector<te::Tensor>> values;
  Array<te::Tensor> args;
  const std::vector<Array<PrimExpr>> shapes = KernelParamShapes(function);
  for (size_t i = 0; i < function->params.size(); ++i) {
    const Var& param = function->params[i];
    LOOM_CHECK_USER(param.type().is_tensor())
        << call.Where() << " (kernel " << name << "): argument " << i << " is "
        << param.type().str() << "; kernels need tensors of constant shape (bind symbolic "
        << "dimensions before compiling)";
    te::Tensor tensor = te::placeholder(shapes[i], param.type().dtype(), param->name_hint);
    values[param.get()] = {tensor};
    args.push_back(tensor);
  }
  const CallNode* master = nullptr;
  PostOrderVisit(function->body, [&](const Expr& e) {
    std::vector<te::Tensor>& value = values[e.get()];
    if (const auto* call = e.as<CallNode>()) {
      LOOM_ICHECK(call->op) << "kernel " << name << " calls a function inside a fused group";
      LOOM_CHECK_USER(call->op->compute)
          << call->Where() << ": operator " << call->op->name
          << " has no compute, so it cannot be compiled";
      std::vector<te::Tensor> inputs;
      for (const Expr& arg : call->args) inputs.push_back(Single(values.at(arg.get()), arg));
      value = call->op->compute(call->Info(), inputs);
      size_t expected = call->checked_type.is_tuple() ? call->checked_type.fields().size() : 1;
      LOOM_ICHECK(value.size() == expected)
          << call->Where() << ": the compute gave " << value.size() << " tensors for type "
          << call->checked_type.str();
      // The strongest pattern schedules the group; among equals the later call (the sink).
      if (master == nullptr || call->op->pattern >= master->op->pattern) master = call;
    } else if (const auto* tuple = e.as<TupleNode>()) {
      for (const Expr& field : tuple->fields) {
        value.push_back(Single(values.at(field.get()), field));
      }
    } else if (const auto* item = e.as<TupleGetItemNode>()) {
      value = {values.at(item->tuple.get()).at(item->index)};
    } else if (e.as<ConstantNode>()) {
      LOOM_ICHECK(false) << "kernel " << name << " holds a constant: FuseOps makes constants "
                         << "parameters";
    }
  });
  LOOM_ICHECK(master != nullptr) << "kernel " << name << " has no operator call";
  const std::vector<te::Tensor>& outputs = values.at(function->body.get());
  args.insert(args.end(), outputs.begin(), outputs.end());
  const OpImplementation* device = target.kind_def().is_device
                                       ? SelectImplementation(master->Info(), outputs, target)
                                       : nullptr;
  *on_device = device != nullptr;
  if (device == nullptr && target.kind_def().is_device) {
    std::string keys;
    for (const std::string& key : target.keys()) keys += (keys.empty() ? "" : ", ") + key;
    LOOM_CHECK_USER(target.kind_def().layers_on_host)
        << master->Where() << " (kernel " << name << "): the " << target.kind()
        << " target has no schedule for operator " << master->op->name << " (strategy keys " << keys
        << "), and it runs no layer on the host instead; compile the model for a "
        << "target that has one (llvm)";
  }
  if (device == nullptr) {
    return te::lower(ScheduleGroup(master->Info(), outputs, target.host()), args, name);
  }
  te::Schedule schedule = device->schedule(master->Info(), outputs, target);
  return device->lower ? device->lower(schedule, args, name, target)
                       : te::lower(schedule, args, name);
}

}  // namespace

std::vector<const CallNode*> CallsInOrder(const Function& main) {
  std::vector<const CallNode*> calls;
  PostOrderVisitDataflow(main->body, [&](const Expr& e) {
    if (const auto* call = e.as<CallNode>()) calls.push_back(call);
  });
  return calls;
}

std::string StructuralKey(const Function& function) {
  std::unordered_map<const Object*, std::string> ids;
  std::ostringstream key;
  key << "fn(";
  for (size_t i = 0; i < function->params.size(); ++i) {
    ids[function->params[i].get()] = "p" + std::to_string(i);
    key << function->params[i].type().str() << ";";
  }
  key << ")";
  PostOrderVisit(function->body, [&](const Expr& e) {
    if (e.as<VarNode>()) return;
    std::string id = "%" + std::to_string(ids.size());
    key << id << "=";
    if (const auto* call = e.as<CallNode>()) {
      LOOM_ICHECK(call->op) << "StructuralKey of a function that calls a function";
      key << call->op->name << "(";
      for (const Expr& arg : call->args) key << ids.at(arg.get()) << ",";
      key << "){" << AttrsKey(call->attrs) << "}";
    } else if (const auto* tuple = e.as<TupleNode>()) {
      key << "(";
      for (const Expr& field : tuple->fields) key << ids.at(field.get()) << ",";
      key << ")";
    } else if (const auto* item = e.as<TupleGetItemNode>()) {
      key << ids.at(item->tuple.get()) << "." << item->index;
    } else if (e.as<ConstantNode>()) {
      key << "const@" << e.get();  // the very same constant only
    }
    key << ";";
    ids[e.get()] = id;
  });
  key << "->" << ids.at(function->body.get());
  return key.str();
}

const std::string& LoweredModel::KernelName(const CallNode& call) const {
  const auto* function = call.callee.as<FunctionNode>();
  LOOM_ICHECK(function) << call.Where() << " is not a call of a fused group";
  auto it = kernel_of.find(function);
  LOOM_ICHECK(it != kernel_of.end()) << call.Where() << ": its group was not lowered";
  return it->second;
}

LoweredModel LowerToTIR(const IRModule& fused, const Target& target,
                        const std::string& kernel_prefix) {
  LoweredModel lowered;
  std::map<std::string, std::string> kernel_of_key;
  for (const CallNode* call : CallsInOrder(fused.main())) {
    if (ops::LoopOf(*call)) continue;  // the executor runs it; its body compiles apart
    LOOM_CHECK_USER(call->callee.defined())
        << call->Where() << " is an operator call outside a fused group: run FuseOps before "
        << "lowering";
    const auto* function = call->callee.as<FunctionNode>();
    LOOM_CHECK_USER(function->primitive())
        << call->Where() << " calls a function that is not primitive (a fused group)";
    if (lowered.kernel_of.count(function)) continue;
    std::string key = StructuralKey(Downcast<Function>(call->callee));
    auto known = kernel_of_key.find(key);
    if (known != kernel_of_key.end()) {
      lowered.kernel_of[function] = known->second;
      continue;
    }
    // Distinct groups of one name (the same operators on other shapes) get a suffix.
    std::string base =
        kernel_prefix + (function->attrs.Has("name") ? function->attrs.GetString("name") : "fused");
    std::string name = base;
    for (int copy = 1; lowered.tir.Contains(name) || lowered.device_tir.Contains(name); ++copy) {
      name = base + "_" + std::to_string(copy);
    }
    bool on_device = false;
    PrimFunc func = LowerGroup(*call, name, target, &on_device);
    (on_device ? lowered.device_tir : lowered.tir).Add(name, func);
    kernel_of_key[key] = name;
    lowered.kernel_of[function] = name;
  }
  return lowered;
}

}  // namespace loom::graph
