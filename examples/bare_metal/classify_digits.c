/* The `make demo` digit classifier on a micro-controller: each held-out digit of
 * digit_samples.h (written by the test) through digits_run, the model `loom compile
 * --executor aot --runtime crt --name digits` wrote. Prints, over semihosting, one line per
 * digit: its index, the predicted class and the ten logits' bits (exact, for comparison with
 * the host). */
#include <stdio.h>
#include <string.h>

#include "digit_samples.h" /* NUM_SAMPLES, samples[NUM_SAMPLES][64] */
#include "digits.h"

static uint8_t LOOM_CRT_ALIGNED workspace[DIGITS_WORKSPACE_SIZE];
static float LOOM_CRT_ALIGNED image[64];
static float LOOM_CRT_ALIGNED logits[10];

int main(void) {
  digits_inputs inputs = {image};
  digits_outputs outputs = {logits};
  for (int n = 0; n < NUM_SAMPLES; ++n) {
    memcpy(image, samples[n], sizeof(image));
    if (digits_run(&inputs, &outputs, workspace) != 0) {
      printf("error: %s\n", LoomCrtGetLastError());
      return 1;
    }
    int best = 0;
    for (int k = 1; k < 10; ++k) {
      if (logits[k] > logits[best]) best = k;
    }
    printf("digit %d class %d logits", n, best);
    for (int k = 0; k < 10; ++k) {
      uint32_t bits;
      memcpy(&bits, &logits[k], 4);
      printf(" %08lx", (unsigned long)bits);
    }
    printf("\n");
  }
  printf("done: %d digits, scratch peak %lu bytes\n", NUM_SAMPLES,
         (unsigned long)LoomCrtScratchPeak());
  return 0;
}
