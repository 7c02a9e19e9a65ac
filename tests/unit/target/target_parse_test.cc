// Target strings: parsing, defaults and the errors for what is not accepted.
#include <gtest/gtest.h>

#include "error_of.h"
#include "loom/target/target.h"

namespace loom {
namespace {

std::string ParseError(const std::string& text) {
  return testing::ErrorOf([&] { Target::Parse(text); });
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
    std::string e = ParseError("rocm");
    EXPECT_NE(e.find("unknown target kind or tag 'rocm'; the known kinds are: "), std::string::npos)
        << e;
    EXPECT_NE(e.find("llvm"), std::string::npos) << e;
    EXPECT_NE(e.find("the known tags are: "), std::string::npos) << e;
    EXPECT_NE(e.find("x86-64-avx512"), std::string::npos) << e;
  }
  std::string e = ParseError("llvm -mcpu=znver4 -O3");
  EXPECT_NE(e.find("unknown attribute '-O3' for kind 'llvm'; llvm takes -keys=A,B,..., "
                   "-vector-width=INT (0..4096), -num-cores=INT (0..65536), -mtriple=NAME, "
                   "-mcpu=NAME, -mattr=A,B,..., -opt-level=INT (0..3), -fp-contract=fast|off, "
                   "-fast-math"),
            std::string::npos) << e;
  e = ParseError("llvm -fast-math=1x");
  EXPECT_NE(e.find("-fast-math takes no value, or true or false, got '1x'"), std::string::npos)
      << e;
  e = ParseError("llvm -opt-level=4");
  EXPECT_NE(e.find("-opt-level must be in 0..3, got '4'"), std::string::npos) << e;
  e = ParseError("llvm -opt-level=two");
  EXPECT_NE(e.find("-opt-level takes an integer, got 'two'"), std::string::npos) << e;
  e = ParseError("llvm -opt-level");
  EXPECT_NE(e.find("-opt-level takes an integer, got no value"), std::string::npos) << e;
  e = ParseError("llvm -mcpu=pentium9");
  EXPECT_NE(e.find("unknown CPU 'pentium9'"), std::string::npos) << e;
  e = ParseError("llvm -mattr=+avx1024");
  EXPECT_NE(e.find("unknown CPU feature 'avx1024'"), std::string::npos) << e;
  e = ParseError("llvm -mattr=avx2");
  EXPECT_NE(e.find("-mattr entry 'avx2' must be a feature name prefixed with + or -"),
            std::string::npos) << e;
  e = ParseError("llvm mcpu=znver4");
  EXPECT_NE(e.find("unknown attribute 'mcpu=znver4'"), std::string::npos) << e;
  e = ParseError("llvm -host=llvm");
  EXPECT_NE(e.find("-host=TARGET applies to device kinds; llvm code runs on the host itself"),
            std::string::npos) << e;
  e = ParseError("llvm -mcpu='znver4");
  EXPECT_NE(e.find("a quote (') is not closed"), std::string::npos) << e;
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
  EXPECT_NE(e.find("-fp-contract takes a value after '=', got no value"), std::string::npos)
      << e;
}

}  // namespace
}  // namespace loom
