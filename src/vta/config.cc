#include "loom/vta/config.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>

#include "loom/support/error.h"
#include "loom/support/file.h"
#include "vta/field_layout.h"

namespace loom::vta {
namespace {

// JSON key <-> member, in the order ToJson writes them.
struct Parameter {
  const char* key;
  int VTAConfig::*member;
  bool required;
};

constexpr Parameter kParameters[] = {
    {"LOG_INP_WIDTH", &VTAConfig::log_inp_width, true},
    {"LOG_WGT_WIDTH", &VTAConfig::log_wgt_width, true},
    {"LOG_ACC_WIDTH", &VTAConfig::log_acc_width, true},
    {"LOG_BATCH", &VTAConfig::log_batch, true},
    {"LOG_BLOCK", &VTAConfig::log_block, true},
    {"LOG_UOP_BUFF_SIZE", &VTAConfig::log_uop_buff_size, true},
    {"LOG_INP_BUFF_SIZE", &VTAConfig::log_inp_buff_size, true},
    {"LOG_WGT_BUFF_SIZE", &VTAConfig::log_wgt_buff_size, true},
    {"LOG_ACC_BUFF_SIZE", &VTAConfig::log_acc_buff_size, true},
    {"LOG_BUS_WIDTH", &VTAConfig::log_bus_width, false},
    {"HW_FREQ", &VTAConfig::hw_freq_mhz, false},
};

// Keys of TVM's vta_config.json that describe the build, not the hardware model.
constexpr std::string_view kIgnoredKeys[] = {"TARGET", "HW_VER", "ACC_DEP_DISTANCE",
                                             "HW_CLK_TARGET"};

void CheckRange(const char* key, int value, int low, int high, const char* why) {
  LOOM_CHECK_USER(value >= low && value <= high)
      << "VTA config: " << key << " = " << value << " is out of range [" << low << ", "
      << high << "]: " << why;
}

void CheckBufferHoldsOneElement(const char* buffer, const char* size_key, int log_depth) {
  LOOM_CHECK_USER(log_depth >= 0)
      << "VTA config: the " << buffer << " buffer (" << size_key
      << ") is smaller than one of its elements; enlarge it or shrink the GEMM core";
}

void CheckBufferAddressable(const char* buffer, const char* size_key, int log_depth) {
  LOOM_CHECK_USER(log_depth <= kSramAddrBits)
      << "VTA config: the " << buffer << " buffer (" << size_key << ") holds 2^" << log_depth
      << " elements, more than the " << kSramAddrBits
      << "-bit SRAM address of LOAD/STORE can reach";
}

}  // namespace

VTAConfig VTAConfig::Default() {
  VTAConfig config;
  config.Validate();
  return config;
}

void VTAConfig::Validate() const {
  // Every parameter but the clock is a log2; the bounds keep all derived sizes well inside
  // int64.
  CheckRange("LOG_INP_WIDTH", log_inp_width, 3, 5,
             "inputs are whole-byte integers of 8 to 32 bits");
  CheckRange("LOG_WGT_WIDTH", log_wgt_width, 3, 5,
             "weights are whole-byte integers of 8 to 32 bits");
  CheckRange("LOG_ACC_WIDTH", log_acc_width, 3, 5,
             "accumulators are whole-byte integers of 8 to 32 bits");
  LOOM_CHECK_USER(log_acc_width >= log_inp_width && log_acc_width >= log_wgt_width)
      << "VTA config: LOG_ACC_WIDTH = " << log_acc_width
      << " must be at least LOG_INP_WIDTH = " << log_inp_width
      << " and LOG_WGT_WIDTH = " << log_wgt_width
      << ": accumulators hold products of inputs and weights";
  CheckRange("LOG_BATCH", log_batch, 0, 8, "the GEMM core has 1 to 256 rows");
  CheckRange("LOG_BLOCK", log_block, 0, 8, "the GEMM core is 1 to 256 wide");
  CheckRange("LOG_UOP_BUFF_SIZE", log_uop_buff_size, 0, 30, "at most 1 GiB");
  CheckRange("LOG_INP_BUFF_SIZE", log_inp_buff_size, 0, 30, "at most 1 GiB");
  CheckRange("LOG_WGT_BUFF_SIZE", log_wgt_buff_size, 0, 30, "at most 1 GiB");
  CheckRange("LOG_ACC_BUFF_SIZE", log_acc_buff_size, 0, 30, "at most 1 GiB");
  CheckRange("LOG_BUS_WIDTH", log_bus_width, 3, 10, "the memory bus is 8 to 1024 bits wide");
  CheckRange("HW_FREQ", hw_freq_mhz, 1, 10000, "the clock in MHz");

  CheckBufferHoldsOneElement("micro-op", "LOG_UOP_BUFF_SIZE", log_uop_buff_depth());
  CheckBufferHoldsOneElement("input", "LOG_INP_BUFF_SIZE", log_inp_buff_depth());
  CheckBufferHoldsOneElement("weight", "LOG_WGT_BUFF_SIZE", log_wgt_buff_depth());
  CheckBufferHoldsOneElement("accumulator", "LOG_ACC_BUFF_SIZE", log_acc_buff_depth());
  CheckBufferAddressable("micro-op", "LOG_UOP_BUFF_SIZE", log_uop_buff_depth());
  CheckBufferAddressable("input", "LOG_INP_BUFF_SIZE", log_inp_buff_depth());
  CheckBufferAddressable("weight", "LOG_WGT_BUFF_SIZE", log_wgt_buff_depth());
  CheckBufferAddressable("accumulator", "LOG_ACC_BUFF_SIZE", log_acc_buff_depth());

  // A one-element buffer gives zero-width index fields; the encodings need at least one bit
  // per index, as the hardware's bit-fields do.
  LOOM_CHECK_USER(log_uop_buff_depth() >= 1 && log_inp_buff_depth() >= 1 &&
                  log_wgt_buff_depth() >= 1 && log_acc_buff_depth() >= 1)
      << "VTA config: every buffer must hold at least 2 elements (depths: uop 2^"
      << log_uop_buff_depth() << ", input 2^" << log_inp_buff_depth() << ", weight 2^"
      << log_wgt_buff_depth() << ", accumulator 2^" << log_acc_buff_depth() << ")";

  // Laying the formats out throws, naming the field, when one no longer fits.
  detail::MemLayout(*this);
  detail::GemmLayout(*this);
  detail::AluLayout(*this);
  detail::FinishLayout(*this);
  detail::UopLayout(*this);
}

VTAConfig VTAConfig::FromJson(const std::string& text) {
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& error) {
    LOOM_THROW << "VTA config: invalid JSON: " << error.what();
  }
  LOOM_CHECK_USER(json.is_object())
      << "VTA config: expected a JSON object of parameters, got " << json.type_name();

  VTAConfig config;
  for (const Parameter& parameter : kParameters) {
    auto found = json.find(parameter.key);
    if (found == json.end()) {
      LOOM_CHECK_USER(!parameter.required)
          << "VTA config: missing parameter \"" << parameter.key << "\"";
      continue;
    }
    LOOM_CHECK_USER(found->is_number_integer())
        << "VTA config: parameter \"" << parameter.key << "\" must be an integer, got "
        << found->dump();
    int64_t value = found->get<int64_t>();
    LOOM_CHECK_USER(value >= -1000000 && value <= 1000000)
        << "VTA config: parameter \"" << parameter.key << "\" = " << value
        << " is out of any plausible range";
    config.*parameter.member = static_cast<int>(value);
  }
  for (const auto& [key, value] : json.items()) {
    bool known = false;
    for (const Parameter& parameter : kParameters) known = known || key == parameter.key;
    for (std::string_view ignored : kIgnoredKeys) known = known || key == ignored;
    LOOM_CHECK_USER(known) << "VTA config: unknown parameter \"" << key << "\"";
  }
  config.Validate();
  return config;
}

VTAConfig VTAConfig::FromFile(const std::string& path) {
  // A configuration is a few hundred bytes; a megabyte is no configuration.
  const std::string contents = ReadRegularFile(path, size_t{1} << 20, "VTA config");
  try {
    return FromJson(contents);
  } catch (const Error& error) {
    LOOM_THROW << path << ": " << error.what();
  }
}

std::string VTAConfig::ToJson() const {
  nlohmann::ordered_json json;
  for (const Parameter& parameter : kParameters) json[parameter.key] = this->*parameter.member;
  return json.dump(2) + "\n";
}

std::vector<int64_t> VTAConfig::Parameters() const {
  std::vector<int64_t> values;
  for (const Parameter& parameter : kParameters) values.push_back(this->*parameter.member);
  return values;
}

VTAConfig VTAConfig::FromParameters(const std::vector<int64_t>& parameters) {
  constexpr size_t kCount = std::size(kParameters);
  LOOM_CHECK_USER(parameters.size() == kCount)
      << "VTA config: " << parameters.size() << " parameters, expected " << kCount;
  VTAConfig config;
  for (size_t i = 0; i < kCount; ++i) {
    LOOM_CHECK_USER(parameters[i] >= -1000000 && parameters[i] <= 1000000)
        << "VTA config: parameter \"" << kParameters[i].key << "\" = " << parameters[i]
        << " is out of any plausible range";
    config.*kParameters[i].member = static_cast<int>(parameters[i]);
  }
  config.Validate();
  return config;
}

}  // namespace loom::vta
