/* run_model: runs a compiled model through the deployment C API alone (plain C, linked only
 * with libloom_runtime). It fills every input with a fixed pattern, runs the model once and
 * prints each output's name, dtype, shape and first values.
 *
 *   run_model model.so
 *
 * Input element k gets (k % 7) - 3 (as the input's dtype; 0/1 for bool), so a run is
 * reproducible without input files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loom/runtime/c_runtime_api.h"

enum { kValuesShown = 8 };

static int Fail(const char* what) {
  fprintf(stderr, "run_model: %s: %s\n", what, LoomGetLastError());
  return 1;
}

static int64_t NumElements(int32_t ndim, const int64_t* shape) {
  int64_t count = 1;
  for (int32_t d = 0; d < ndim; ++d) count *= shape[d];
  return count;
}

static size_t ElementBytes(DLDataType dtype) {
  return (size_t)((dtype.bits * dtype.lanes + 7) / 8);
}

/* Element k of the input pattern, stored as `dtype`; 0 when the dtype is not one of the
 * plain integer or float types (the bytes stay zero). */
static void StorePattern(DLDataType dtype, void* data, int64_t k) {
  int64_t value = k % 7 - 3;
  if (dtype.lanes != 1) return;
  if (dtype.code == kDLFloat && dtype.bits == 32) ((float*)data)[k] = (float)value;
  if (dtype.code == kDLFloat && dtype.bits == 64) ((double*)data)[k] = (double)value;
  if (dtype.code == kDLInt && dtype.bits == 8) ((int8_t*)data)[k] = (int8_t)value;
  if (dtype.code == kDLInt && dtype.bits == 32) ((int32_t*)data)[k] = (int32_t)value;
  if (dtype.code == kDLInt && dtype.bits == 64) ((int64_t*)data)[k] = value;
  if (dtype.code == kDLUInt && dtype.bits == 8) ((uint8_t*)data)[k] = (uint8_t)(k % 7);
  if (dtype.bits == 1 || (dtype.code == 6 && dtype.bits == 8)) ((uint8_t*)data)[k] = k % 2;
}

/* Prints element k, or returns 0 when this dtype is not printable here. */
static int PrintValue(DLDataType dtype, const void* data, int64_t k) {
  if (dtype.lanes != 1) return 0;
  if (dtype.code == kDLFloat && dtype.bits == 32) return printf(" %g", ((const float*)data)[k]);
  if (dtype.code == kDLFloat && dtype.bits == 64) return printf(" %g", ((const double*)data)[k]);
  if (dtype.code == kDLInt && dtype.bits == 8) return printf(" %d", ((const int8_t*)data)[k]);
  if (dtype.code == kDLInt && dtype.bits == 32) return printf(" %d", ((const int32_t*)data)[k]);
  if (dtype.code == kDLInt && dtype.bits == 64)
    return printf(" %lld", (long long)((const int64_t*)data)[k]);
  if ((dtype.code == kDLUInt && dtype.bits == 8) || dtype.bits == 1)
    return printf(" %u", ((const uint8_t*)data)[k]);
  return 0;
}

static void PrintDtype(DLDataType dtype) {
  static const char* const kCodes[] = {"int", "uint", "float", "handle", "bfloat", "?", "bool"};
  const char* code = dtype.code < 7 ? kCodes[dtype.code] : "?";
  if (dtype.code == 6) printf("bool");
  else printf("%s%d", code, dtype.bits);
  if (dtype.lanes != 1) printf("x%d", dtype.lanes);
}

static void PrintShape(int32_t ndim, const int64_t* shape) {
  printf("[");
  for (int32_t d = 0; d < ndim; ++d) printf(d == 0 ? "%lld" : ", %lld", (long long)shape[d]);
  printf("]");
}

/* A host tensor over a fresh buffer with the given shape and dtype (the shape is borrowed). */
static DLTensor HostTensor(int32_t ndim, const int64_t* shape, DLDataType dtype) {
  DLTensor tensor;
  memset(&tensor, 0, sizeof(tensor));
  size_t bytes = (size_t)NumElements(ndim, shape) * ElementBytes(dtype);
  tensor.data = calloc(bytes > 0 ? bytes : 1, 1);
  tensor.device.device_type = kDLCPU;
  tensor.ndim = ndim;
  tensor.dtype = dtype;
  tensor.shape = (int64_t*)shape;
  return tensor;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s model.so\n", argv[0]);
    return 2;
  }
  LoomModelHandle model = NULL;
  LoomExecutorHandle exec = NULL;
  if (LoomModelLoad(argv[1], &model) != 0) return Fail("loading the model");
  if (LoomExecutorCreate(model, &exec) != 0) return Fail("creating an executor");
  /* The executor keeps the model alive. */
  LoomModelFree(model);

  int32_t num_inputs = 0, num_outputs = 0;
  LoomExecutorNumInputs(exec, &num_inputs);
  LoomExecutorNumOutputs(exec, &num_outputs);
  for (int32_t i = 0; i < num_inputs; ++i) {
    const char* name = NULL;
    int32_t ndim = 0;
    const int64_t* shape = NULL;
    DLDataType dtype;
    if (LoomExecutorInputName(exec, i, &name) != 0 ||
        LoomExecutorInputInfo(exec, i, &ndim, &shape, &dtype) != 0) {
      return Fail("reading the inputs");
    }
    DLTensor input = HostTensor(ndim, shape, dtype);
    for (int64_t k = 0; k < NumElements(ndim, shape); ++k) StorePattern(dtype, input.data, k);
    int status = LoomExecutorSetInput(exec, name, &input);
    free(input.data);
    if (status != 0) return Fail("setting an input");
    printf("input '%s': ", name);
    PrintShape(ndim, shape);
    printf("\n");
  }

  if (LoomExecutorRun(exec) != 0) return Fail("running the model");

  for (int32_t i = 0; i < num_outputs; ++i) {
    const char* name = NULL;
    int32_t ndim = 0;
    const int64_t* shape = NULL;
    DLDataType dtype;
    if (LoomExecutorOutputName(exec, i, &name) != 0 ||
        LoomExecutorOutputInfo(exec, i, &ndim, &shape, &dtype) != 0) {
      return Fail("reading the outputs");
    }
    DLTensor output = HostTensor(ndim, shape, dtype);
    if (LoomExecutorGetOutput(exec, i, &output) != 0) return Fail("reading an output");
    printf("output %d '%s': ", (int)i, name);
    PrintShape(ndim, shape);
    printf(" ");
    PrintDtype(dtype);
    printf(":");
    int64_t count = NumElements(ndim, shape);
    for (int64_t k = 0; k < count && k < kValuesShown; ++k) {
      if (PrintValue(dtype, output.data, k) == 0) {
        printf(" (values of this dtype are not printed)");
        break;
      }
    }
    printf("%s\n", count > kValuesShown ? " ..." : "");
    free(output.data);
  }
  LoomExecutorFree(exec);
  return 0;
}
