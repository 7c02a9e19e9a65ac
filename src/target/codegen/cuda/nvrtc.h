// NVRTC, CUDA's run-time compiler, opened with dlopen when the cuda target first builds
// kernels (the compiler links nothing of CUDA, so it builds and compiles for other targets
// on machines without the toolkit). Private to src/target.
#pragma once

#include <string>

namespace loom::codegen {

// `source` (CUDA C++) compiled to PTX for the virtual architecture of `arch` ("sm_90" ->
// compute_90), without contraction of a * b + c (TIR decides it). A loom::Error with NVRTC's
// log when the source does not compile, or naming the libraries looked for when NVRTC is
// missing.
std::string CompileToPTX(const std::string& source, const std::string& arch);

}  // namespace loom::codegen
