// What the back ends share to turn generated code into a shared library: a temporary folder,
// files written whole, read-only blobs as assembler text, and the system C compiler run
// without a shell. Private to src/target/codegen.
#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "loom/target/build.h"

namespace loom::codegen {

// A temporary folder with simple characters in its path (the assembler's .incbin reads it),
// removed with its files.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// Writes `size` bytes to `path` (a loom::Error when it cannot).
void WriteFile(const std::string& path, const void* data, size_t size);

// Assembler text defining each blob as `symbol` (its bytes from a file in `temp` through
// .incbin, 64-byte aligned, then one zero byte) and `symbol_size`. `module_symbols` are the
// names the code defines (a blob may not reuse one); `path` is the library, for errors.
std::string BlobAssembly(const std::vector<LibraryBlob>& blobs,
                         const std::set<std::string>& module_symbols, const std::string& path,
                         const TempDir& temp);

// The system C compiler: $CC, else `cc`.
std::string SystemCompiler();

// Runs `argv` (argv[0] looked up on PATH) without a shell and waits; a loom::Error naming
// `what` and the exit status when it fails. Its output goes to this process's stderr.
void RunTool(const std::vector<std::string>& argv, const std::string& what);

// `compiler -shared -o path inputs... -lm`: the inputs (objects, assembler text) linked into
// one shared library.
void LinkSharedLibrary(const std::string& compiler, const std::vector<std::string>& inputs,
                       const std::string& path);

}  // namespace loom::codegen
