// The hazard checker of SimOptions::check_hazards (simulator_internal.h): buffer accesses of
// different modules must be ordered by dependency tokens.
#include <algorithm>
#include <sstream>

#include "loom/support/error.h"
#include "vta/simulator_internal.h"

namespace loom::vta {
namespace {

const char* BufferName(HazardChecker::Buffer buffer) {
  static const char* const kNames[] = {"input", "weight", "accumulator"};
  return kNames[buffer];
}

}  // namespace

HazardChecker::HazardChecker(const VTAConfig& config, std::span<const Insn> program)
    : program_(program) {
  elements_[kInp].resize(static_cast<size_t>(config.inp_buff_depth()));
  elements_[kWgt].resize(static_cast<size_t>(config.wgt_buff_depth()));
  elements_[kAcc].resize(static_cast<size_t>(config.acc_buff_depth()));
}

void HazardChecker::Begin(uint64_t index, int module, const std::vector<Clock>& popped) {
  Clock& clock = clocks_[module];
  for (const Clock& token : popped) {
    for (int m = 0; m < kNumModules; ++m) clock[m] = std::max(clock[m], token[m]);
  }
  ++clock[module];
  module_ = module;
  index_ = index;
}

void HazardChecker::Read(Buffer buffer, uint64_t element) {
  Element& e = elements_[buffer][element];
  if (e.writer >= 0 && e.writer != module_ && !Ordered(e.writer, e.write)) {
    Fail("reads", buffer, element, "wrote", e.writer, e.write);
  }
  e.reads[module_] = {clocks_[module_][module_], index_};
}

void HazardChecker::Write(Buffer buffer, uint64_t element) {
  Element& e = elements_[buffer][element];
  if (e.writer >= 0 && e.writer != module_ && !Ordered(e.writer, e.write)) {
    Fail("overwrites", buffer, element, "wrote", e.writer, e.write);
  }
  for (int m = 0; m < kNumModules; ++m) {
    if (m != module_ && e.reads[m].count > 0 && !Ordered(m, e.reads[m])) {
      Fail("overwrites", buffer, element, "reads", m, e.reads[m]);
    }
  }
  e.writer = module_;
  e.write = {clocks_[module_][module_], index_};
  e.reads = {};
}

void HazardChecker::Fail(const char* verb, Buffer buffer, uint64_t element, const char* other_verb,
                         int other_module, const Access& other) const {
  std::ostringstream text;
  text << "VTA hazard: " << InsnLabel(index_, program_[index_]) << " in the " << ModuleName(module_)
       << " module " << verb << " " << BufferName(buffer) << " element " << element << ", which "
       << InsnLabel(other.index, program_[other.index]) << " in the " << ModuleName(other_module)
       << " module " << other_verb << ", and no chain of dependency tokens orders #" << other.index
       << " before #" << index_ << " (the " << ModuleName(other_module)
       << " module must push a token after #" << other.index << " that the " << ModuleName(module_)
       << " module pops before #" << index_ << ")";
  LOOM_THROW << text.str();
}

}  // namespace loom::vta
