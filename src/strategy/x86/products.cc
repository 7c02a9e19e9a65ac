// The x86 implementation of the matrix products (nn.dense, nn.matmul, nn.batch_matmul): the
// register-tiled AVX-512 schedule of topi/x86/batch_matmul.h, which also runs an elementwise
// epilogue on its register tiles (measured 7-10x faster than the generic reduction schedule
// for dense + ReLU). It takes every group it fits that has an epilogue; a product alone goes
// to topi::schedule_matmul (the operators' generic schedule) except batch_matmul's, which
// the x86 schedule also takes.
#include <optional>

#include "loom/graph/strategy.h"
#include "loom/ir/structural.h"
#include "loom/topi/x86/batch_matmul.h"

namespace loom::strategy::x86 {
namespace {

using graph::CallInfo;
using Tensors = std::vector<te::Tensor>;

// The register-tiled schedule's config when it takes the group: a float32 product of
// constant positive sizes whose operands have two dimensions or more, the group one output
// of the product's shape (the product or an elementwise epilogue, which may convert it: a
// QDQ model's quantization to 8 bits).
std::optional<topi::x86::BatchMatmulConfig> ProductConfig(const CallInfo& info,
                                                          const Tensors& outputs) {
  std::optional<std::vector<int64_t>> a = info.input_types[0].ConstShape();
  std::optional<std::vector<int64_t>> b = info.input_types[1].ConstShape();
  std::optional<std::vector<int64_t>> out = info.output_type.ConstShape();
  bool fits = a && b && out && a->size() >= 2 && b->size() >= 2 && outputs.size() == 1 &&
              info.output_type.dtype() == DataType::Float(32) &&
              graph::Equal(graph::TensorType(outputs[0].shape(), info.output_type.dtype()),
                           info.output_type);
  if (!fits) return std::nullopt;
  int64_t M = (*out)[out->size() - 2], N = out->back(), K = a->back();
  if (M <= 0 || N <= 0 || K <= 0) return std::nullopt;
  return topi::x86::DefaultBatchMatmulConfig(M, N, K);
}

graph::OpImplementation RegisterTiledProduct(bool when_alone) {
  return {.name = "x86.batch_matmul_register_tiled",
          .priority = 10,
          .applies =
              [when_alone](const CallInfo& info, const Tensors& outputs, const Target&) {
                bool alone = outputs.size() == 1 && outputs[0].op()->tag == "matmul";
                return (!alone || when_alone) && ProductConfig(info, outputs).has_value();
              },
          .schedule = [](const CallInfo& info, const Tensors& outputs, const Target&) {
            return topi::x86::schedule_batch_matmul(outputs[0], *ProductConfig(info, outputs));
          }};
}

[[maybe_unused]] const bool kRegistered = [] {
  graph::RegisterImplementation("nn.dense", "x86", RegisterTiledProduct(/*when_alone=*/false));
  graph::RegisterImplementation("nn.matmul", "x86", RegisterTiledProduct(/*when_alone=*/false));
  graph::RegisterImplementation("nn.batch_matmul", "x86",
                                RegisterTiledProduct(/*when_alone=*/true));
  return true;
}();

}  // namespace
}  // namespace loom::strategy::x86
