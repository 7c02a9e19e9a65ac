// The execution graph of a fused, lowered model (docs/graph_artifact.md): every tensor value
// main passes between kernels as an entry, the kernels in execution order, and its text
// (the "loom-graph-1" JSON) and parameters blob once memory is planned. Used by compile.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "loom/graph/lower.h"
#include "loom/graph/memory_plan.h"
#include "loom/graph/op_util.h"
#include "loom/graph/strategy.h"

namespace loom::graph {

struct ExecutionGraph {
  struct Entry {
    std::string name;
    std::vector<int64_t> shape;  // when every dimension is constant (else empty)
    std::vector<PrimExpr> dims;  // the type's dimensions, constant or symbolic
    DataType dtype;
    MemoryPlanProblem::EntryKind kind;
    runtime::NDArray constant;  // the data of a parameter
    bool symbolic() const { return shape.size() != dims.size(); }
  };
  struct Kernel {
    std::string func;  // the kernel (identical groups share one)
    std::string name;  // the call's name hint, or the kernel's
    std::vector<int> args;  // entry ids, outputs last
    int num_outputs = 0;
    std::vector<std::string> nodes;  // the graph calls fused into it
    std::vector<int> in_place_candidates;
    bool on_device = false;  // built for the device target (LoweredModel::device_tir)
    // A kernel of dims_of_value: the sizes it makes known, read from entry args[value_arg]
    // before its output is allocated.
    std::optional<ops::ValueSizes> reads_sizes = std::nullopt;
    int value_arg = -1;
    // A call of `loop`, which the VM runs itself (no func): args are the trip count, the
    // condition, the carried and the captured values, then its results.
    std::optional<ops::LoopAttrs> loop = std::nullopt;
  };
  struct IO {
    std::string name;
    int entry;
  };
  std::vector<Entry> entries;
  std::vector<Kernel> kernels;
  std::vector<IO> inputs;
  std::vector<IO> outputs;

  MemoryPlanProblem PlanProblem() const;
};

// From main of a fused module (every call a call of a primitive function) and its kernels.
ExecutionGraph BuildExecutionGraph(const Function& main, const LoweredModel& lowered,
                                   const std::vector<std::string>& output_names = {});

// The parameters blob: each parameter's bytes at a 64-byte aligned offset (offsets[i] for
// parameter entry number i, in entry order).
std::vector<uint8_t> ParamsBlob(const ExecutionGraph& graph, std::vector<size_t>* offsets);
// One blob for several graphs (a VM program's specializations): a weight whose bytes another
// already holds is stored once; (*offsets)[g][i] for parameter entry i of graphs[g].
std::vector<uint8_t> ParamsBlob(const std::vector<const ExecutionGraph*>& graphs,
                                std::vector<std::vector<size_t>>* offsets);

// The "loom-graph-1" document; `precision` is CompileOptions::precision; `device_type` the
// DLPack device of the kernels built for the device (Kernel::on_device), `device_config` the
// configuration they were compiled for (recorded when there are any); `placements` where the
// target's graph passes put layers.
std::string ExecutionGraphJson(const ExecutionGraph& graph, const MemoryPlan& plan,
                               const std::vector<size_t>& param_offsets, const std::string& target,
                               const std::string& precision, int device_type,
                               const std::string& device_config,
                               const std::vector<LayerPlacement>& placements);

}  // namespace loom::graph
