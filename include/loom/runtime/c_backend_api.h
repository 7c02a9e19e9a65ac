/* The contract between generated code and the runtime: the packed calling convention every
 * compiled function uses, and the few runtime services generated code calls (parallel
 * launch, workspace allocation, error reporting).
 *
 * Plain C, so that generated objects, the runtime and the deployment C API agree on one
 * binary layout. Generated code never links against libloom_runtime by name: it calls the
 * services through the function-pointer globals declared at the end of this file, which a
 * loader (the JIT or the shared-library loader) fills in before the first call. That keeps an
 * exported model library free of undefined symbols and loadable with dlopen in any process.
 */
#ifndef LOOM_RUNTIME_C_BACKEND_API_H_
#define LOOM_RUNTIME_C_BACKEND_API_H_

#include <dlpack/dlpack.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What an argument slot holds. The first three equal DLPack's dtype codes on purpose. */
typedef enum {
  kLoomArgInt = 0,        /* v_int64 */
  kLoomArgUInt = 1,       /* v_int64, reinterpreted as unsigned */
  kLoomArgFloat = 2,      /* v_float64 */
  kLoomOpaqueHandle = 3,  /* v_handle, opaque to the callee */
  kLoomNullptr = 4,       /* no value */
  kLoomDataType = 5,      /* v_type */
  kLoomDevice = 6,        /* v_device */
  kLoomDLTensorHandle = 7,/* v_handle points to a DLTensor */
  kLoomStr = 8,           /* v_str, NUL-terminated */
} LoomArgTypeCode;

/* One argument or return value; its meaning is given by the parallel type code. */
typedef union {
  int64_t v_int64;
  double v_float64;
  void* v_handle;
  const char* v_str;
  DLDataType v_type;
  DLDevice v_device;
} LoomValue;

/* Every compiled function has this signature. Returns 0 on success; on failure returns
 * nonzero after recording a message with the error setter below (a wrong argument count,
 * dtype, rank, shape or alignment is such a failure, never an out-of-bounds access).
 * `resource_handle` is the module context; generated code ignores it today. */
typedef int32_t (*LoomBackendPackedCFunc)(const LoomValue* args, const int32_t* type_codes,
                                          int32_t num_args, LoomValue* ret_value,
                                          int32_t* ret_type_code, void* resource_handle);

/* Parallel loops: generated code outlines a parallel loop body into a lambda and asks the
 * runtime's thread pool to run it as `num_task` tasks (0 = let the pool choose, normally one
 * per worker). Task `task_id` of `num_task` takes its share of the iterations. */
typedef struct {
  void* sync_handle; /* owned by the pool */
  int32_t num_task;  /* the number of tasks actually launched */
} LoomParallelGroupEnv;

typedef int32_t (*LoomParallelLambda)(int32_t task_id, LoomParallelGroupEnv* penv, void* cdata);

/* The services, as function types. Each returns 0 on success, nonzero after setting the
 * last error. */
typedef int32_t (*LoomBackendParallelLaunchFn)(LoomParallelLambda flambda, void* cdata,
                                               int32_t num_task);
/* The same for lambdas whose tasks share the work: each task takes chunks of it until none
 * is left, so any one task may do all of it (generated parallel loops). When the launching
 * thread has run its own task, workers that have not started yet are dropped rather than
 * waited for -- on a loaded machine a descheduled worker would otherwise cost the whole
 * call its wake-up. Such lambdas must not use the barrier. */
typedef int32_t (*LoomBackendParallelLaunchSharedFn)(LoomParallelLambda flambda, void* cdata,
                                                     int32_t num_task);
/* Waits until every task of the group that is still running has reached the barrier. A task
 * that has returned (finished or failed) no longer counts, so it never leaves the others
 * waiting. */
typedef int32_t (*LoomBackendParallelBarrierFn)(int32_t task_id, LoomParallelGroupEnv* penv);
/* Scratch memory for a kernel's intermediate buffers, 64-byte aligned; NULL on failure. */
typedef void* (*LoomBackendAllocWorkspaceFn)(int32_t device_type, int32_t device_id,
                                             uint64_t nbytes, int32_t dtype_code_hint,
                                             int32_t dtype_bits_hint);
typedef int32_t (*LoomBackendFreeWorkspaceFn)(int32_t device_type, int32_t device_id, void* ptr);
/* Records `msg` as the calling thread's last error (copied). */
typedef void (*LoomAPISetLastErrorFn)(const char* msg);
/* Calls the function `name` of the modules that `module_context` (the calling module, as
 * its loader set the module-context global) imports: how host code launches the device
 * kernels of its module. Nonzero, with the last error set, when no imported module has the
 * function or the call fails. */
typedef int32_t (*LoomBackendCallPackedFn)(void* module_context, const char* name,
                                           const LoomValue* args, const int32_t* type_codes,
                                           int32_t num_args);

/* The runtime's implementations (exported by libloom_runtime). */
int32_t LoomBackendParallelLaunch(LoomParallelLambda flambda, void* cdata, int32_t num_task);
int32_t LoomBackendParallelLaunchShared(LoomParallelLambda flambda, void* cdata,
                                        int32_t num_task);
int32_t LoomBackendParallelBarrier(int32_t task_id, LoomParallelGroupEnv* penv);
void* LoomBackendAllocWorkspace(int32_t device_type, int32_t device_id, uint64_t nbytes,
                                int32_t dtype_code_hint, int32_t dtype_bits_hint);
int32_t LoomBackendFreeWorkspace(int32_t device_type, int32_t device_id, void* ptr);
void LoomAPISetLastError(const char* msg);
int32_t LoomBackendCallPacked(void* module_context, const char* name, const LoomValue* args,
                              const int32_t* type_codes, int32_t num_args);
/* The calling thread's last error message ("" when none). */
const char* LoomGetLastError(void);

/* Names of the function-pointer globals a generated module defines (zero-initialized) and a
 * loader sets to the implementations above. A module that uses none of a service may omit
 * its global; the loader skips globals it does not find. */
#define LOOM_BACKEND_PARALLEL_LAUNCH_SYMBOL "__LoomBackendParallelLaunch"
#define LOOM_BACKEND_PARALLEL_LAUNCH_SHARED_SYMBOL "__LoomBackendParallelLaunchShared"
#define LOOM_BACKEND_PARALLEL_BARRIER_SYMBOL "__LoomBackendParallelBarrier"
#define LOOM_BACKEND_ALLOC_WORKSPACE_SYMBOL "__LoomBackendAllocWorkspace"
#define LOOM_BACKEND_FREE_WORKSPACE_SYMBOL "__LoomBackendFreeWorkspace"
#define LOOM_API_SET_LAST_ERROR_SYMBOL "__LoomAPISetLastError"
#define LOOM_BACKEND_CALL_PACKED_SYMBOL "__LoomBackendCallPacked"
/* Not a service but the module's own handle (a void*), which the loader sets to the runtime
 * Module that holds the code, for LoomBackendCallPacked. */
#define LOOM_MODULE_CONTEXT_SYMBOL "__LoomModuleContext"
/* The blob of an exported library that holds the modules its code imports (device code),
 * each as (type key, bytes); see runtime::LoadModuleFromFile. */
#define LOOM_IMPORTS_SYMBOL "loom_imports"

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* LOOM_RUNTIME_C_BACKEND_API_H_ */
