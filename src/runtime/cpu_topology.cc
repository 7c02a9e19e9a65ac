#include "loom/runtime/cpu_topology.h"

#include <sched.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>

namespace loom::runtime {

namespace {

using CoreKey = std::pair<long, long>;  // (physical package, core id)

std::set<int> AllowedCpus() {
  std::set<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.insert(cpu);
  }
  return cpus;
}

bool ReadNumber(const std::string& path, long* value) {
  std::ifstream in(path);
  return static_cast<bool>(in >> *value);
}

// Empty when any allowed CPU lacks topology files (containers sometimes hide them).
std::map<CoreKey, int> CoresFromSysfs(const std::set<int>& allowed) {
  std::map<CoreKey, int> cores;
  for (int cpu : allowed) {
    std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    long package = 0, core = 0;
    if (!ReadNumber(dir + "physical_package_id", &package) || !ReadNumber(dir + "core_id", &core)) {
      return {};
    }
    cores.emplace(CoreKey{package, core}, cpu);
  }
  return cores;
}

std::map<CoreKey, int> CoresFromCpuinfo(const std::set<int>& allowed) {
  std::map<CoreKey, int> cores;
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  long processor = -1, package = -1, core = -1;
  auto flush = [&] {
    if (processor >= 0 && package >= 0 && core >= 0 && allowed.count(static_cast<int>(processor))) {
      cores.emplace(CoreKey{package, core}, static_cast<int>(processor));
    }
    processor = package = core = -1;
  };
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t") == std::string::npos) {
      flush();
      continue;
    }
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    long value = 0;
    if (!(std::istringstream(line.substr(colon + 1)) >> value)) continue;
    if (key == "processor") processor = value;
    if (key == "physical id") package = value;
    if (key == "core id") core = value;
  }
  flush();
  return cores;
}

}  // namespace

std::vector<int> PhysicalCoreRepresentatives() {
  std::set<int> allowed = AllowedCpus();
  std::map<CoreKey, int> cores = CoresFromSysfs(allowed);
  if (cores.empty()) cores = CoresFromCpuinfo(allowed);
  std::set<int> representatives;
  for (const auto& entry : cores) representatives.insert(entry.second);
  return {representatives.begin(), representatives.end()};
}

int PhysicalCoreCount() {
  size_t cores = PhysicalCoreRepresentatives().size();
  if (cores > 0) return static_cast<int>(cores);
  unsigned logical = std::thread::hardware_concurrency();
  return logical > 0 ? static_cast<int>(logical) : 1;
}

}  // namespace loom::runtime
