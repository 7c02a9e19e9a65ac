// The CPU features the runtime checks an artifact's target against (cpu_features.h).
#include "loom/runtime/cpu_features.h"

#include <sstream>
#include <utility>

#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "loom/support/error.h"

namespace loom::runtime {

std::optional<bool> HostHasCpuFeature(const std::string& name) {
#if defined(__x86_64__)
  // __builtin_cpu_supports takes literals: one entry per feature a kernel may use.
  static const std::pair<const char*, bool> kFeatures[] = {
      {"sse4.2", __builtin_cpu_supports("sse4.2") != 0},
      {"avx", __builtin_cpu_supports("avx") != 0},
      {"avx2", __builtin_cpu_supports("avx2") != 0},
      {"fma", __builtin_cpu_supports("fma") != 0},
      {"f16c", __builtin_cpu_supports("f16c") != 0},
      {"bmi2", __builtin_cpu_supports("bmi2") != 0},
      {"avxvnni", __builtin_cpu_supports("avxvnni") != 0},
      {"avx512f", __builtin_cpu_supports("avx512f") != 0},
      {"avx512bw", __builtin_cpu_supports("avx512bw") != 0},
      {"avx512cd", __builtin_cpu_supports("avx512cd") != 0},
      {"avx512dq", __builtin_cpu_supports("avx512dq") != 0},
      {"avx512vl", __builtin_cpu_supports("avx512vl") != 0},
      {"avx512vnni", __builtin_cpu_supports("avx512vnni") != 0},
      {"avx512vbmi", __builtin_cpu_supports("avx512vbmi") != 0},
      {"avx512bf16", __builtin_cpu_supports("avx512bf16") != 0},
      {"avx512fp16", __builtin_cpu_supports("avx512fp16") != 0},
      {"amx-tile", __builtin_cpu_supports("amx-tile") != 0},
      {"amx-int8", __builtin_cpu_supports("amx-int8") != 0},
      {"amx-bf16", __builtin_cpu_supports("amx-bf16") != 0},
  };
  for (const auto& [feature, present] : kFeatures) {
    if (name == feature) return present;
  }
#endif
  (void)name;
  return std::nullopt;
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
