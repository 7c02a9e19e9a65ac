// Control flow the executor runs itself: `loop`, an ONNX Loop whose trip count or condition
// only a run knows. It has no compute: FuseOps leaves its calls alone, LowerToTIR makes no
// kernel of them, and the compiler compiles the body (a function of the module) as a program
// of its own, which the VM runs once per iteration (graph/codegen_vm.cc).
#include <sstream>

#include "loom/graph/expr.h"
#include "loom/graph/op_util.h"

namespace loom::graph::ops {
namespace {

constexpr const char* kLoop = "loop";

// One element of `dtype` (a rank-0 or one-element tensor), else an error naming `what`.
void CheckOneElement(const CallInfo& info, size_t input, const char* what,
                     bool (*dtype_ok)(DataType)) {
  const Type& type = info.input_types.at(input);
  LOOM_CHECK_USER(type.is_tensor() && type.NumElements() == std::optional<int64_t>(1) &&
                  dtype_ok(type.dtype()))
      << info.where << ": " << what << ", got " << type.str();
}

std::vector<DataType> ScanDtypes(const std::string& text) {
  std::vector<DataType> dtypes;
  std::stringstream list(text);
  for (std::string name; std::getline(list, name, ',');) dtypes.push_back(DataType::Parse(name));
  return dtypes;
}

Type LoopType(const CallInfo& info) {
  const LoopAttrs loop = LoopAttrsOf(info.attrs);
  const size_t carried = static_cast<size_t>(loop.num_carried);
  LOOM_CHECK_USER(loop.num_carried >= 0 && info.input_types.size() >= 2 + carried)
      << info.where << ": num_carried " << loop.num_carried << " needs at least "
      << 2 + loop.num_carried << " inputs (the trip count, the condition, the carried values), got "
      << info.input_types.size();
  CheckOneElement(info, 0, "the trip count must be one int64",
                  [](DataType t) { return t == DataType::Int(64); });
  CheckOneElement(info, 1, "the condition must be one bool", [](DataType t) { return t.is_bool(); });
  std::vector<Type> outputs(info.input_types.begin() + 2, info.input_types.begin() + 2 + carried);
  for (size_t k = 0; k < loop.scan_shapes.size(); ++k) {
    outputs.push_back(TensorType(loop.ScanShape(k), loop.scan_dtypes[k]));
  }
  LOOM_CHECK_USER(!outputs.empty()) << info.where << ": a loop without outputs";
  return TupleType(std::move(outputs));
}

[[maybe_unused]] const bool kRegistered = [] {
  OpBuilder(OpRegistry::Register(kLoop))
      .Describe(
          "runs function `body` of the module while the iteration number is below trip_count "
          "and the condition holds: body(iteration, condition, carried..., captured...) gives "
          "the next condition, the next carried values (of the carried values' types) and one "
          "slice of each scan output; the results are the last carried values and the slices "
          "stacked along a new first axis of `iterations` elements")
      .Inputs({"..."})
      .Pattern(OpPattern::kOpaque)
      .TypeRelation(LoopType)
      .Attr("body", AttrKind::kString, std::nullopt, "the name of the body's function")
      .Attr("num_carried", AttrKind::kInt, int64_t{0}, "how many loop-carried values")
      .Attr("max_iterations", AttrKind::kInt, std::nullopt,
            "the iteration limit: a run that would exceed it stops with an error")
      .Attr("iterations", AttrKind::kString, std::nullopt,
            "the name of the size variable the iteration count becomes")
      .Attr("scan_dtypes", AttrKind::kString, std::string(),
            "the scan outputs' dtypes, comma-separated")
      .Attr("scan_ranks", AttrKind::kInts, Ints{}, "the rank of each scan output's slice")
      .Attr("scan_shapes", AttrKind::kInts, Ints{},
            "the slices' dimensions, one after another (-1: known only at run time)");
  return true;
}();

}  // namespace

std::vector<PrimExpr> LoopAttrs::ScanShape(size_t j) const {
  std::vector<PrimExpr> shape = {iterations};
  const std::vector<int64_t>& slice = scan_shapes.at(j);
  for (size_t d = 0; d < slice.size(); ++d) {
    shape.push_back(slice[d] >= 0 ? make_const(DataType::Int(64), slice[d])
                                  : PrimExpr(DataDependentSize(iterations->name_hint + ".scan" +
                                                               std::to_string(j) + "[" +
                                                               std::to_string(d) + "]")));
  }
  return shape;
}

LoopAttrs LoopAttrsOf(const Attrs& attrs) {
  LoopAttrs loop;
  loop.body = attrs.GetString("body");
  loop.num_carried = attrs.GetInt("num_carried");
  loop.max_iterations = attrs.GetInt("max_iterations");
  loop.iterations = DataDependentSize(attrs.GetString("iterations"));
  loop.scan_dtypes = ScanDtypes(attrs.GetString("scan_dtypes"));
  const Ints& ranks = attrs.GetInts("scan_ranks");
  const Ints& dims = attrs.GetInts("scan_shapes");
  LOOM_CHECK_USER(ranks.size() == loop.scan_dtypes.size())
      << "loop: scan_ranks has " << ranks.size() << " ranks for " << loop.scan_dtypes.size()
      << " scan dtypes";
  size_t at = 0;
  for (int64_t rank : ranks) {
    LOOM_CHECK_USER(rank >= 0 && at + static_cast<size_t>(rank) <= dims.size())
        << "loop: scan_shapes holds " << dims.size() << " dimensions, fewer than scan_ranks "
        << "says";
    loop.scan_shapes.emplace_back(dims.begin() + static_cast<ptrdiff_t>(at),
                                  dims.begin() + static_cast<ptrdiff_t>(at + rank));
    at += static_cast<size_t>(rank);
  }
  LOOM_CHECK_USER(at == dims.size()) << "loop: scan_shapes holds more dimensions than scan_ranks";
  return loop;
}

std::optional<LoopAttrs> LoopOf(const CallNode& call) {
  if (call.op == nullptr || call.op->name != kLoop) return std::nullopt;
  return LoopAttrsOf(call.attrs);
}

Attrs LoopCallAttrs(const LoopAttrs& loop) {
  std::string dtypes;
  Ints ranks, dims;
  for (size_t k = 0; k < loop.scan_shapes.size(); ++k) {
    dtypes += (k == 0 ? "" : ",") + loop.scan_dtypes[k].str();
    ranks.push_back(static_cast<int64_t>(loop.scan_shapes[k].size()));
    dims.insert(dims.end(), loop.scan_shapes[k].begin(), loop.scan_shapes[k].end());
  }
  return {{"body", loop.body},
          {"num_carried", loop.num_carried},
          {"max_iterations", loop.max_iterations},
          {"iterations", loop.iterations->name_hint},
          {"scan_dtypes", dtypes},
          {"scan_ranks", ranks},
          {"scan_shapes", dims}};
}

}  // namespace loom::graph::ops
