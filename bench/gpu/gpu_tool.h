// The entry point both GPU-check programs share (loom-gpu-prepare, loom-gpu-check): a
// loom::Error is one line on stderr, prefixed with the program's name, and `error_status`.
#pragma once

#include <iostream>

#include "loom/support/error.h"

namespace loom {

inline int RunGpuTool(const char* name, int (*tool_main)(int, char**), int argc, char** argv,
                      int error_status) {
  try {
    return tool_main(argc, argv);
  } catch (const Error& error) {
    std::cerr << name << ": " << error.what() << "\n";
    return error_status;
  }
}

}  // namespace loom
