// VmModel: the VM's program (docs/vm_artifact.md) parsed and checked once, so the machine
// can trust every register, kernel, weight and size expression in it.
#include <nlohmann/json.hpp>

#include "loom/runtime/cpu_features.h"
#include "loom/runtime/vm.h"
#include "loom/support/error.h"
#include "runtime/artifact.h"
#include "runtime/json_checks.h"

namespace loom::runtime {

namespace {

using nlohmann::json;

constexpr const char* kVmFormat = "loom-vm-1";
constexpr size_t kDataAlignment = 64;  // of each weight in the blob, as kernels require

const JsonChecks kJson("VM program", "the program");

const std::map<std::string, ShapeExpr::Kind>& OperationKinds() {
  static const std::map<std::string, ShapeExpr::Kind> kinds = {
      {"add", ShapeExpr::Kind::kAdd},
      {"sub", ShapeExpr::Kind::kSub},
      {"mul", ShapeExpr::Kind::kMul},
      {"floordiv", ShapeExpr::Kind::kFloorDiv},
      {"floormod", ShapeExpr::Kind::kFloorMod},
      {"min", ShapeExpr::Kind::kMin},
      {"max", ShapeExpr::Kind::kMax},
      {"eq", ShapeExpr::Kind::kEq},
      {"lt", ShapeExpr::Kind::kLt}};
  return kinds;
}

ShapeExpr ParseShapeExpr(const json& value, const std::string& where, size_t num_vars,
                         int depth = 0) {
  LOOM_CHECK_USER(depth < 64) << "VM program: " << where << " nests deeper than 64 operations";
  ShapeExpr e;
  if (value.is_number_integer()) {
    LOOM_CHECK_USER(!value.is_number_unsigned() ||
                    value.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX))
        << "VM program: " << where << " = " << JsonChecks::Shown(value) << " is too large";
    e.value = value.get<int64_t>();
    return e;
  }
  kJson.Object(value, where);
  if (value.contains("var")) {
    e.kind = ShapeExpr::Kind::kVar;
    e.value = kJson.Id(value, "var", where, num_vars, "size variables");
    return e;
  }
  std::string op = kJson.Text(value, "op", where);
  auto kind = OperationKinds().find(op);
  LOOM_CHECK_USER(kind != OperationKinds().end())
      << "VM program: " << where << ".op '" << op
      << "' is no size operation (add, sub, mul, floordiv, floormod, min, max, eq, lt)";
  e.kind = kind->second;
  const json& args = kJson.Array(value, "args", where);
  LOOM_CHECK_USER(args.size() == 2)
      << "VM program: " << where << ".args must hold 2 operands, got " << args.size();
  for (size_t k = 0; k < 2; ++k) {
    e.operands.push_back(
        ParseShapeExpr(args[k], where + ".args[" + std::to_string(k) + "]", num_vars, depth + 1));
  }
  return e;
}

ShapeExprs ParseShape(const json& item, const std::string& where, size_t num_vars) {
  const json& shape = kJson.Array(item, "shape", where);
  ShapeExprs dims;
  for (size_t d = 0; d < shape.size(); ++d) {
    dims.push_back(ParseShapeExpr(shape[d], where + ".shape[" + std::to_string(d) + "]", num_vars));
  }
  return dims;
}

// The name and register of an input or output.
VmIO ParseIO(const json& item, const std::string& where, size_t num_registers) {
  VmIO io;
  io.name = kJson.Text(item, "name", where);
  io.reg = kJson.Id(item, "register", where, num_registers, "registers");
  return io;
}

// The constant dimensions of `shape` (a weight's), or an error naming `where`.
std::vector<int64_t> ConstantShape(const ShapeExprs& shape, const std::string& where) {
  std::vector<int64_t> dims;
  for (const ShapeExpr& e : shape) {
    LOOM_CHECK_USER(e.kind == ShapeExpr::Kind::kConst && e.value >= 0)
        << "VM program: " << where << " must have a constant shape";
    dims.push_back(e.value);
  }
  return dims;
}

}  // namespace

bool IsVmProgram(const std::string& text) {
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return doc.is_object() && doc.contains("format") && doc["format"] == kVmFormat;
}

std::shared_ptr<const VmModel> detail::ParseVmModel(Module kernels, const std::string& program,
                                                    const void* params, size_t params_size,
                                                    std::shared_ptr<const void> params_owner) {
  CheckParamsBlob("MakeVmModel", params, params_size);
  json doc = kJson.Parse(program);
  kJson.Object(doc, "the document");
  std::string format = kJson.Text(doc, "format", "the document");
  LOOM_CHECK_USER(format == kVmFormat)
      << "VM program: unknown format '" << format << "'; this runtime reads '" << kVmFormat << "'";

  std::shared_ptr<VmModel> model(new VmModel());
  model->module_ = std::move(kernels);
  model->params_data_ = static_cast<const uint8_t*>(params);
  model->params_owner_ = std::move(params_owner);
  model->target_ = kJson.Text(doc, "target", "the document");
  if (model->module_.defined()) CheckCpuFeatures(model->target_);
  if (doc.contains("precision")) model->precision_ = kJson.Text(doc, "precision", "the document");
  model->max_allocation_bytes_ = kJson.Count(doc, "max_allocation_bytes", "the document");

  const json& vars = kJson.Array(doc, "size_vars", "the document");
  for (size_t v = 0; v < vars.size(); ++v) {
    LOOM_CHECK_USER(vars[v].is_string()) << "VM program: size_vars[" << v << "] must be a name";
    model->size_vars_.push_back(vars[v].get<std::string>());
  }
  const size_t num_vars = vars.size();
  if (doc.contains("constraints")) {
    const json& constraints = kJson.Array(doc, "constraints", "the document");
    for (size_t c = 0; c < constraints.size(); ++c) {
      std::string where = "constraints[" + std::to_string(c) + "]";
      VmConstraint constraint;
      constraint.var = kJson.Id(constraints[c], "var", where, num_vars, "size variables");
      constraint.text = kJson.Text(constraints[c], "text", where);
      constraint.cond =
          ParseShapeExpr(kJson.Field(constraints[c], "cond", where), where + ".cond", num_vars);
      model->constraints_.push_back(std::move(constraint));
    }
  }

  const json& params_json = kJson.Array(doc, "params", "the document");
  for (size_t p = 0; p < params_json.size(); ++p) {
    std::string where = "params[" + std::to_string(p) + "]";
    size_t offset = static_cast<size_t>(kJson.Count(params_json[p], "offset", where));
    size_t bytes = static_cast<size_t>(kJson.Count(params_json[p], "bytes", where));
    LOOM_CHECK_USER(offset <= params_size && bytes <= params_size - offset)
        << "VM program: " << where << " (offset " << offset << ", " << bytes
        << " bytes) lies outside the " << params_size << "-byte parameters blob";
    LOOM_CHECK_USER(offset % kDataAlignment == 0)
        << "VM program: " << where << ".offset " << offset << " is not " << kDataAlignment
        << "-byte aligned";
    model->param_names_.push_back(kJson.Text(params_json[p], "name", where));
    model->param_offsets_.push_back(offset);
    model->param_bytes_.push_back(bytes);
  }

  const int64_t registers = kJson.Count(doc, "registers", "the document");
  LOOM_CHECK_USER(registers <= (int64_t{1} << 24))
      << "VM program: registers = " << registers << " is implausibly many";
  model->num_registers_ = static_cast<int>(registers);
  const size_t num_registers = static_cast<size_t>(registers);
  // What holds a value at each point: every register (a tensor), then every size variable
  // (bound by an input or by a load_size).
  std::vector<bool> written(num_registers + num_vars, false);
  auto var_bound = [&](size_t v) { return written[num_registers + v]; };
  model->input_registers_.assign(num_registers, false);

  const json& inputs = kJson.Array(doc, "inputs", "the document");
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string where = "inputs[" + std::to_string(i) + "]";
    VmIO io = ParseIO(inputs[i], where, num_registers);
    io.dtype = kJson.ParseDtype(kJson.Text(inputs[i], "dtype", where), where);
    io.shape = ParseShape(inputs[i], where, num_vars);
    for (const VmIO& other : model->inputs_) {
      LOOM_CHECK_USER(other.name != io.name && other.reg != io.reg)
          << "VM program: " << where << " repeats the name or register of another input";
    }
    written[io.reg] = true;
    model->input_registers_[io.reg] = true;
    model->inputs_.push_back(std::move(io));
  }
  // The inputs' dimensions bind their size variables before the program runs.
  for (const VmIO& io : model->inputs_) {
    for (const ShapeExpr& e : io.shape) {
      if (e.kind == ShapeExpr::Kind::kVar)
        written[num_registers + static_cast<size_t>(e.value)] = true;
    }
  }
  const std::vector<bool> input_vars(written.begin() + static_cast<std::ptrdiff_t>(num_registers),
                                     written.end());
  // What the machine computes before the program runs (an input's computed dimension, a
  // constraint) uses only variables an input's dimension gives.
  auto from_inputs_only = [&](const ShapeExpr& e, const std::string& where) {
    std::vector<const ShapeExpr*> pending = {&e};
    while (!pending.empty()) {
      const ShapeExpr* next = pending.back();
      pending.pop_back();
      LOOM_CHECK_USER(next->kind != ShapeExpr::Kind::kVar ||
                      input_vars[static_cast<size_t>(next->value)])
          << "VM program: " << where << " uses size variable '"
          << model->size_vars_[static_cast<size_t>(next->value)]
          << "', which no input's dimension gives";
      for (const ShapeExpr& operand : next->operands) pending.push_back(&operand);
    }
  };
  for (size_t i = 0; i < model->inputs_.size(); ++i) {
    for (const ShapeExpr& e : model->inputs_[i].shape) {
      from_inputs_only(e, "inputs[" + std::to_string(i) + "]");
    }
  }
  for (size_t c = 0; c < model->constraints_.size(); ++c) {
    from_inputs_only(model->constraints_[c].cond, "constraints[" + std::to_string(c) + "]");
    LOOM_CHECK_USER(input_vars[static_cast<size_t>(model->constraints_[c].var)])
        << "VM program: constraints[" << c << "] is on a size variable no input's dimension "
        << "gives";
  }

  const json& kernels_json = kJson.Array(doc, "kernels", "the document");
  for (size_t k = 0; k < kernels_json.size(); ++k) {
    std::string where = "kernels[" + std::to_string(k) + "]";
    VmKernel kernel;
    kernel.func = kJson.Text(kernels_json[k], "func", where);
    kernel.name = kJson.Text(kernels_json[k], "name", where);
    if (model->module_.defined()) {
      kernel.packed = model->module_.GetFunction(kernel.func);
      LOOM_CHECK_USER(kernel.packed.defined())
          << "VM program: " << where << ".func '" << kernel.func
          << "' is no function of the model's kernels";
    }
    model->kernels_.push_back(std::move(kernel));
  }

  const json& code = kJson.Array(doc, "instructions", "the document");
  // Which registers hold a tensor on every path to an instruction: jumps go forward only, so
  // one pass meets each jump's state at its target (joined: held on every path).
  std::map<size_t, std::vector<bool>> at_target;
  bool reachable = true;  // from the instruction before (not after a goto)
  auto arrive = [&](size_t n) {
    auto jump = at_target.find(n);
    if (jump == at_target.end()) return;
    if (!reachable) {
      written = jump->second;
    } else {
      for (size_t r = 0; r < written.size(); ++r) written[r] = written[r] && jump->second[r];
    }
    reachable = true;
    at_target.erase(jump);
  };
  auto jump_to = [&](size_t target) {
    auto [it, fresh] = at_target.emplace(target, written);
    if (!fresh) {
      for (size_t r = 0; r < written.size(); ++r) it->second[r] = it->second[r] && written[r];
    }
  };
  for (size_t n = 0; n < code.size(); ++n) {
    std::string where = "instructions[" + std::to_string(n) + "]";
    arrive(n);
    LOOM_CHECK_USER(reachable) << "VM program: " << where
                               << " follows a goto, and no jump reaches it";
    kJson.Object(code[n], where);
    std::string op = kJson.Text(code[n], "op", where);
    VmInstruction insn;
    // A jump's target: a later instruction, or the end of the program.
    auto target = [&](const char* key) {
      int64_t to = kJson.NonNegative(kJson.Field(code[n], key, where), where + "." + key);
      LOOM_CHECK_USER(to > static_cast<int64_t>(n) && to <= static_cast<int64_t>(code.size()))
          << "VM program: " << where << "." << key << " = " << to << " must be a later "
          << "instruction (" << n + 1 << " to " << code.size() << ", the end)";
      return static_cast<int>(to);
    };
    // An input's register holds the caller's tensor for the whole run.
    auto not_input = [&](int reg, const char* verb) {
      for (const VmIO& input : model->inputs_) {
        LOOM_CHECK_USER(input.reg != reg) << "VM program: " << where << " " << verb << " register "
                                          << reg << ", input '" << input.name << "'";
      }
    };
    auto read = [&](int reg, const char* what) {
      LOOM_CHECK_USER(written[static_cast<size_t>(reg)])
          << "VM program: " << where << " reads register " << reg << " (" << what
          << ") before any instruction writes it";
    };
    // A size expression of variables bound on every path here.
    auto sizes_bound = [&](const ShapeExpr& e, const std::string& what) {
      std::vector<const ShapeExpr*> pending = {&e};
      while (!pending.empty()) {
        const ShapeExpr* next = pending.back();
        pending.pop_back();
        if (next->kind == ShapeExpr::Kind::kVar) {
          const size_t v = static_cast<size_t>(next->value);
          LOOM_CHECK_USER(var_bound(v))
              << "VM program: " << where << " (" << what << ") uses size variable '"
              << model->size_vars_[v] << "' before any input or load_size gives its value";
        }
        for (const ShapeExpr& operand : next->operands) pending.push_back(&operand);
      }
      return e;
    };
    if (op == "load_param" || op == "alloc") {
      insn.op = op == "alloc" ? VmInstruction::Op::kAlloc : VmInstruction::Op::kLoadParam;
      insn.dst = kJson.Id(code[n], "dst", where, num_registers, "registers");
      not_input(insn.dst, "writes");
      insn.dtype = kJson.ParseDtype(kJson.Text(code[n], "dtype", where), where);
      insn.shape = ParseShape(code[n], where, num_vars);
      for (const ShapeExpr& e : insn.shape) sizes_bound(e, "its shape");
      if (insn.op == VmInstruction::Op::kLoadParam) {
        insn.param = kJson.Id(code[n], "param", where, model->param_bytes_.size(), "params");
        size_t bytes = kJson.TensorBytes(ConstantShape(insn.shape, where), insn.dtype, where,
                                         model->param_names_[insn.param]);
        LOOM_CHECK_USER(bytes == model->param_bytes_[insn.param])
            << "VM program: " << where << " reads param " << insn.param << " as " << bytes
            << " bytes, but it holds " << model->param_bytes_[insn.param];
      }
      written[insn.dst] = true;
    } else if (op == "invoke") {
      insn.op = VmInstruction::Op::kInvoke;
      insn.kernel = kJson.Id(code[n], "kernel", where, model->kernels_.size(), "kernels");
      const json& args = kJson.Array(code[n], "args", where);
      for (size_t a = 0; a < args.size(); ++a) {
        std::string arg_where = where + ".args[" + std::to_string(a) + "]";
        int64_t reg = kJson.NonNegative(args[a], arg_where);
        LOOM_CHECK_USER(static_cast<uint64_t>(reg) < num_registers)
            << "VM program: " << arg_where << " = " << reg << " is out of range: there are "
            << num_registers << " registers";
        read(static_cast<int>(reg), "a kernel argument");
        insn.args.push_back(static_cast<int>(reg));
      }
    } else if (op == "move") {
      insn.op = VmInstruction::Op::kMove;
      insn.dst = kJson.Id(code[n], "dst", where, num_registers, "registers");
      insn.src = kJson.Id(code[n], "src", where, num_registers, "registers");
      LOOM_CHECK_USER(insn.src != insn.dst)
          << "VM program: " << where << " moves register " << insn.src << " onto itself";
      not_input(insn.dst, "writes");
      read(insn.src, "the moved tensor");
      if (!model->input_registers_[insn.src]) written[insn.src] = false;
      written[insn.dst] = true;
    } else if (op == "if") {
      insn.op = VmInstruction::Op::kIf;
      insn.cond = sizes_bound(
          ParseShapeExpr(kJson.Field(code[n], "cond", where), where + ".cond", num_vars),
          "its condition");
      insn.target = target("else");
      jump_to(static_cast<size_t>(insn.target));
    } else if (op == "goto") {
      insn.op = VmInstruction::Op::kGoto;
      insn.target = target("target");
      jump_to(static_cast<size_t>(insn.target));
      reachable = false;
    } else if (op == "load_size") {
      insn.op = VmInstruction::Op::kLoadSize;
      insn.var = kJson.Id(code[n], "var", where, num_vars, "size variables");
      LOOM_CHECK_USER(!input_vars[static_cast<size_t>(insn.var)])
          << "VM program: " << where << " loads size variable '" << model->size_vars_[insn.var]
          << "', which an input's dimension gives";
      insn.src = kJson.Id(code[n], "src", where, num_registers, "registers");
      read(insn.src, "the size's value");
      if (code[n].contains("index")) insn.index = kJson.Count(code[n], "index", where);
      insn.bounded = code[n].contains("upper");
      if (insn.bounded) {
        insn.upper = sizes_bound(
            ParseShapeExpr(kJson.Field(code[n], "upper", where), where + ".upper", num_vars),
            "its bound");
      }
      insn.name = kJson.Text(code[n], "name", where);
      written[num_registers + static_cast<size_t>(insn.var)] = true;
    } else if (op == "release") {
      insn.op = VmInstruction::Op::kRelease;
      insn.dst = kJson.Id(code[n], "register", where, num_registers, "registers");
      read(insn.dst, "the released tensor");
      not_input(insn.dst, "releases");
      written[insn.dst] = false;
    } else {
      LOOM_THROW << "VM program: " << where << ".op '" << op
                 << "' is no instruction (load_param, alloc, invoke, release, move, if, goto, "
                 << "load_size)";
    }
    model->instructions_.push_back(std::move(insn));
  }
  arrive(code.size());

  const json& outputs = kJson.Array(doc, "outputs", "the document");
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string where = "outputs[" + std::to_string(i) + "]";
    VmIO io = ParseIO(outputs[i], where, num_registers);
    // Older programs name an output's register only; its dtype and shape are for people.
    if (outputs[i].contains("dtype")) {
      io.dtype = kJson.ParseDtype(kJson.Text(outputs[i], "dtype", where), where);
      io.shape = ParseShape(outputs[i], where, num_vars);
    }
    LOOM_CHECK_USER(written[io.reg]) << "VM program: " << where << " is register " << io.reg
                                     << ", which holds no tensor when the program ends";
    model->outputs_.push_back(std::move(io));
  }
  return model;
}

std::shared_ptr<const VmModel> MakeVmModel(Module kernels, const std::string& program_json,
                                           const void* params, size_t params_size,
                                           std::shared_ptr<const void> params_owner) {
  LOOM_CHECK_USER(kernels.defined()) << "MakeVmModel: the kernel module is undefined";
  return detail::ParseVmModel(std::move(kernels), program_json, params, params_size,
                              std::move(params_owner));
}

std::shared_ptr<const VmModel> LoadVmModel(const std::string& path) {
  detail::ArtifactData data = detail::LoadArtifact(path, "LoadVmModel");
  try {
    return detail::ParseVmModel(std::move(data.kernels), data.program, data.params,
                                data.params_size, data.params_owner);
  } catch (const Error& error) {
    LOOM_THROW << "LoadVmModel('" << path << "'): " << error.what();
  }
}

std::shared_ptr<const VmModel> DescribeVmModel(const std::string& path) {
  detail::ArtifactData data = detail::ReadArtifactData(path, "DescribeVmModel");
  try {
    return detail::ParseVmModel(Module(), data.program, data.params, data.params_size,
                                data.params_owner);
  } catch (const Error& error) {
    LOOM_THROW << "DescribeVmModel('" << path << "'): " << error.what();
  }
}

}  // namespace loom::runtime
