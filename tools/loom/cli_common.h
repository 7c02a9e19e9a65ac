// Helpers shared by the `loom` model commands (compile, run, bench, inspect): option parsing,
// the thread count, model inputs from .npy files, and how shapes, sizes and values print.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "loom/runtime/float_codec.h"
#include "loom/runtime/graph_executor.h"
#include "loom/runtime/ndarray.h"
#include "loom/runtime/vm.h"
#include "loom/support/bytes_text.h"
#include "loom/support/error.h"

namespace loom::cli {

// "1x3x224x224" ("scalar" for a 0-d shape), the form --input-shape takes.
std::string ShapeText(const std::vector<int64_t>& shape);

// The bytes of a model's weights (its parameter tensors, without the blob's alignment gaps).
int64_t WeightBytes(const runtime::GraphModel& model);

// Throws a loom::Error naming `what` ("model", "--input x") when `path` is not a readable
// regular file, so a typo is reported before any work starts.
void CheckReadableFile(const std::string& path, const std::string& what);
// True when `path` starts with the ELF magic (a compiled model), false for anything else.
bool IsSharedLibrary(const std::string& path);

// Sizes the runtime's thread pool before its first use (ThreadPool::SetGlobalThreads, an
// explicit parameter, not the environment): `threads` overrides LOOM_NUM_THREADS. Returns
// the pool's size.
int ConfigureThreads(std::optional<int> threads);

// Configures this process's VTA device (the simulator) from --vta-config FILE before any model
// runs; nothing for an empty path (the default configuration). A model compiled for VTA
// refuses a device of another configuration.
void ConfigureVta(const std::string& config_path);

// The --input options ("name=file.npy", repeatable) of `executor`'s model, loaded and checked
// against the model: an unknown or repeated name, an unreadable file, or a dtype or shape
// the input does not take is an error naming the input and the file. With
// `require_all`, every model input must be given.
// The --input-shape options ("name=1x3x224x224", repeatable) by input name; a name given
// twice is an error.
std::map<std::string, std::vector<int64_t>> ParseInputShapes(const std::vector<std::string>& texts);
// "seq=16,64,128" (one per symbolic dimension) as graph::CompileOptions::dynamic_buckets.
std::map<std::string, std::vector<int64_t>> ParseDynamicBuckets(
    const std::vector<std::string>& texts);

// "1x3x224x224" for an input of constant shape, its signature "(1, seq, 64)" otherwise.
std::string InputShapeText(const runtime::Executor& executor, int index);

// Whether an array of `shape` fits an input of `model_shape` (-1: any size there).
bool ShapeFits(const std::vector<int64_t>& shape, const std::vector<int64_t>& model_shape);

std::map<std::string, runtime::NDArray> LoadInputs(const runtime::Executor& executor,
                                                   const std::vector<std::string>& texts,
                                                   bool require_all);

// A float16 or bfloat16 element: its bits, made from and read as a float.
template <uint16_t (*kEncode)(float), float (*kDecode)(uint16_t)>
struct HalfFloatElement {
  uint16_t bits;
  HalfFloatElement() = default;
  explicit HalfFloatElement(float value) : bits(kEncode(value)) {}
  explicit operator float() const { return kDecode(bits); }
};
using Float16Element = HalfFloatElement<FloatToHalfBits, HalfBitsToFloat>;
using BFloat16Element = HalfFloatElement<FloatToBFloat16Bits, BFloat16BitsToFloat>;
template <typename T>
constexpr bool kIsHalfFloatElement =
    std::is_same_v<T, Float16Element> || std::is_same_v<T, BFloat16Element>;

// Calls `f(T{})` with the C++ element type of `dtype` (bool as uint8_t, float16 and bfloat16
// as their HalfFloatElement); a vector dtype is a loom::Error naming `what`.
template <typename F>
void VisitElementType(DataType dtype, const std::string& what, F&& f) {
  LOOM_CHECK_USER(dtype.lanes() == 1) << what << ": vector dtype " << dtype << " is not supported";
  switch (dtype.code()) {
    case DataType::Code::kFloat:
      if (dtype.bits() == 16) return f(Float16Element{});
      if (dtype.bits() == 32) return f(float{});
      if (dtype.bits() == 64) return f(double{});
      break;
    case DataType::Code::kBFloat:
      return f(BFloat16Element{});
    case DataType::Code::kInt:
      if (dtype.bits() == 8) return f(int8_t{});
      if (dtype.bits() == 16) return f(int16_t{});
      if (dtype.bits() == 32) return f(int32_t{});
      if (dtype.bits() == 64) return f(int64_t{});
      break;
    case DataType::Code::kUInt:
      if (dtype.bits() == 8) return f(uint8_t{});
      if (dtype.bits() == 16) return f(uint16_t{});
      if (dtype.bits() == 32) return f(uint32_t{});
      if (dtype.bits() == 64) return f(uint64_t{});
      break;
    case DataType::Code::kBool:
      return f(uint8_t{});
    default:
      break;
  }
  LOOM_THROW << what << ": dtype " << dtype << " is not supported here (float16/32/64, bfloat16, "
             << "int8-64, uint8-64 and bool are)";
}

// The first `count` values of a host array, "[0.1, -2, 3.5, ...]".
std::string FirstValuesText(const runtime::NDArray& array, int64_t count);

// `name` as a file name: characters other than letters, digits, '.', '-' and '_' become '_'
// (an output named "logits/softmax:0" is written as logits_softmax_0.npy).
std::string SanitizeFileName(const std::string& name);

// "  name                     description": one row of inspect's lists.
void PrintValue(const std::string& name, const std::string& description);
// The kernels in execution order with the graph nodes each runs, the memory plan and the
// weights: what a compile made of a model.
void PrintPlan(const runtime::GraphModel& model);
// The same for a model the virtual machine runs: its signature (inputs of symbolic
// dimensions), the kernels in execution order, the weights.
void PrintVmProgram(const runtime::VmModel& model);

}  // namespace loom::cli
