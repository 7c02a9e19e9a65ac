#include "throw_backtrace.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <typeinfo>

namespace loom::cli {
namespace {

constexpr int kMaxFrames = 64;

// This thread's stack at its last throw (only recorded with LOOM_BACKTRACE=1).
thread_local void* last_throw_frames[kMaxFrames];
thread_local int last_throw_depth = 0;

std::string Demangled(const char* symbol) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> name(
      abi::__cxa_demangle(symbol, nullptr, nullptr, &status), &std::free);
  return status == 0 && name ? std::string(name.get()) : std::string(symbol);
}

}  // namespace

bool BacktraceEnabled() {
  static const bool enabled = [] {
    const char* value = std::getenv("LOOM_BACKTRACE");
    return value != nullptr && std::strcmp(value, "1") == 0;
  }();
  return enabled;
}

void PrintLastThrowBacktrace(std::ostream& os) {
  if (last_throw_depth == 0) return;
  os << "backtrace of the throw (offsets resolve with addr2line -f -C -e LIBRARY OFFSET):\n";
  // Frame 0 is the __cxa_throw wrapper itself.
  for (int i = 1; i < last_throw_depth; ++i) {
    void* address = last_throw_frames[i];
    Dl_info info{};
    char line[64];
    std::snprintf(line, sizeof(line), "  #%-3d ", i - 1);
    os << line;
    if (dladdr(address, &info) == 0 || info.dli_fname == nullptr) {
      os << address << "\n";
      continue;
    }
    // A return address points after the call; one byte back is inside it.
    uintptr_t offset =
        reinterpret_cast<uintptr_t>(address) - reinterpret_cast<uintptr_t>(info.dli_fbase) - 1;
    std::snprintf(line, sizeof(line), "0x%zx", static_cast<size_t>(offset));
    os << info.dli_fname << " " << line;
    if (info.dli_sname != nullptr) os << " (near " << Demangled(info.dli_sname) << ")";
    os << "\n";
  }
}

}  // namespace loom::cli

// Every C++ throw in the process (in the loom libraries too: the executable's definition
// comes first in symbol lookup) passes through here; it records the stack and calls the C++
// runtime's own __cxa_throw.
namespace __cxxabiv1 {
extern "C" void __cxa_throw(void* exception, std::type_info* type, void (*destructor)(void*)) {
  using ThrowFunction = void (*)(void*, std::type_info*, void (*)(void*));
  static const auto real_throw = reinterpret_cast<ThrowFunction>(dlsym(RTLD_NEXT, "__cxa_throw"));
  if (real_throw == nullptr) {  // no C++ runtime to forward to: nothing can be thrown
    std::fputs("loom: error: internal: the C++ runtime's __cxa_throw was not found\n", stderr);
    std::abort();
  }
  if (loom::cli::BacktraceEnabled()) {
    loom::cli::last_throw_depth = backtrace(loom::cli::last_throw_frames, loom::cli::kMaxFrames);
  }
  real_throw(exception, type, destructor);
  __builtin_unreachable();
}
}  // namespace __cxxabiv1
