// VTA's "Simple Matrix Multiply" tutorial, through Loom: C = A x B^T for a 1 x 256 int8 vector A
// and a 256 x 256 int8 matrix B, in VTA's blocked layout (A[1][16][1][16], B[16][16][16][16]),
// accumulated in int32 on the accumulator buffer and stored narrowed to int8.
//
//   vta_matrix_multiply [--print-ir] [--print-insn]
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
  const example::Options options = example::ParseOptions(argc, argv, "[--print-ir] [--print-insn]");
  try {
    const example::TutorialGemm g(/*out_blocks=*/16, /*in_blocks=*/16);
    runtime::Module module =
        example::Compile(g.env, g.Scheduled(), {g.A, g.B, g.C}, "matrix_multiply", options);

    runtime::NDArray a = example::RandomInt8({1, g.n, 1, 16}, -128, 127, 1);
    runtime::NDArray b = example::RandomInt8({g.m, g.n, 16, 16}, -128, 127, 2);
    runtime::NDArray c = runtime::NDArray::Empty({1, g.m, 1, 16}, DataType::Int(8), example::kVta);
    example::RunAndReport(module, "matrix_multiply", options, example::ToDevice(a),
                          example::ToDevice(b), c);

    const auto* av = static_cast<const int8_t*>(a->data);
    const auto* bv = static_cast<const int8_t*>(b->data);
    std::vector<int8_t> expected(g.m * 16);
    for (int co = 0; co < g.m; ++co) {
      for (int ci = 0; ci < 16; ++ci) {
        int32_t sum = 0;
        for (int k = 0; k < g.n * 16; ++k) {
          sum += av[k] * bv[((co * g.n + k / 16) * 16 + ci) * 16 + k % 16];
        }
        expected[co * 16 + ci] = static_cast<int8_t>(sum);  // the STORE keeps the low 8 bits
      }
    }
    return example::Check(c, expected);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "error: %s\n", error.what());
    return 1;
  }
}
