// The llvm target kind (CPUs through LLVM: the host's, or another by -mtriple), its tags,
// and the LLVM target machine a target stands for.
#include <llvm/ADT/StringMap.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include <dlpack/dlpack.h>

#include <algorithm>
#include <mutex>

#include "loom/support/error.h"
#include "loom/target/target.h"
#include "target/llvm/llvm_support.h"

namespace loom {

namespace {

std::vector<std::string> HostFeatures() {
  std::vector<std::string> features;
  for (const auto& entry : llvm::sys::getHostCPUFeatures()) {
    features.push_back((entry.getValue() ? "+" : "-") + entry.getKey().str());
  }
  // StringMap iterates in hash order; sorted features make str() deterministic.
  std::sort(features.begin(), features.end());
  return features;
}

const llvm::Target& LookupLLVMTarget(const std::string& triple, const std::string& whole) {
  target_detail::InitializeLLVM();
  std::string error;
  const llvm::Target* llvm_target = llvm::TargetRegistry::lookupTarget(triple, error);
  LOOM_CHECK_USER(llvm_target != nullptr)
      << "target '" << whole << "': no code generator for triple '" << triple << "' (" << error
      << "); the host's is " << llvm::sys::getProcessTriple();
  return *llvm_target;
}

std::unique_ptr<llvm::MCSubtargetInfo> SubtargetInfo(const Target& target,
                                                     const std::string& cpu) {
  std::string features;
  for (const std::string& f : target.features()) features += (features.empty() ? "" : ",") + f;
  const llvm::Target& llvm_target = LookupLLVMTarget(target.triple(), target.str());
  return std::unique_ptr<llvm::MCSubtargetInfo>(
      llvm_target.createMCSubtargetInfo(target.triple(), cpu, features));
}

bool IsKnownFeature(const llvm::MCSubtargetInfo& subtarget, const std::string& name) {
  return std::any_of(
      subtarget.getAllProcessorFeatures().begin(), subtarget.getAllProcessorFeatures().end(),
      [&](const llvm::SubtargetFeatureKV& kv) { return name == kv.Key; });
}

// A feature another architecture has ("avx512f" on AArch64) is one this target lacks.
bool LLVMHasFeature(const Target& target, const std::string& name) {
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget = SubtargetInfo(target, target.cpu());
  return IsKnownFeature(*subtarget, name) && subtarget->checkFeatures("+" + name);
}

// The strategy key of an architecture: what its own operator strategies register under.
std::vector<std::string> ArchitectureKeys(const llvm::Triple& triple) {
  if (triple.isX86()) return {"x86"};
  if (triple.isAArch64() || triple.isARM() || triple.isThumb()) return {"arm_cpu"};
  return {};
}

// The widest SIMD register the CPU has, in bits.
int64_t VectorWidth(const Target& target) {
  if (LLVMHasFeature(target, "avx512f")) return 512;
  if (LLVMHasFeature(target, "avx")) return 256;
  return 128;  // SSE2, NEON; wider than a scalar CPU has, which LLVM then splits
}

void CanonicalizeLLVM(Target& target, const std::string& whole) {
  std::string process_triple = llvm::sys::getProcessTriple();
  if (target.triple().empty()) target.Set("mtriple", process_triple);
  const llvm::Target& llvm_target = LookupLLVMTarget(target.triple(), whole);
  llvm::Triple triple(target.triple());
  bool host_arch = triple.getArch() == llvm::Triple(process_triple).getArch();
  // Without -mcpu (or with native): the host's CPU and features when the code is for the
  // host's architecture, else the architecture's generic CPU.
  bool cpu_given = !target.cpu().empty() && target.cpu() != "native";
  if (!cpu_given) target.Set("mcpu", host_arch ? llvm::sys::getHostCPUName().str() : "generic");
  // A generic subtarget answers the questions: one for an unknown CPU would warn on stderr.
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
      llvm_target.createMCSubtargetInfo(target.triple(), "", ""));
  LOOM_CHECK_USER(subtarget && subtarget->isCPUStringValid(target.cpu()))
      << "target '" << whole << "': unknown CPU '" << target.cpu() << "' for " << target.triple()
      << "; `llc-19 -march=" << triple.getArchName().str()
      << " -mcpu=help` lists the CPUs (or leave -mcpu out for the host's)";
  for (const std::string& feature : target.features()) {
    LOOM_CHECK_USER(feature.size() > 1 && (feature[0] == '+' || feature[0] == '-'))
        << "target '" << whole << "': -mattr entry '" << feature
        << "' must be a feature name prefixed with + or - (e.g. -mattr=+avx512f,-fma)";
    std::string name = feature.substr(1);
    LOOM_CHECK_USER(IsKnownFeature(*subtarget, name)) << "target '" << whole << "': unknown CPU feature '" << name
                           << "' for " << target.triple() << "; `llc-19 -march="
                           << triple.getArchName().str() << " -mattr=help` lists them";
  }
  if (!cpu_given && host_arch) {
    // The host's own features first, so that -mattr given by the user overrides them.
    std::vector<std::string> features = HostFeatures();
    for (const std::string& f : target.features()) features.push_back(f);
    target.Set("mattr", features);
  }
  target.Set("keys", ArchitectureKeys(triple));
  if (target.GetInt("vector-width") == 0) target.Set("vector-width", VectorWidth(target));
}

}  // namespace

LOOM_REGISTER_TARGET_KIND("llvm")
    .Describe("CPUs through LLVM 19: the host's, or another architecture by -mtriple")
    .DeviceType(kDLCPU)
    .Keys({"cpu"})
    .Attr("mtriple", TargetAttrType::kString, std::string(),
          "the LLVM target triple (empty: the host's)")
    .Attr("mcpu", TargetAttrType::kString, std::string(),
          "the CPU (empty or native: the host's)")
    .Attr("mattr", TargetAttrType::kStringList, std::vector<std::string>{},
          "CPU features to add (+name) or remove (-name)")
    .Attr("opt-level", TargetAttrType::kInt, int64_t{3}, "LLVM's optimization level")
    .Range(0, 3)
    .Attr("fp-contract", TargetAttrType::kString, std::string("fast"),
          "fast: a * b + c becomes one fma where the CPU has one (decided in TIR); off: only "
          "explicit fma calls fuse")
    .Choices({"fast", "off"})
    .Attr("fast-math", TargetAttrType::kBool, false,
          "let LLVM reassociate and contract float arithmetic and assume no NaN or inf")
    .Canonicalize(CanonicalizeLLVM)
    .HasFeature(LLVMHasFeature);

LOOM_REGISTER_TARGET_TAG("x86-64-avx512", "llvm -mtriple=x86_64-linux-gnu -mcpu=x86-64-v4",
                         "any x86-64 CPU with AVX-512 F/BW/CD/DQ/VL (x86-64-v4)");
LOOM_REGISTER_TARGET_TAG("x86-64-avx2", "llvm -mtriple=x86_64-linux-gnu -mcpu=x86-64-v3",
                         "any x86-64 CPU with AVX2 and FMA (x86-64-v3)");
LOOM_REGISTER_TARGET_TAG("aarch64-neon", "llvm -mtriple=aarch64-linux-gnu -mattr=+neon",
                         "64-bit ARM Linux with NEON (exported, linked by aarch64-linux-gnu-gcc)");

namespace target_detail {

void InitializeLLVM() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Every backend Debian's libLLVM carries: cross targets (-mtriple) as well as the host.
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
  });
}

std::unique_ptr<llvm::TargetMachine> CreateTargetMachine(const Target& target) {
  const llvm::Target& llvm_target = LookupLLVMTarget(target.triple(), target.str());
  std::string features;
  for (const std::string& f : target.features()) features += (features.empty() ? "" : ",") + f;
  llvm::TargetOptions options;
  if (target.fast_math()) {
    options.UnsafeFPMath = true;
    options.NoInfsFPMath = true;
    options.NoNaNsFPMath = true;
  }
  // LLVM never contracts on its own: contraction changes rounding, so the TIR decides it
  // (fma calls, see Target). Under -fast-math the instructions' own fast-math flags, which
  // include `contract`, let the backend fuse them; the math polynomials codegen emits
  // without flags stay unfused even then.
  options.AllowFPOpFusion = llvm::FPOpFusion::Strict;
  static constexpr llvm::CodeGenOptLevel kLevels[] = {
      llvm::CodeGenOptLevel::None, llvm::CodeGenOptLevel::Less, llvm::CodeGenOptLevel::Default,
      llvm::CodeGenOptLevel::Aggressive};
  std::unique_ptr<llvm::TargetMachine> machine(llvm_target.createTargetMachine(
      target.triple(), target.cpu(), features, options, llvm::Reloc::PIC_, std::nullopt,
      kLevels[target.opt_level()]));
  LOOM_ICHECK(machine != nullptr) << "LLVM made no target machine for " << target.str();
  return machine;
}

}  // namespace target_detail

}  // namespace loom
