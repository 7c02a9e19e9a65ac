// The call stack of the most recent C++ throw, for `LOOM_BACKTRACE=1 loom ...`. A
// loom::Error carries only its message, and by the time the CLI catches it the stack that
// threw is gone, so the tool wraps the C++ runtime's throw function (__cxa_throw) and, when
// LOOM_BACKTRACE=1, records the stack there. Without the variable nothing is recorded.
#pragma once

#include <ostream>

namespace loom::cli {

// Whether LOOM_BACKTRACE=1 (read once).
bool BacktraceEnabled();

// Prints the stack recorded at this thread's last throw, one frame per line: the library,
// the nearest exported symbol (demangled) and the offset in the library that `addr2line -e`
// resolves to a source line. Prints nothing when nothing was recorded.
void PrintLastThrowBacktrace(std::ostream& os);

}  // namespace loom::cli
