// The "llvm" runtime module: generated code emitted once as a position-independent object,
// linked in process by ORC LLJIT and, for export, into a shared library with the blobs.
#include "target/codegen/llvm/llvm_module.h"

#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

#include "loom/target/codegen.h"
#include "target/codegen/llvm/codegen_llvm.h"
#include "target/llvm/llvm_support.h"

namespace loom::codegen {

namespace {

std::string ToString(llvm::Error error) {
  std::string text;
  llvm::raw_string_ostream stream(text);
  stream << error;
  return stream.str();
}

std::unique_ptr<llvm::Module> Generate(llvm::LLVMContext* context, const IRModule& packed,
                                       const Target& target, llvm::TargetMachine* machine) {
  CodeGenLLVM codegen(context, target, machine);
  for (const auto& [name, func] : packed.functions()) codegen.AddFunction(name, func);
  return codegen.Finish();
}

bool IsCIdentifier(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// A temporary folder with simple characters in its path (the assembler's .incbin reads it),
// removed with its files.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "loom-export-XXXXXX").string();
    LOOM_CHECK_USER(mkdtemp(pattern.data()) != nullptr)
        << "ExportLibrary: cannot create a temporary folder in "
        << std::filesystem::temp_directory_path() << ": " << std::strerror(errno);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

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

class LLVMModuleNode final : public runtime::ModuleNode {
 public:
  LLVMModuleNode(IRModule packed, Target target)
      : packed_(std::move(packed)), target_(std::move(target)) {}

  void Load() {
    target_detail::InitializeLLVM();
    std::unique_ptr<llvm::TargetMachine> machine = target_detail::CreateTargetMachine(target_);
    auto context = std::make_unique<llvm::LLVMContext>();
    std::unique_ptr<llvm::Module> module = Generate(context.get(), packed_, target_, machine.get());
    for (const llvm::GlobalValue& global : module->global_values()) {
      if (!global.isDeclaration()) symbols_.insert(global.getName().str());
    }
    // One object serves the JIT and ExportLibrary: code generation runs once per build, and
    // in-process and exported code are the same bytes.
    {
      llvm::raw_svector_ostream out(object_);
      llvm::legacy::PassManager emit;
      LOOM_ICHECK(!machine->addPassesToEmitFile(emit, out, nullptr,
                                                llvm::CodeGenFileType::ObjectFile))
          << "the target machine cannot emit object files";
      emit.run(*module);
    }

    // The JIT only links the object; it compiles nothing itself.
    auto jit = llvm::orc::LLJITBuilder().create();
    LOOM_ICHECK(static_cast<bool>(jit)) << "cannot start the LLVM JIT: " << ToString(jit.takeError());
    jit_ = std::shared_ptr<llvm::orc::LLJIT>(std::move(*jit));
    llvm::Error added = jit_->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(
        llvm::StringRef(object_.data(), object_.size()), "loom_kernels"));
    LOOM_ICHECK(!added) << "the JIT rejected generated code: " << ToString(std::move(added));
    runtime::InitBackendServices([&](const char* symbol) -> void* {
      auto address = jit_->lookup(symbol);
      if (!address) {
        llvm::consumeError(address.takeError());
        return nullptr;
      }
      return address->toPtr<void*>();
    });
  }

  std::string type_key() const override { return "llvm"; }

  runtime::PackedFunc GetFunction(const std::string& name) override {
    if (!packed_.Contains(name)) return runtime::PackedFunc();
    auto address = jit_->lookup(name);
    LOOM_ICHECK(static_cast<bool>(address))
        << "JIT lookup of '" << name << "' failed: " << ToString(address.takeError());
    return runtime::WrapPackedCFunc(address->toPtr<LoomBackendPackedCFunc>(), jit_);
  }

  void Export(const std::string& path, const std::vector<LibraryBlob>& blobs) const {
    TempDir temp;
    std::string object = temp.File("kernels.o");
    WriteFile(object, object_.data(), object_.size());
    std::vector<std::string> inputs{object};
    if (!blobs.empty()) {
      std::string assembly = BlobAssembly(blobs, symbols_, path, temp);
      inputs.push_back(temp.File("blobs.s"));
      WriteFile(inputs.back(), assembly.data(), assembly.size());
    }
    Link(inputs, path);
  }

 private:
  // `cc -shared -o path inputs... -lm`, run without a shell (paths may hold any character).
  static void Link(const std::vector<std::string>& inputs, const std::string& path) {
    const char* compiler = std::getenv("CC");
    std::string cc = compiler != nullptr && *compiler != '\0' ? compiler : "cc";
    std::vector<std::string> argv_storage{cc, "-shared", "-o", path};
    argv_storage.insert(argv_storage.end(), inputs.begin(), inputs.end());
    argv_storage.push_back("-lm");
    std::vector<char*> argv;
    for (std::string& arg : argv_storage) argv.push_back(arg.data());
    argv.push_back(nullptr);
    pid_t child = fork();
    LOOM_CHECK_USER(child >= 0) << "ExportLibrary: cannot start the linker '" << cc << "'";
    if (child == 0) {
      execvp(argv[0], argv.data());
      _exit(127);
    }
    int status = 0;
    waitpid(child, &status, 0);
    LOOM_CHECK_USER(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "ExportLibrary: linking '" << path << "' with `" << cc
        << " -shared` failed (exit status "
        << (WIFEXITED(status) ? WEXITSTATUS(status) : -1)
        << "); install a C compiler or set CC to one";
  }

  IRModule packed_;
  Target target_;
  llvm::SmallVector<char, 0> object_;   // the generated code, position independent
  std::set<std::string> symbols_;        // what the object defines
  std::shared_ptr<llvm::orc::LLJIT> jit_;
};

}  // namespace

runtime::Module BuildLLVM(const IRModule& packed, const Target& target) {
  auto node = std::make_shared<LLVMModuleNode>(packed, target);
  node->Load();
  return runtime::Module(node);
}

std::string LLVMIRText(const IRModule& packed, const Target& target) {
  std::unique_ptr<llvm::TargetMachine> machine = target_detail::CreateTargetMachine(target);
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = Generate(&context, packed, target, machine.get());
  std::string text;
  llvm::raw_string_ostream stream(text);
  module->print(stream, nullptr);
  return stream.str();
}

void ExportLLVMLibrary(const runtime::Module& module, const std::string& path,
                       const std::vector<LibraryBlob>& blobs) {
  LOOM_ICHECK(module.defined() && module->type_key() == "llvm");
  static_cast<const LLVMModuleNode*>(module.operator->())->Export(path, blobs);
}

LOOM_REGISTER_CODEGEN({.target_kind = "llvm",
                       .module_type = "llvm",
                       .build = BuildLLVM,
                       .export_library = ExportLLVMLibrary});

}  // namespace loom::codegen
