// Code for another architecture: built and exported (linked by its cross compiler), never
// run here, and refused by this machine's loader with a message naming both architectures.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "error_of.h"
#include "loom/runtime/module.h"
#include "loom/target/build.h"
#include "loom/te/lower.h"
#include "loom/te/operation.h"
#include "loom/te/schedule.h"

namespace loom {
namespace {

TEST(CrossTarget, AnAArch64KernelIsExportedNotRun) {
  te::Tensor a = te::placeholder({64}, DataType::Float(32), "A");
  te::Tensor b = te::compute({64}, [&](Var i) { return a(i) * 2.0f + 1.0f; }, "B");
  te::Schedule s = te::create_schedule({b.op()});
  s[b].vectorize(s[b].split(s[b]->leaf_iter_vars[0], 4).second);
  runtime::Module module =
      build(te::lower(s, {a, b}, "scale"), Target::Parse("llvm -mtriple=aarch64-linux-gnu -mattr=+neon"));

  std::string e = testing::ErrorOf([&] { module.GetRequiredFunction("scale"); });
  EXPECT_NE(e.find("'scale' was compiled for aarch64-linux-gnu, which this machine"),
            std::string::npos) << e;
  EXPECT_NE(e.find("run it on a aarch64 machine"), std::string::npos) << e;

  std::string path = ::testing::TempDir() + "loom_aarch64_" + std::to_string(getpid()) + ".so";
  ExportLibrary(module, path);
  unsigned char header[20] = {};
  std::ifstream(path, std::ios::binary).read(reinterpret_cast<char*>(header), sizeof(header));
  EXPECT_EQ(header[18] | header[19] << 8, 183) << "ELF machine: EM_AARCH64 expected";
  std::string load = testing::ErrorOf([&] { runtime::LoadModuleFromFile(path); });
  EXPECT_NE(load.find("the library was built for aarch64, and this runtime runs on x86_64"),
            std::string::npos) << load;
  std::remove(path.c_str());
}

}  // namespace
}  // namespace loom
