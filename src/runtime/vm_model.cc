// VmModel: the VM's program (docs/vm_artifact.md) parsed and checked once, so the machine
// can trust every register, kernel, weight and size expression in it.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

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

// The instructions that may run after instruction `n` of `code`: the next, a jump's target
// (the count: the end).
std::vector<size_t> Successors(const std::vector<VmInstruction>& code, size_t n) {
  const VmInstruction& insn = code[n];
  if (insn.op == VmInstruction::Op::kGoto) return {static_cast<size_t>(insn.target)};
  if (insn.op == VmInstruction::Op::kIf) return {n + 1, static_cast<size_t>(insn.target)};
  return {n + 1};
}

// What an instruction needs: registers holding a tensor (with what they hold, for messages),
// and size expressions, whose variables must be bound.
struct Uses {
  std::vector<std::pair<int, const char*>> registers;
  std::vector<std::pair<const ShapeExpr*, const char*>> sizes;
};

Uses UsesOf(const VmInstruction& insn) {
  using Op = VmInstruction::Op;
  Uses uses;
  auto shape = [&] {
    for (const ShapeExpr& e : insn.shape) uses.sizes.emplace_back(&e, "its shape");
  };
  switch (insn.op) {
    case Op::kLoadParam:
    case Op::kAlloc:
      shape();
      break;
    case Op::kInvoke:
      for (int r : insn.args) uses.registers.emplace_back(r, "a kernel argument");
      break;
    case Op::kMove:
      uses.registers.emplace_back(insn.src, "the moved tensor");
      if (insn.reshape) shape();
      break;
    case Op::kIf:
    case Op::kCheck:
      uses.sizes.emplace_back(&insn.cond, "its condition");
      break;
    case Op::kGoto:
      break;
    case Op::kLoadSize:
      uses.registers.emplace_back(insn.src, "the size's value");
      if (insn.bounded) uses.sizes.emplace_back(&insn.upper, "its bound");
      break;
    case Op::kSetSize:
      uses.sizes.emplace_back(&insn.value, "its value");
      break;
    case Op::kWriteSize:
      uses.registers.emplace_back(insn.dst, "the tensor written");
      uses.sizes.emplace_back(&insn.value, "its value");
      break;
    case Op::kCopy:
      uses.registers.emplace_back(insn.dst, "the tensor written");
      uses.registers.emplace_back(insn.src, "the copied tensor");
      break;
    case Op::kStoreRow:
      uses.registers.emplace_back(insn.dst, "the tensor written");
      uses.registers.emplace_back(insn.src, "the stored row");
      uses.sizes.emplace_back(&insn.value, "its row");
      break;
    case Op::kRelease:
      uses.registers.emplace_back(insn.dst, "the released tensor");
      break;
  }
  return uses;
}

// `state` (which registers hold a tensor, then which size variables are bound) after
// `insn` runs.
void Transfer(const VmModel& model, const VmInstruction& insn, std::vector<bool>* state) {
  using Op = VmInstruction::Op;
  const size_t registers = static_cast<size_t>(model.num_registers());
  switch (insn.op) {
    case Op::kLoadParam:
    case Op::kAlloc:
      (*state)[static_cast<size_t>(insn.dst)] = true;
      break;
    case Op::kMove:
      if (!model.IsInputRegister(insn.src)) (*state)[static_cast<size_t>(insn.src)] = false;
      (*state)[static_cast<size_t>(insn.dst)] = true;
      break;
    case Op::kRelease:
      (*state)[static_cast<size_t>(insn.dst)] = false;
      break;
    case Op::kLoadSize:
    case Op::kSetSize:
      (*state)[registers + static_cast<size_t>(insn.var)] = true;
      break;
    default:
      break;
  }
}

// The checks over every path through the program, loops included: each instruction is on
// some path from the first; the end is too (a program that cannot end is no model); a
// register is read, and a size variable used, only where every path to it has written the
// register (and not released or moved it since) and bound the variable; the outputs hold a
// tensor at the end on every path. `entry`: what holds before the first instruction (the
// inputs' registers, the variables their dimensions bind).
void CheckDataflow(const VmModel& model, const std::vector<bool>& entry) {
  const std::vector<VmInstruction>& code = model.instructions();
  const size_t end = code.size();
  // Basic blocks: runs of instructions entered at their first only, each starting at the first
  // instruction, a jump's target or the instruction after a jump; the end is one of its own
  // (empty). What holds is kept at their starts only: a program of many specializations has
  // many registers and instructions but few jumps.
  std::vector<size_t> starts = {0, end};
  for (size_t n = 0; n < end; ++n) {
    if (code[n].op == VmInstruction::Op::kIf || code[n].op == VmInstruction::Op::kGoto) {
      starts.push_back(static_cast<size_t>(code[n].target));
      starts.push_back(n + 1);
    }
  }
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  const size_t blocks = starts.size();  // the last: the end
  std::vector<size_t> block_at(end + 1, 0);
  for (size_t b = 0; b < blocks; ++b) block_at[starts[b]] = b;
  // The blocks control may pass to from block b (< the end's): its last instruction's
  // successors.
  auto next_blocks = [&](size_t b) {
    std::vector<size_t> next;
    for (size_t n : Successors(code, starts[b + 1] - 1)) next.push_back(block_at[n]);
    return next;
  };

  std::vector<bool> reached(blocks, false);
  reached[0] = true;
  std::vector<size_t> pending = {0};
  while (!pending.empty()) {
    const size_t b = pending.back();
    pending.pop_back();
    if (b + 1 == blocks) continue;
    for (size_t next : next_blocks(b)) {
      if (!reached[next]) {
        reached[next] = true;
        pending.push_back(next);
      }
    }
  }
  for (size_t b = 0; b + 1 < blocks; ++b) {
    LOOM_CHECK_USER(reached[b]) << "VM program: instructions[" << starts[b]
                                << "] is on no path from the first instruction: no jump or "
                                << "instruction before it leads there";
  }
  LOOM_CHECK_USER(reached[blocks - 1])
      << "VM program: no path from the first instruction reaches the end (instruction " << end
      << "): the program would never stop";

  // What holds at each block's start on every path to it (a must-analysis): the first path
  // to arrive sets it, every other one takes away what it lacks, and a block whose state lost
  // something is visited again, until nothing changes (a loop's body is first seen with what
  // held on entering it, then without what an iteration releases). In program order, a
  // program without backward jumps takes one pass.
  std::vector<std::vector<bool>> before(blocks);
  before[0] = entry;
  std::set<size_t> visit = {0};
  while (!visit.empty()) {
    const size_t b = *visit.begin();
    visit.erase(visit.begin());
    if (b + 1 == blocks) continue;
    std::vector<bool> after = before[b];
    for (size_t n = starts[b]; n < starts[b + 1]; ++n) Transfer(model, code[n], &after);
    for (size_t next : next_blocks(b)) {
      std::vector<bool>& state = before[next];
      bool changed = false;
      if (state.empty()) {
        state = after;
        changed = true;
      } else {
        for (size_t k = 0; k < state.size(); ++k) {
          if (state[k] && !after[k]) {
            state[k] = false;
            changed = true;
          }
        }
      }
      if (changed) visit.insert(next);
    }
  }

  // Each instruction's uses against what holds before it, in program order.
  const size_t registers = static_cast<size_t>(model.num_registers());
  for (size_t b = 0; b + 1 < blocks; ++b) {
    std::vector<bool> state = before[b];
    for (size_t n = starts[b]; n < starts[b + 1]; ++n) {
      const std::string where = "instructions[" + std::to_string(n) + "]";
      const Uses uses = UsesOf(code[n]);
      for (const auto& [reg, what] : uses.registers) {
        LOOM_CHECK_USER(state[static_cast<size_t>(reg)])
            << "VM program: " << where << " reads register " << reg << " (" << what
            << ") before any instruction writes it";
      }
      for (const auto& [size, what] : uses.sizes) {
        std::vector<const ShapeExpr*> parts = {size};
        while (!parts.empty()) {
          const ShapeExpr* part = parts.back();
          parts.pop_back();
          if (part->kind == ShapeExpr::Kind::kVar) {
            const size_t v = static_cast<size_t>(part->value);
            LOOM_CHECK_USER(state[registers + v])
                << "VM program: " << where << " (" << what << ") uses size variable '"
                << model.size_vars()[v] << "' before any input or load_size gives its value on "
                << "every path to it";
          }
          for (const ShapeExpr& operand : part->operands) parts.push_back(&operand);
        }
      }
      Transfer(model, code[n], &state);
    }
  }
  for (size_t i = 0; i < model.outputs().size(); ++i) {
    const int reg = model.outputs()[i].reg;
    LOOM_CHECK_USER(before[blocks - 1][static_cast<size_t>(reg)])
        << "VM program: outputs[" << i << "] is register " << reg
        << ", which holds no tensor when the program ends";
  }
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
  if (doc.contains("storages")) {
    const json& storages = kJson.Array(doc, "storages", "the document");
    for (size_t s = 0; s < storages.size(); ++s) {
      std::string where = "storages[" + std::to_string(s) + "]";
      const int64_t bytes = kJson.NonNegative(storages[s], where);
      const int64_t limit = model->max_allocation_bytes_;
      LOOM_CHECK_USER(limit <= 0 || bytes <= limit)
          << "VM program: " << where << " = " << bytes << " bytes, more than the " << limit
          << " one allocation may take (max_allocation_bytes)";
      model->storages_.push_back(bytes);
    }
  }
  // What holds a value before the program runs: the inputs' registers (a tensor each), then the
  // size variables their dimensions bind; the dataflow check below starts from it.
  std::vector<bool> written(num_registers + num_vars, false);
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
  // Each instruction's fields, checked alone; what holds a value where (a register read or a
  // size used on some path before anything writes it) is checked once all are parsed, since
  // a jump may go back.
  for (size_t n = 0; n < code.size(); ++n) {
    std::string where = "instructions[" + std::to_string(n) + "]";
    kJson.Object(code[n], where);
    std::string op = kJson.Text(code[n], "op", where);
    VmInstruction insn;
    // A jump's target: any instruction, or the end of the program.
    auto target = [&](const char* key) {
      int64_t to = kJson.NonNegative(kJson.Field(code[n], key, where), where + "." + key);
      LOOM_CHECK_USER(to <= static_cast<int64_t>(code.size()))
          << "VM program: " << where << "." << key << " = " << to << " must be an instruction "
          << "(0 to " << code.size() << ", " << code.size() << " the end)";
      return static_cast<int>(to);
    };
    auto size = [&](const char* key) {
      return ParseShapeExpr(kJson.Field(code[n], key, where), where + "." + key, num_vars);
    };
    auto reg = [&](const char* key) {
      return kJson.Id(code[n], key, where, num_registers, "registers");
    };
    // An input's register holds the caller's tensor for the whole run.
    auto not_input = [&](int r, const char* verb) {
      for (const VmIO& input : model->inputs_) {
        LOOM_CHECK_USER(input.reg != r) << "VM program: " << where << " " << verb << " register "
                                        << r << ", input '" << input.name << "'";
      }
    };
    // A variable the program binds itself (load_size, set_size): no input's dimension gives
    // it, which binds it before the run.
    auto own_var = [&](const char* verb) {
      int v = kJson.Id(code[n], "var", where, num_vars, "size variables");
      LOOM_CHECK_USER(!input_vars[static_cast<size_t>(v)])
          << "VM program: " << where << " " << verb << " size variable '" << model->size_vars_[v]
          << "', which an input's dimension gives";
      return v;
    };
    if (op == "load_param" || op == "alloc") {
      insn.op = op == "alloc" ? VmInstruction::Op::kAlloc : VmInstruction::Op::kLoadParam;
      insn.dst = reg("dst");
      not_input(insn.dst, "writes");
      insn.dtype = kJson.ParseDtype(kJson.Text(code[n], "dtype", where), where);
      insn.shape = ParseShape(code[n], where, num_vars);
      if (insn.op == VmInstruction::Op::kAlloc && code[n].contains("storage")) {
        insn.storage = kJson.Id(code[n], "storage", where, model->storages_.size(), "storages");
      }
      if (insn.op == VmInstruction::Op::kLoadParam) {
        insn.param = kJson.Id(code[n], "param", where, model->param_bytes_.size(), "params");
        size_t bytes = kJson.TensorBytes(ConstantShape(insn.shape, where), insn.dtype, where,
                                         model->param_names_[insn.param]);
        LOOM_CHECK_USER(bytes == model->param_bytes_[insn.param])
            << "VM program: " << where << " reads param " << insn.param << " as " << bytes
            << " bytes, but it holds " << model->param_bytes_[insn.param];
      }
    } else if (op == "invoke") {
      insn.op = VmInstruction::Op::kInvoke;
      insn.kernel = kJson.Id(code[n], "kernel", where, model->kernels_.size(), "kernels");
      const json& args = kJson.Array(code[n], "args", where);
      for (size_t a = 0; a < args.size(); ++a) {
        std::string arg_where = where + ".args[" + std::to_string(a) + "]";
        int64_t r = kJson.NonNegative(args[a], arg_where);
        LOOM_CHECK_USER(static_cast<uint64_t>(r) < num_registers)
            << "VM program: " << arg_where << " = " << r << " is out of range: there are "
            << num_registers << " registers";
        insn.args.push_back(static_cast<int>(r));
      }
    } else if (op == "move") {
      insn.op = VmInstruction::Op::kMove;
      insn.dst = reg("dst");
      insn.src = reg("src");
      LOOM_CHECK_USER(insn.src != insn.dst)
          << "VM program: " << where << " moves register " << insn.src << " onto itself";
      not_input(insn.dst, "writes");
      insn.reshape = code[n].contains("shape");
      if (insn.reshape) insn.shape = ParseShape(code[n], where, num_vars);
    } else if (op == "if") {
      insn.op = VmInstruction::Op::kIf;
      insn.cond = size("cond");
      insn.target = target("else");
    } else if (op == "goto") {
      insn.op = VmInstruction::Op::kGoto;
      insn.target = target("target");
    } else if (op == "load_size") {
      insn.op = VmInstruction::Op::kLoadSize;
      insn.var = own_var("loads");
      insn.src = reg("src");
      if (code[n].contains("index")) insn.index = kJson.Count(code[n], "index", where);
      insn.bounded = code[n].contains("upper");
      if (insn.bounded) insn.upper = size("upper");
      insn.name = kJson.Text(code[n], "name", where);
    } else if (op == "set_size") {
      insn.op = VmInstruction::Op::kSetSize;
      insn.var = own_var("sets");
      insn.value = size("value");
    } else if (op == "write_size") {
      insn.op = VmInstruction::Op::kWriteSize;
      insn.dst = reg("dst");
      not_input(insn.dst, "writes");
      insn.value = size("value");
    } else if (op == "copy" || op == "store_row") {
      insn.op = op == "copy" ? VmInstruction::Op::kCopy : VmInstruction::Op::kStoreRow;
      insn.dst = reg("dst");
      insn.src = reg("src");
      not_input(insn.dst, "writes");
      // Copying a tensor's elements onto themselves is no copy (and overlapping memory).
      LOOM_CHECK_USER(insn.src != insn.dst)
          << "VM program: " << where << " copies register " << insn.src << " onto itself";
      if (insn.op == VmInstruction::Op::kStoreRow) insn.value = size("row");
    } else if (op == "check") {
      insn.op = VmInstruction::Op::kCheck;
      insn.cond = size("cond");
      insn.message = kJson.Text(code[n], "message", where);
    } else if (op == "release") {
      insn.op = VmInstruction::Op::kRelease;
      insn.dst = reg("register");
      not_input(insn.dst, "releases");
    } else {
      LOOM_THROW << "VM program: " << where << ".op '" << op
                 << "' is no instruction (load_param, alloc, invoke, release, move, if, goto, "
                 << "load_size, set_size, write_size, copy, store_row, check)";
    }
    model->instructions_.push_back(std::move(insn));
  }
  const json& outputs = kJson.Array(doc, "outputs", "the document");
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string where = "outputs[" + std::to_string(i) + "]";
    VmIO io = ParseIO(outputs[i], where, num_registers);
    // Older programs name an output's register only; its dtype and shape are for people.
    if (outputs[i].contains("dtype")) {
      io.dtype = kJson.ParseDtype(kJson.Text(outputs[i], "dtype", where), where);
      io.shape = ParseShape(outputs[i], where, num_vars);
    }
    model->outputs_.push_back(std::move(io));
  }
  CheckDataflow(*model, written);
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
