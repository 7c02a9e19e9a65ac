// The graph operator registry: per operator its inputs, attribute schema, type relation
// (shape and dtype inference), fusion pattern and strategy (the TE compute and the schedule
// that lower it).
//
//   LOOM_REGISTER_GRAPH_OP(relu)
//       .Describe("max(x, 0)")
//       .Inputs({"x"})
//       .Pattern(OpPattern::kElemWise)
//       .TypeRelation(SameAsInput(0))
//       .Compute([](const CallInfo&, const std::vector<te::Tensor>& in) { return ...; });
//
// Operators live in src/graph/ops/, one file per family.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "loom/graph/attrs.h"
#include "loom/graph/type.h"
#include "loom/target/target.h"
#include "loom/te/operation.h"
#include "loom/te/schedule.h"

namespace loom::graph {

// How an operator fuses (the TVM paper's classes; smaller fuses more freely).
enum class OpPattern : uint8_t {
  kElemWise = 0,         // out[i] = f(in[i]) for same-shaped inputs
  kBroadcast = 1,        // elementwise with broadcasting
  kInjective = 2,        // each output element reads one input element (reshape, transpose)
  kCommReduce = 3,       // a reduction
  kOutEWiseFusable = 4,  // elementwise operators fuse into its output (conv2d, dense)
  kOpaque = 8,           // never fused
};
const char* OpPatternName(OpPattern pattern);

struct AttrField {
  std::string name;
  AttrKind kind;
  std::optional<AttrValue> default_value;  // none: required
  std::string doc;
};

struct OpDef;

// What a type relation, compute or schedule knows about one call.
struct CallInfo {
  const OpDef* op = nullptr;
  Attrs attrs;                   // checked, defaults filled
  std::vector<Type> input_types;
  Type output_type;              // set for compute and schedule, not for the type relation
  // "nn.conv2d 'conv_3'" (or "nn.conv2d call" without a name): how errors name the call.
  std::string where;
};

// The output type, or a loom::Error naming info.where, the expected and the actual shapes.
using TypeRelationFn = std::function<Type(const CallInfo& info)>;
// The output tensor(s) as TE computes over the inputs' placeholders (or fused producers).
using ComputeFn = std::function<std::vector<te::Tensor>(const CallInfo& info,
                                                       const std::vector<te::Tensor>& inputs)>;
// The schedule of a fused group whose master is this call: `outputs` are the group's
// outputs (the master's output or elementwise stages after it).
using ScheduleFn = std::function<te::Schedule(const CallInfo& info,
                                              const std::vector<te::Tensor>& outputs,
                                              const Target& target)>;

struct OpDef {
  std::string name;
  std::string description;
  std::vector<std::string> inputs;  // names; a single "..." entry: any number (>= 1)
  std::vector<AttrField> attrs;
  OpPattern pattern = OpPattern::kOpaque;
  TypeRelationFn type_relation;
  ComputeFn compute;
  ScheduleFn schedule;  // none: the generic schedule of the pattern (injective / reduce)

  bool variadic() const { return inputs.size() == 1 && inputs[0] == "..."; }
  const AttrField* FindAttr(const std::string& attr) const;
};

// The schedule of a fused group whose master call is `master`: the implementation the
// target's strategy selects (graph/strategy.h) when one applies, else its operator's own
// schedule when it has one, else the generic schedule of its pattern (topi::schedule_reduce
// for reductions, topi::schedule_injective for the rest), vectors of the target's width.
te::Schedule ScheduleGroup(const CallInfo& master, const std::vector<te::Tensor>& outputs,
                           const Target& target);

class OpRegistry {
 public:
  // The operator named `name`; a loom::Error listing the registered ones with close names.
  static const OpDef& Get(const std::string& name);
  static const OpDef* Find(const std::string& name);
  // Every operator, by name.
  static std::vector<const OpDef*> List();
  // Entries are never removed, so OpDef pointers stay valid for the program's life.
  static OpDef& Register(const std::string& name);
};

// Fluent setters used by LOOM_REGISTER_GRAPH_OP.
class OpBuilder {
 public:
  explicit OpBuilder(OpDef& def) : def_(def) {}
  OpBuilder& Describe(std::string text);
  OpBuilder& Inputs(std::vector<std::string> names);
  OpBuilder& Attr(std::string name, AttrKind kind, std::optional<AttrValue> default_value,
                  std::string doc);
  OpBuilder& Pattern(OpPattern pattern);
  OpBuilder& TypeRelation(TypeRelationFn fn);
  OpBuilder& Compute(ComputeFn fn);
  OpBuilder& Schedule(ScheduleFn fn);

 private:
  OpDef& def_;
};

#define LOOM_GRAPH_OP_VAR_I(line) loom_graph_op_##line
#define LOOM_GRAPH_OP_VAR(line) LOOM_GRAPH_OP_VAR_I(line)
#define LOOM_REGISTER_GRAPH_OP(name)                                                    \
  [[maybe_unused]] static ::loom::graph::OpBuilder& LOOM_GRAPH_OP_VAR(__LINE__) =       \
      *new ::loom::graph::OpBuilder(::loom::graph::OpRegistry::Register(name))

}  // namespace loom::graph
