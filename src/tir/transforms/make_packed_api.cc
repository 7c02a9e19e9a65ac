// MakePackedAPI: a function over buffers and scalars becomes a LoomBackendPackedCFunc that
// unpacks its arguments from the (LoomValue, type code) arrays and checks them first, so a
// wrong call fails with a message instead of reading out of bounds.
#include <dlpack/dlpack.h>

#include <functional>
#include <string>
#include <unordered_set>

#include "loom/ir/expr_ops.h"
#include "loom/runtime/c_backend_api.h"
#include "loom/runtime/device_api.h"
#include "loom/tir/transform.h"

namespace loom::tir::transform {

namespace {

using builtin::StructField;

PrimExpr StructGet(DataType t, PrimExpr ptr, int index, StructField field) {
  return call_intrin(t, "loom_struct_get",
                     {std::move(ptr), IntImm(DataType::Int(32), index),
                      IntImm(DataType::Int(32), static_cast<int>(field))});
}

PrimExpr IsNull(PrimExpr handle) {
  return call_intrin(DataType::Bool(), "loom_handle_is_null", {std::move(handle)});
}

// The argument checks and bindings, in the order they run, then folded around the body.
class PackedBodyBuilder {
 public:
  explicit PackedBodyBuilder(std::string function) : function_(std::move(function)) {}

  // Fails the call with `format` (printf, each value an int64 printed with %lld).
  void Check(PrimExpr condition, const std::string& format, Array<PrimExpr> values = {}) {
    if (is_const_true(condition)) return;
    Array<PrimExpr> args{std::move(condition), StringImm(function_ + ": " + format)};
    for (PrimExpr& v : values) args.push_back(cast(DataType::Int(64), std::move(v)));
    steps_.push_back({Var(), PrimExpr(), Evaluate(call_intrin(DataType::Int(32), "loom_check",
                                                              std::move(args)))});
  }
  void Bind(Var var, PrimExpr value) {
    bound_.insert(var.get());
    steps_.push_back({std::move(var), std::move(value), Stmt()});
  }
  bool IsBound(const Var& var) const { return bound_.count(var.get()) != 0; }

  Stmt Wrap(Stmt body) const {
    for (auto it = steps_.rbegin(); it != steps_.rend(); ++it) {
      if (it->var.defined()) {
        body = LetStmt(it->var, it->value, body);
      } else {
        body = SeqStmt({it->check, body});
      }
    }
    return body;
  }

 private:
  struct Step {
    Var var;
    PrimExpr value;
    Stmt check;
  };
  std::string function_;
  std::vector<Step> steps_;
  std::unordered_set<const Object*> bound_;
};

std::string Describe(int index, const std::string& name) {
  return "argument " + std::to_string(index) + " ('" + name + "')";
}

// A Var extent is bound from the tensor; any other extent is compared later (`deferred`),
// once every Var extent of every argument is bound.
void BindExtent(PackedBodyBuilder& builder, std::vector<std::function<void()>>& deferred,
                const PrimExpr& declared, PrimExpr passed, const std::string& what) {
  const auto* var = declared.as<VarNode>();
  if (var != nullptr && !builder.IsBound(Var(var))) {
    builder.Bind(Var(var), cast(declared.dtype(), passed));
    return;
  }
  deferred.push_back([&builder, declared, passed, what] {
    builder.Check(cast(DataType::Int(64), declared) == passed,
                  what + " must be %lld, got %lld", {declared, passed});
  });
}

void UnpackBuffer(PackedBodyBuilder& builder, std::vector<std::function<void()>>& deferred,
                  const Var& args, int index, const Buffer& buffer, const PrimExpr& type_code,
                  int device_type, bool opaque_memory) {
  std::string arg = Describe(index, buffer->name);
  DataType i32 = DataType::Int(32), i64 = DataType::Int(64);
  builder.Check(type_code == kLoomDLTensorHandle,
                arg + " must be a tensor (DLTensor*, type code 7), got type code %lld",
                {type_code});
  Var handle(buffer->name + ".handle", DataType::Handle());
  builder.Bind(handle, StructGet(DataType::Handle(), args, index, StructField::kArgValue));
  builder.Check(!IsNull(handle), arg + " is a null DLTensor pointer");

  int rank = static_cast<int>(buffer->shape.size());
  PrimExpr ndim = StructGet(i32, handle, 0, StructField::kTensorNDim);
  builder.Check(ndim == rank, arg + " must have rank " + std::to_string(rank) + ", got %lld",
                {ndim});
  DLDataType want = buffer->dtype.to_dlpack();
  PrimExpr code = StructGet(DataType::UInt(8), handle, 0, StructField::kTensorDTypeCode);
  PrimExpr bits = StructGet(DataType::UInt(8), handle, 0, StructField::kTensorDTypeBits);
  PrimExpr lanes = StructGet(DataType::UInt(16), handle, 0, StructField::kTensorDTypeLanes);
  builder.Check((code == static_cast<int>(want.code)) && (bits == static_cast<int>(want.bits)) &&
                    (lanes == static_cast<int>(want.lanes)),
                arg + " must have dtype " + buffer->dtype.str() +
                    " (code " + std::to_string(want.code) + ", bits " +
                    std::to_string(want.bits) + ", lanes " + std::to_string(want.lanes) +
                    "), got code %lld, bits %lld, lanes %lld",
                {code, bits, lanes});
  PrimExpr device = StructGet(i32, handle, 0, StructField::kTensorDeviceType);
  builder.Check(device == device_type,
                arg + " must be on device '" +
                    runtime::DeviceName(static_cast<DLDeviceType>(device_type)) +
                    "' (device type " + std::to_string(device_type) + "), got device type %lld",
                {device});

  Var base(buffer->name + ".base", DataType::Handle());
  builder.Bind(base, StructGet(DataType::Handle(), handle, 0, StructField::kTensorData));
  builder.Check(!IsNull(base), arg + " has a null data pointer");
  PrimExpr byte_offset = cast(
      i64, StructGet(DataType::UInt(64), handle, 0, StructField::kTensorByteOffset));
  if (opaque_memory) {
    // A handle the host cannot offset (a cl_mem): the device's kernels take whole buffers,
    // which the device allocated aligned.
    builder.Check(byte_offset == make_zero(i64),
                  arg +
                      " must start at its device buffer (byte_offset 0): this device's "
                      "kernels take whole buffers, got byte_offset %lld",
                  {byte_offset});
    builder.Bind(buffer->data, base);
  } else {
    // The elements start byte_offset bytes past `data` (a view into a larger allocation):
    // the buffer's data is the address of that byte, taken through a byte buffer over
    // `data`, and the alignment check applies to it.
    Buffer bytes(base, DataType::UInt(8), {byte_offset + 1}, {}, make_zero(i64),
                 buffer->name + ".bytes", "global", 1, 1);
    builder.Bind(buffer->data,
                 call_intrin(DataType::Handle(), "address_of", {BufferLoad(bytes, {byte_offset})}));
    PrimExpr address = call_intrin(DataType::UInt(64), "reinterpret", {buffer->data});
    builder.Check(
        floormod(address, make_const(DataType::UInt(64), int64_t{buffer->data_alignment})) ==
            make_const(DataType::UInt(64), int64_t{0}),
        arg + " must have data aligned to " + std::to_string(buffer->data_alignment) +
            " bytes, got address %lld",
        {address});
  }
  if (const auto* offset = buffer->elem_offset.as<VarNode>()) {
    builder.Bind(Var(offset), make_zero(buffer->elem_offset.dtype()));
  }

  Var shape(buffer->name + ".shape", DataType::Handle());
  builder.Bind(shape, StructGet(DataType::Handle(), handle, 0, StructField::kTensorShape));
  for (int d = 0; d < rank; ++d) {
    BindExtent(builder, deferred, buffer->shape[d],
               StructGet(i64, shape, d, StructField::kInt64Element),
               arg + " dimension " + std::to_string(d));
  }
  Var strides(buffer->name + ".strides", DataType::Handle());
  builder.Bind(strides, StructGet(DataType::Handle(), handle, 0, StructField::kTensorStrides));
  if (buffer->strides.empty()) {
    // Compact means row-major strides; NULL strides mean the same. if_then_else keeps the
    // stride reads from running when the pointer is NULL.
    PrimExpr compact = const_true();
    PrimExpr expected = make_const(i64, int64_t{1});
    for (int d = rank - 1; d >= 0; --d) {
      compact = compact && (StructGet(i64, strides, d, StructField::kInt64Element) == expected);
      expected = expected * StructGet(i64, shape, d, StructField::kInt64Element);
    }
    if (rank > 0) {
      builder.Check(call_intrin(DataType::Bool(), "if_then_else",
                                {IsNull(strides), const_true(), compact}),
                    arg + " must be compact (row-major strides or NULL strides)");
    }
  } else {
    builder.Check(!IsNull(strides), arg + " must have explicit strides (it declares them)");
    for (int d = 0; d < rank; ++d) {
      BindExtent(builder, deferred, buffer->strides[d],
                 StructGet(i64, strides, d, StructField::kInt64Element),
                 arg + " stride " + std::to_string(d));
    }
  }
}

void UnpackScalar(PackedBodyBuilder& builder, const Var& args, int index, const Var& param,
                  const PrimExpr& type_code) {
  std::string arg = Describe(index, param.name());
  DataType t = param.dtype();
  if (t.is_float()) {
    builder.Check(type_code == kLoomArgFloat,
                  arg + " must be a float (type code 2), got type code %lld", {type_code});
    builder.Bind(param, cast(t, StructGet(DataType::Float(64), args, index,
                                          StructField::kArgValue)));
  } else if (t.is_handle()) {
    builder.Check(type_code == kLoomOpaqueHandle || type_code == kLoomDLTensorHandle ||
                      type_code == kLoomNullptr,
                  arg + " must be a handle (type code 3, 4 or 7), got type code %lld",
                  {type_code});
    builder.Bind(param, StructGet(t, args, index, StructField::kArgValue));
  } else {
    builder.Check(type_code == kLoomArgInt || type_code == kLoomArgUInt,
                  arg + " must be an integer (type code 0 or 1), got type code %lld",
                  {type_code});
    builder.Bind(param, cast(t, StructGet(DataType::Int(64), args, index,
                                          StructField::kArgValue)));
  }
}

PrimFunc MakePacked(const PrimFunc& func, const std::string& name, int device_type,
                    bool opaque_memory) {
  Var args("args", DataType::Handle());
  Var type_codes("arg_type_ids", DataType::Handle());
  Var num_args("num_args", DataType::Int(32));
  Var ret_value("ret_value", DataType::Handle());
  Var ret_type_code("ret_type_code", DataType::Handle());
  Var resource("resource_handle", DataType::Handle());

  PackedBodyBuilder builder(name);
  int expected = static_cast<int>(func->params.size());
  builder.Check(num_args == expected,
                "expected " + std::to_string(expected) + " argument(s), got %lld", {num_args});
  std::vector<std::function<void()>> deferred;
  for (int i = 0; i < expected; ++i) {
    const Var& param = func->params[i];
    Var code(param.name() + ".code", DataType::Int(32));
    builder.Bind(code, StructGet(DataType::Int(32), type_codes, i, StructField::kInt32Element));
    const Buffer* buffer = nullptr;
    for (const auto& [var, b] : func->buffer_map) {
      if (var.same_as(param)) buffer = &b;
    }
    if (buffer != nullptr) {
      UnpackBuffer(builder, deferred, args, i, *buffer, code, device_type, opaque_memory);
    } else {
      UnpackScalar(builder, args, i, param, code);
    }
  }
  for (const auto& check : deferred) check();
  Stmt body = builder.Wrap(AttrStmt(StringImm(name), builtin::kComputeScope,
                                    make_const(DataType::Int(32), int64_t{0}), func->body));
  Annotations attrs = func->attrs;
  attrs[builtin::kCallingConv] = StringImm("packed");
  attrs["global_symbol"] = StringImm(name);
  if (opaque_memory) attrs[builtin::kWorkspaceDevice] = make_const(DataType::Int(32), int64_t{device_type});
  return PrimFunc({args, type_codes, num_args, ret_value, ret_type_code, resource}, {}, body,
                  DataType::Int(32), attrs);
}

bool IsPacked(const PrimFunc& func) {
  auto it = func->attrs.find(builtin::kCallingConv);
  if (it == func->attrs.end()) return false;
  const auto* conv = it->second.as<StringImmNode>();
  return conv != nullptr && conv->value == "packed";
}

}  // namespace

Pass MakePackedAPI(int device_type, bool opaque_memory) {
  return CreateModulePass(
      [device_type, opaque_memory](const IRModule& module, const PassContext&) {
        IRModule out = module;
        for (const auto& [name, func] : module.functions()) {
          LOOM_CHECK_USER(func->ret_type.is_void() || IsPacked(func))
              << "MakePackedAPI: function '" << name << "' returns " << func->ret_type
              << "; packed functions return results through buffers, so declare it void";
          if (!IsPacked(func)) {
            out.Add(name, MakePacked(func, name, device_type, opaque_memory), /*replace=*/true);
          }
        }
        return out;
      },
      0, "MakePackedAPI");
}

}  // namespace loom::tir::transform
