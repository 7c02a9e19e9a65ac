// Target: where compiled code runs, parsed from a TVM-style target string.
//
//   Target t = Target::Parse("llvm -mcpu=znver4 -mattr=+avx512f,+fma -fast-math -opt-level=3");
//   Target host = Target::Parse("llvm");   // the CPU this process runs on, all its features
//
// Only the "llvm" kind (x86-64 CPUs through LLVM) exists so far. Without -mcpu, or with
// -mcpu=native, the CPU is the host's and the features are the host's; with a named CPU the
// features are that CPU's defaults plus the -mattr list. LLVM stays out of this header.
//
// Float semantics. Without -fast-math, compiled code computes bit for bit what the TIR
// interpreter computes on the TIR that loom::build compiles: every float operation is one
// IEEE operation rounded to nearest, and a * b + c is fused only where that TIR calls fma.
// build's ContractMultiplyAdd puts the calls there under -fp-contract=fast (the default, as
// in TVM and GCC): contraction is decided in TIR, deterministically, never by LLVM.

#pragma once

#include <string>
#include <vector>

namespace loom {

class Target {
 public:
  // Accepted: kind "llvm"; options -mcpu=NAME, -mattr=+f1,-f2,..., -mtriple=TRIPLE,
  // -opt-level=0..3 (LLVM's optimization level, default 3), -fp-contract=fast|off (default
  // fast: float32/float64 a * b + c, a * b - c and c - a * b become one fused multiply-add
  // on CPUs with the fma feature, twice the multiply-add throughput and one rounding instead
  // of two; off: only explicit fma calls fuse), and the flag -fast-math (lets LLVM
  // reassociate and contract float arithmetic, -fp-contract=off or not, and assume no NaN
  // or inf: faster, results may differ in the last bits; the float32 math functions keep
  // their exact polynomials, see docs/math.md). Anything else is a loom::Error listing what
  // is accepted.
  static Target Parse(const std::string& text);

  const std::string& kind() const { return kind_; }
  const std::string& triple() const { return triple_; }
  const std::string& cpu() const { return cpu_; }
  // LLVM feature strings ("+avx512f", "-fma"), in the order given.
  const std::vector<std::string>& features() const { return features_; }
  bool fast_math() const { return fast_math_; }
  // -fp-contract=fast (true) or off.
  bool fp_contract() const { return fp_contract_; }
  // Whether loom::build contracts multiply-adds into fma: -fp-contract=fast and the CPU has
  // the fma feature (without it each fma would be a call to libm's software fma).
  bool ContractsMultiplyAdd() const;
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
  bool fp_contract_ = true;
  int opt_level_ = 3;
};

}  // namespace loom
