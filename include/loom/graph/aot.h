// The AOT executor with the micro runtime (crt): a compiled model as C sources that run with
// no operating system -- no malloc, no dlopen, no threads, no file I/O.
//
//   CompiledModel model = Compile(module, {.target = "mps2-an386"});   // a c target
//   AotSummary summary = ExportAot(model, "digits_c/", {.name = "digits"});
//
// writes into the folder:
//   digits.h          the entry point, int digits_run(const digits_inputs*, digits_outputs*,
//                     void* workspace); the input and output structs; DIGITS_WORKSPACE_SIZE
//   digits.c          the kernels (static), the weights as const arrays, digits_run
//   digits_kernels.c  the kernels' C source (digits.c includes it)
//   loom_crt.h/.c     the micro runtime: errors and the kernels' scratch stack
// Compile digits.c and loom_crt.c with any C99 compiler and link with libm.
#pragma once

#include <cstdint>
#include <string>

#include "loom/graph/compile.h"

namespace loom::graph {

struct AotOptions {
  std::string name = "model";  // a C identifier: <name>_run, <name>_inputs, ...
};

struct AotSummary {
  int64_t weight_bytes = 0;     // the const arrays (64-byte aligned)
  int64_t slot_bytes = 0;       // the memory plan's slots for intermediate values
  int64_t scratch_bytes = 0;    // the kernels' scratch at most
  int64_t workspace_bytes = 0;  // slots + scratch (at least 64): <NAME>_WORKSPACE_SIZE
};

// The model must have been compiled for a target of kind c. A model whose weights exceed the
// target's -flash-bytes or whose workspace exceeds its -ram-bytes (code and the kernels'
// stack arrays of up to 16 KiB each are not counted), a kernel whose scratch has no constant
// bound, a name that is no C identifier (or is loom_crt) and a folder that cannot be written
// are loom::Errors with the figures.
AotSummary ExportAot(const CompiledModel& model, const std::string& directory,
                     const AotOptions& options);

// What ExportAot checks of its options and the target before anything is compiled: a loom::Error
// for a name that is no C identifier or a target whose code generator writes no C.
void CheckAotOptions(const AotOptions& options, const std::string& target);

// `text` as a C identifier: characters other than letters, digits and '_' become '_', and a
// leading digit (or nothing) gets a '_' before it. For model, input and output names.
std::string CIdentifierFrom(const std::string& text);

}  // namespace loom::graph
