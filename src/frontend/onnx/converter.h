// The contract between the importer (importer.cc) and the operator converters (ops_*.cc):
// one converter per ONNX operator type, registered with LOOM_REGISTER_ONNX_CONVERTER.
//
//   LOOM_REGISTER_ONNX_CONVERTER("Relu", [](NodeContext& ctx) -> Outputs {
//     return {ctx.Call("nn.relu", {ctx.Input(0)})};
//   });
//
// A converter returns one expression per node output (trailing optional outputs the model
// does not use may be left out). It reads inputs, constants and attributes through the
// NodeContext, builds calls with ctx.Call (named after the node, so type errors name it),
// and reports what it cannot express with ctx.Fail. The importer folds a node whose inputs
// are all constant into constants after converting it.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "loom/graph/expr.h"
#include "loom/runtime/ndarray.h"

namespace loom::frontend::onnx {

using Outputs = std::vector<graph::Expr>;

// An integer tensor of rank 0 or 1 whose elements the importer knows as size expressions:
// the Shape of a tensor of symbolic dimensions, and the arithmetic exporters do on it
// (shape_values.cc). It has no graph value; Reshape takes it as its shape.
struct ShapeValue {
  std::vector<PrimExpr> elements;
  bool scalar = false;                 // rank 0 (one element)
  DataType dtype = DataType::Int(64);  // the ONNX value's (int64, or int32 after a Cast)
  // Per element, where known: the tensor whose dimension `dim` it is (Reshape takes a size
  // it cannot express otherwise from there: graph operator reshape_like).
  struct Origin {
    graph::Expr tensor;
    int64_t dim = -1;
  };
  std::vector<Origin> origins = {};  // empty, or one per element
};

class NodeContext {
 public:
  virtual ~NodeContext() = default;

  virtual const ::onnx::NodeProto& node() const = 0;
  const std::string& op_type() const { return node().op_type(); }
  // "node 'Conv_3' (Conv)": how every message names the node.
  virtual std::string Where() const = 0;
  // The model's opset of the node's domain, to pick the semantics of an operator version.
  virtual int64_t opset() const = 0;
  // ImportOptions::max_loop_iterations.
  virtual int64_t max_loop_iterations() const = 0;
  // The name the node's calls take, unique in the model (a subgraph's nodes include their
  // import's label): a base for names the converter makes, such as size variables.
  virtual const std::string& CallName() const = 0;

  // Inputs. An absent optional input has an index past the end or an empty name.
  virtual int NumInputs() const = 0;
  virtual bool HasInput(int i) const = 0;
  // Input i; an error naming the node when it is absent.
  virtual graph::Expr Input(int i) const = 0;
  // Shape and dtype of input i. InputShape is for converters that need constant sizes: a
  // symbolic dimension (ImportOptions::symbolic_dimensions) is an error naming the node.
  std::vector<int64_t> InputShape(int i) const;
  // Input i's dimensions after batch and channel, which must be constant (the batch may be
  // symbolic); callers check the rank first.
  std::vector<int64_t> InputSpatialShape(int i) const;
  int InputRank(int i) const;
  DataType InputDtype(int i) const;
  // The value of input i when it is a constant (an initializer, a Constant node, or a value
  // the importer folded), else nullopt.
  std::optional<runtime::NDArray> ConstantInput(int i) const;
  // Input i as integers / floats; an error naming the node and input when it is not constant
  // ("input 1 (shape) of node 'Reshape_4' (Reshape) must be a constant ...").
  std::vector<int64_t> ConstantInts(int i) const;
  std::vector<double> ConstantFloats(int i) const;
  // Input i as a shape value: a symbolic one, or a constant integer tensor of rank 0 or 1;
  // nullopt for anything else.
  virtual std::optional<ShapeValue> ShapeInput(int i) const = 0;

  // Attributes: `fallback` is the ONNX default; without one a missing attribute is an error.
  bool HasAttr(const std::string& name) const;
  int64_t AttrInt(const std::string& name, std::optional<int64_t> fallback = std::nullopt) const;
  float AttrFloat(const std::string& name, std::optional<float> fallback = std::nullopt) const;
  std::string AttrString(const std::string& name,
                         std::optional<std::string> fallback = std::nullopt) const;
  std::vector<int64_t> AttrInts(const std::string& name,
                                std::optional<std::vector<int64_t>> fallback = std::nullopt) const;
  std::vector<float> AttrFloats(const std::string& name,
                                std::optional<std::vector<float>> fallback = std::nullopt) const;
  std::vector<std::string> AttrStrings(
      const std::string& name,
      std::optional<std::vector<std::string>> fallback = std::nullopt) const;
  // A braced fallback is a list of values, so AttrInts("axes", {}) is empty when the
  // attribute is absent (through the optional overloads `{}` would mean "required").
  std::vector<int64_t> AttrInts(const std::string& name,
                                std::initializer_list<int64_t> fallback) const {
    return AttrInts(name, std::optional<std::vector<int64_t>>(fallback));
  }
  std::vector<float> AttrFloats(const std::string& name,
                                std::initializer_list<float> fallback) const {
    return AttrFloats(name, std::optional<std::vector<float>>(fallback));
  }
  runtime::NDArray AttrTensor(const std::string& name) const;
  // A graph attribute (If's branches, Loop's and Scan's body).
  const ::onnx::GraphProto& AttrGraph(const std::string& name) const;

  // The subgraph in graph attribute `attr` imported with its inputs bound to `inputs` (its
  // input count, else an error naming the node), the values around the node visible in it;
  // its outputs. `label` names this import ("body[3]") in the names of the calls it makes
  // and in its nodes' errors. Each call imports the subgraph afresh: a loop unrolled at
  // import calls it once per iteration.
  virtual std::vector<graph::Expr> ImportSubgraph(const std::string& attr,
                                                  const std::vector<graph::Expr>& inputs,
                                                  const std::string& label) = 0;

  // Adds `function` to the model's module as `name` (a loop's body, which graph operator
  // `loop` names).
  virtual void AddFunction(const std::string& name, graph::Function function) = 0;

  // A call of graph operator `op`, named after the node (the first call of a node takes the
  // node's name, later ones "<name>.<k>"); a type error names the node.
  virtual graph::Expr Call(const std::string& op, std::vector<graph::Expr> args,
                           graph::Attrs attrs = {}) = 0;
  // A constant (named after the node).
  virtual graph::Expr Const(runtime::NDArray value) = 0;
  // A rank-0 constant of `dtype` holding `value`.
  graph::Expr Scalar(double value, DataType dtype);

  // A loom::Error "<Where()>: <message>"; for inputs or attribute values Loom cannot
  // express, say what is supported.
  [[noreturn]] void Fail(const std::string& message) const;

 protected:
  const ::onnx::AttributeProto* FindAttr(const std::string& name) const;
};

using Converter = std::function<Outputs(NodeContext& ctx)>;

// `op_type` is the ONNX type for the default domain, "<domain>.<type>" for another domain.
bool RegisterConverter(const std::string& op_type, Converter converter);
const Converter* FindConverter(const std::string& op_type);
std::vector<std::string> ConverterNames();

// `axis` (negative counts from the end) as a dimension in [0, rank); an error naming the
// node and `what` when it is out of range.
int64_t NormalizeAxis(const NodeContext& ctx, int64_t axis, int64_t rank,
                      const std::string& what = "axis");

// Sizes only a run knows: an empty tensor whose dimensions are `value`'s elements (a 1-d or
// scalar integer tensor) when the model runs, named "<call>.<what>" (graph operator
// dims_of_value). Each must be at least 0 and at most like's dimension `like_dim`
// (kBoundByCount: like's element count; kUnbounded: no bound).
constexpr int64_t kBoundByCount = -1, kUnbounded = -2;
graph::Expr SizesOfValue(NodeContext& ctx, const graph::Expr& value, const graph::Expr& like,
                         int64_t like_dim, const std::string& what);

// `data` shaped by input 1 (or `operand` when given), a tensor only a run knows, or sizes
// of input 0 only a run knows: the shape function `dims_op` of input 0 and the operand
// computes the output's dimensions then, which become sizes (named "<call>.<what>[i]"), and
// `to_op` builds the output from `data` at them.
graph::Expr ShapedAtRunTime(NodeContext& ctx, const graph::Expr& data, const std::string& dims_op,
                            graph::Attrs dims_attrs, const std::string& to_op,
                            graph::Attrs to_attrs, const std::string& what,
                            graph::Expr operand = graph::Expr());

// A loop run at run time (graph operator `loop`, which the VM runs): `body_outputs` are
// computed from `params` (the iteration number int64 [], the condition bool [], then one per
// carried value, of its initial value's type) and are the next condition, each carried
// value's next value (its dtype, rank and constant dimensions kept; those only a run knows
// are checked then) and each scan output's slice. Whatever else they read is computed once
// before the loop (captured). The body becomes the module's function "<call>/<label>". Its
// results: each carried value's last value, then the scan outputs' slices stacked along a
// new first axis. The trip count is one int64, the condition one bool.
Outputs RunTimeLoop(NodeContext& ctx, const std::string& label, graph::Expr trip, graph::Expr cond,
                    std::vector<graph::Var> params, const std::vector<graph::Expr>& initial,
                    const std::vector<graph::Expr>& body_outputs);

// A tensor of one dimension that a shape function checked to be 1 at run time, as a scalar
// (reshape_to the empty shape: a static reshape cannot tell the size is 1).
graph::Expr ScalarOfOne(NodeContext& ctx, const graph::Expr& x);

// `pieces` (one shape, at least one) joined along a new dimension `axis` of the result.
graph::Expr Stack(NodeContext& ctx, const std::vector<graph::Expr>& pieces, int64_t axis);

// ONNX tensor element type <-> Loom dtype; an unsupported type is an error naming `where`.
DataType DataTypeOfOnnx(int32_t elem_type, const std::string& where);
// The bytes of a `dtype` tensor of `shape`, checked before anything is allocated: a negative
// dimension, a size past int64, or one past `limit` bytes is an error naming `where`.
int64_t CheckedTensorBytes(const std::vector<int64_t>& shape, DataType dtype,
                           const std::string& where, int64_t limit = INT64_MAX);
// The most bytes a constant the importer computes (a folded node, ConstantOfShape, Range) may
// hold: a larger one comes from a corrupt model or is better computed at run time.
inline constexpr int64_t kMaxComputedConstantBytes = int64_t{1} << 30;
// Element k of a host array of any dtype the importer makes, set to `value` (converted).
void SetElement(const runtime::NDArray& array, int64_t k, double value);
// The same for an integer, exact for every int64 (a double holds only 53 bits).
void SetIntElement(const runtime::NDArray& array, int64_t k, int64_t value);
// An initializer / Constant value / attribute tensor as a host array (raw_data or typed
// fields; external data resolved by the importer before this is called).
runtime::NDArray ArrayOfTensorProto(const ::onnx::TensorProto& tensor, const std::string& where);

}  // namespace loom::frontend::onnx

#define LOOM_ONNX_CONVERTER_VAR_I(line) loom_onnx_converter_##line
#define LOOM_ONNX_CONVERTER_VAR(line) LOOM_ONNX_CONVERTER_VAR_I(line)
#define LOOM_REGISTER_ONNX_CONVERTER(op_type, ...)                       \
  [[maybe_unused]] static const bool LOOM_ONNX_CONVERTER_VAR(__LINE__) = \
      ::loom::frontend::onnx::RegisterConverter(op_type, __VA_ARGS__)
