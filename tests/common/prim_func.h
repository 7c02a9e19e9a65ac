// Hand-written PrimFuncs for tests that build TIR directly (the interpreter's, the code
// generator's). Header-only.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "loom/ir/node.h"

namespace loom::testing {

// A function of the buffers' data variables, then `scalars`, as parameters; the symbol is
// `name`.
inline PrimFunc MakePrimFunc(const std::vector<Buffer>& buffers, const std::vector<Var>& scalars,
                             Stmt body, const std::string& name = "main") {
  Array<Var> params;
  BufferMap buffer_map;
  for (const Buffer& buffer : buffers) {
    params.push_back(buffer->data);
    buffer_map.emplace_back(buffer->data, buffer);
  }
  for (const Var& scalar : scalars) params.push_back(scalar);
  return PrimFunc(params, buffer_map, std::move(body), DataType::Void(),
                  {{"global_symbol", StringImm(name)}});
}

}  // namespace loom::testing
