#include "loom/runtime/c_runtime_api.h"

#include <exception>
#include <string>
#include <type_traits>
#include <vector>

#include "loom/runtime/graph_executor.h"
#include "loom/runtime/module.h"
#include "loom/runtime/ndarray.h"
#include "loom/runtime/packed_func.h"
#include "loom/runtime/thread_pool.h"
#include "loom/runtime/vm.h"
#include "loom/support/error.h"
#include "runtime/artifact.h"

using loom::runtime::Module;
using loom::runtime::NDArray;
using loom::runtime::PackedFunc;

struct LoomModuleOpaque {
  Module module;
};

struct LoomFunctionOpaque {
  PackedFunc func;
};

// A model for either executor, as its artifact names it.
struct LoomModelOpaque {
  std::shared_ptr<const loom::runtime::GraphModel> graph;
  std::shared_ptr<const loom::runtime::VmModel> vm;
};

struct LoomExecutorOpaque {
  std::unique_ptr<loom::runtime::Executor> exec;
  // What LoomExecutorInputInfo / OutputInfo hand out pointers into: the inputs' shapes (-1
  // for a symbolic dimension), and the outputs' shapes of the last run.
  std::vector<std::vector<int64_t>> input_shapes;
  std::vector<std::vector<int64_t>> output_shapes;
};

namespace {

// The C handle of an array: the DLTensor comes first so the handle is a usable DLTensor*.
struct CArray {
  DLTensor tensor;
  NDArray* owner;
};
static_assert(std::is_standard_layout_v<CArray>, "LoomArrayHandle must convert to CArray*");

LoomArrayHandle NewArrayHandle(NDArray array) {
  auto* handle = new CArray{*array.tensor(), nullptr};
  handle->owner = new NDArray(std::move(array));
  return &handle->tensor;
}

const NDArray& ArrayOf(LoomArrayHandle handle) {
  return *reinterpret_cast<CArray*>(handle)->owner;
}

// Runs `body`, turning any exception into -1 plus the calling thread's last error.
template <typename Body>
int Guard(const char* api, Body&& body) {
  try {
    body();
    return 0;
  } catch (const std::exception& error) {
    LoomAPISetLastError(error.what());
  } catch (...) {
    LoomAPISetLastError((std::string(api) + ": failed with a non-standard exception").c_str());
  }
  return -1;
}

int NullArgument(const char* api, const char* argument) {
  LoomAPISetLastError((std::string(api) + ": argument '" + argument + "' is null").c_str());
  return -1;
}

// A caller's DLTensor as an NDArray that borrows its memory (the deleter frees only the
// wrapper), so the executor's checks and copies apply to it unchanged. `api` and `argument`
// name it in errors; a null data pointer would be dereferenced by the copy.
NDArray BorrowTensor(const char* api, const char* argument, const DLTensor* tensor) {
  auto* managed = new DLManagedTensor{};
  managed->dl_tensor = *tensor;
  managed->deleter = [](DLManagedTensor* self) { delete self; };
  NDArray array = NDArray::FromDLPack(managed);
  LOOM_CHECK_USER(array->data != nullptr || array.NumBytes() == 0)
      << api << ": tensor '" << argument << "' (" << array.dtype()
      << loom::runtime::ShapeString(array.Shape()) << ") has a null data pointer";
  return array;
}

int TensorInfo(const char* api, LoomExecutorHandle exec, int32_t index, bool input,
               int32_t* ndim, const int64_t** shape, DLDataType* dtype) {
  if (exec == nullptr) return NullArgument(api, "exec");
  if (ndim == nullptr) return NullArgument(api, "ndim");
  if (shape == nullptr) return NullArgument(api, "shape");
  if (dtype == nullptr) return NullArgument(api, "dtype");
  return Guard(api, [&] {
    loom::runtime::Executor& e = *exec->exec;
    if (input) {
      e.InputName(index);  // an index out of range is an error naming it
      const std::vector<int64_t>& dims = exec->input_shapes[static_cast<size_t>(index)];
      *ndim = static_cast<int32_t>(dims.size());
      *shape = dims.data();
      *dtype = e.InputDtype(index).to_dlpack();
      return;
    }
    const auto* graph = dynamic_cast<const loom::runtime::GraphExecutor*>(&e);
    if (graph != nullptr) {
      const loom::runtime::GraphEntry& entry = graph->OutputEntry(index);
      *ndim = static_cast<int32_t>(entry.shape.size());
      *shape = entry.shape.data();
      *dtype = entry.dtype.to_dlpack();
      return;
    }
    // The VM's output shapes follow the inputs: those of the last run.
    const std::string& name = e.OutputName(index);
    NDArray output;
    try {
      output = e.GetOutput(index);
    } catch (const loom::Error&) {
      LOOM_THROW << api << ": output '" << name << "' of a model of symbolic shapes has its "
                 << "shape once the model has run; call LoomExecutorRun first";
    }
    std::vector<int64_t>& dims = exec->output_shapes[static_cast<size_t>(index)];
    dims = output.Shape();
    *ndim = static_cast<int32_t>(dims.size());
    *shape = dims.data();
    *dtype = output.dtype().to_dlpack();
  });
}

// A string returned to C lives here until the thread's next call.
thread_local std::string tls_returned_string;
// LoomDataTypeName's result, apart so it does not end the life of a LoomFuncCall string.
thread_local std::string tls_dtype_name;

}  // namespace

extern "C" {

int LoomModLoadFromFile(const char* path, LoomModuleHandle* out) {
  if (path == nullptr) return NullArgument("LoomModLoadFromFile", "path");
  if (out == nullptr) return NullArgument("LoomModLoadFromFile", "out");
  return Guard("LoomModLoadFromFile", [&] {
    *out = new LoomModuleOpaque{loom::runtime::LoadModuleFromFile(path)};
  });
}

int LoomModGetFunction(LoomModuleHandle module, const char* name, int query_imports,
                       LoomFunctionHandle* out) {
  if (module == nullptr) return NullArgument("LoomModGetFunction", "module");
  if (name == nullptr) return NullArgument("LoomModGetFunction", "name");
  if (out == nullptr) return NullArgument("LoomModGetFunction", "out");
  return Guard("LoomModGetFunction", [&] {
    PackedFunc func = module->module.GetFunction(name, query_imports != 0);
    LOOM_CHECK_USER(func.defined())
        << "LoomModGetFunction: " << module->module->description() << " has no function '"
        << name << "'; check the name the function was compiled under";
    *out = new LoomFunctionOpaque{func};
  });
}

int LoomModFree(LoomModuleHandle module) {
  return Guard("LoomModFree", [&] { delete module; });
}

int LoomFuncCall(LoomFunctionHandle func, const LoomValue* args, const int32_t* type_codes,
                 int32_t num_args, LoomValue* ret_value, int32_t* ret_type_code) {
  if (func == nullptr) return NullArgument("LoomFuncCall", "func");
  if (num_args > 0 && (args == nullptr || type_codes == nullptr)) {
    return NullArgument("LoomFuncCall", args == nullptr ? "args" : "type_codes");
  }
  if (ret_value == nullptr) return NullArgument("LoomFuncCall", "ret_value");
  if (ret_type_code == nullptr) return NullArgument("LoomFuncCall", "ret_type_code");
  return Guard("LoomFuncCall", [&] {
    loom::runtime::RetValue ret;
    func->func.CallPacked(loom::runtime::PackedArgs(args, type_codes, num_args), &ret);
    *ret_type_code = ret.type_code();
    if (ret.type_code() == kLoomStr) {
      tls_returned_string = ret.AsString();
      ret_value->v_str = tls_returned_string.c_str();
    } else if (ret.type_code() == kLoomDLTensorHandle) {
      ret_value->v_handle = NewArrayHandle(ret.AsNDArray());
    } else {
      *ret_value = ret.value();
    }
  });
}

int LoomFuncFree(LoomFunctionHandle func) {
  return Guard("LoomFuncFree", [&] { delete func; });
}

int LoomArrayAlloc(const int64_t* shape, int32_t ndim, int32_t dtype_code, int32_t dtype_bits,
                   int32_t dtype_lanes, int32_t device_type, int32_t device_id,
                   LoomArrayHandle* out) {
  if (ndim > 0 && shape == nullptr) return NullArgument("LoomArrayAlloc", "shape");
  if (out == nullptr) return NullArgument("LoomArrayAlloc", "out");
  return Guard("LoomArrayAlloc", [&] {
    LOOM_CHECK_USER(ndim >= 0) << "LoomArrayAlloc: ndim must be >= 0, got " << ndim;
    LOOM_CHECK_USER(dtype_code >= 0 && dtype_code <= 255 && dtype_bits > 0 && dtype_bits <= 255 &&
                    dtype_lanes > 0 && dtype_lanes <= 65535)
        << "LoomArrayAlloc: dtype (code " << dtype_code << ", bits " << dtype_bits << ", lanes "
        << dtype_lanes << ") is out of range";
    LOOM_CHECK_USER(device_type >= kDLCPU && device_type <= kDLCUDAManaged)
        << "LoomArrayAlloc: device type " << device_type
        << " is not a DLPack device type (kDLCPU is 1)";
    DLDataType dtype{static_cast<uint8_t>(dtype_code), static_cast<uint8_t>(dtype_bits),
                     static_cast<uint16_t>(dtype_lanes)};
    std::vector<int64_t> dims(shape, shape + ndim);
    DLDevice device{static_cast<DLDeviceType>(device_type), device_id};
    *out = NewArrayHandle(NDArray::Empty(dims, loom::DataType::FromDLPack(dtype), device));
  });
}

int LoomArrayCopyFromBytes(LoomArrayHandle array, const void* data, size_t nbytes) {
  if (array == nullptr) return NullArgument("LoomArrayCopyFromBytes", "array");
  if (data == nullptr && nbytes > 0) return NullArgument("LoomArrayCopyFromBytes", "data");
  return Guard("LoomArrayCopyFromBytes", [&] { ArrayOf(array).CopyFromBytes(data, nbytes); });
}

int LoomArrayCopyToBytes(LoomArrayHandle array, void* data, size_t nbytes) {
  if (array == nullptr) return NullArgument("LoomArrayCopyToBytes", "array");
  if (data == nullptr && nbytes > 0) return NullArgument("LoomArrayCopyToBytes", "data");
  return Guard("LoomArrayCopyToBytes", [&] { ArrayOf(array).CopyToBytes(data, nbytes); });
}

int LoomArrayFree(LoomArrayHandle array) {
  return Guard("LoomArrayFree", [&] {
    if (array == nullptr) return;
    auto* handle = reinterpret_cast<CArray*>(array);
    delete handle->owner;
    delete handle;
  });
}

int LoomDataTypeName(DLDataType dtype, const char** name) {
  if (name == nullptr) return NullArgument("LoomDataTypeName", "name");
  return Guard("LoomDataTypeName", [&] {
    tls_dtype_name = loom::DataType::FromDLPack(dtype).str();
    *name = tls_dtype_name.c_str();
  });
}

int LoomModelLoad(const char* path, LoomModelHandle* out) {
  if (path == nullptr) return NullArgument("LoomModelLoad", "path");
  if (out == nullptr) return NullArgument("LoomModelLoad", "out");
  return Guard("LoomModelLoad", [&] {
    loom::runtime::detail::ArtifactData data =
        loom::runtime::detail::LoadArtifact(path, "LoomModelLoad");
    auto model = std::make_unique<LoomModelOpaque>();
    try {
      if (loom::runtime::IsVmProgram(data.program)) {
        model->vm =
            loom::runtime::detail::ParseVmModel(std::move(data.kernels), data.program, data.params,
                                                data.params_size, data.params_owner);
      } else {
        model->graph =
            loom::runtime::MakeGraphModel(std::move(data.kernels), data.program, data.params,
                                          data.params_size, data.params_owner);
      }
    } catch (const loom::Error& error) {
      LOOM_THROW << "LoomModelLoad('" << path << "'): " << error.what();
    }
    *out = model.release();
  });
}

int LoomModelFree(LoomModelHandle model) {
  return Guard("LoomModelFree", [&] { delete model; });
}

int LoomExecutorCreate(LoomModelHandle model, LoomExecutorHandle* out) {
  if (model == nullptr) return NullArgument("LoomExecutorCreate", "model");
  if (out == nullptr) return NullArgument("LoomExecutorCreate", "out");
  return Guard("LoomExecutorCreate", [&] {
    auto exec = std::make_unique<LoomExecutorOpaque>();
    if (model->vm) {
      exec->exec = std::make_unique<loom::runtime::VirtualMachine>(model->vm);
    } else {
      exec->exec = std::make_unique<loom::runtime::GraphExecutor>(model->graph);
    }
    for (int i = 0; i < exec->exec->NumInputs(); ++i) {
      exec->input_shapes.push_back(exec->exec->InputShape(i));
    }
    exec->output_shapes.resize(static_cast<size_t>(exec->exec->NumOutputs()));
    *out = exec.release();
  });
}

int LoomExecutorFree(LoomExecutorHandle exec) {
  return Guard("LoomExecutorFree", [&] { delete exec; });
}

int LoomExecutorNumInputs(LoomExecutorHandle exec, int32_t* out) {
  if (exec == nullptr) return NullArgument("LoomExecutorNumInputs", "exec");
  if (out == nullptr) return NullArgument("LoomExecutorNumInputs", "out");
  *out = exec->exec->NumInputs();
  return 0;
}

int LoomExecutorNumOutputs(LoomExecutorHandle exec, int32_t* out) {
  if (exec == nullptr) return NullArgument("LoomExecutorNumOutputs", "exec");
  if (out == nullptr) return NullArgument("LoomExecutorNumOutputs", "out");
  *out = exec->exec->NumOutputs();
  return 0;
}

int LoomExecutorInputName(LoomExecutorHandle exec, int32_t index, const char** name) {
  if (exec == nullptr) return NullArgument("LoomExecutorInputName", "exec");
  if (name == nullptr) return NullArgument("LoomExecutorInputName", "name");
  return Guard("LoomExecutorInputName", [&] { *name = exec->exec->InputName(index).c_str(); });
}

int LoomExecutorOutputName(LoomExecutorHandle exec, int32_t index, const char** name) {
  if (exec == nullptr) return NullArgument("LoomExecutorOutputName", "exec");
  if (name == nullptr) return NullArgument("LoomExecutorOutputName", "name");
  return Guard("LoomExecutorOutputName", [&] { *name = exec->exec->OutputName(index).c_str(); });
}

int LoomExecutorInputInfo(LoomExecutorHandle exec, int32_t index, int32_t* ndim,
                          const int64_t** shape, DLDataType* dtype) {
  return TensorInfo("LoomExecutorInputInfo", exec, index, true, ndim, shape, dtype);
}

int LoomExecutorOutputInfo(LoomExecutorHandle exec, int32_t index, int32_t* ndim,
                           const int64_t** shape, DLDataType* dtype) {
  return TensorInfo("LoomExecutorOutputInfo", exec, index, false, ndim, shape, dtype);
}

int LoomExecutorSetInput(LoomExecutorHandle exec, const char* name, const DLTensor* value) {
  if (exec == nullptr) return NullArgument("LoomExecutorSetInput", "exec");
  if (name == nullptr) return NullArgument("LoomExecutorSetInput", "name");
  if (value == nullptr) return NullArgument("LoomExecutorSetInput", "value");
  return Guard("LoomExecutorSetInput", [&] {
    exec->exec->SetInput(name, BorrowTensor("LoomExecutorSetInput", "value", value));
  });
}

int LoomExecutorRun(LoomExecutorHandle exec) {
  if (exec == nullptr) return NullArgument("LoomExecutorRun", "exec");
  return Guard("LoomExecutorRun", [&] { exec->exec->Run(); });
}

int LoomExecutorSetNumThreads(LoomExecutorHandle exec, int32_t num_threads) {
  if (exec == nullptr) return NullArgument("LoomExecutorSetNumThreads", "exec");
  return Guard("LoomExecutorSetNumThreads", [&] { exec->exec->SetNumThreads(num_threads); });
}

int LoomRuntimeSetNumThreads(int32_t num_threads) {
  return Guard("LoomRuntimeSetNumThreads",
               [&] { loom::runtime::ThreadPool::SetGlobalThreads(num_threads); });
}

int LoomExecutorGetOutput(LoomExecutorHandle exec, int32_t index, DLTensor* out) {
  if (exec == nullptr) return NullArgument("LoomExecutorGetOutput", "exec");
  if (out == nullptr) return NullArgument("LoomExecutorGetOutput", "out");
  return Guard("LoomExecutorGetOutput", [&] {
    const loom::runtime::Executor& e = *exec->exec;
    const std::string& name = e.OutputName(index);
    NDArray output = e.GetOutput(index);
    NDArray target = BorrowTensor("LoomExecutorGetOutput", "out", out);
    LOOM_CHECK_USER(target.dtype() == output.dtype())
        << "LoomExecutorGetOutput: output '" << name << "' has dtype " << output.dtype()
        << " but the tensor to copy it into has dtype " << target.dtype();
    LOOM_CHECK_USER(target.Shape() == output.Shape())
        << "LoomExecutorGetOutput: output '" << name << "' has shape "
        << loom::runtime::ShapeString(output.Shape())
        << " but the tensor to copy it into has shape "
        << loom::runtime::ShapeString(target.Shape());
    target.CopyFrom(output);
  });
}

}  // extern "C"
