// The VTA lowering pipeline on the blocked matrix multiply of the VTA tutorial ("Matrix Multiply
// Blocking"): GEMM tensorized, the shift and clips on the accumulator as ALU stages, tiles of
// the output split between two co-processor virtual threads; every pass composes.
#include <gtest/gtest.h>

#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"
#include "loom/te/schedule.h"
#include "blocked_gemm.h"
#include "loom/vta/compiler/passes.h"

namespace loom::vta {
namespace {

// The lowered text with each line's indentation removed (the nesting is checked by running
// the programs, build_test.cc).
std::string Lines(const PrimFunc& f) {
  std::string text = ToScript(f), flat;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    size_t first = text.find_first_not_of(' ', at);
    if (first < end) flat += text.substr(first, end - first);
    flat += '\n';
    at = end + 1;
  }
  return flat;
}

// 8 output and 4 input blocks in tiles of 2 by 2. Per output tile: a reset kernel, per input
// tile the loads of 2 data and 2 x 2 weight elements and one GEMM whose two hardware loops walk
// the tile, the three ALU kernels, the store of 2 elements. Tokens: the loads of an input tile
// wait for the GEMM of the one before (not the first), the GEMM for its loads, the ALU kernels
// share the compute queue with the GEMM, the STORE waits for them, and the next output tile's
// reset for the STORE (not the last).
TEST(VtaLoweringPipeline, TheBlockedMatrixMultiplyLowersToRuntimeCalls) {
  example::BlockedGemm g(8, 4, 2, 2);
  std::string text = Lines(lower(g.env, g.Scheduled(""), {g.data, g.weight, g.res}, "main"));
  for (const char* line :
       {"if j.outer != 0:\nT.evaluate(T.call_extern(\"int32\", \"VTADepPop\", "
        "T.call_extern(\"handle\", \"VTATLSCommandHandle\"), 3, 2))",
        "if ic.outer != 0:\nT.evaluate(T.call_extern(\"int32\", \"VTADepPop\", "
        "T.call_extern(\"handle\", \"VTATLSCommandHandle\"), 2, 1))",
        "VTALoadBuffer2D\", T.call_extern(\"handle\", \"VTATLSCommandHandle\"), data.data, "
        "ic.outer * 2, 2, 1, 2, 0, 0, 0, 0, 0, 2)",
        "VTALoadBuffer2D\", T.call_extern(\"handle\", \"VTATLSCommandHandle\"), weight.data, "
        "j.outer * 8 + ic.outer * 2, 2, 2, 4, 0, 0, 0, 0, 0, 1))\nT.evaluate(T.call_extern("
        "\"int32\", \"VTADepPush\", T.call_extern(\"handle\", \"VTATLSCommandHandle\"), 1, 2))",
        "VTAUopLoopBegin\", 2, 1, 0, 2))\nT.evaluate(T.call_extern(\"int32\", "
        "\"VTAUopLoopBegin\", 2, 0, 1, 1))",
        "if ic.outer != 1:\nT.evaluate(T.call_extern(\"int32\", \"VTADepPush\", "
        "T.call_extern(\"handle\", \"VTATLSCommandHandle\"), 2, 1))",
        "VTAUopPush\", 1, 0, 0, 0, 0, 3, 1, 8)", "VTAUopPush\", 1, 0, 0, 0, 0, 1, 1, 0)",
        "VTAUopPush\", 1, 0, 0, 0, 0, 0, 1, 127))\nT.evaluate(T.call_extern(\"int32\", "
        "\"VTAUopLoopEnd\"))\nT.evaluate(T.call_extern(\"int32\", \"VTADepPush\", "
        "T.call_extern(\"handle\", \"VTATLSCommandHandle\"), 2, 3))",
        "VTAStoreBuffer2D\", T.call_extern(\"handle\", \"VTATLSCommandHandle\"), 0, 4, res.data, "
        "j.outer * 2, 2, 1, 2))\nif j.outer != 3:",
        "VTASynchronize"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << " in\n" << text;
  }
  // The on-chip buffers are the device's: no allocation is left to the host.
  EXPECT_EQ(text.find("T.allocate"), std::string::npos) << text;
}

// The output tiles split between two co-processor threads: each has its own half of every
// buffer and its own LOADs, GEMM and ALU kernels and STORE, each with its own tokens (thread
// 1's tiles 2 accumulator, 2 input and 4 weight elements further on).
TEST(VtaLoweringPipeline, CoprocessorThreadsGetTheirOwnBuffersAndInstructions) {
  example::BlockedGemm g(8, 4, 2, 2);
  std::string text =
      Lines(lower(g.env, g.Scheduled("cthread"), {g.data, g.weight, g.res}, "main"));
  for (const char* line :
       {"data.data, ic.outer * 2, 2, 1, 2, 0, 0, 0, 0, j.outer.outer * 2, 2)",
        "weight.data, j.outer.outer * 16 + j.outer.inner * 8 + ic.outer * 2, 2, 2, 4, 0, 0, 0, 0, "
        "j.outer.outer * 4, 1)",
        "VTAUopPush\", 0, 1, j.outer.outer * 2, 0, 0, 0, 0, 0)",
        "VTAUopPush\", 0, 0, j.outer.outer * 2, j.outer.outer * 2, j.outer.outer * 4, 0, 0, 0)",
        "VTAUopPush\", 1, 0, j.outer.outer * 2, 0, 0, 3, 1, 8)",
        "VTAStoreBuffer2D\", T.call_extern(\"handle\", \"VTATLSCommandHandle\"), j.outer.outer * "
        "2, 4, res.data, j.outer.outer * 4 + j.outer.inner * 2, 2, 1, 2)"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << " in\n" << text;
  }
}

}  // namespace
}  // namespace loom::vta
