// FuseOps: groups the operator calls of "main" into primitive functions, one kernel each,
// by the TVM paper's rules over a post-dominator tree of the dataflow graph:
//
//  - a kOutEWiseFusable call (conv2d, dense) absorbs the elementwise/broadcast calls up to
//    its immediate post-dominator when every path to it stays elementwise (the epilogue);
//  - an elementwise/broadcast call fuses into its post-dominator when that is injective, a
//    reduction or an already fused output-fusable group, and the paths stay injective;
//    what counts is the class of the call's group, so an epilogue that an anchor has
//    joined is output-fusable and goes no further;
//  - injective calls (reshape, transpose) fuse into an injective or reduction
//    post-dominator, in a second phase so that conv2d epilogues form first;
//  - a broadcast that converts an operand of its own shape (a dequantization) reads it
//    elementwise when every consumer is an anchor, so it joins its producer's epilogue
//    (MarkConversionsBeforeAnchors);
//  - kOpaque calls, tuples and calls with tuple results stay alone.
// A merge happens only when it keeps the group within max_group_size calls. Because a
// call joins its post-dominator's group together with every call on the paths between
// them, groups are convex (no path leaves a group and comes back).
#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "loom/graph/functor.h"
#include "loom/graph/transform.h"

namespace loom::graph {
namespace {

OpPattern Combine(OpPattern a, OpPattern b) { return std::max(a, b); }

// The dataflow graph of a function body: its calls, tuples and projections in post order
// (operands first), each with the nodes that consume it.
struct IndexedGraph {
  struct Edge {
    int consumer;
    OpPattern pattern;  // how the consumer reads this value
  };
  struct Node {
    Expr expr;
    OpPattern pattern;
    std::vector<Edge> outputs;
    bool is_result = false;  // used by the function's result (outside every group)
  };
  std::vector<Node> nodes;
  std::unordered_map<const Object*, int> index;

  static IndexedGraph Build(const Expr& body) {
    IndexedGraph graph;
    // The operands of calls only (never the bodies of already fused functions).
    PostOrderVisitDataflow(body, [&](const Expr& e) {
      if (e.as<VarNode>() || e.as<ConstantNode>()) return;
      graph.index[e.get()] = static_cast<int>(graph.nodes.size());
      graph.nodes.push_back({e, NodePattern(e), {}, false});
    });
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      const Expr& e = graph.nodes[i].expr;
      OpPattern pattern = graph.nodes[i].pattern;
      for (const Expr& operand : DataflowOperands(e)) {
        auto it = graph.index.find(operand.get());
        if (it == graph.index.end()) continue;  // a variable or constant
        graph.nodes[it->second].outputs.push_back(
            {static_cast<int>(i), EdgePattern(pattern, operand, e)});
      }
    }
    auto result = graph.index.find(body.get());
    if (result != graph.index.end()) graph.nodes[result->second].is_result = true;
    graph.MarkConversionsBeforeAnchors();
    return graph;
  }

  // A broadcast that converts an operand of its own shape (a dequantization: 8-bit integers
  // to floats) reads it elementwise, but joins its producer's epilogue only where nothing after
  // it could take it: when each consumer is an anchor or opaque (a float depthwise conv after
  // an int8 conv, whose dequantization would otherwise be a kernel of its own). Otherwise it
  // stays with its consumers: in the producer's epilogue the producer would write the wide
  // type (a ResNet downsample conv writing float32 for the residual add, 4x its int8 bytes:
  // 4% slower).
  void MarkConversionsBeforeAnchors() {
    for (size_t i = 0; i < nodes.size(); ++i) {
      const Node& node = nodes[i];
      if (node.pattern != OpPattern::kBroadcast || node.is_result || node.outputs.empty()) continue;
      const bool consumers_are_anchors =
          std::all_of(node.outputs.begin(), node.outputs.end(), [&](const Edge& edge) {
            OpPattern consumer = nodes[static_cast<size_t>(edge.consumer)].pattern;
            return consumer == OpPattern::kOutEWiseFusable || consumer == OpPattern::kOpaque;
          });
      if (!consumers_are_anchors) continue;
      const Type& out = node.expr.type();
      for (const Expr& operand : DataflowOperands(node.expr)) {
        auto it = index.find(operand.get());
        const Type& in = operand.type();
        if (it == index.end() || !in.is_tensor() || !out.is_tensor() ||
            !Equal(TensorType(in.shape(), out.dtype()), out)) {
          continue;
        }
        for (Edge& edge : nodes[static_cast<size_t>(it->second)].outputs) {
          if (edge.consumer == static_cast<int>(i)) edge.pattern = OpPattern::kElemWise;
        }
      }
    }
  }

  // Only calls of operators with a tensor result take part in fusion.
  static OpPattern NodePattern(const Expr& e) {
    const auto* call = e.as<CallNode>();
    if (call == nullptr || call->op == nullptr || !call->checked_type.is_tensor()) {
      return OpPattern::kOpaque;
    }
    return call->op->pattern;
  }

  // A broadcast that reads an operand of its own output shape reads it elementwise.
  static OpPattern EdgePattern(OpPattern consumer, const Expr& operand, const Expr& user) {
    if (consumer == OpPattern::kBroadcast && Equal(operand.type(), user.type())) {
      return OpPattern::kElemWise;
    }
    return consumer;
  }
};

// The post-dominator tree: a node's parent is the nearest node every path from it to the
// function's result passes through (none when the paths meet only at the result).
struct PostDomTree {
  struct Node {
    int parent = -1;
    int depth = 0;
    OpPattern pattern = OpPattern::kElemWise;  // the strongest edge on the way to parent
  };
  std::vector<Node> nodes;

  explicit PostDomTree(const IndexedGraph& graph) : nodes(graph.nodes.size()) {
    for (int i = static_cast<int>(graph.nodes.size()) - 1; i >= 0; --i) {
      const IndexedGraph::Node& node = graph.nodes[i];
      Node& dom = nodes[i];
      if (node.is_result) {
        dom = {-1, 1, OpPattern::kOpaque};
        continue;
      }
      int parent = -1;
      OpPattern pattern = OpPattern::kElemWise;
      for (size_t e = 0; e < node.outputs.size(); ++e) {
        int consumer = node.outputs[e].consumer;
        parent = e == 0 ? consumer : CommonAncestor(parent, consumer, &pattern);
        pattern = Combine(pattern, node.outputs[e].pattern);
      }
      dom = {parent, parent < 0 ? 1 : nodes[parent].depth + 1, pattern};
    }
  }

  int CommonAncestor(int a, int b, OpPattern* pattern) const {
    while (a != b) {
      if (a < 0 || b < 0) return -1;
      if (nodes[a].depth < nodes[b].depth) {
        *pattern = Combine(*pattern, nodes[b].pattern);
        b = nodes[b].parent;
      } else if (nodes[a].depth > nodes[b].depth) {
        *pattern = Combine(*pattern, nodes[a].pattern);
        a = nodes[a].parent;
      } else {
        *pattern = Combine(*pattern, Combine(nodes[a].pattern, nodes[b].pattern));
        a = nodes[a].parent;
        b = nodes[b].parent;
      }
    }
    return a;
  }
};

// Union-find over the graph's nodes: each root is a group.
class Partitioner {
 public:
  Partitioner(const IndexedGraph& graph, int max_group_size)
      : graph_(graph), dom_(graph), max_group_size_(max_group_size), groups_(graph.nodes.size()) {
    for (size_t i = 0; i < groups_.size(); ++i) {
      groups_[i].parent = static_cast<int>(i);
      groups_[i].pattern = graph.nodes[i].pattern;
      groups_[i].has_anchor = groups_[i].pattern == OpPattern::kOutEWiseFusable;
    }
  }

  // The group (root node index) of every node.
  std::vector<int> Run() {
    for (int phase = 0; phase < 2; ++phase) {
      for (int i = 0; i < static_cast<int>(graph_.nodes.size()); ++i) TryFuse(i, phase);
    }
    std::vector<int> roots;
    for (int i = 0; i < static_cast<int>(groups_.size()); ++i) roots.push_back(Root(i));
    return roots;
  }

 private:
  struct Group {
    int parent;
    OpPattern pattern;
    int size = 1;
    bool has_anchor;  // holds a kOutEWiseFusable call
  };

  int Root(int i) {
    while (groups_[i].parent != i) i = groups_[i].parent = groups_[groups_[i].parent].parent;
    return i;
  }

  void TryFuse(int i, int phase) {
    // The class of the group the call heads decides what it may join: once conv2d has fused
    // into its ReLU, the ReLU's group is an anchor's epilogue (kOutEWiseFusable) and joins
    // nothing more (an injective consumer such as a layout transform or flatten would change
    // the shape the anchor's schedule computes).
    OpPattern own = groups_[i].pattern;
    int sink = dom_.nodes[i].parent;
    if (own == OpPattern::kOpaque || sink < 0 || Root(i) == Root(sink)) return;
    OpPattern edges = dom_.nodes[i].pattern;
    if (own == OpPattern::kOutEWiseFusable) {
      if (phase != 0 || edges != OpPattern::kElemWise) return;
      FuseIf(i, sink, [](OpPattern kind, bool) { return kind <= OpPattern::kBroadcast; });
    } else if (own <= OpPattern::kBroadcast) {
      if (edges > OpPattern::kInjective && edges != OpPattern::kCommReduce) return;
      FuseIf(i, sink, [](OpPattern kind, bool is_sink) {
        return is_sink ? kind != OpPattern::kOpaque : kind <= OpPattern::kInjective;
      });
    } else if (own == OpPattern::kInjective) {
      if (phase != 1) return;
      FuseIf(i, sink, [](OpPattern kind, bool is_sink) {
        return kind <= OpPattern::kInjective || (is_sink && kind == OpPattern::kCommReduce);
      });
    }
    // A reduction fuses only as the sink of what precedes it.
  }

  // Merges src, sink and every node on the paths between them into sink's group when each
  // group met satisfies `allowed` and the result stays within the size limit.
  template <typename F>
  void FuseIf(int src, int sink, F allowed) {
    std::unordered_set<int> path;
    if (!CollectPath(src, sink, allowed, &path)) return;
    std::unordered_set<int> roots = {Root(src), Root(sink)};
    for (int node : path) roots.insert(Root(node));
    int size = 0;
    int anchors = 0;
    bool reduction = false;
    for (int root : roots) {
      size += groups_[root].size;
      anchors += groups_[root].has_anchor;
      reduction |= groups_[root].pattern == OpPattern::kCommReduce;
    }
    if (size > max_group_size_) return;
    // The `allowed` rules keep it so (an anchor's group is kOutEWiseFusable, which no path
    // or reduction sink admits): a group has one master schedule.
    LOOM_ICHECK(anchors <= 1 && !(anchors == 1 && reduction))
        << "FuseOps: a merge would put " << anchors << " anchors"
        << (reduction ? " and a reduction" : "") << " in one group";
    path.insert(src);
    for (int node : path) Merge(node, sink);
  }

  // The nodes strictly between src and sink (sink post-dominates src, so every path from
  // src reaches it), false when one of their groups or sink's fails `allowed`.
  template <typename F>
  bool CollectPath(int src, int sink, F allowed, std::unordered_set<int>* path) {
    for (const IndexedGraph::Edge& edge : graph_.nodes[src].outputs) {
      int next = edge.consumer;
      if (next == sink) {
        if (!allowed(groups_[Root(sink)].pattern, true)) return false;
        continue;
      }
      if (path->count(next)) continue;
      if (!allowed(groups_[Root(next)].pattern, false)) return false;
      path->insert(next);
      if (!CollectPath(next, sink, allowed, path)) return false;
    }
    return true;
  }

  void Merge(int child, int parent) {
    child = Root(child);
    parent = Root(parent);
    if (child == parent) return;
    groups_[child].parent = parent;
    groups_[parent].size += groups_[child].size;
    // A group holding conv2d or dense is scheduled as that operator's epilogue.
    if (groups_[child].has_anchor) {
      groups_[parent].has_anchor = true;
      groups_[parent].pattern = Combine(groups_[parent].pattern, groups_[child].pattern);
    }
  }

  const IndexedGraph& graph_;
  PostDomTree dom_;
  int max_group_size_;
  std::vector<Group> groups_;
};

// "nn.conv2d" -> "nn_conv2d"
std::string KernelPart(const std::string& op_name) {
  std::string part = op_name;
  std::replace(part.begin(), part.end(), '.', '_');
  return part;
}

// Rewrites the body with each group as a call of a primitive function, built when its last
// member (in post order) is reached: by convexity every value it reads exists by then.
class GroupBuilder {
 public:
  GroupBuilder(const IndexedGraph& graph, std::vector<int> group_of)
      : graph_(graph), group_of_(std::move(group_of)) {
    for (size_t i = 0; i < graph_.nodes.size(); ++i) {
      if (IsMember(static_cast<int>(i))) members_[group_of_[i]].push_back(static_cast<int>(i));
    }
  }

  Expr Rewrite(const Expr& body) {
    for (int i = 0; i < static_cast<int>(graph_.nodes.size()); ++i) {
      const Expr& e = graph_.nodes[i].expr;
      if (IsMember(i)) {
        if (members_.at(group_of_[i]).back() == i) BuildGroup(group_of_[i]);
        continue;
      }
      new_value_[e.get()] = RebuildOutside(e);
    }
    return Mapped(body);
  }

 private:
  // Calls of operators with a compute; one without (`loop`, which the executor runs itself)
  // stays a bare call of its operator.
  bool IsMember(int i) const {
    const auto* call = graph_.nodes[i].expr.as<CallNode>();
    return call != nullptr && call->op != nullptr && call->op->compute;
  }

  // A value as main sees it after the rewrite.
  Expr Mapped(const Expr& e) const {
    if (e.as<VarNode>() || e.as<ConstantNode>()) return e;
    auto it = new_value_.find(e.get());
    LOOM_ICHECK(it != new_value_.end())
        << "FuseOps: a value is used before its group was built (the group is not convex)";
    return it->second;
  }

  Expr RebuildOutside(const Expr& e) const {
    std::vector<Expr> operands;
    for (const Expr& operand : DataflowOperands(e)) operands.push_back(Mapped(operand));
    if (e.as<TupleNode>()) return MakeTuple(std::move(operands));
    if (const auto* item = e.as<TupleGetItemNode>()) {
      return MakeTupleGetItem(operands[0], item->index);
    }
    const auto* call = e.as<CallNode>();
    if (call->op != nullptr)
      return MakeCall(call->op, std::move(operands), call->attrs, call->name_hint);
    // a call of an already fused function
    return MakeCall(Downcast<Function>(call->callee), std::move(operands), call->name_hint);
  }

  void BuildGroup(int group) {
    const std::vector<int>& members = members_.at(group);
    std::unordered_set<int> in_group(members.begin(), members.end());
    std::vector<Var> params;
    std::vector<Expr> args;
    std::unordered_map<const Object*, Expr> inner;  // outer value -> its value in the body
    std::vector<int> outputs;
    std::string name = "fused";
    for (int m : members) {
      const auto* call = graph_.nodes[m].expr.as<CallNode>();
      name += "_" + KernelPart(call->op->name);
      std::vector<Expr> call_args;
      for (const Expr& arg : call->args) {
        auto it = inner.find(arg.get());
        if (it == inner.end()) {
          Var param = MakeVar("p" + std::to_string(params.size()), arg.type());
          params.push_back(param);
          args.push_back(Mapped(arg));
          it = inner.emplace(arg.get(), param).first;
        }
        call_args.push_back(it->second);
      }
      inner[call] = MakeCall(call->op, std::move(call_args), call->attrs, call->name_hint);
      const IndexedGraph::Node& node = graph_.nodes[m];
      bool used_outside = node.is_result || std::any_of(node.outputs.begin(), node.outputs.end(),
                                                        [&](const IndexedGraph::Edge& edge) {
                                                          return !in_group.count(edge.consumer);
                                                        });
      if (used_outside) outputs.push_back(m);
    }
    LOOM_ICHECK(!outputs.empty()) << "FuseOps: a group nothing outside it uses";
    std::vector<Expr> results;
    for (int m : outputs) results.push_back(inner.at(graph_.nodes[m].expr.get()));
    Expr result = results.size() == 1 ? results[0] : Expr(MakeTuple(results));
    Function function = MakeFunction(std::move(params), result,
                                     {{"Primitive", int64_t{1}}, {"name", name}});
    const auto* last = graph_.nodes[members.back()].expr.as<CallNode>();
    Call call = MakeCall(function, std::move(args), last->name_hint);
    for (size_t k = 0; k < outputs.size(); ++k) {
      const Object* value = graph_.nodes[outputs[k]].expr.get();
      new_value_[value] =
          outputs.size() == 1 ? Expr(call) : Expr(MakeTupleGetItem(call, static_cast<int>(k)));
    }
  }

  const IndexedGraph& graph_;
  std::vector<int> group_of_;
  std::map<int, std::vector<int>> members_;  // group -> its calls in post order
  std::unordered_map<const Object*, Expr> new_value_;
};

Function FuseFunction(const Function& main, int max_group_size) {
  IndexedGraph graph = IndexedGraph::Build(main->body);
  std::vector<int> group_of = Partitioner(graph, max_group_size).Run();
  Expr body = GroupBuilder(graph, std::move(group_of)).Rewrite(main->body);
  return MakeFunction(main->params, body, main->attrs);
}

}  // namespace

Pass FuseOps(int max_group_size) {
  LOOM_CHECK_USER(max_group_size >= 1)
      << "FuseOps: max_group_size must be at least 1 (1: no fusion), got " << max_group_size;
  return {"FuseOps", [max_group_size](const IRModule& module) {
            IRModule fused = module;
            fused.Add("main", FuseFunction(module.main(), max_group_size), /*replace=*/true);
            return fused;
          }};
}

}  // namespace loom::graph
