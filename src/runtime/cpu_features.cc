// The CPU features the runtime checks an artifact's target against (cpu_features.h).
#include "loom/runtime/cpu_features.h"

#include <cstdint>
#include <sstream>
#include <utility>

#if defined(__x86_64__)
#include <cpuid.h>
#endif
#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "loom/support/error.h"

namespace loom::runtime {

#if defined(__x86_64__)
namespace {

enum class CpuidRegister { kEax, kEbx, kEcx, kEdx };

// Where CPUID reports a feature (leaf, sub-leaf, register, bit) and the register state the
// OS must save for it (XCR0 bits): a CPU's AVX-512 is unusable under an OS that does not
// save the ZMM registers. Read from CPUID directly rather than __builtin_cpu_supports,
// whose list of names differs between compilers and their versions.
struct CpuidFeature {
  const char* name;
  unsigned leaf;
  unsigned subleaf;
  CpuidRegister reg;
  unsigned bit;
  uint64_t os_state;
};

constexpr uint64_t kNoState = 0;
constexpr uint64_t kAvxState = 0x6;      // XCR0: SSE, AVX (YMM upper halves)
constexpr uint64_t kAvx512State = 0xe6;  // and opmask, ZMM upper halves, ZMM16-31
constexpr uint64_t kAmxState = 0x60000;  // XTILECFG, XTILEDATA

// One entry per feature a kernel may use (Intel SDM vol. 2A, CPUID).
constexpr CpuidFeature kCpuidFeatures[] = {
    {"sse4.2", 1, 0, CpuidRegister::kEcx, 20, kNoState},
    {"fma", 1, 0, CpuidRegister::kEcx, 12, kAvxState},
    {"avx", 1, 0, CpuidRegister::kEcx, 28, kAvxState},
    {"f16c", 1, 0, CpuidRegister::kEcx, 29, kAvxState},
    {"avx2", 7, 0, CpuidRegister::kEbx, 5, kAvxState},
    {"bmi2", 7, 0, CpuidRegister::kEbx, 8, kNoState},
    {"avx512f", 7, 0, CpuidRegister::kEbx, 16, kAvx512State},
    {"avx512dq", 7, 0, CpuidRegister::kEbx, 17, kAvx512State},
    {"avx512cd", 7, 0, CpuidRegister::kEbx, 28, kAvx512State},
    {"avx512bw", 7, 0, CpuidRegister::kEbx, 30, kAvx512State},
    {"avx512vl", 7, 0, CpuidRegister::kEbx, 31, kAvx512State},
    {"avx512vbmi", 7, 0, CpuidRegister::kEcx, 1, kAvx512State},
    {"avx512vnni", 7, 0, CpuidRegister::kEcx, 11, kAvx512State},
    {"amx-bf16", 7, 0, CpuidRegister::kEdx, 22, kAmxState},
    {"avx512fp16", 7, 0, CpuidRegister::kEdx, 23, kAvx512State},
    {"amx-tile", 7, 0, CpuidRegister::kEdx, 24, kAmxState},
    {"amx-int8", 7, 0, CpuidRegister::kEdx, 25, kAmxState},
    {"avxvnni", 7, 1, CpuidRegister::kEax, 4, kAvxState},
    {"avx512bf16", 7, 1, CpuidRegister::kEax, 5, kAvx512State},
};

// The register `reg` of CPUID(leaf, subleaf); zero for a leaf or sub-leaf this CPU lacks.
uint32_t Cpuid(unsigned leaf, unsigned subleaf, CpuidRegister reg) {
  uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (static_cast<unsigned>(__get_cpuid_max(0, nullptr)) < leaf) return 0;
  if (leaf == 7 && subleaf > 0) {
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    if (eax < subleaf) return 0;  // EAX of sub-leaf 0: the highest sub-leaf
  }
  __cpuid_count(leaf, subleaf, eax, ebx, ecx, edx);
  switch (reg) {
    case CpuidRegister::kEax:
      return eax;
    case CpuidRegister::kEbx:
      return ebx;
    case CpuidRegister::kEcx:
      return ecx;
    case CpuidRegister::kEdx:
      return edx;
  }
  return 0;
}

// The register state the OS saves (XCR0); zero when it has not enabled XSAVE.
uint64_t OsSavedState() {
  constexpr unsigned kOsXsaveBit = 27;  // CPUID.1:ECX.OSXSAVE
  if (((Cpuid(1, 0, CpuidRegister::kEcx) >> kOsXsaveBit) & 1) == 0) return 0;
  uint32_t low = 0, high = 0;
  __asm__ volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
  return (uint64_t{high} << 32) | low;
}

}  // namespace
#endif

std::optional<bool> HostHasCpuFeature(const std::string& name) {
#if defined(__x86_64__)
  static const uint64_t os_state = OsSavedState();
  for (const CpuidFeature& feature : kCpuidFeatures) {
    if (name != feature.name) continue;
    bool in_cpu = ((Cpuid(feature.leaf, feature.subleaf, feature.reg) >> feature.bit) & 1) != 0;
    return in_cpu && (os_state & feature.os_state) == feature.os_state;
  }
#endif
  (void)name;
  return std::nullopt;
}

std::vector<std::string> HostCpuFeatures() {
  std::vector<std::string> present;
#if defined(__x86_64__)
  for (const CpuidFeature& feature : kCpuidFeatures) {
    if (HostHasCpuFeature(feature.name) == true) present.push_back(feature.name);
  }
#elif defined(__aarch64__)
  present.push_back("neon");
#endif
  return present;
}

bool RequestTileRegisters() {
#if defined(__linux__) && defined(__x86_64__)
  static const bool granted = [] {
    if (HostHasCpuFeature("amx-tile") != true) return false;
    constexpr long kRequestPermission = 0x1023;  // ARCH_REQ_XCOMP_PERM
    constexpr long kTileData = 18;               // XFEATURE_XTILEDATA
    return syscall(SYS_arch_prctl, kRequestPermission, kTileData) == 0;
  }();
  return granted;
#else
  return false;
#endif
}

std::vector<std::string> MissingCpuFeatures(
    const std::string& target,
    const std::function<std::optional<bool>(const std::string&)>& host_has) {
  std::vector<std::string> missing;
  std::istringstream tokens(target);
  std::string token;
  const std::string mattr = "-mattr=";
  while (tokens >> token) {
    if (token.rfind(mattr, 0) != 0) continue;
    std::istringstream features(token.substr(mattr.size()));
    std::string feature;
    while (std::getline(features, feature, ',')) {
      if (feature.size() < 2 || feature[0] != '+') continue;
      std::optional<bool> present = host_has(feature.substr(1));
      if (present && !*present) missing.push_back(feature.substr(1));
    }
  }
  return missing;
}

void CheckCpuFeatures(const std::string& target,
                      const std::function<std::optional<bool>(const std::string&)>& host_has) {
  std::vector<std::string> missing = MissingCpuFeatures(target, host_has);
  std::string list;
  for (const std::string& feature : missing) list += (list.empty() ? "" : ", ") + feature;
  LOOM_CHECK_USER(missing.empty())
      << "the model was compiled for target '" << target << "', which uses CPU features this "
      << "CPU lacks (" << list << "): its kernels would stop with an illegal instruction; "
      << "compile it for this CPU (--target llvm) or for a tag this CPU has (such as "
      << "x86-64-avx2)";
}

}  // namespace loom::runtime
