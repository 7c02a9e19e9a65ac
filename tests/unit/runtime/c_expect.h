/* Checks for the C tests of the deployment C API: each failed check is printed with
 * LoomGetLastError and counted in `failures` (the test's exit status). Header-only. */
#ifndef LOOM_TESTS_RUNTIME_C_EXPECT_H_
#define LOOM_TESTS_RUNTIME_C_EXPECT_H_

#include <stdio.h>
#include <string.h>

#include "loom/runtime/c_runtime_api.h"

static int failures = 0;

static void Expect(int condition, const char* what) {
  if (!condition) {
    fprintf(stderr, "FAILED: %s (last error: %s)\n", what, LoomGetLastError());
    ++failures;
  }
}

/* `status` is -1 and the last error contains `fragment`. */
static void ExpectError(int status, const char* fragment, const char* what) {
  Expect(status == -1, what);
  if (strstr(LoomGetLastError(), fragment) == NULL) {
    fprintf(stderr, "FAILED: %s: message lacks '%s': %s\n", what, fragment, LoomGetLastError());
    ++failures;
  }
}

#endif /* LOOM_TESTS_RUNTIME_C_EXPECT_H_ */
