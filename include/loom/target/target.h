// Target: where compiled code runs, parsed from a TVM-style target string.
//
//   Target t = Target::Parse("llvm -mcpu=znver4 -mattr=+avx512f,+fma -fast-math -opt-level=3");
//   Target host = Target::Parse("llvm");   // the CPU this process runs on, all its features
//
// Only the "llvm" kind (x86-64 CPUs through LLVM) exists so far. Without -mcpu, or with
// -mcpu=native, the CPU is the host's and the features are the host's; with a named CPU the
// features are that CPU's defaults plus the -mattr list. LLVM stays out of this header.
#pragma once

#include <string>
#include <vector>

namespace loom {

class Target {
 public:
  // Accepted: kind "llvm"; options -mcpu=NAME, -mattr=+f1,-f2,..., -mtriple=TRIPLE,
  // -opt-level=0..3 (LLVM's optimization level, default 3), and the flag -fast-math (lets
  // LLVM reassociate and contract float arithmetic: faster, results may differ in the last
  // bits). Anything else is a loom::Error listing what is accepted.
  static Target Parse(const std::string& text);

  const std::string& kind() const { return kind_; }
  const std::string& triple() const { return triple_; }
  const std::string& cpu() const { return cpu_; }
  // LLVM feature strings ("+avx512f", "-fma"), in the order given.
  const std::vector<std::string>& features() const { return features_; }
  bool fast_math() const { return fast_math_; }
  int opt_level() const { return opt_level_; }
  // Whether feature "+name" is enabled (the last mention wins).
  bool HasFeature(const std::string& name) const;

  // The canonical target string; Parse(str()) gives an equal target.
  std::string str() const;

 private:
  std::string kind_;
  std::string triple_;
  std::string cpu_;
  std::vector<std::string> features_;
  bool fast_math_ = false;
  int opt_level_ = 3;
};

}  // namespace loom
