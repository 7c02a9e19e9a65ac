// The Winograd convolutions' shared operand checks (topi/winograd_transforms.h).
#include "topi/winograd_transforms.h"

#include "loom/support/error.h"
#include "topi/topi_util.h"

namespace loom::topi::detail::winograd {

std::vector<int64_t> CheckedWeightShape(const te::Tensor& weight, const std::string& op) {
  LOOM_CHECK_USER(weight.ndim() == 4 && weight.dtype() == DataType::Float(32))
      << op << ": weight '" << weight.name() << "' must be a 4-d float32 [K, C, 3, 3], got "
      << weight.ndim() << "-d " << weight.dtype().str();
  std::vector<int64_t> w = ConstShape(weight, op);
  LOOM_CHECK_USER(w[2] == 3 && w[3] == 3)
      << op << ": Winograd F(4x4, 3x3) needs a 3x3 kernel, weight '" << weight.name()
      << "' has shape " << ShapeText(w) << "; use the direct convolution";
  return w;
}

void CheckUnitStrideWindow(const Conv2DAttrs& attrs, const std::string& op) {
  LOOM_CHECK_USER(attrs.strides == (std::array<int64_t, 2>{1, 1}) &&
                  attrs.dilations == (std::array<int64_t, 2>{1, 1}) && attrs.groups == 1)
      << op << ": Winograd needs stride 1, dilation 1 and groups 1, got strides ("
      << attrs.strides[0] << ", " << attrs.strides[1] << ") dilations (" << attrs.dilations[0]
      << ", " << attrs.dilations[1] << ") groups " << attrs.groups
      << "; use the direct convolution";
}

te::Tensor InputNamed(const te::Tensor& t, const std::string& name) {
  for (const te::Tensor& input : t.op()->InputTensors()) {
    if (input.op()->name == name) return input;
  }
  LOOM_ICHECK(false) << "winograd stage '" << t.name() << "' does not read '" << name << "'";
  return te::Tensor();
}

}  // namespace loom::topi::detail::winograd
