// Which CPUs the runtime's threads should use. Hyper-threads share a core's vector units,
// so compute threads are counted and pinned per physical core, not per logical CPU.
#pragma once

#include <vector>

namespace loom::runtime {

// One logical CPU id per distinct physical core (package, core) among the CPUs this process
// may run on, in ascending order. Read from sysfs topology, else /proc/cpuinfo; empty when
// neither describes the cores.
std::vector<int> PhysicalCoreRepresentatives();

// The number of those cores; std::thread::hardware_concurrency() (at least 1) when the
// topology is unknown.
int PhysicalCoreCount();

}  // namespace loom::runtime
