/* The model part of the deployment C API, from C through c_runtime_api.h alone: load the test
 * model (graph_model_fixture.cc), run it, compare both outputs with a reference computed
 * here, and check that each misuse fails with a message through LoomGetLastError.
 * Usage: test_runtime_graph_c_api <directory with graph_model.so and graph_kernels.so>. */
#include <stdio.h>
#include <string.h>

#include "c_expect.h"
#include "loom/runtime/c_runtime_api.h"

enum { kRows = 2, kCols = 8, kCount = kRows * kCols };

static DLTensor Tensor(void* data, int64_t* shape, int32_t ndim, uint8_t code, uint8_t bits) {
  DLTensor tensor;
  memset(&tensor, 0, sizeof(tensor));
  tensor.data = data;
  tensor.device.device_type = kDLCPU;
  tensor.ndim = ndim;
  tensor.shape = shape;
  tensor.dtype.code = code;
  tensor.dtype.bits = bits;
  tensor.dtype.lanes = 1;
  return tensor;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s <fixture directory>\n", argv[0]);
    return 2;
  }
  char model_path[4096], kernels_path[4096];
  snprintf(model_path, sizeof(model_path), "%s/graph_model.so", argv[1]);
  snprintf(kernels_path, sizeof(kernels_path), "%s/graph_kernels.so", argv[1]);

  LoomModelHandle model = NULL;
  ExpectError(LoomModelLoad("/nonexistent/model.so", &model), "no such file",
              "loading a missing model fails");
  ExpectError(LoomModelLoad(kernels_path, &model), "has no symbol 'loom_graph_json'",
              "loading a kernel library without a graph fails");
  ExpectError(LoomModelLoad(NULL, &model), "argument 'path' is null", "a null path fails");
  Expect(LoomModelLoad(model_path, &model) == 0, "loading the model succeeds");
  if (model == NULL) return 1;
  LoomExecutorHandle exec = NULL;
  Expect(LoomExecutorCreate(model, &exec) == 0, "creating an executor succeeds");
  if (exec == NULL) return 1;
  Expect(LoomModelFree(model) == 0, "the model may be freed while its executor lives");

  int32_t num_inputs = -1, num_outputs = -1;
  Expect(LoomExecutorNumInputs(exec, &num_inputs) == 0 && num_inputs == 1, "one input");
  Expect(LoomExecutorNumOutputs(exec, &num_outputs) == 0 && num_outputs == 2, "two outputs");
  const char* name = NULL;
  Expect(LoomExecutorInputName(exec, 0, &name) == 0 && strcmp(name, "data") == 0,
         "input 0 is 'data'");
  Expect(LoomExecutorOutputName(exec, 1, &name) == 0 && strcmp(name, "hidden") == 0,
         "output 1 is 'hidden'");
  ExpectError(LoomExecutorInputName(exec, 1, &name), "input index 1 is out of range",
              "input index 1 is out of range");
  int32_t ndim = 0;
  const int64_t* shape = NULL;
  DLDataType dtype;
  Expect(LoomExecutorInputInfo(exec, 0, &ndim, &shape, &dtype) == 0 && ndim == 2 &&
             shape[0] == kRows && shape[1] == kCols && dtype.code == kDLFloat &&
             dtype.bits == 32 && dtype.lanes == 1,
         "input 0 is float32[2, 8]");
  ExpectError(LoomExecutorOutputInfo(exec, 2, &ndim, &shape, &dtype),
              "output index 2 is out of range", "output index 2 is out of range");

  int64_t good_shape[2] = {kRows, kCols};
  int64_t bad_shape[2] = {kCols, kRows};
  float data[kCount], out[kCount], hidden[kCount];
  int32_t ints[kCount];
  for (int k = 0; k < kCount; ++k) data[k] = (float)(k % 9) * 0.375f - 1.25f;
  DLTensor input = Tensor(data, good_shape, 2, kDLFloat, 32);
  DLTensor wrong_dtype = Tensor(ints, good_shape, 2, kDLInt, 32);
  DLTensor wrong_shape = Tensor(data, bad_shape, 2, kDLFloat, 32);
  ExpectError(LoomExecutorSetInput(exec, "image", &input),
              "the model has no input 'image'; its inputs are 'data'", "an unknown input name");
  ExpectError(LoomExecutorSetInput(exec, "data", &wrong_dtype),
              "input 'data' expects dtype float32, got int32", "a wrong input dtype");
  ExpectError(LoomExecutorSetInput(exec, "data", &wrong_shape),
              "input 'data' expects shape [2, 8], got [8, 2]", "a wrong input shape");
  ExpectError(LoomExecutorSetInput(exec, "data", NULL), "argument 'value' is null",
              "a null input tensor");

  Expect(LoomExecutorSetInput(exec, "data", &input) == 0, "setting the input");
  Expect(LoomExecutorSetNumThreads(exec, 1) == 0, "running the executor on one thread");
  ExpectError(LoomExecutorSetNumThreads(exec, 100000), "an executor runs on 1 to",
              "more threads than the pool has");
  ExpectError(LoomRuntimeSetNumThreads(0), "the thread count must be 1 to 4096, got 0",
              "a pool of no threads");
  Expect(LoomExecutorRun(exec) == 0, "running the model");
  DLTensor out_tensor = Tensor(out, good_shape, 2, kDLFloat, 32);
  DLTensor hidden_tensor = Tensor(hidden, good_shape, 2, kDLFloat, 32);
  Expect(LoomExecutorGetOutput(exec, 0, &out_tensor) == 0, "reading output 0");
  Expect(LoomExecutorGetOutput(exec, 1, &hidden_tensor) == 0, "reading output 1");
  for (int k = 0; k < kCount; ++k) {
    /* The parameters of graph_model_fixture.cc. */
    float w = 0.25f * (float)(k % 5) - 0.5f;
    float w2 = 0.125f * (float)k - 1.0f;
    float h = data[k] + w > 0.0f ? data[k] + w : 0.0f;
    if (hidden[k] != h || out[k] != (h + w2) * h) {
      fprintf(stderr, "FAILED: element %d: hidden %g (want %g), out %g (want %g)\n", k,
              hidden[k], h, out[k], (h + w2) * h);
      ++failures;
    }
  }
  DLTensor wrong_out = Tensor(out, bad_shape, 2, kDLFloat, 32);
  ExpectError(LoomExecutorGetOutput(exec, 0, &wrong_out),
              "output 'out' has shape [2, 8] but the tensor to copy it into has shape [8, 2]",
              "reading an output into a tensor of the wrong shape");
  DLTensor wrong_out_dtype = Tensor(ints, good_shape, 2, kDLInt, 32);
  ExpectError(LoomExecutorGetOutput(exec, 0, &wrong_out_dtype),
              "output 'out' has dtype float32 but the tensor to copy it into has dtype int32",
              "reading an output into a tensor of the wrong dtype");
  DLTensor no_data = Tensor(NULL, good_shape, 2, kDLFloat, 32);
  ExpectError(LoomExecutorSetInput(exec, "data", &no_data),
              "LoomExecutorSetInput: tensor 'value' (float32[2, 8]) has a null data pointer",
              "an input tensor without data");
  ExpectError(LoomExecutorGetOutput(exec, 0, &no_data),
              "LoomExecutorGetOutput: tensor 'out' (float32[2, 8]) has a null data pointer",
              "reading an output into a tensor without data");
  ExpectError(LoomExecutorGetOutput(exec, 5, &out_tensor),
              "GraphExecutor: output index 5 is out of range; the model has 2 outputs",
              "reading output 5 of 2");
  ExpectError(LoomExecutorGetOutput(exec, 0, NULL), "argument 'out' is null",
              "reading an output into a null tensor");
  ExpectError(LoomExecutorInputInfo(exec, 0, NULL, &shape, &dtype), "argument 'ndim' is null",
              "input info without ndim");
  LoomExecutorHandle no_exec = NULL;
  ExpectError(LoomExecutorCreate(NULL, &no_exec), "argument 'model' is null",
              "an executor of a null model");
  ExpectError(LoomExecutorRun(NULL), "argument 'exec' is null", "running a null executor");
  const char* dtype_name = NULL;
  Expect(LoomExecutorOutputInfo(exec, 0, &ndim, &shape, &dtype) == 0 &&
             LoomDataTypeName(dtype, &dtype_name) == 0 && strcmp(dtype_name, "float32") == 0,
         "output 0's dtype is named float32");
  DLDataType complex64 = {5 /* kDLComplex */, 64, 1};
  ExpectError(LoomDataTypeName(complex64, &dtype_name), "unsupported DLPack type code 5",
              "naming an unsupported dtype");
  Expect(LoomExecutorFree(exec) == 0, "freeing the executor");

  if (failures == 0) printf("graph C API: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
