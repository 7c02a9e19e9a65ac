// The cuda target kind: kernels in CUDA C++, compiled to PTX with NVRTC when the model is
// built, launched from the host target's code on DLPack's kDLCUDA device
// (loom/runtime/cuda_module.h).
#include <dlpack/dlpack.h>

#include <string>

#include "loom/target/target.h"
#include "loom/tir/transform.h"
#include "target/codegen/gpu/gpu_target_kind.h"

namespace loom::codegen {
namespace {

// The number of an "sm_<major><minor>[suffix]" architecture (sm_80: 80, sm_90a: 90); 0 when
// it is not one (the build checks the name).
int ArchNumber(const std::string& arch) {
  if (arch.rfind("sm_", 0) != 0) return 0;
  int number = 0;
  for (size_t i = 3; i < arch.size() && arch[i] >= '0' && arch[i] <= '9'; ++i) {
    number = number * 10 + (arch[i] - '0');
  }
  return number;
}

[[maybe_unused]] const TargetKindBuilder kCudaKind =
    DeclareGpuKind("cuda", {.device_type = kDLCUDA,
                            .key = "cuda",
                            .max_threads = 1024,
                            .max_threads_limit = 1024,
                            .max_shared_bytes = 49152,
                            .max_shared_limit = 49152,
                            .shared_memory = "static __shared__",
                            .warp_size = 32})
        .Describe(
            "CUDA C++ kernels (thread-bound loops), compiled to PTX with NVRTC when the model is "
            "built and loaded by the driver on the GPU, launched from the host target (-host, "
            "default llvm)")
        .Attr("arch", TargetAttrType::kString, std::string("sm_75"),
              "the GPU architecture the PTX is for (sm_90: H100, H200); the driver compiles it "
              "for this one or any later")
        .HasFeature([](const Target& target, const std::string& feature) {
          // Tensor cores: float16 products from sm_70 (Volta), bfloat16 ones from sm_80.
          const int arch = ArchNumber(target.GetString("arch"));
          using tir::builtin::TensorCoreFeature;
          return feature == "fma" ||
                 (feature == TensorCoreFeature(DataType::Float(16)) && arch >= 70) ||
                 (feature == TensorCoreFeature(DataType::BFloat16()) && arch >= 80);
        });

}  // namespace
}  // namespace loom::codegen
