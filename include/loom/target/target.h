// Target: where compiled code runs, parsed from a TVM-style target string against the
// registry of target kinds and tags (target_kind.h).
//
//   Target t = Target::Parse("llvm -mcpu=znver4 -mattr=+avx512f,+fma -fast-math -opt-level=3");
//   Target host = Target::Parse("llvm");     // the CPU this process runs on, all its features
//   Target tag = Target::Parse("x86-64-avx512 -opt-level=2");   // a tag, then attributes
//
// A target string is a kind (or a tag, which stands for a whole target string) followed by
// attributes `-name=value` (`-name` alone sets a bool). Each value is checked against the
// kind's declared type, choices and range; an unknown kind, tag or attribute is one
// loom::Error that lists what is valid. A list attribute (-keys, -mattr) given twice appends;
// any other takes its last value. `-host=KIND_OR_TAG` or `-host='llvm -mcpu=...'` gives a
// device kind its host target.
//
// The llvm kind (x86-64 and other CPUs through LLVM): without -mcpu, or with -mcpu=native,
// the CPU and features are the host's; with a named CPU the features are that CPU's defaults
// plus the -mattr list. Its attributes: -mtriple, -mcpu, -mattr=+f1,-f2,..., -opt-level=0..3
// (LLVM's optimization level, default 3), -fp-contract=fast|off and -fast-math, below.
//
// Float semantics. Without -fast-math, compiled code computes bit for bit what the TIR
// interpreter computes on the TIR that loom::build compiles: every float operation is one
// IEEE operation rounded to nearest, and a * b + c is fused only where that TIR calls fma.
// build's ContractMultiplyAdd puts the calls there under -fp-contract=fast (the default, as
// in TVM and GCC): contraction is decided in TIR, deterministically, never by LLVM.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "loom/runtime/data_type.h"
#include "loom/target/target_kind.h"

namespace loom {

class Target {
 public:
  static Target Parse(const std::string& text);

  // The kind's name ("llvm") and its declaration.
  const std::string& kind() const;
  const TargetKind& kind_def() const { return *kind_; }
  // Strategy keys, most specific first ("x86", "cpu"): what operator strategies and
  // schedules are chosen by.
  const std::vector<std::string>& keys() const { return keys_; }
  bool HasKey(const std::string& key) const;
  // The host target of a device kind; a host kind is its own host.
  const Target& host() const { return host_ ? *host_ : *this; }

  // An attribute's value: the one given (or filled in by the kind), else the declared
  // default. Asking for an attribute the kind does not declare, or as another type, is an
  // internal error; Has() tells whether it declares one.
  bool Has(const std::string& attr) const;
  bool GetBool(const std::string& attr) const;
  int64_t GetInt(const std::string& attr) const;
  const std::string& GetString(const std::string& attr) const;
  const std::vector<std::string>& GetStrings(const std::string& attr) const;
  // Sets an attribute (for a kind's Canonicalize hook); the value must have the declared type.
  void Set(const std::string& attr, TargetAttrValue value);

  // LLVM-style fields, empty (or default) for kinds that do not declare them.
  std::string triple() const;
  std::string cpu() const;
  // Feature strings ("+avx512f", "-fma"), in the order given.
  std::vector<std::string> features() const;
  bool fast_math() const;
  // -fp-contract=fast (true) or off.
  bool fp_contract() const;
  int opt_level() const;
  // Whether loom::build contracts multiply-adds into fma: -fp-contract=fast and the CPU has
  // the fma feature (without it each fma would be a call to libm's software fma).
  bool ContractsMultiplyAdd() const;
  // Whether CPU feature `name` ("avx512f") is enabled (the kind's own answer, see
  // TargetKind::has_feature).
  bool HasFeature(const std::string& name) const;
  // Whether the target's devices run warp matrix operations on fragments of `operand`
  // (float16, bfloat16) as instructions: the feature tir::builtin::TensorCoreFeature names;
  // false for any other type.
  bool HasTensorCores(DataType operand) const;

  // Bits of the widest SIMD register schedules should use (-vector-width, which the llvm
  // kind fills from the CPU's features), and how many lanes of `bits`-wide elements that is
  // (at least 1).
  int vector_width_bits() const;
  int VectorLanes(int element_bits) const;

  // The canonical target string; Parse(str()) gives an equal target.
  std::string str() const;

 private:
  const TargetKind* kind_ = nullptr;
  std::map<std::string, TargetAttrValue> attrs_;  // given or filled in; defaults are not here
  std::vector<std::string> keys_;
  std::shared_ptr<const Target> host_;

  const TargetAttrValue& Value(const std::string& attr, TargetAttrType type) const;
};

}  // namespace loom
