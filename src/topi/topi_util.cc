// The helpers of topi_util.h.
#include "topi/topi_util.h"

#include <sstream>

#include "loom/ir/printer.h"

namespace loom::topi {

namespace detail {

int NormalizeAxis(int64_t axis, int64_t rank, const std::string& op, const te::Tensor& x) {
  LOOM_CHECK_USER(axis >= -rank && axis < rank)
      << op << " of '" << x.name() << "': axis " << axis << " is out of range for rank " << rank
      << " (expected " << -rank << " to " << rank - 1 << ")";
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

std::vector<int64_t> ConstShape(const te::Tensor& x, const std::string& op) {
  std::vector<int64_t> shape;
  for (const PrimExpr& extent : x.shape()) {
    int64_t value = 0;
    LOOM_CHECK_USER(IsConstInt(extent, &value))
        << op << " of '" << x.name() << "': shape " << ShapeText(x.shape())
        << " is symbolic; the operator needs constant dimension sizes";
    shape.push_back(value);
  }
  return shape;
}

DataType IndexType(const te::Tensor& x) {
  return x.shape().empty() ? DataType::Int(32) : x.shape()[0].dtype();
}

Array<PrimExpr> Unravel(PrimExpr flat, const Array<PrimExpr>& shape) {
  Array<PrimExpr> index(shape.size());
  for (const PrimExpr& extent : shape) {
    int64_t size = 0;
    if (IsConstInt(extent, &size) && size == 0) {
      // An empty tensor has no element to index, and nothing may divide by its 0.
      for (PrimExpr& i : index) i = make_zero(flat.dtype());
      return index;
    }
  }
  // The first dimension takes what is left, undivided.
  for (size_t d = shape.size(); d-- > 1;) {
    index[d] = floormod(flat, shape[d]);
    flat = floordiv(flat, shape[d]);
  }
  if (!shape.empty()) index[0] = flat;
  return index;
}

PrimExpr ClampIndex(const PrimExpr& index, const PrimExpr& extent) {
  return min(max(index, make_zero(index.dtype())), extent - 1);
}

template <typename T>
std::string Parenthesized(const std::vector<T>& items) {
  std::ostringstream text;
  text << "(";
  for (size_t d = 0; d < items.size(); ++d) text << (d ? ", " : "") << items[d];
  text << ")";
  return text.str();
}

std::string ShapeText(const Array<PrimExpr>& shape) { return Parenthesized(shape); }
std::string ShapeText(const std::vector<int64_t>& shape) { return Parenthesized(shape); }

bool IsUnitExtent(const PrimExpr& extent) {
  int64_t value = 0;
  return IsConstInt(extent, &value) && value == 1;
}

bool SameExtent(const PrimExpr& a, const PrimExpr& b) {
  int64_t x = 0, y = 0;
  return (IsConstInt(a, &x) && IsConstInt(b, &y)) ? x == y : a.same_as(b);
}

Array<PrimExpr> BroadcastIndex(const Array<PrimExpr>& shape, const Array<PrimExpr>& out) {
  Array<PrimExpr> index;
  size_t offset = out.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d) {
    index.push_back(IsUnitExtent(shape[d]) ? make_zero(out[offset + d].dtype()) : out[offset + d]);
  }
  return index;
}

void CheckFloat(const te::Tensor& x, const std::string& op) {
  LOOM_CHECK_USER(x.dtype().is_float())
      << op << ": '" << x.name() << "' is " << x.dtype().str()
      << "; the operator takes float tensors (cast it to a float type first)";
}

int64_t ChannelBlock(const std::string& layout, const std::string& op) {
  const std::string base = "NCHW";
  std::string rest = layout.substr(0, base.size()) == base ? layout.substr(base.size()) : "?";
  if (rest.empty()) return 0;
  bool blocked = rest.size() >= 2 && rest.back() == 'c' &&
                 rest.find_first_not_of("0123456789") == rest.size() - 1 && rest[0] != '0';
  LOOM_CHECK_USER(blocked) << op << ": layout '" << layout
                           << "' is not supported; expected NCHW or NCHW<k>c such as NCHW16c";
  return std::stoll(rest.substr(0, rest.size() - 1));
}

bool IsInjective(const te::Operation& op) {
  const std::string& tag = op->tag;
  return dynamic_cast<const te::ComputeOpNode*>(op.get()) != nullptr &&
         (tag == "elemwise" || tag == "broadcast" || tag == kInjective);
}

void InlineInjective(const te::Schedule& s, const Array<te::Operation>& outputs) {
  for (const te::Stage& stage : s.stages()) {
    bool is_output = false;
    for (const te::Operation& op : outputs) is_output = is_output || op == stage->op;
    if (!is_output && IsInjective(stage->op)) te::Stage(stage).compute_inline();
  }
}

}  // namespace detail

}  // namespace loom::topi
