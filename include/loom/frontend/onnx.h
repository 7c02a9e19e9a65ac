// The ONNX importer: a model file (weights inline or in external-data files) to a graph
// IRModule whose "main" takes the model's inputs (initializers excluded) and returns its
// outputs, named as in the model.
//
//   frontend::onnx::ImportOptions options;
//   options.input_shapes["input"] = {1, 3, 224, 224};   // binds symbolic dimensions
//   frontend::onnx::ImportedModel model = frontend::onnx::ImportFile("resnet18.onnx", options);
//   graph::CompiledModel compiled = graph::Compile(model.module, {.opt_level = 3});
//
// Every ONNX node becomes graph operator calls with the node's exact semantics; nodes whose
// inputs are all constant (Constant, Shape of a static input, Gather/Concat/Unsqueeze on such
// values ...) are folded while importing. A model with unsupported operators fails with one
// loom::Error that lists each unsupported operator with its count and node names.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "loom/graph/module.h"
#include "loom/runtime/ndarray.h"

namespace loom::frontend::onnx {

struct ImportOptions {
  // Shapes of model inputs by name. Required for each input with a symbolic or unknown
  // dimension (an unbound one is an error naming the input and dimension); for an input with
  // a static shape, a given shape must equal it.
  std::map<std::string, std::vector<int64_t>> input_shapes;
  // Whether a symbolic or unknown input dimension that input_shapes does not bind stays
  // symbolic (a size variable named by its dim_param, one variable per name across the
  // inputs; an unknown dimension "<input>.<d>"), for the VM; else it is an error.
  bool symbolic_dimensions = false;
  // The most iterations a Loop or Scan is unrolled to at import (each costs import and
  // compile time); a loop that does not end within them is an error naming the node.
  int64_t max_loop_iterations = 4096;
};

struct ImportedModel {
  graph::IRModule module;               // main(inputs...) -> outputs; output names set
  int64_t opset = 0;                    // the default ("ai.onnx") domain's opset
  std::string producer;                 // "pytorch 1.13.1", or empty
  std::map<std::string, int> op_counts;  // ONNX operator type -> nodes in the model
  // What the importer accepted but doubts (an opset newer than it knows), for people.
  std::vector<std::string> warnings;
};

// Reads and imports `path`; external-data files are found relative to the model's folder.
ImportedModel ImportFile(const std::string& path, const ImportOptions& options = {});
// Imports a serialized ModelProto; external data relative to `external_data_dir`.
ImportedModel ImportBytes(const std::string& bytes, const std::string& external_data_dir,
                          const ImportOptions& options = {});

// "input=1x3x224x224" -> {"input", {1, 3, 224, 224}}; a malformed text is a loom::Error
// that shows the expected form.
std::pair<std::string, std::vector<int64_t>> ParseInputShape(const std::string& text);

// A serialized TensorProto (the backend test data's input_0.pb) as a host array.
runtime::NDArray ReadTensorProtoFile(const std::string& path);

// The ONNX operator types the importer converts, sorted; types of a domain other than the
// default one are written "<domain>.<type>".
std::vector<std::string> SupportedOperators();

}  // namespace loom::frontend::onnx
