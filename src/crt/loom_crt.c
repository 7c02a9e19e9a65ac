/* The micro runtime (loom_crt.h). Plain C99 with no dependency beyond <string.h> and
 * <stdio.h>'s snprintf, so it builds for bare-metal targets as for the host. */
#include "loom_crt.h"  /* include/loom/crt/; copied beside this file by the AOT export */

#include <stdio.h>
#include <string.h>

static char last_error[256];

void LoomCrtSetLastError(const char* message) {
  size_t length = strlen(message);
  if (length >= sizeof(last_error)) length = sizeof(last_error) - 1;
  memcpy(last_error, message, length);
  last_error[length] = '\0';
}

const char* LoomCrtGetLastError(void) { return last_error; }

void LoomCrtClearError(void) { last_error[0] = '\0'; }

/* The scratch stack: [scratch_base, scratch_top) is in use. Each block is preceded by one
 * aligned header that remembers the top and the latest block before it, so a free can check
 * that it frees the latest block and restore both. */
typedef struct {
  uint8_t* previous_top;
  uint8_t* previous_latest;
} ScratchHeader;

static uint8_t* scratch_base;
static uint8_t* scratch_top;
static uint8_t* scratch_end;
static uint8_t* scratch_latest;
static size_t scratch_peak;

static uintptr_t AlignUp(uintptr_t value) {
  return (value + (LOOM_CRT_ALIGNMENT - 1)) & ~(uintptr_t)(LOOM_CRT_ALIGNMENT - 1);
}

void LoomCrtScratchInit(void* base, size_t size) {
  scratch_base = (uint8_t*)base;
  scratch_top = scratch_base;
  scratch_end = scratch_base + size;
  scratch_latest = NULL;
  scratch_peak = 0;
}

void* LoomCrtScratchAlloc(int32_t device_type, int32_t device_id, uint64_t nbytes,
                          int32_t dtype_code_hint, int32_t dtype_bits_hint) {
  (void)device_type;
  (void)device_id;
  (void)dtype_code_hint;
  (void)dtype_bits_hint;
  uintptr_t header = AlignUp((uintptr_t)scratch_top);
  uintptr_t block = header + LOOM_CRT_ALIGNMENT;
  uintptr_t end = (uintptr_t)scratch_end;
  if (scratch_base == NULL || block > end || nbytes > (uint64_t)(end - block)) {
    char message[160];
    snprintf(message, sizeof(message),
             "loom crt: a kernel asked for %llu bytes of scratch with %llu of %llu in use",
             (unsigned long long)nbytes, (unsigned long long)(scratch_top - scratch_base),
             (unsigned long long)(scratch_end - scratch_base));
    LoomCrtSetLastError(message);
    return NULL;
  }
  ScratchHeader* record = (ScratchHeader*)header;
  record->previous_top = scratch_top;
  record->previous_latest = scratch_latest;
  scratch_latest = (uint8_t*)block;
  scratch_top = scratch_latest + nbytes;
  if ((size_t)(scratch_top - scratch_base) > scratch_peak) {
    scratch_peak = (size_t)(scratch_top - scratch_base);
  }
  return scratch_latest;
}

int32_t LoomCrtScratchFree(int32_t device_type, int32_t device_id, void* ptr) {
  (void)device_type;
  (void)device_id;
  if (ptr == NULL || ptr != scratch_latest) {
    LoomCrtSetLastError("loom crt: freeing scratch that is not the latest allocation");
    return -1;
  }
  const ScratchHeader* record = (const ScratchHeader*)(scratch_latest - LOOM_CRT_ALIGNMENT);
  scratch_top = record->previous_top;
  scratch_latest = record->previous_latest;
  return 0;
}

size_t LoomCrtScratchPeak(void) { return scratch_peak; }
