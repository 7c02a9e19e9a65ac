// Target strings: parsing, defaults and the errors for what is not accepted.
#include <gtest/gtest.h>

#include "loom/support/error.h"
#include "loom/target/target.h"

namespace loom {
namespace {

std::string ParseError(const std::string& text) {
  try {
    Target::Parse(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(TargetParse, DefaultIsTheHostWithItsFeatures) {
  Target host = Target::Parse("llvm");
  EXPECT_EQ(host.kind(), "llvm");
  EXPECT_FALSE(host.cpu().empty());
  EXPECT_FALSE(host.features().empty());
  EXPECT_EQ(host.opt_level(), 3);
  EXPECT_FALSE(host.fast_math());
  EXPECT_EQ(Target::Parse("llvm -mcpu=native").cpu(), host.cpu());
}

TEST(TargetParse, NamedCpuFeaturesAndFlags) {
  Target t = Target::Parse("llvm -mcpu=haswell -mattr=+avx512f,-fma -fast-math -opt-level=2");
  EXPECT_EQ(t.cpu(), "haswell");
  EXPECT_EQ(t.features(), (std::vector<std::string>{"+avx512f", "-fma"}));
  EXPECT_TRUE(t.fast_math());
  EXPECT_EQ(t.opt_level(), 2);
  // -fma comes last and takes avx512f (which needs it) away again.
  EXPECT_FALSE(t.HasFeature("fma"));
  EXPECT_FALSE(t.HasFeature("avx512f"));
  EXPECT_TRUE(Target::Parse("llvm -mcpu=haswell -mattr=+avx512f").HasFeature("avx512f"));
  EXPECT_TRUE(Target::Parse("llvm -mcpu=znver4").HasFeature("avx512vnni"));
  EXPECT_FALSE(Target::Parse("llvm -mcpu=haswell").HasFeature("avx512f"));
  Target again = Target::Parse(t.str());
  EXPECT_EQ(again.str(), t.str());
}

TEST(TargetParse, ErrorsNameWhatIsAccepted) {
  {
    std::string e = ParseError("cuda");
    EXPECT_NE(e.find("unknown target kind 'cuda'; the known kinds are: llvm"), std::string::npos) << e;
  }
  std::string e = ParseError("llvm -mcpu=znver4 -O3");
  EXPECT_NE(e.find("unknown option '-O3'; the llvm target accepts -mcpu=NAME"), std::string::npos) << e;
  e = ParseError("llvm -fast-math=1");
  EXPECT_NE(e.find("unknown option '-fast-math=1'"), std::string::npos) << e;
  e = ParseError("llvm -opt-level=4");
  EXPECT_NE(e.find("-opt-level must be 0, 1, 2 or 3, got '4'"), std::string::npos) << e;
  e = ParseError("llvm -mcpu=pentium9");
  EXPECT_NE(e.find("unknown CPU 'pentium9'"), std::string::npos) << e;
  e = ParseError("llvm -mattr=+avx1024");
  EXPECT_NE(e.find("unknown CPU feature 'avx1024'"), std::string::npos) << e;
  e = ParseError("llvm -mattr=avx2");
  EXPECT_NE(e.find("-mattr entry 'avx2' must be a feature name prefixed with + or -"),
            std::string::npos) << e;
  e = ParseError("  ");
  EXPECT_NE(e.find("target string is empty"), std::string::npos) << e;
}

TEST(TargetParse, FpContract) {
  Target host = Target::Parse("llvm");
  EXPECT_TRUE(host.fp_contract());
  EXPECT_EQ(host.str().find("-fp-contract"), std::string::npos) << host.str();
  EXPECT_EQ(host.ContractsMultiplyAdd(), host.HasFeature("fma"));
  Target off = Target::Parse("llvm -mcpu=haswell -fp-contract=off -fast-math");
  EXPECT_FALSE(off.fp_contract());
  EXPECT_FALSE(off.ContractsMultiplyAdd());
  EXPECT_TRUE(off.fast_math());
  EXPECT_NE(off.str().find(" -fp-contract=off"), std::string::npos) << off.str();
  EXPECT_EQ(Target::Parse(off.str()).str(), off.str());
  EXPECT_FALSE(Target::Parse(off.str()).fp_contract());
  Target fast = Target::Parse("llvm -mcpu=haswell -fp-contract=off -fp-contract=fast");
  EXPECT_TRUE(fast.fp_contract());
  EXPECT_TRUE(fast.ContractsMultiplyAdd());
  EXPECT_EQ(Target::Parse(fast.str()).str(), fast.str());
  // Contraction needs the fma feature: a generic x86-64 or -mattr=-fma has none.
  EXPECT_FALSE(Target::Parse("llvm -mcpu=x86-64").ContractsMultiplyAdd());
  EXPECT_FALSE(Target::Parse("llvm -mcpu=haswell -mattr=-fma").ContractsMultiplyAdd());
  std::string e = ParseError("llvm -fp-contract=on");
  EXPECT_NE(e.find("-fp-contract must be fast or off, got 'on'"), std::string::npos) << e;
  e = ParseError("llvm -fp-contract");
  EXPECT_NE(e.find("unknown option '-fp-contract'; the llvm target accepts"), std::string::npos)
      << e;
  EXPECT_NE(e.find("-fp-contract=fast|off"), std::string::npos) << e;
}

}  // namespace
}  // namespace loom
