// The c target: TIR to C source (CodeGenC), compiled by the system C compiler into a shared
// library that the runtime's loader opens, as exported libraries are.
#include "target/codegen/c/c_module.h"

#include <mutex>
#include <set>

#include "loom/support/error.h"
#include "loom/target/codegen.h"
#include "loom/tir/transform.h"
#include "target/codegen/c/codegen_c.h"
#include "target/codegen/library_link.h"

namespace loom::codegen {

namespace {

// The compiler and its flags for `target`: ISO C without contraction (decided in TIR),
// position independent, no strict aliasing (one allocation may hold several element types).
std::vector<std::string> CompileCommand(const Target& target) {
  std::string compiler = target.GetString("cc");
  if (compiler.empty()) compiler = SystemCompiler();
  std::vector<std::string> argv{compiler, "-std=c99", "-O" + std::to_string(target.opt_level()),
                                "-ffp-contract=off", "-fno-strict-aliasing", "-fPIC"};
  for (const char* flag : {"march", "mcpu"}) {
    const std::string& value = target.GetString(flag);
    if (!value.empty()) argv.push_back("-" + std::string(flag) + "=" + value);
  }
  return argv;
}

class CSourceModuleNode final : public runtime::ModuleNode {
 public:
  CSourceModuleNode(CSource source, std::set<std::string> functions, Target target)
      : source_(std::move(source)), functions_(std::move(functions)), target_(std::move(target)) {}

  std::string type_key() const override { return "c"; }

  // The first function asked for compiles the source into a library of the module's own
  // folder (removed with the module) and loads it: a module whose source goes elsewhere (a
  // cross compiler, the AOT executor) never runs the compiler here.
  runtime::PackedFunc GetFunction(const std::string& name) override {
    if (!functions_.count(name)) return runtime::PackedFunc();
    std::call_once(load_once_, [this] {
      std::string library = folder_.File("kernels.so");
      Compile(library, {});
      loaded_ = runtime::LoadModuleFromFile(library);
      // The loaded library's code launches device kernels through its own module's imports.
      for (const runtime::Module& imported : imports()) loaded_.Import(imported);
    });
    return loaded_.GetFunction(name);
  }

  const CSource& source() const { return source_; }

  // The source compiled to an object, then linked with the blobs into `path`.
  void Compile(const std::string& path, const std::vector<LibraryBlob>& blobs) const {
    TempDir temp;
    std::string source = temp.File("kernels.c"), object = temp.File("kernels.o");
    WriteFile(source, source_.text.data(), source_.text.size());
    std::vector<std::string> compile = CompileCommand(target_);
    compile.insert(compile.end(), {"-c", "-o", object, source});
    RunTool(compile, "the c target: compiling the generated C for '" + path + "'");
    std::vector<std::string> inputs{object};
    if (!blobs.empty()) {
      std::string assembly = BlobAssembly(blobs, functions_, path, temp);
      inputs.push_back(temp.File("blobs.s"));
      WriteFile(inputs.back(), assembly.data(), assembly.size());
    }
    LinkSharedLibrary(CompileCommand(target_)[0], inputs, path);
  }

 private:
  CSource source_;
  std::set<std::string> functions_;
  Target target_;
  TempDir folder_;
  std::once_flag load_once_;
  runtime::Module loaded_;
};

void ExportC(const runtime::Module& module, const std::string& path,
             const std::vector<LibraryBlob>& blobs) {
  LOOM_ICHECK(module.defined() && module->type_key() == "c");
  static_cast<const CSourceModuleNode*>(module.operator->())->Compile(path, blobs);
}

}  // namespace

CSource GenerateCSource(const IRModule& packed) {
  IRModule scalar = tir::transform::ScalarizeVectors()(packed);
  CodeGenC codegen;
  for (const auto& [name, func] : scalar.functions()) codegen.AddFunction(name, func);
  const CodeGenC::ScratchNeed& scratch = codegen.scratch_need();
  return {codegen.Finish(), scratch.bytes, scratch.unbounded_function};
}

runtime::Module BuildC(const IRModule& packed, const Target& target) {
  std::set<std::string> functions;
  for (const auto& [name, func] : packed.functions()) functions.insert(name);
  return runtime::Module(
      std::make_shared<CSourceModuleNode>(GenerateCSource(packed), functions, target));
}

const CSource* FindCSource(const runtime::Module& module) {
  if (!module.defined() || module->type_key() != "c") return nullptr;
  return &static_cast<const CSourceModuleNode*>(module.operator->())->source();
}

LOOM_REGISTER_CODEGEN({.target_kind = "c", .module_type = "c", .build = BuildC,
                       .export_library = ExportC, .c_source = true});

}  // namespace loom::codegen
