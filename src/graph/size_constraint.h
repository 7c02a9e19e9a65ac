// A declared constraint on a size variable of a model's inputs ("seq % 8 == 0",
// "seq <= 512"): the compiler checks its buckets against it, and the VM's program refuses
// inputs that violate it before anything runs (CompileOptions::size_constraints).
#pragma once

#include <cstdint>
#include <string>

namespace loom::graph {

struct SizeConstraint {
  std::string var;      // the size variable
  int64_t modulus = 0;  // > 0: the constraint is on var % modulus
  std::string op;       // "==", "<", "<=", ">" or ">="
  int64_t value = 0;
  std::string text;  // as declared, normalized: "seq % 8 == 0"

  // Whether `size` (the variable's value) satisfies it.
  bool Holds(int64_t size) const;
};

// "NAME OP N" or "NAME % M OP N" (OP: ==, <, <=, >, >=; spaces optional); anything else
// is a loom::Error quoting the text and the expected form.
SizeConstraint ParseSizeConstraint(const std::string& text);

}  // namespace loom::graph
