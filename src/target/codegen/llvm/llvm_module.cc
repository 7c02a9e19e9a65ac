// The "llvm" runtime module: generated code JIT-compiled in process with ORC LLJIT, and the
// same code emitted as an object file and linked into a shared library.
#include "target/codegen/llvm/llvm_module.h"

#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <sys/wait.h>
#include <unistd.h>

#include "target/codegen/llvm/codegen_llvm.h"
#include "target/llvm_support.h"

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

// `blob` as the globals `symbol` (its bytes and a zero byte, 64-byte aligned) and
// `symbol_size`. An i8 array is what the assembler writes out as one block of bytes; the
// zero byte is a second member of a packed struct so the data is never copied to append it.
void AddBlob(llvm::Module* module, const LibraryBlob& blob, const std::string& path) {
  std::string size_symbol = blob.symbol + "_size";
  LOOM_CHECK_USER(IsCIdentifier(blob.symbol))
      << "ExportLibrary('" << path << "'): blob symbol '" << blob.symbol
      << "' is not a C identifier";
  for (const std::string& name : {blob.symbol, size_symbol}) {
    LOOM_CHECK_USER(module->getNamedValue(name) == nullptr)
        << "ExportLibrary('" << path << "'): blob symbol '" << name
        << "' is already defined (by a kernel or another blob); give the blob another name";
  }
  LOOM_CHECK_USER(blob.data != nullptr || blob.size == 0)
      << "ExportLibrary('" << path << "'): blob '" << blob.symbol << "' has no data";
  llvm::LLVMContext& context = module->getContext();
  llvm::Type* i8 = llvm::Type::getInt8Ty(context);
  llvm::StringRef bytes(static_cast<const char*>(blob.data), blob.size);
  llvm::Constant* data = llvm::ConstantDataArray::getRaw(bytes, blob.size, i8);
  llvm::Constant* body =
      llvm::ConstantStruct::getAnon({data, llvm::ConstantInt::get(i8, 0)}, /*Packed=*/true);
  auto* global = new llvm::GlobalVariable(*module, body->getType(), /*isConstant=*/true,
                                          llvm::GlobalValue::ExternalLinkage, body, blob.symbol);
  global->setAlignment(llvm::Align(64));
  llvm::Type* i64 = llvm::Type::getInt64Ty(context);
  new llvm::GlobalVariable(*module, i64, /*isConstant=*/true, llvm::GlobalValue::ExternalLinkage,
                           llvm::ConstantInt::get(i64, blob.size), size_symbol);
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

    // The JIT compiles for exactly the machine the module was optimized for, so in-process
    // and exported code are the same instructions.
    llvm::orc::JITTargetMachineBuilder builder(machine->getTargetTriple());
    builder.setCPU(target_.cpu());
    builder.addFeatures(target_.features());
    builder.setOptions(machine->Options);
    builder.setCodeGenOptLevel(machine->getOptLevel());
    builder.setRelocationModel(llvm::Reloc::PIC_);
    auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(builder)).create();
    LOOM_ICHECK(static_cast<bool>(jit)) << "cannot start the LLVM JIT: " << ToString(jit.takeError());
    jit_ = std::shared_ptr<llvm::orc::LLJIT>(std::move(*jit));
    llvm::Error added = jit_->addIRModule(
        llvm::orc::ThreadSafeModule(std::move(module), std::move(context)));
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
    std::unique_ptr<llvm::TargetMachine> machine = target_detail::CreateTargetMachine(target_);
    llvm::LLVMContext context;
    std::unique_ptr<llvm::Module> module = Generate(&context, packed_, target_, machine.get());
    for (const LibraryBlob& blob : blobs) AddBlob(module.get(), blob, path);
    std::string object = path + ".o";
    {
      std::error_code error;
      llvm::raw_fd_ostream out(object, error, llvm::sys::fs::OF_None);
      LOOM_CHECK_USER(!error) << "ExportLibrary: cannot write '" << object << "': "
                              << error.message();
      llvm::legacy::PassManager emit;
      LOOM_ICHECK(!machine->addPassesToEmitFile(emit, out, nullptr,
                                                llvm::CodeGenFileType::ObjectFile))
          << "the target machine cannot emit object files";
      emit.run(*module);
    }
    Link(object, path);
    std::remove(object.c_str());
  }

 private:
  // `cc -shared -o path object -lm`, run without a shell (paths may hold any character).
  static void Link(const std::string& object, const std::string& path) {
    const char* compiler = std::getenv("CC");
    std::string cc = compiler != nullptr && *compiler != '\0' ? compiler : "cc";
    std::vector<std::string> argv_storage{cc, "-shared", "-o", path, object, "-lm"};
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
  LOOM_CHECK_USER(module.defined() && module->type_key() == "llvm")
      << "ExportLibrary('" << path << "'): the module is "
      << (module.defined() ? "a '" + module->type_key() + "' module" : "undefined")
      << "; only modules made by loom::build for an llvm target can be exported";
  static_cast<const LLVMModuleNode*>(module.operator->())->Export(path, blobs);
}

}  // namespace loom::codegen
