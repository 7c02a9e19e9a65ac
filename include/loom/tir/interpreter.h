// The TIR interpreter: executes a PrimFunc on host arrays, the oracle every pass and
// schedule primitive is tested against (run the transformed and the original function on
// the same random data and compare).
//
//   tir::HostArray a(DataType::Float(32), {16}), b(DataType::Float(32), {16});
//   tir::Interpreter interp;
//   interp.Run(func, {a, b, tir::Value::Int(DataType::Int(32), 16)});
//
// Semantics are exactly the hardware's: integers wrap in two's complement at their width,
// float32 arithmetic is done in float (float16/bfloat16 in float, rounded to the type after
// each operation), Div/Mod truncate, FloorDiv/FloorMod floor. Vector values are lanes of
// scalars. Parallel, vectorized, unrolled and thread-bound loops run serially. And/Or
// evaluate both operands (as generated code does); if_then_else evaluates only the taken
// branch. What generated code would do undefined things with is a loom::Error instead:
// out-of-bounds buffer accesses, integer division by zero, shifts by more than the width,
// float-to-int casts out of range, failed asserts, unregistered external functions.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "loom/ir/node.h"
#include "loom/tir/host_array.h"

namespace loom::tir {

// A runtime value: `dtype.lanes()` lanes of an integer type (each wrapped to the type, a
// uint64 kept as its bit pattern), of a float type (each already rounded to the type's
// precision), a handle (the memory it points to) or a string (StringImm arguments).
struct Value {
  DataType dtype;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::shared_ptr<HostMemory> memory;
  std::string text;

  // `value` wrapped (integers) or rounded (floats) to t, in every lane of t.
  static Value Int(DataType t, int64_t value);
  static Value Float(DataType t, double value);
  static Value Handle(std::shared_ptr<HostMemory> memory);

  int lanes() const { return dtype.lanes(); }
  int64_t AsInt(int lane = 0) const;
  // The lane as a double (integers converted exactly where a double can hold them).
  double AsFloat(int lane = 0) const;
};

// An external function called by call_extern / call_pure_extern: receives the arguments
// after the name and the call's result type; returns a Value of that type (any Value for a
// void call).
using ExternFunction = std::function<Value(const std::vector<Value>& args, DataType ret_type)>;

// One PrimFunc argument: a host array for a buffer (or handle) parameter, a Value for a
// scalar parameter.
using Argument = std::variant<HostArray, Value>;

class Interpreter {
 public:
  // Makes `function` callable by name from call_extern; replaces an earlier registration.
  void RegisterExtern(const std::string& name, ExternFunction function);

  // Runs `func` with one argument per parameter, in order. Buffer parameters bind their
  // shape variables (and unbound strides/offsets) from the array; a mismatch in count,
  // dtype or shape is a loom::Error naming the parameter.
  void Run(const PrimFunc& func, const std::vector<Argument>& args) const;

  // Evaluates a closed expression (its variables bound by `bindings`), e.g. to check the
  // interpreter's arithmetic against another evaluator.
  Value Evaluate(const PrimExpr& expr,
                 const std::vector<std::pair<Var, Value>>& bindings = {}) const;

 private:
  std::unordered_map<std::string, ExternFunction> externs_;
};

}  // namespace loom::tir
