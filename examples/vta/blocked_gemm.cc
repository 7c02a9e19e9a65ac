// VTA's "Matrix Multiply Blocking" tutorial, through Loom: a 1 x 1024 int8 vector by a
// 1024 x 1024 int8 matrix, accumulated in int32, shifted right by 8 and clipped to [0, 127] on
// the accumulator by the ALU, stored as int8.
//
//   vta_blocked_gemm [--print-ir] [--print-insn] [--no-virtual-threads]
//
// The algorithm and schedule are in blocked_gemm.h: the output in tiles of 256 values, the
// reduction in tiles of 256, the copies into the input and weight buffers at the reduction
// tile (dma_copy), the GEMM intrinsic, the three ALU stages (alu) and the store (dma_copy).
// The output tiles are split between two co-processor virtual threads ("cthread"): each gets
// its own half of every on-chip buffer and its own instructions and dependency tokens, so that
// one thread's loads overlap the other's GEMMs. --no-virtual-threads runs one thread instead,
// to compare the cycles.
#include "blocked_gemm.h"

#include "vta_example.h"

using namespace loom;
using namespace loom::vta;

int main(int argc, char** argv) {
  return example::Main(
      argc, argv, example::kNoVirtualThreadsFlag, [](const example::Options& options) {
        const example::BlockedGemm g(/*out_blocks=*/64, /*in_blocks=*/64, /*out_tile=*/16,
                                     /*in_tile=*/16);
        te::Schedule s = g.Scheduled(options.virtual_threads ? "cthread" : "");
        runtime::Module module =
            example::Compile(g.env, s, {g.data, g.weight, g.res}, "blocked_gemm", options);

        runtime::NDArray data = example::RandomInt8(example::ShapeOf(g.data), -128, 127, 3);
        runtime::NDArray weight = example::RandomInt8(example::ShapeOf(g.weight), -128, 127, 4);
        runtime::NDArray res =
            runtime::NDArray::Empty(example::ShapeOf(g.res), example::kI8, example::kVta);
        example::RunAndReport(module, "blocked_gemm", options, example::ToDevice(data),
                              example::ToDevice(weight), res);
        return example::Check(res, g.Reference(example::Values(data), example::Values(weight)));
      });
}
