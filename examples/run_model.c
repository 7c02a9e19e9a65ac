/* run_model: runs a compiled model through the deployment C API alone (plain C, linked only
 * with libloom_runtime). It fills every input with a fixed pattern, runs the model once and
 * prints each output's name, dtype, shape and first values.
 *
 *   run_model model.so
 *
 * Input element k gets (k % 7) - 3 (as the input's dtype; 0/1 for bool), so a run is
 * reproducible without input files. */
#include <stdio.h>

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

static void PrintShape(int32_t ndim, const int64_t* shape) {
  printf("[");
  for (int32_t d = 0; d < ndim; ++d) printf(d == 0 ? "%lld" : ", %lld", (long long)shape[d]);
  printf("]");
}

/* A new host array with the given shape and dtype (allocated, sized and aligned by the
 * runtime), or NULL with the runtime's error printed. */
static LoomArrayHandle HostArray(int32_t ndim, const int64_t* shape, DLDataType dtype) {
  LoomArrayHandle array = NULL;
  if (LoomArrayAlloc(shape, ndim, dtype.code, dtype.bits, dtype.lanes, kDLCPU, 0, &array) != 0) {
    Fail("allocating a tensor");
    return NULL;
  }
  return array;
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
    LoomArrayHandle input = HostArray(ndim, shape, dtype);
    if (input == NULL) return 1;
    for (int64_t k = 0; k < NumElements(ndim, shape); ++k) StorePattern(dtype, input->data, k);
    int status = LoomExecutorSetInput(exec, name, input);
    LoomArrayFree(input);
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
    const char* dtype_name = NULL;
    if (LoomDataTypeName(dtype, &dtype_name) != 0) return Fail("naming an output's dtype");
    LoomArrayHandle output = HostArray(ndim, shape, dtype);
    if (output == NULL) return 1;
    if (LoomExecutorGetOutput(exec, i, output) != 0) return Fail("reading an output");
    printf("output %d '%s': ", (int)i, name);
    PrintShape(ndim, shape);
    printf(" %s:", dtype_name);
    int64_t count = NumElements(ndim, shape);
    for (int64_t k = 0; k < count && k < kValuesShown; ++k) {
      if (PrintValue(dtype, output->data, k) == 0) {
        printf(" (values of this dtype are not printed)");
        break;
      }
    }
    printf("%s\n", count > kValuesShown ? " ..." : "");
    LoomArrayFree(output);
  }
  LoomExecutorFree(exec);
  return 0;
}
