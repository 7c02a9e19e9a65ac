// Target kinds and tags as data: tags, strategy keys, vector widths, cross triples, and a
// device kind registered here, by the test alone, with its host target.
#include <gtest/gtest.h>

#include "error_of.h"
#include "loom/target/target.h"
#include "loom/target/target_kind.h"

namespace loom {
namespace {

// A device kind of the test's own: nothing outside this file knows it.
LOOM_REGISTER_TARGET_KIND("test_accel")
    .Describe("a made-up accelerator")
    // Its stand-in kernels (host_device_test.cc) run on this CPU, on host memory: the tensors
    // its functions take are the CPU's.
    .DeviceType(1)
    .Keys({"test_accel", "gpu"})
    .Device()
    .Attr("max-num-threads", TargetAttrType::kInt, int64_t{1024}, "threads per block")
    .Range(1, 1 << 20)
    .Attr("arch", TargetAttrType::kString, std::string("v1"), "the generation")
    .Choices({"v1", "v2"})
    .Attr("mattr", TargetAttrType::kStringList, std::vector<std::string>{}, "features");

std::string ParseError(const std::string& text) {
  return testing::ErrorOf([&] { Target::Parse(text); });
}

using Strings = std::vector<std::string>;

TEST(TargetKind, TagsStandForTargetStringsAndTakeMoreAttributes) {
  Target avx512 = Target::Parse("x86-64-avx512 -opt-level=2");
  EXPECT_EQ(avx512.kind(), "llvm");
  EXPECT_EQ(avx512.cpu(), "x86-64-v4");
  EXPECT_EQ(avx512.opt_level(), 2);
  EXPECT_TRUE(avx512.HasFeature("avx512f"));
  EXPECT_EQ(avx512.vector_width_bits(), 512);
  EXPECT_EQ(avx512.VectorLanes(32), 16);
  EXPECT_EQ(avx512.keys(), (Strings{"x86", "cpu"}));
  EXPECT_EQ(Target::Parse(avx512.str()).str(), avx512.str());

  Target avx2 = Target::Parse("x86-64-avx2");
  EXPECT_FALSE(avx2.HasFeature("avx512f"));
  EXPECT_TRUE(avx2.HasFeature("fma"));
  EXPECT_EQ(avx2.VectorLanes(32), 8);
  EXPECT_EQ(avx2.VectorLanes(8), 32);
}

TEST(TargetKind, KeysGivenComeFirstThenTheArchitecturesThenTheKinds) {
  EXPECT_EQ(Target::Parse("llvm -keys=mine,cpu").keys(), (Strings{"mine", "cpu", "x86"}));
  EXPECT_EQ(Target::Parse("llvm -keys=mine -keys=other").keys(),
            (Strings{"mine", "other", "x86", "cpu"}));
  EXPECT_TRUE(Target::Parse("llvm").HasKey("cpu"));
}

TEST(TargetKind, VectorWidthGivenOverridesTheCPUs) {
  Target narrow = Target::Parse("x86-64-avx512 -vector-width=128");
  EXPECT_EQ(narrow.VectorLanes(32), 4);
  EXPECT_EQ(narrow.VectorLanes(256), 1);
  EXPECT_EQ(Target::Parse(narrow.str()).vector_width_bits(), 128);
}

TEST(TargetKind, CrossTriplesTakeTheGenericCPUNotTheHosts) {
  Target arm = Target::Parse("aarch64-neon");
  EXPECT_EQ(arm.cpu(), "generic");
  EXPECT_EQ(arm.features(), (Strings{"+neon"}));
  EXPECT_TRUE(arm.HasFeature("neon"));
  EXPECT_EQ(arm.keys(), (Strings{"arm_cpu", "cpu"}));
  EXPECT_EQ(arm.VectorLanes(32), 4);
  EXPECT_EQ(Target::Parse(arm.str()).str(), arm.str());
  std::string e = ParseError("llvm -mtriple=aarch64-linux-gnu -mattr=+avx512f");
  EXPECT_NE(e.find("unknown CPU feature 'avx512f' for aarch64-linux-gnu"), std::string::npos) << e;
  e = ParseError("llvm -mtriple=nonsense-unknown-none");
  EXPECT_NE(e.find("no code generator for triple 'nonsense-unknown-none'"), std::string::npos) << e;
}

TEST(TargetKind, AKindRegisteredElsewhereParsesWithItsAttributesAndHost) {
  const TargetKind* kind = TargetKindRegistry::Find("test_accel");
  ASSERT_NE(kind, nullptr);
  EXPECT_TRUE(kind->is_device);

  Target accel = Target::Parse("test_accel -arch=v2 -mattr=+wide");
  EXPECT_EQ(accel.kind(), "test_accel");
  EXPECT_EQ(accel.GetString("arch"), "v2");
  EXPECT_EQ(accel.GetInt("max-num-threads"), 1024);
  EXPECT_EQ(accel.keys(), (Strings{"test_accel", "gpu"}));
  EXPECT_TRUE(accel.HasFeature("wide"));  // no hook: read off -mattr
  EXPECT_FALSE(accel.HasFeature("narrow"));
  EXPECT_EQ(accel.host().kind(), "llvm");  // the default host
  EXPECT_FALSE(accel.Has("mcpu"));
  EXPECT_EQ(accel.cpu(), "");

  Target hosted = Target::Parse("test_accel -max-num-threads=256 -host='llvm -mcpu=haswell'");
  EXPECT_EQ(hosted.GetInt("max-num-threads"), 256);
  EXPECT_EQ(hosted.host().cpu(), "haswell");
  EXPECT_EQ(Target::Parse(hosted.str()).str(), hosted.str());
  EXPECT_EQ(Target::Parse(hosted.str()).host().cpu(), "haswell");
  // A host kind is its own host.
  Target llvm = Target::Parse("llvm");
  EXPECT_EQ(&llvm.host(), &llvm);

  std::string e = ParseError("test_accel -arch=v3");
  EXPECT_NE(e.find("-arch must be v1 or v2, got 'v3'"), std::string::npos) << e;
  e = ParseError("test_accel -max-num-threads=0");
  EXPECT_NE(e.find("-max-num-threads must be in 1..1048576, got '0'"), std::string::npos) << e;
  e = ParseError("test_accel -mcpu=haswell");
  EXPECT_NE(e.find("unknown attribute '-mcpu=haswell' for kind 'test_accel'; test_accel takes "),
            std::string::npos) << e;
  EXPECT_NE(e.find("-max-num-threads=INT (1..1048576), -arch=v1|v2, -mattr=A,B,..., "
                   "-host=TARGET"),
            std::string::npos) << e;
  e = ParseError("test_accel -host=test_accel");
  EXPECT_NE(e.find("the host 'test_accel' is itself a device kind"), std::string::npos) << e;
  e = ParseError("test_accel -host='llvm -mcpu=pentium9'");
  EXPECT_NE(e.find("unknown CPU 'pentium9'"), std::string::npos) << e;
}

TEST(TargetKind, TheRegistryListsKindsAndTags) {
  bool has_llvm = false;
  for (const TargetKind* kind : TargetKindRegistry::List()) has_llvm |= kind->name == "llvm";
  EXPECT_TRUE(has_llvm);
  const TargetTag* tag = TargetKindRegistry::FindTag("x86-64-avx512");
  ASSERT_NE(tag, nullptr);
  EXPECT_NE(tag->doc.find("AVX-512"), std::string::npos);
}

}  // namespace
}  // namespace loom
