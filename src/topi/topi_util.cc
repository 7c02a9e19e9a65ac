// The helpers of topi_util.h.
#include "topi/topi_util.h"

#include <algorithm>
#include <sstream>
#include <unordered_set>

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

bool IsInjective(const te::Operation& op) {
  const std::string& tag = op->tag;
  return dynamic_cast<const te::ComputeOpNode*>(op.get()) != nullptr &&
         (tag == "elemwise" || tag == "broadcast" || tag == kInjective);
}

void InlineInjective(const te::Schedule& s, const Array<te::Operation>& outputs,
                     const std::function<bool(const te::Operation&)>& keep) {
  for (const te::Stage& stage : s.stages()) {
    bool is_output = false;
    for (const te::Operation& op : outputs) is_output = is_output || op == stage->op;
    if (!is_output && IsInjective(stage->op) && !(keep && keep(stage->op))) {
      te::Stage(stage).compute_inline();
    }
  }
}

te::Operation FindAnchor(const te::Tensor& out,
                         const std::function<bool(const te::Operation&)>& is_anchor,
                         const std::string& schedule, const std::string& anchor_description) {
  const std::string problem = schedule + ": '" + out.name() + "' is neither " +
                              anchor_description + " nor an elementwise epilogue of one";
  if (is_anchor(out.op())) return out.op();
  LOOM_CHECK_USER(IsInjective(out.op()))
      << problem << " (its stage '" << out.op()->name << "' is not elementwise)";
  std::vector<te::Operation> pending{out.op()};
  std::unordered_set<const te::OperationNode*> visited{out.op().get()};
  te::Operation anchor;
  while (!pending.empty() && !anchor) {
    te::Operation op = pending.back();
    pending.pop_back();
    Array<te::Tensor> inputs = op->InputTensors();
    // Reversed onto the stack, so that the first input is searched first.
    for (size_t i = inputs.size(); i-- > 0 && !anchor;) {
      const te::Operation& input = inputs[i].op();
      if (is_anchor(input)) anchor = input;
      else if (IsInjective(input) && visited.insert(input.get()).second) pending.push_back(input);
    }
  }
  LOOM_CHECK_USER(anchor) << problem << " (none of the elementwise stages it is computed from "
                          << "reads " << anchor_description << ")";
  return anchor;
}

void CheckEpilogueKeepsShape(const te::Tensor& out, const te::Operation& anchor,
                             const std::string& schedule) {
  const Array<PrimExpr>& anchor_shape = anchor->output_shape(0);
  bool same_shape = out.shape().size() == anchor_shape.size();
  for (size_t d = 0; same_shape && d < anchor_shape.size(); ++d) {
    same_shape = SameExtent(out.shape()[d], anchor_shape[d]);
  }
  LOOM_CHECK_USER(same_shape) << schedule << ": the epilogue '" << out.name() << "' "
                              << ShapeText(out.shape()) << " must keep the shape "
                              << ShapeText(anchor_shape) << " of '" << anchor->name << "'";
}

te::Tensor RegisterTile(te::Schedule& s, const te::Tensor& out, const te::Operation& anchor) {
  if (anchor == out.op()) return s.cache_write(out, "local");
  s[anchor].set_scope("local");
  return te::Tensor(anchor, 0);
}

void CheckRegisterTile(int64_t rows, int64_t columns, const std::string& op,
                       const std::string& config) {
  const int64_t registers = rows * (columns / kAvx512Lanes);
  LOOM_CHECK_USER(registers <= kMaxTileRegisters)
      << op << ": the register tile of config " << config << " needs " << registers
      << " vector registers (tile_rows * tile_columns / " << kAvx512Lanes << "), more than the "
      << kMaxTileRegisters << " of 32 it may take; lower tile_rows or tile_columns";
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t LargestDivisorUpTo(int64_t n, int64_t limit) {
  for (int64_t d = std::min(n, limit); d > 1; --d) {
    if (n % d == 0) return d;
  }
  return 1;
}

Conv2DOutputSize CheckedConv2DOutputSize(const std::string& op, int64_t h, int64_t w, int64_t r,
                                         int64_t s, const Conv2DAttrs& a) {
  for (int d = 0; d < 2; ++d) {
    LOOM_CHECK_USER(a.strides[d] > 0 && a.dilations[d] > 0)
        << op << ": strides and dilations must be positive, got strides (" << a.strides[0]
        << ", " << a.strides[1] << ") dilations (" << a.dilations[0] << ", " << a.dilations[1]
        << ")";
  }
  for (int64_t pad : a.pads) {
    LOOM_CHECK_USER(pad >= 0) << op << ": pads must not be negative, got (" << a.pads[0] << ", "
                              << a.pads[1] << ", " << a.pads[2] << ", " << a.pads[3] << ")";
  }
  const int64_t span_h = h + a.pads[0] + a.pads[2] - a.dilations[0] * (r - 1) - 1;
  const int64_t span_w = w + a.pads[1] + a.pads[3] - a.dilations[1] * (s - 1) - 1;
  LOOM_CHECK_USER(span_h >= 0 && span_w >= 0)
      << op << ": the " << r << "x" << s << " kernel (dilations " << a.dilations[0] << ", "
      << a.dilations[1] << ") does not fit the padded " << h << "x" << w << " input (pads ("
      << a.pads[0] << ", " << a.pads[1] << ", " << a.pads[2] << ", " << a.pads[3] << "))";
  return {span_h / a.strides[0] + 1, span_w / a.strides[1] + 1};
}

SliceBounds SliceAlong(int64_t d, int64_t rank, const PrimExpr& extent, int64_t k,
                       const std::function<PrimExpr(int operand, int64_t j)>& value) {
  const DataType i64 = DataType::Int(64);
  auto c = [&](int64_t v) { return make_const(i64, v); };
  PrimExpr start = c(0), end = c(INT64_MAX), step = c(1), listed = c(0);
  for (int64_t j = 0; j < k; ++j) {
    const PrimExpr axis = value(2, j);
    const PrimExpr here = select(axis < c(0), axis + c(rank), axis) == c(d);
    start = select(here, value(0, j), start);
    end = select(here, value(1, j), end);
    step = select(here, value(3, j), step);
    listed = listed + select(here, c(1), c(0));
  }
  const PrimExpr n = cast(i64, extent);
  const PrimExpr forward = step > c(0);
  start = select(start < c(0), start + n, start);
  end = select(end < c(0), end + n, end);
  start = select(forward, max(min(start, n), c(0)), max(min(start, n - c(1)), c(0)));
  end = select(forward, max(min(end, n), c(0)), max(min(end, n - c(1)), c(-1)));
  const PrimExpr span = select(forward, end - start, start - end);
  // |step|, with INT64_MIN's taken as INT64_MAX: either way one element past the first is out.
  const PrimExpr magnitude =
      select(forward, step, select(step == c(INT64_MIN), c(INT64_MAX), c(0) - step));
  const PrimExpr divisor = select(magnitude > c(0), magnitude, c(1));
  SliceBounds bounds;
  bounds.first = start;
  bounds.step = step;
  // An empty dimension has nothing to read (going backward, its clamped start 0 and end -1
  // would span one element).
  bounds.count = select(span > c(0) && n > c(0), c(1) + floordiv(span - c(1), divisor), c(0));
  bounds.bad = step == c(0) || listed > c(1);
  return bounds;
}

}  // namespace detail

}  // namespace loom::topi
