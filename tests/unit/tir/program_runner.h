// Runs a random test program (In, Out, FOut buffers of `size` elements and a scalar n = 3, the
// signature the differential TIR tests generate) on inputs drawn from a seed.
#pragma once

#include <optional>
#include <random>
#include <string>
#include <vector>

#include "loom/tir/interpreter.h"

namespace loom::tir::test {

struct ProgramOutputs {
  std::vector<int64_t> ints;
  std::vector<double> floats;
  bool operator==(const ProgramOutputs&) const = default;
};

// The Out and FOut contents after the run; nullopt (with the message) on a user error.
inline std::optional<ProgramOutputs> RunProgram(const PrimFunc& func, int size, uint64_t seed,
                                                std::string* error) {
  std::mt19937_64 rng(seed);
  DataType i32 = DataType::Int(32), f32 = DataType::Float(32);
  HostArray in(i32, {size}), out(i32, {size}), fout(f32, {size});
  for (int k = 0; k < size; ++k) {
    in.SetInt(k, std::uniform_int_distribution<int>(-50, 50)(rng));
    out.SetInt(k, std::uniform_int_distribution<int>(-50, 50)(rng));
    fout.SetFloat(k, std::uniform_real_distribution<double>(-1, 1)(rng));
  }
  try {
    Interpreter().Run(func, {in, out, fout, Value::Int(i32, 3)});
  } catch (const Error& e) {
    *error = e.what();
    return std::nullopt;
  }
  ProgramOutputs result;
  for (int k = 0; k < size; ++k) {
    result.ints.push_back(out.GetInt(k));
    result.floats.push_back(fout.GetFloat(k));
  }
  return result;
}

}  // namespace loom::tir::test
