// The "llvm" runtime module: generated code emitted once as a position-independent object,
// linked in process by ORC LLJIT and, for export, into a shared library with the blobs.
#include "target/codegen/llvm/llvm_module.h"

#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include <set>

#include "loom/target/codegen.h"
#include "target/codegen/library_link.h"
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

    // Code for another architecture is built to be exported, not run here.
    if (!RunsHere()) return;
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
    }, this);
  }

  std::string type_key() const override { return "llvm"; }

  runtime::PackedFunc GetFunction(const std::string& name) override {
    if (!packed_.Contains(name)) return runtime::PackedFunc();
    LOOM_CHECK_USER(RunsHere())
        << "'" << name << "' was compiled for " << target_.triple() << ", which this machine ("
        << llvm::sys::getProcessTriple() << ") cannot run; export it with ExportLibrary and run "
        << "it on a " << llvm::Triple(target_.triple()).getArchName().str() << " machine";
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
    // Another architecture's objects link with its cross compiler (<triple>-gcc).
    LinkSharedLibrary(RunsHere() ? SystemCompiler() : target_.triple() + "-gcc", inputs, path);
  }

  // Whether the code is for this machine's architecture (else it is only exported).
  bool RunsHere() const {
    return llvm::Triple(target_.triple()).getArch() ==
           llvm::Triple(llvm::sys::getProcessTriple()).getArch();
  }

 private:
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
