// The micro runtime's scratch stack and error message (src/crt/loom_crt.c), on the host.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "loom_crt.h"

namespace {

alignas(LOOM_CRT_ALIGNMENT) uint8_t area[4096];

TEST(CrtScratch, BlocksAreAlignedStackedAndFreedInReverse) {
  LoomCrtScratchInit(area, sizeof(area));
  void* a = LoomCrtScratchAlloc(1, 0, 100, 2, 32);
  void* b = LoomCrtScratchAlloc(1, 0, 1, 2, 32);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % LOOM_CRT_ALIGNMENT, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % LOOM_CRT_ALIGNMENT, 0u);
  // Each block costs one header and its size rounded up: what CodeGenC's bound counts.
  EXPECT_EQ(static_cast<uint8_t*>(b) - static_cast<uint8_t*>(a), 64 + 128);
  EXPECT_EQ(LoomCrtScratchFree(1, 0, b), 0);
  EXPECT_EQ(LoomCrtScratchFree(1, 0, a), 0);
  EXPECT_EQ(LoomCrtScratchPeak(), 64u + 128 + 64 + 1);
  // Freed: the same place again.
  EXPECT_EQ(LoomCrtScratchAlloc(1, 0, 100, 2, 32), a);
}

TEST(CrtScratch, ExhaustionAndOutOfOrderFreesAreErrors) {
  LoomCrtScratchInit(area, sizeof(area));
  LoomCrtClearError();
  void* a = LoomCrtScratchAlloc(1, 0, 3800, 2, 32);  // in use to 64 + 3800
  ASSERT_NE(a, nullptr);
  // The next block would start at 3968 (its header at 3904): 128 bytes are left.
  EXPECT_EQ(LoomCrtScratchAlloc(1, 0, 200, 2, 32), nullptr);
  EXPECT_EQ(std::string(LoomCrtGetLastError()),
            "loom crt: a kernel asked for 200 bytes of scratch with 3864 of 4096 in use");
  void* b = LoomCrtScratchAlloc(1, 0, 1, 2, 32);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(LoomCrtScratchFree(1, 0, a), 0);
  EXPECT_EQ(std::string(LoomCrtGetLastError()),
            "loom crt: freeing scratch that is not the latest allocation");
  EXPECT_EQ(LoomCrtScratchFree(1, 0, b), 0);
  EXPECT_EQ(LoomCrtScratchFree(1, 0, a), 0);
}

TEST(CrtError, LongMessagesAreTruncatedNotOverrun) {
  std::string long_message(1000, 'x');
  LoomCrtSetLastError(long_message.c_str());
  EXPECT_EQ(std::string(LoomCrtGetLastError()), std::string(255, 'x'));
  LoomCrtClearError();
  EXPECT_EQ(std::string(LoomCrtGetLastError()), "");
}

}  // namespace
