#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "loom/graph/transform.h"

namespace loom::graph {

namespace {

bool SameFunctions(const IRModule& a, const IRModule& b) {
  if (a.functions().size() != b.functions().size()) return false;
  for (const auto& [name, func] : a.functions()) {
    if (!b.Contains(name) || !b.Lookup(name).same_as(func)) return false;
  }
  return true;
}

void WriteDump(const std::string& dir, int number, const std::string& pass,
               const IRModule& module) {
  char prefix[32];
  std::snprintf(prefix, sizeof(prefix), "graph_%03d_", number);
  std::string path = dir + "/" + prefix + pass + ".txt";
  std::ofstream out(path);
  LOOM_CHECK_USER(out.good()) << "LOOM_DUMP_IR: cannot write '" << path << "'";
  out << ToText(module);
}

}  // namespace

IRModule RunPasses(const IRModule& module, const std::vector<Pass>& passes) {
  const char* dump_dir = std::getenv("LOOM_DUMP_IR");
  const char* time_passes = std::getenv("LOOM_TIME_PASSES");
  bool dumping = dump_dir && *dump_dir;
  if (dumping) WriteDump(dump_dir, 0, "input", module);
  IRModule current = module;
  int number = 0;
  for (const Pass& pass : passes) {
    ++number;
    auto start = std::chrono::steady_clock::now();
    IRModule result = pass.run(current);
    std::chrono::duration<double, std::milli> elapsed = std::chrono::steady_clock::now() - start;
    bool changed = !SameFunctions(current, result);
    if (time_passes && std::string(time_passes) == "1") {
      std::fprintf(stderr, "[loom] graph pass %-24s %10.3f ms%s\n", pass.name.c_str(),
                   elapsed.count(), changed ? "" : " (unchanged)");
    }
    if (dumping && changed) WriteDump(dump_dir, number, pass.name, result);
    current = std::move(result);
  }
  return current;
}

}  // namespace loom::graph
