/* The micro runtime (crt): what code from `loom compile --executor aot --runtime crt` needs
 * besides the C library's <math.h>, <string.h> and snprintf: the last error message, and a
 * stack allocator for the scratch buffers kernels ask for, carved from the workspace the
 * caller passes to <name>_run. No malloc, no threads, no file I/O: it runs on bare metal.
 *
 * The model's own code calls these; an application only reads LoomCrtGetLastError() after
 * <name>_run returned nonzero. One model runs at a time (the state is static).
 */
#ifndef LOOM_CRT_LOOM_CRT_H_
#define LOOM_CRT_LOOM_CRT_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Alignment of every buffer kernels see, and so of the workspace: kernels check it. */
#define LOOM_CRT_ALIGNMENT 64
#if defined(__GNUC__) || defined(__clang__)
#define LOOM_CRT_ALIGNED __attribute__((aligned(LOOM_CRT_ALIGNMENT)))
#else
#define LOOM_CRT_ALIGNED _Alignas(LOOM_CRT_ALIGNMENT) /* C11 */
#endif

/* Records `message` (copied, truncated to fit) as the last error. */
void LoomCrtSetLastError(const char* message);
/* The last error message; "" when none since LoomCrtClearError. */
const char* LoomCrtGetLastError(void);
void LoomCrtClearError(void);

/* Scratch memory for kernels: a stack over [base, base + size), `base` LOOM_CRT_ALIGNMENT
 * aligned (the compiler's bound on the scratch a model needs assumes it). Each allocation
 * takes a LOOM_CRT_ALIGNMENT-byte header and its size rounded up to that alignment, and is
 * freed in the reverse order (as generated code does). */
void LoomCrtScratchInit(void* base, size_t size);
/* The signatures of the backend services (c_backend_api.h); NULL when the scratch area is
 * exhausted, with the last error saying by how much. */
void* LoomCrtScratchAlloc(int32_t device_type, int32_t device_id, uint64_t nbytes,
                          int32_t dtype_code_hint, int32_t dtype_bits_hint);
/* Nonzero, with the last error set, for a pointer that is not the latest allocation. */
int32_t LoomCrtScratchFree(int32_t device_type, int32_t device_id, void* ptr);
/* The most scratch in use at once since LoomCrtScratchInit, in bytes. */
size_t LoomCrtScratchPeak(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* LOOM_CRT_LOOM_CRT_H_ */
