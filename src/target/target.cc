// Target parsing, and the LLVM target machine a target stands for.
#include "loom/target/target.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/TargetParser/Host.h>

#include <algorithm>
#include <mutex>
#include <sstream>

#include "loom/support/error.h"
#include "target/llvm_support.h"

namespace loom {

namespace {

constexpr const char* kAcceptedOptions =
    "-mcpu=NAME, -mattr=+feature,-feature,..., -mtriple=TRIPLE, -opt-level=0..3, "
    "-fp-contract=fast|off, -fast-math";

std::vector<std::string> HostFeatures() {
  std::vector<std::string> features;
  for (const auto& entry : llvm::sys::getHostCPUFeatures()) {
    features.push_back((entry.getValue() ? "+" : "-") + entry.getKey().str());
  }
  // StringMap iterates in hash order; sorted features make str() deterministic.
  std::sort(features.begin(), features.end());
  return features;
}

std::vector<std::string> SplitFeatures(const std::string& text, const std::string& whole) {
  std::vector<std::string> features;
  std::stringstream stream(text);
  std::string feature;
  while (std::getline(stream, feature, ',')) {
    LOOM_CHECK_USER(feature.size() > 1 && (feature[0] == '+' || feature[0] == '-'))
        << "target '" << whole << "': -mattr entry '" << feature
        << "' must be a feature name prefixed with + or - (e.g. -mattr=+avx512f,-fma)";
    features.push_back(feature);
  }
  return features;
}

const llvm::Target& LookupLLVMTarget(const std::string& triple, const std::string& whole) {
  target_detail::InitializeLLVM();
  std::string error;
  const llvm::Target* llvm_target = llvm::TargetRegistry::lookupTarget(triple, error);
  LOOM_CHECK_USER(llvm_target != nullptr)
      << "target '" << whole << "': no code generator for triple '" << triple << "' ("
      << error << "); Loom generates code for the host, " << llvm::sys::getProcessTriple();
  return *llvm_target;
}

}  // namespace

Target Target::Parse(const std::string& text) {
  std::stringstream stream(text);
  std::string token;
  Target target;
  LOOM_CHECK_USER(static_cast<bool>(stream >> target.kind_))
      << "target string is empty; write e.g. \"llvm\" or \"llvm -mcpu=znver4\"";
  LOOM_CHECK_USER(target.kind_ == "llvm")
      << "target '" << text << "': unknown target kind '" << target.kind_
      << "'; the known kinds are: llvm";
  bool cpu_given = false;
  while (stream >> token) {
    size_t equals = token.find('=');
    std::string key = token.substr(0, equals);
    std::string value = equals == std::string::npos ? "" : token.substr(equals + 1);
    bool has_value = equals != std::string::npos;
    if (key == "-fast-math" && !has_value) {
      target.fast_math_ = true;
    } else if (key == "-mcpu" && has_value && !value.empty()) {
      target.cpu_ = value;
      cpu_given = value != "native";
    } else if (key == "-mattr" && has_value) {
      std::vector<std::string> listed = SplitFeatures(value, text);
      target.features_.insert(target.features_.end(), listed.begin(), listed.end());
    } else if (key == "-mtriple" && has_value && !value.empty()) {
      target.triple_ = value;
    } else if (key == "-opt-level" && has_value) {
      LOOM_CHECK_USER(value.size() == 1 && value[0] >= '0' && value[0] <= '3')
          << "target '" << text << "': -opt-level must be 0, 1, 2 or 3, got '" << value << "'";
      target.opt_level_ = value[0] - '0';
    } else if (key == "-fp-contract" && has_value) {
      LOOM_CHECK_USER(value == "fast" || value == "off")
          << "target '" << text << "': -fp-contract must be fast or off, got '" << value << "'";
      target.fp_contract_ = value == "fast";
    } else {
      LOOM_THROW << "target '" << text << "': unknown option '" << token
                 << "'; the llvm target accepts " << kAcceptedOptions;
    }
  }
  if (target.triple_.empty()) target.triple_ = llvm::sys::getProcessTriple();
  const llvm::Target& llvm_target = LookupLLVMTarget(target.triple_, text);
  if (!cpu_given) target.cpu_ = llvm::sys::getHostCPUName().str();
  // A generic subtarget answers the questions: one for an unknown CPU would warn on stderr.
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
      llvm_target.createMCSubtargetInfo(target.triple_, "", ""));
  LOOM_CHECK_USER(subtarget && subtarget->isCPUStringValid(target.cpu_))
      << "target '" << text << "': unknown CPU '" << target.cpu_ << "' for " << target.triple_
      << "; `llc-19 -mcpu=help` lists the CPUs (or leave -mcpu out for the host's)";
  for (const std::string& feature : target.features_) {
    std::string name = feature.substr(1);
    bool known = std::any_of(
        subtarget->getAllProcessorFeatures().begin(), subtarget->getAllProcessorFeatures().end(),
        [&](const llvm::SubtargetFeatureKV& kv) { return name == kv.Key; });
    LOOM_CHECK_USER(known)
        << "target '" << text << "': unknown CPU feature '" << feature.substr(1)
        << "'; `llc-19 -mattr=help` lists them";
  }
  if (!cpu_given) {
    // The host's own features first, so that -mattr given by the user overrides them.
    std::vector<std::string> listed = std::move(target.features_);
    target.features_ = HostFeatures();
    target.features_.insert(target.features_.end(), listed.begin(), listed.end());
  }
  return target;
}

bool Target::HasFeature(const std::string& name) const {
  const llvm::Target& llvm_target = LookupLLVMTarget(triple_, str());
  std::string joined;
  for (const std::string& feature : features_) joined += (joined.empty() ? "" : ",") + feature;
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
      llvm_target.createMCSubtargetInfo(triple_, cpu_, joined));
  return subtarget->checkFeatures("+" + name);
}

bool Target::ContractsMultiplyAdd() const { return fp_contract_ && HasFeature("fma"); }

std::string Target::str() const {
  std::string text = kind_ + " -mtriple=" + triple_ + " -mcpu=" + cpu_;
  if (!features_.empty()) {
    text += " -mattr=";
    for (size_t i = 0; i < features_.size(); ++i) text += (i ? "," : "") + features_[i];
  }
  text += " -opt-level=" + std::to_string(opt_level_);
  if (!fp_contract_) text += " -fp-contract=off";
  if (fast_math_) text += " -fast-math";
  return text;
}

namespace target_detail {

void InitializeLLVM() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
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
