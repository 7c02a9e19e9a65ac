// Loads libloom_cli_compiler.so, the compiler half of `loom` (compiler_commands.h), on demand.
#include <dlfcn.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "compiler_commands.h"
#include "loom/support/error.h"

namespace loom::cli {
namespace {

// The module sits beside the executable (the build tree's tools/loom/, or an install's bin/).
void* CompilerSymbol(const char* symbol) {
  static void* module = [] {
    std::error_code error;
    std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
    std::filesystem::path path = exe.parent_path() / "libloom_cli_compiler.so";
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    LOOM_CHECK_USER(handle != nullptr)
        << "cannot load Loom's compiler module '" << path.string() << "' (" << dlerror()
        << "); it is built with the loom tool and must stay beside it";
    return handle;
  }();
  void* address = dlsym(module, symbol);
  LOOM_CHECK_USER(address != nullptr)
      << "Loom's compiler module lacks '" << symbol << "': it is from another build of loom";
  return address;
}

}  // namespace

void RunCompileInModule(const CompileCommandOptions& options) {
  reinterpret_cast<decltype(&loom_cli_compile)>(CompilerSymbol("loom_cli_compile"))(&options);
}

void InspectOnnxInModule(const InspectCommandOptions& options) {
  reinterpret_cast<decltype(&loom_cli_inspect_onnx)>(
      CompilerSymbol("loom_cli_inspect_onnx"))(&options);
}

void RunTuneInModule(const TuneCommandOptions& options) {
  reinterpret_cast<decltype(&loom_cli_tune)>(CompilerSymbol("loom_cli_tune"))(&options);
}

}  // namespace loom::cli
