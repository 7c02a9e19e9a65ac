// What the CPU running this process has, in LLVM's feature names, so that a model compiled
// for features this CPU lacks is refused when it loads (its code would stop with an illegal
// instruction in the middle of a run).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace loom::runtime {

// Whether this CPU has feature `name` ("avx512f", "amx-int8"); nullopt when the runtime
// cannot tell (a name it does not check, or a CPU architecture it has no list for).
std::optional<bool> HostHasCpuFeature(const std::string& name);

// The features this CPU has among those the runtime checks, in LLVM's names ("avx2",
// "avx512f", ...; "neon" on AArch64, where it is the baseline): what an RPC server reports.
std::vector<std::string> HostCpuFeatures();

// Asks Linux, once per process, for the AMX tile-data state (arch_prctl
// ARCH_REQ_XCOMP_PERM, Linux 5.16+): a process that has not asked stops with SIGILL at its
// first tile instruction. True when granted; false on a CPU without AMX tiles, another OS,
// or a kernel that refuses. Every loader of generated code calls it (InitBackendServices).
bool RequestTileRegisters();

// The features `target` (a target string, as an artifact records it) enables with
// -mattr=+name that `host_has` says this CPU lacks, in the order given.
std::vector<std::string> MissingCpuFeatures(
    const std::string& target,
    const std::function<std::optional<bool>(const std::string&)>& host_has = HostHasCpuFeature);

// A loom::Error naming `target` and the features when MissingCpuFeatures finds any: what
// loading a model compiled for `target` checks before any of its kernels runs.
void CheckCpuFeatures(
    const std::string& target,
    const std::function<std::optional<bool>(const std::string&)>& host_has = HostHasCpuFeature);

}  // namespace loom::runtime
