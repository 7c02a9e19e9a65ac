// VTA's "Simple Matrix Multiply" tutorial, through Loom: C = A x B^T for a 1 x 256 int8 vector A
// and a 256 x 256 int8 matrix B, in VTA's blocked layout (A[1][16][1][16], B[16][16][16][16]),
// accumulated in int32 on the accumulator buffer and stored narrowed to int8.
//
//   vta_matrix_multiply [--print-ir] [--print-insn] [--config FILE]
//
// --config runs it on another VTA configuration (JSON, as configs/batch2_block8.json): the
// algorithm takes the configuration's batch, block and accumulator width, and the runtime's
// device gets the same configuration.
//
// The algorithm and schedule are in matrix_multiply.h: A and B are staged through the input and
// weight buffers one 16-wide block of the reduction at a time (dma_copy), the product runs on
// the GEMM intrinsic into the accumulator buffer, and the result is stored (dma_copy). The
// program lowers it for VTA, builds it for the vta target (host code calling the VTA runtime),
// runs it on the simulator with the hazard checker on, checks it bit for bit against a CPU
// reference, and prints the simulator's counters and cycles.
#include "matrix_multiply.h"

#include "vta_example.h"

using namespace loom;
using namespace loom::vta;

int main(int argc, char** argv) {
  return example::Main(argc, argv, example::kConfigFlag, [](const example::Options& options) {
    const example::TutorialGemm g(/*out_blocks=*/16, /*in_blocks=*/16, example::Configure(options));
    runtime::Module module =
        example::Compile(g.env, g.Scheduled(), {g.A, g.B, g.C}, "matrix_multiply", options);

    runtime::NDArray a = example::RandomInt8(example::ShapeOf(g.A), -128, 127, 1);
    runtime::NDArray b = example::RandomInt8(example::ShapeOf(g.B), -128, 127, 2);
    runtime::NDArray c =
        runtime::NDArray::Empty(example::ShapeOf(g.C), g.env.out_dtype(), example::kVta);
    example::RunAndReport(module, "matrix_multiply", options, example::ToDevice(a),
                          example::ToDevice(b), c);
    return example::Check(c, g.Reference(example::Values(a), example::Values(b)));
  });
}
