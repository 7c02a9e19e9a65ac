// Target kinds and tags as data: each kind of target (llvm, c, ...) declares its typed
// attributes with their defaults, the keys operator strategies are looked up by, its device
// type, and hooks that fill in and check what a target string leaves open. A tag names a
// known processor as a whole target string.
//
//   LOOM_REGISTER_TARGET_KIND("llvm")
//       .DeviceType(kDLCPU)
//       .Keys({"cpu"})
//       .Attr("mcpu", TargetAttrType::kString, std::string(), "the CPU; empty: the host's")
//       .Canonicalize(ResolveHostCPU);
//   LOOM_REGISTER_TARGET_TAG("x86-64-avx512", "llvm -mtriple=x86_64-linux-gnu -mcpu=x86-64-v4",
//                            "any x86-64 CPU with AVX-512 F/BW/CD/DQ/VL");
//
// Kinds and tags register from their own files in the target layer (llvm's in
// src/target/llvm/, the C source kind's in src/target/codegen/c/); a new kind needs no edit
// elsewhere. Target::Parse (target.h) reads target strings against this registry.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace loom {

class Target;

enum class TargetAttrType : uint8_t { kBool, kInt, kString, kStringList };
const char* TargetAttrTypeName(TargetAttrType type);

using TargetAttrValue = std::variant<bool, int64_t, std::string, std::vector<std::string>>;

struct TargetAttrSpec {
  std::string name;  // without the leading '-': "mcpu"
  TargetAttrType type;
  TargetAttrValue default_value;
  std::string doc;
  std::vector<std::string> choices;  // a string attribute's allowed values; empty: any
  std::optional<int64_t> min, max;   // an integer attribute's allowed range
};

struct TargetKind {
  std::string name;
  int device_type = 1;  // DLDeviceType of the code it generates (kDLCPU = 1)
  // The strategy keys every target of this kind has, most specific first; a target string's
  // -keys=... come before them, and Canonicalize may add more (an architecture's).
  std::vector<std::string> default_keys;
  std::vector<TargetAttrSpec> attrs;
  // Device kinds run kernels launched from a host target (`-host=...`, default "llvm");
  // the others are their own host.
  bool is_device = false;
  // A device whose memory handles the host cannot address (a GPU's: cl_mem, CUdeviceptr): the
  // host code passes tensors' data to its kernels as they are, never offset.
  bool opaque_memory = false;
  // A device kind whose graph compiler runs the layers it has no implementation for on the
  // host, by design (VTA's: convolutions on the accelerator, the rest on the CPU, each
  // placement reported). For other device kinds such a layer is a compile error, never a
  // silent fallback.
  bool layers_on_host = false;
  std::string doc;
  // Fills in what the string left open and checks values against the machine (the llvm
  // kind: the host's triple, CPU and features; known CPU and feature names). Errors are
  // loom::Error naming `whole`, the target string.
  std::function<void(Target& target, const std::string& whole)> canonicalize;
  // Whether the target has CPU feature `name` ("avx512f"): the kind's own answer (llvm asks
  // LLVM, which knows what -mcpu implies); without one, a "+name" in -mattr.
  std::function<bool(const Target& target, const std::string& name)> has_feature;
  // A device kind whose devices come in configurations (VTA's): the configuration `target`
  // compiles for, as text the device's runtime gives back for the configuration it has
  // (runtime::DeviceAPI::Configuration). A model records it and refuses another.
  std::function<std::string(const Target& target)> device_configuration;

  const TargetAttrSpec* FindAttr(const std::string& attr) const;
};

struct TargetTag {
  std::string name;
  std::string target;  // the target string it stands for
  std::string doc;
};

class TargetKindRegistry {
 public:
  static const TargetKind* Find(const std::string& name);
  static std::vector<const TargetKind*> List();
  // Entries are never removed: pointers stay valid for the program's life.
  static TargetKind& Register(const std::string& name);

  static const TargetTag* FindTag(const std::string& name);
  static std::vector<const TargetTag*> ListTags();
  static void RegisterTag(TargetTag tag);
};

class TargetKindBuilder {
 public:
  explicit TargetKindBuilder(TargetKind& kind) : kind_(kind) {}
  TargetKindBuilder& Describe(std::string doc);
  TargetKindBuilder& DeviceType(int device_type);
  TargetKindBuilder& Keys(std::vector<std::string> keys);
  TargetKindBuilder& Device();
  TargetKindBuilder& OpaqueMemory();  // see TargetKind::opaque_memory
  TargetKindBuilder& LayersOnHost();  // see TargetKind::layers_on_host
  TargetKindBuilder& Attr(std::string name, TargetAttrType type, TargetAttrValue default_value,
                          std::string doc);
  TargetKindBuilder& Choices(std::vector<std::string> choices);  // of the last Attr
  TargetKindBuilder& Range(int64_t min, int64_t max);            // of the last Attr
  TargetKindBuilder& Canonicalize(std::function<void(Target&, const std::string&)> fn);
  TargetKindBuilder& HasFeature(std::function<bool(const Target&, const std::string&)> fn);
  TargetKindBuilder& DeviceConfiguration(std::function<std::string(const Target&)> fn);

 private:
  TargetKind& kind_;
};

// The attributes every kind has, whatever it declares: -keys (strategy keys, most specific
// first), -vector-width (bits of the widest SIMD register schedules may use; 0: the kind
// decides) and -num-cores (cores kernels may use; 0: all the machine has).
std::vector<TargetAttrSpec> CommonTargetAttrs();

#define LOOM_TARGET_KIND_VAR_I(line) loom_target_kind_##line
#define LOOM_TARGET_KIND_VAR(line) LOOM_TARGET_KIND_VAR_I(line)
#define LOOM_REGISTER_TARGET_KIND(name)                                                 \
  [[maybe_unused]] static ::loom::TargetKindBuilder LOOM_TARGET_KIND_VAR(__LINE__) =    \
      ::loom::TargetKindBuilder(::loom::TargetKindRegistry::Register(name))
#define LOOM_REGISTER_TARGET_TAG(name, target, doc)                                     \
  [[maybe_unused]] static const bool LOOM_TARGET_KIND_VAR(__LINE__) =                   \
      (::loom::TargetKindRegistry::RegisterTag({name, target, doc}), true)

}  // namespace loom
