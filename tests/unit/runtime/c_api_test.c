/* Exercises the deployment C API from C, through c_runtime_api.h alone: load the fixture
 * library, call its functions with arrays made by the API, and check every failure reports
 * a message through LoomGetLastError. Usage: test_runtime_c_api <fixture library>. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "c_expect.h"
#include "loom/runtime/c_runtime_api.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s <fixture library>\n", argv[0]);
    return 2;
  }
  LoomModuleHandle module = NULL;
  ExpectError(LoomModLoadFromFile("/nonexistent/model.so", &module), "no such file",
              "loading a missing library fails");
  Expect(LoomModLoadFromFile(argv[1], &module) == 0, "loading the fixture succeeds");
  if (module == NULL) return 1;

  LoomFunctionHandle missing = NULL;
  ExpectError(LoomModGetFunction(module, "no_such_kernel", 0, &missing), "no_such_kernel",
              "looking up a missing function fails");
  LoomFunctionHandle scale_add = NULL;
  Expect(LoomModGetFunction(module, "loom_fixture_scale_add", 0, &scale_add) == 0,
         "looking up loom_fixture_scale_add succeeds");

  enum { kLength = 1000 };
  int64_t shape[1] = {kLength};
  LoomArrayHandle x = NULL, y = NULL;
  Expect(LoomArrayAlloc(shape, 1, kDLFloat, 32, 1, kDLCPU, 0, &x) == 0, "allocating x");
  Expect(LoomArrayAlloc(shape, 1, kDLFloat, 32, 1, kDLCPU, 0, &y) == 0, "allocating y");
  Expect(((uintptr_t)x->data) % 64 == 0, "arrays are 64-byte aligned");
  static float host[kLength], result[kLength];
  float sum = 0;
  for (int i = 0; i < kLength; ++i) {
    host[i] = (float)(i % 7);
    sum += host[i];
  }
  Expect(LoomArrayCopyFromBytes(x, host, sizeof(host)) == 0, "copying into x");
  ExpectError(LoomArrayCopyFromBytes(x, host, 12), "holds 4000",
              "copying the wrong number of bytes fails");

  LoomValue args[3];
  int32_t codes[3] = {kLoomDLTensorHandle, kLoomDLTensorHandle, kLoomArgFloat};
  args[0].v_handle = x;
  args[1].v_handle = y;
  args[2].v_float64 = 2.0;
  LoomValue ret;
  int32_t ret_code = -1;
  Expect(LoomFuncCall(scale_add, args, codes, 3, &ret, &ret_code) == 0, "calling scale_add");
  Expect(ret_code == kLoomArgInt && ret.v_int64 == kLength, "scale_add returns the length");
  Expect(LoomArrayCopyToBytes(y, result, sizeof(result)) == 0, "copying out of y");
  int wrong = 0;
  for (int i = 0; i < kLength; ++i) wrong += fabsf(result[i] - (2.0f * host[i] + sum)) > 1e-3f;
  Expect(wrong == 0, "scale_add computes 2 * x + sum(x)");

  ExpectError(LoomFuncCall(scale_add, args, codes, 2, &ret, &ret_code),
              "expected 3 arguments, got 2", "a wrong argument count reports the fixture's message");

  LoomFunctionHandle greeting = NULL;
  Expect(LoomModGetFunction(module, "loom_fixture_greeting", 0, &greeting) == 0,
         "looking up loom_fixture_greeting");
  Expect(LoomFuncCall(greeting, NULL, NULL, 0, &ret, &ret_code) == 0, "calling greeting");
  Expect(ret_code == kLoomStr && strcmp(ret.v_str, "hello from the fixture") == 0,
         "greeting returns its string");

  /* Functions keep their module loaded, so freeing the module first is allowed. */
  Expect(LoomModFree(module) == 0, "freeing the module");
  Expect(LoomFuncCall(greeting, NULL, NULL, 0, &ret, &ret_code) == 0,
         "a function outlives its module handle");
  Expect(LoomFuncFree(greeting) == 0 && LoomFuncFree(scale_add) == 0, "freeing the functions");
  Expect(LoomArrayFree(x) == 0 && LoomArrayFree(y) == 0, "freeing the arrays");
  ExpectError(LoomArrayAlloc(shape, 1, kDLFloat, 32, 0, kDLCPU, 0, &x), "out of range",
              "an array with zero lanes is rejected");
  ExpectError(LoomArrayAlloc(shape, 1, kDLFloat, 32, 1, 99, 0, &x), "99 is not a DLPack device",
              "an unknown device type is rejected");

  if (failures == 0) printf("all C API checks passed\n");
  return failures == 0 ? 0 : 1;
}
