// The shared pieces of library export (library_link.h).
#include "target/codegen/library_link.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "loom/support/error.h"
#include "loom/support/file.h"
#include "loom/target/codegen.h"

namespace loom::codegen {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "loom-export-XXXXXX").string();
  LOOM_CHECK_USER(mkdtemp(pattern.data()) != nullptr)
      << "ExportLibrary: cannot create a temporary folder in "
      << std::filesystem::temp_directory_path() << ": " << std::strerror(errno);
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

bool IsCIdentifier(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

void WriteFile(const std::string& path, const void* data, size_t size) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  LOOM_CHECK_USER(out.good()) << "ExportLibrary: cannot write " << size << " bytes to '" << path
                              << "' (disk full?)";
}

// Assembler text defining each blob as `symbol` (its bytes from a file through .incbin,
// 64-byte aligned, then one zero byte) and `symbol_size`. The assembler copies the bytes
// straight from the file: no compiler holds them in memory.
std::string BlobAssembly(const std::vector<LibraryBlob>& blobs,
                         const std::set<std::string>& module_symbols, const std::string& path,
                         const TempDir& temp) {
  std::ostringstream text;
  std::set<std::string> defined = module_symbols;
  for (const LibraryBlob& blob : blobs) {
    std::string size_symbol = blob.symbol + "_size";
    LOOM_CHECK_USER(IsCIdentifier(blob.symbol))
        << "ExportLibrary('" << path << "'): blob symbol '" << blob.symbol
        << "' is not a C identifier";
    for (const std::string& name : {blob.symbol, size_symbol}) {
      LOOM_CHECK_USER(defined.insert(name).second)
          << "ExportLibrary('" << path << "'): blob symbol '" << name
          << "' is already defined (by a kernel or another blob); give the blob another name";
    }
    LOOM_CHECK_USER(blob.data != nullptr || blob.size == 0)
        << "ExportLibrary('" << path << "'): blob '" << blob.symbol << "' has no data";
    std::string file = temp.File(blob.symbol + ".bin");
    WriteFile(file, blob.data, blob.size);
    text << "  .section .rodata." << blob.symbol << ",\"a\",%progbits\n"
         << "  .globl " << blob.symbol << "\n  .type " << blob.symbol << ", %object\n"
         << "  .balign 64\n" << blob.symbol << ":\n  .incbin \"" << file << "\"\n  .byte 0\n"
         << "  .size " << blob.symbol << ", " << blob.size + 1 << "\n"
         << "  .globl " << size_symbol << "\n  .type " << size_symbol << ", %object\n"
         << "  .balign 8\n" << size_symbol << ":\n  .quad " << blob.size << "\n"
         << "  .size " << size_symbol << ", 8\n";
  }
  text << "  .section .note.GNU-stack,\"\",%progbits\n";
  return text.str();
}

std::string SystemCompiler() {
  const char* compiler = std::getenv("CC");
  return compiler != nullptr && *compiler != '\0' ? compiler : "cc";
}

void RunTool(const std::vector<std::string>& argv_text, const std::string& what) {
  std::vector<std::string> storage = argv_text;
  std::vector<char*> argv;
  for (std::string& arg : storage) argv.push_back(arg.data());
  argv.push_back(nullptr);
  pid_t child = fork();
  LOOM_CHECK_USER(child >= 0) << what << ": cannot start '" << storage[0] << "'";
  if (child == 0) {
    execvp(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
  LOOM_CHECK_USER(!WIFEXITED(status) || WEXITSTATUS(status) != 127)
      << what << ": `" << storage[0] << "` was not found on PATH; install it (`make deps` "
      << "installs the compilers Loom uses) or set CC to a C compiler";
  LOOM_CHECK_USER(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << what << " with `" << storage[0] << "` failed (exit status "
      << (WIFEXITED(status) ? WEXITSTATUS(status) : -1)
      << "); install a C compiler or set CC to one";
}

void LinkSharedLibrary(const std::string& compiler, const std::vector<std::string>& inputs,
                       const std::string& path) {
  // Linked into a new file renamed over the path: a symbolic link there is replaced, not
  // followed, and a failed link leaves what was there.
  ReplacingFile library(path);
  std::vector<std::string> argv{compiler, "-shared", "-o", library.temp_path()};
  argv.insert(argv.end(), inputs.begin(), inputs.end());
  argv.push_back("-lm");
  RunTool(argv, "ExportLibrary: linking '" + path + "'");
  library.Commit(/*executable=*/true);
}

}  // namespace loom::codegen
