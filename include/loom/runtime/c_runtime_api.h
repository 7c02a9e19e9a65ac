/* The deployment C API of libloom_runtime: load a compiled model library, look up and call
 * its functions, move tensors in and out. Plain C so any language with a C FFI can use it.
 *
 * Every function returns 0 on success and -1 on failure; after a failure LoomGetLastError()
 * (declared in c_backend_api.h) returns the calling thread's message. No C++ exception ever
 * crosses this boundary. Handles are owned by the caller and released with the matching
 * Free function.
 */
#ifndef LOOM_RUNTIME_C_RUNTIME_API_H_
#define LOOM_RUNTIME_C_RUNTIME_API_H_

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#include "loom/runtime/c_backend_api.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct LoomModuleOpaque* LoomModuleHandle;
typedef struct LoomFunctionOpaque* LoomFunctionHandle;
/* An array is a DLTensor the runtime owns: pass it directly as a kLoomDLTensorHandle
 * argument and read its shape/dtype fields, but free it only with LoomArrayFree. */
typedef DLTensor* LoomArrayHandle;

/* Loads a shared library exported by the compiler. */
int LoomModLoadFromFile(const char* path, LoomModuleHandle* out);
/* Looks `name` up in the module (and its imports when query_imports is nonzero). A missing
 * function is an error. The function keeps its module loaded. */
int LoomModGetFunction(LoomModuleHandle module, const char* name, int query_imports,
                       LoomFunctionHandle* out);
int LoomModFree(LoomModuleHandle module);

/* Calls a function with packed arguments. On return, *ret_type_code says what *ret_value
 * holds (kLoomNullptr for nothing). A returned string stays valid until the calling thread's
 * next LoomFuncCall; a returned kLoomDLTensorHandle is a new LoomArrayHandle the caller frees
 * with LoomArrayFree. */
int LoomFuncCall(LoomFunctionHandle func, const LoomValue* args, const int32_t* type_codes,
                 int32_t num_args, LoomValue* ret_value, int32_t* ret_type_code);
int LoomFuncFree(LoomFunctionHandle func);

/* A new compact array, 64-byte aligned, contents uninitialized. */
int LoomArrayAlloc(const int64_t* shape, int32_t ndim, int32_t dtype_code, int32_t dtype_bits,
                   int32_t dtype_lanes, int32_t device_type, int32_t device_id,
                   LoomArrayHandle* out);
/* nbytes must equal the array's size in bytes. */
int LoomArrayCopyFromBytes(LoomArrayHandle array, const void* data, size_t nbytes);
int LoomArrayCopyToBytes(LoomArrayHandle array, void* data, size_t nbytes);
int LoomArrayFree(LoomArrayHandle array);
/* The name the compiler gives `dtype` ("float32", "int8x4", "bool"), so C callers print
 * dtypes as the rest of Loom does; valid until the calling thread's next call of it. */
int LoomDataTypeName(DLDataType dtype, const char** name);

/* ---- Models: a library written by the compiler (loom compile) holding kernels, the
 * execution graph and the weights, run by executors. A model is immutable and may be shared
 * by executors on several threads; one executor is used by one thread at a time. */
typedef struct LoomModelOpaque* LoomModelHandle;
typedef struct LoomExecutorOpaque* LoomExecutorHandle;

/* Loads a model library. */
int LoomModelLoad(const char* path, LoomModelHandle* out);
/* Executors keep the model alive: it may be freed before them. */
int LoomModelFree(LoomModelHandle model);

/* A new executor with its own memory for the model's intermediate values. */
int LoomExecutorCreate(LoomModelHandle model, LoomExecutorHandle* out);
int LoomExecutorFree(LoomExecutorHandle exec);
int LoomExecutorNumInputs(LoomExecutorHandle exec, int32_t* out);
int LoomExecutorNumOutputs(LoomExecutorHandle exec, int32_t* out);
/* Names, and shapes (*ndim extents at *shape) and dtypes, of inputs and outputs. The strings
 * and shape arrays stay valid while the executor lives. A model of symbolic dimensions (run
 * by the virtual machine, as its artifact says) gives -1 for an input dimension known only
 * at run time, and its outputs' shapes once it has run (valid until the next run). */
int LoomExecutorInputName(LoomExecutorHandle exec, int32_t index, const char** name);
int LoomExecutorOutputName(LoomExecutorHandle exec, int32_t index, const char** name);
int LoomExecutorInputInfo(LoomExecutorHandle exec, int32_t index, int32_t* ndim,
                          const int64_t** shape, DLDataType* dtype);
int LoomExecutorOutputInfo(LoomExecutorHandle exec, int32_t index, int32_t* ndim,
                           const int64_t** shape, DLDataType* dtype);
/* Copies `value` (compact, on the CPU or a registered device) into the input `name`; its
 * dtype and shape must be the input's (any size where the input's dimension is -1). */
int LoomExecutorSetInput(LoomExecutorHandle exec, const char* name, const DLTensor* value);
/* Runs the model on the inputs set so far. */
int LoomExecutorRun(LoomExecutorHandle exec);
/* The threads this executor's kernels run on: 1 to the runtime's pool size, or 0 for all
 * (the default). */
int LoomExecutorSetNumThreads(LoomExecutorHandle exec, int32_t num_threads);
/* The runtime's thread pool size (all executors share it); before the first kernel runs
 * any count from 1, after it only the size it has. Without a call: LOOM_NUM_THREADS, else
 * one thread per physical core. */
int LoomRuntimeSetNumThreads(int32_t num_threads);
/* Copies output `index` into `out`, a compact tensor the caller allocated with the output's
 * dtype and shape. */
int LoomExecutorGetOutput(LoomExecutorHandle exec, int32_t index, DLTensor* out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* LOOM_RUNTIME_C_RUNTIME_API_H_ */
