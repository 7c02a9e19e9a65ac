// Structural equality and hashing of IR, with variable remapping: two trees are equal when
// they have the same shape and the variables they *define* (Let, For, LetStmt, Allocate,
// Reduce axes, reducer arguments, buffer data, function parameters) correspond one to one.
// Free variables must be the same object unless map_free_vars is set, in which case they
// too may correspond one to one. Names are ignored. StructuralHash agrees with equality:
// equal trees hash equal.
#pragma once

#include <cstddef>
#include <string>

#include "loom/ir/node.h"

namespace loom {

bool StructuralEqual(const ObjectRef& lhs, const ObjectRef& rhs, bool map_free_vars = false);
size_t StructuralHash(const ObjectRef& node, bool map_free_vars = false);

// Like StructuralEqual; on a mismatch writes a description of the first differing place
// (a field path such as "body.seq[1].value.b") to *where. For test diagnostics.
bool StructuralEqualExplain(const ObjectRef& lhs, const ObjectRef& rhs, std::string* where,
                            bool map_free_vars = false);

// Function objects for hash containers keyed by structure.
struct StructuralHashFn {
  size_t operator()(const ObjectRef& node) const { return StructuralHash(node); }
};
struct StructuralEqualFn {
  bool operator()(const ObjectRef& a, const ObjectRef& b) const { return StructuralEqual(a, b); }
};

}  // namespace loom
