#include "loom/vta/config.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "loom/support/error.h"
#include "loom/vta/isa.h"
#include "vta_configs.h"

namespace loom::vta {
namespace {

const char* kTvmDefaultJson = R"({
  "TARGET" : "sim",
  "HW_VER" : "0.0.1",
  "LOG_INP_WIDTH" : 3,
  "LOG_WGT_WIDTH" : 3,
  "LOG_ACC_WIDTH" : 5,
  "LOG_BATCH" : 0,
  "LOG_BLOCK" : 4,
  "LOG_UOP_BUFF_SIZE" : 15,
  "LOG_INP_BUFF_SIZE" : 15,
  "LOG_WGT_BUFF_SIZE" : 18,
  "LOG_ACC_BUFF_SIZE" : 17,
  "ACC_DEP_DISTANCE" : 3
})";

std::string ErrorOf(const VTAConfig& config) {
  try {
    config.Validate();
  } catch (const Error& error) {
    return error.what();
  }
  return "<valid>";
}

std::string JsonErrorOf(const std::string& text) {
  try {
    VTAConfig::FromJson(text);
  } catch (const Error& error) {
    return error.what();
  }
  return "<valid>";
}

TEST(VtaConfig, DefaultIsTheStandardSimulatorConfiguration) {
  VTAConfig config = VTAConfig::Default();
  EXPECT_EQ(config.batch(), 1);
  EXPECT_EQ(config.block_in(), 16);
  EXPECT_EQ(config.block_out(), 16);
  EXPECT_EQ(config.inp_width(), 8);
  EXPECT_EQ(config.wgt_width(), 8);
  EXPECT_EQ(config.acc_width(), 32);
  EXPECT_EQ(config.out_width(), 8);
  EXPECT_EQ(config.bus_width(), 64);
  EXPECT_EQ(config.bus_bytes(), 8);

  EXPECT_EQ(config.uop_buff_bytes(), 32 * 1024);
  EXPECT_EQ(config.inp_buff_bytes(), 32 * 1024);
  EXPECT_EQ(config.wgt_buff_bytes(), 256 * 1024);
  EXPECT_EQ(config.acc_buff_bytes(), 128 * 1024);
  EXPECT_EQ(config.out_buff_bytes(), 32 * 1024);

  // One element: 1x16 int8 input, 16x16 int8 weight, 1x16 int32 acc, 1x16 int8 output.
  EXPECT_EQ(config.inp_elem_bytes(), 16);
  EXPECT_EQ(config.wgt_elem_bytes(), 256);
  EXPECT_EQ(config.acc_elem_bytes(), 64);
  EXPECT_EQ(config.out_elem_bytes(), 16);
  EXPECT_EQ(config.uop_elem_bytes(), 4);

  EXPECT_EQ(config.uop_buff_depth(), 8192);  // 32 KiB / 4 B
  EXPECT_EQ(config.inp_buff_depth(), 2048);  // 32 KiB / 16 B
  EXPECT_EQ(config.wgt_buff_depth(), 1024);  // 256 KiB / 256 B
  EXPECT_EQ(config.acc_buff_depth(), 2048);  // 128 KiB / 64 B
  EXPECT_EQ(config.out_buff_depth(), 2048);
  EXPECT_EQ(config.log_uop_buff_depth(), 13);
  EXPECT_EQ(config.log_inp_buff_depth(), 11);
  EXPECT_EQ(config.log_wgt_buff_depth(), 10);
  EXPECT_EQ(config.log_acc_buff_depth(), 11);

  EXPECT_EQ(config.uop_bgn_bits(), 13);
  EXPECT_EQ(config.uop_end_bits(), 14);
  EXPECT_EQ(config.loop_iter_bits(), 14);
  EXPECT_EQ(config.acc_idx_bits(), 11);
  EXPECT_EQ(config.inp_idx_bits(), 11);
  EXPECT_EQ(config.wgt_idx_bits(), 10);
  EXPECT_EQ(config.uop_dst_bits() + config.uop_src_bits() + config.uop_wgt_bits(), 32);
}

TEST(VtaConfig, DerivedSizesFollowParameters) {
  VTAConfig config = loom::testing::Batch2Block8Config();
  EXPECT_EQ(config.inp_elem_bytes(), 2 * 8);
  EXPECT_EQ(config.wgt_elem_bytes(), 8 * 8);
  EXPECT_EQ(config.acc_elem_bytes(), 2 * 8 * 2);
  EXPECT_EQ(config.inp_buff_depth(), (32 * 1024) / 16);
  EXPECT_EQ(config.wgt_buff_depth(), (64 * 1024) / 64);
  EXPECT_EQ(config.acc_buff_depth(), (32 * 1024) / 32);
  EXPECT_EQ(config.out_buff_bytes(), config.acc_buff_depth() * config.out_elem_bytes());
}

// A micro-op's src_idx indexes the input buffer (GEMM) or the accumulator (ALU): it is as
// wide as the deeper of the two. Here the input buffer (2048 elements) is deeper than the
// accumulator (1024), so the last input element must still be addressable.
TEST(VtaConfig, MicroOpSourceIndexCoversTheDeeperBuffer) {
  VTAConfig config = loom::testing::Batch2Block8Config();
  ASSERT_GT(config.inp_idx_bits(), config.acc_idx_bits());
  EXPECT_EQ(config.uop_src_bits(), config.inp_idx_bits());
  const Uop last_input{.dst_idx = 1023, .src_idx = 2047, .wgt_idx = 1023};
  const Uop decoded = DecodeUop(config, EncodeUop(config, last_input));
  EXPECT_EQ(decoded.dst_idx, 1023u);
  EXPECT_EQ(decoded.src_idx, 2047u);
  EXPECT_EQ(decoded.wgt_idx, 1023u);
  EXPECT_EQ(VTAConfig::Default().uop_src_bits(), 11);
}

TEST(VtaConfig, ParsesTvmConfigFile) {
  EXPECT_EQ(VTAConfig::FromJson(kTvmDefaultJson), VTAConfig::Default());
}

TEST(VtaConfig, JsonRoundTrip) {
  VTAConfig config = VTAConfig::Default();
  config.log_acc_buff_size = 16;
  config.log_bus_width = 7;
  config.log_batch = 1;
  config.Validate();
  EXPECT_EQ(VTAConfig::FromJson(config.ToJson()), config);
  EXPECT_EQ(VTAConfig::FromJson(VTAConfig::Default().ToJson()), VTAConfig::Default());
  EXPECT_NE(config.ToJson().find("\"LOG_BUS_WIDTH\": 7"), std::string::npos)
      << config.ToJson();
}

// The clock: TVM's "HW_FREQ" in MHz, optional (100), what the simulator's cycles take.
TEST(VtaConfig, TheClockTurnsCyclesIntoSeconds) {
  EXPECT_EQ(VTAConfig::Default().hw_freq_mhz, 100);
  EXPECT_DOUBLE_EQ(VTAConfig::Default().SecondsOf(250), 2.5e-6);
  VTAConfig fast = VTAConfig::Default();
  fast.hw_freq_mhz = 250;
  EXPECT_EQ(VTAConfig::FromJson(fast.ToJson()), fast);
  EXPECT_NE(fast.ToJson().find("\"HW_FREQ\": 250"), std::string::npos) << fast.ToJson();
  fast.hw_freq_mhz = 0;
  try {
    fast.Validate();
    FAIL() << "a clock of 0 MHz validated";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("HW_FREQ"), std::string::npos) << error.what();
  }
}

// Parameters() and FromParameters: every parameter, round trip; a wrong count or an
// impossible value is an error.
TEST(VtaConfig, ParametersRoundTrip) {
  VTAConfig config = VTAConfig::Default();
  config.log_batch = 1;
  config.hw_freq_mhz = 150;
  config.Validate();
  EXPECT_EQ(VTAConfig::FromParameters(config.Parameters()), config);
  std::vector<int64_t> parameters = config.Parameters();
  parameters.pop_back();
  EXPECT_THROW(VTAConfig::FromParameters(parameters), Error);
  parameters = config.Parameters();
  parameters[0] = 9;  // LOG_INP_WIDTH
  EXPECT_THROW(VTAConfig::FromParameters(parameters), Error);
}

TEST(VtaConfig, FromFile) {
  std::string path = ::testing::TempDir() + "vta_config_test.json";
  {
    std::ofstream file(path);
    file << kTvmDefaultJson;
  }
  EXPECT_EQ(VTAConfig::FromFile(path), VTAConfig::Default());
  {
    std::ofstream file(path);
    file << "{\"LOG_INP_WIDTH\": 3}";
  }
  try {
    VTAConfig::FromFile(path);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& error) {
    std::string message = error.what();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find("missing parameter \"LOG_WGT_WIDTH\""), std::string::npos)
        << message;
  }
  std::remove(path.c_str());
  EXPECT_THROW(VTAConfig::FromFile(path), Error);
}

TEST(VtaConfig, JsonErrorsNameTheKey) {
  EXPECT_NE(JsonErrorOf("{").find("invalid JSON"), std::string::npos);
  EXPECT_NE(JsonErrorOf("[1, 2]").find("expected a JSON object"), std::string::npos);

  {
    std::string text = kTvmDefaultJson;
    std::string without = text;
    without.erase(without.find("\"LOG_BLOCK\" : 4,"), std::string("\"LOG_BLOCK\" : 4,").size());
    EXPECT_NE(JsonErrorOf(without).find("missing parameter \"LOG_BLOCK\""), std::string::npos)
        << JsonErrorOf(without);

    std::string as_string = text;
    as_string.replace(as_string.find("\"LOG_BATCH\" : 0"), 15, "\"LOG_BATCH\" : \"0\"");
    EXPECT_NE(JsonErrorOf(as_string).find("\"LOG_BATCH\" must be an integer"),
              std::string::npos)
        << JsonErrorOf(as_string);

    std::string fractional = text;
    fractional.replace(fractional.find("\"LOG_BATCH\" : 0"), 15, "\"LOG_BATCH\" : 0.5");
    EXPECT_NE(JsonErrorOf(fractional).find("must be an integer"), std::string::npos);

    std::string typo = text;
    typo.replace(typo.find("\"HW_VER\""), 8, "\"LOG_BLOK\"");
    EXPECT_NE(JsonErrorOf(typo).find("unknown parameter \"LOG_BLOK\""), std::string::npos)
        << JsonErrorOf(typo);

    std::string huge = text;
    huge.replace(huge.find("\"LOG_BATCH\" : 0"), 15, "\"LOG_BATCH\" : 99999999999");
    EXPECT_NE(JsonErrorOf(huge).find("LOG_BATCH"), std::string::npos);
  }
}

TEST(VtaConfig, RejectsImpossibleConfigurations) {
  VTAConfig config = VTAConfig::Default();
  config.log_inp_width = 2;
  EXPECT_NE(ErrorOf(config).find("LOG_INP_WIDTH = 2 is out of range"), std::string::npos)
      << ErrorOf(config);

  config = VTAConfig::Default();
  config.log_acc_width = 6;
  EXPECT_NE(ErrorOf(config).find("LOG_ACC_WIDTH"), std::string::npos);

  config = VTAConfig::Default();
  config.log_wgt_width = 4;
  config.log_acc_width = 3;
  EXPECT_NE(ErrorOf(config).find("must be at least"), std::string::npos) << ErrorOf(config);

  config = VTAConfig::Default();
  config.log_block = -1;
  EXPECT_NE(ErrorOf(config).find("LOG_BLOCK = -1"), std::string::npos);

  config = VTAConfig::Default();
  config.log_bus_width = 2;
  EXPECT_NE(ErrorOf(config).find("LOG_BUS_WIDTH"), std::string::npos);

  // A 16x16 int8 weight element is 256 bytes; a 128-byte buffer cannot hold one.
  config = VTAConfig::Default();
  config.log_wgt_buff_size = 7;
  EXPECT_NE(ErrorOf(config).find("weight buffer (LOG_WGT_BUFF_SIZE) is smaller than one"),
            std::string::npos)
      << ErrorOf(config);

  // Exactly one element leaves zero-bit index fields.
  config = VTAConfig::Default();
  config.log_wgt_buff_size = 8;
  EXPECT_NE(ErrorOf(config).find("at least 2 elements"), std::string::npos) << ErrorOf(config);

  // 2^17 input elements exceed the 16-bit SRAM address of LOAD.
  config = VTAConfig::Default();
  config.log_inp_buff_size = 21;
  EXPECT_NE(ErrorOf(config).find("16-bit SRAM address"), std::string::npos) << ErrorOf(config);

  // A 2^14-deep micro-op buffer pushes iter_in into word 1, which then overflows.
  config = VTAConfig::Default();
  config.log_uop_buff_size = 16;
  EXPECT_NE(ErrorOf(config).find("does not fit in 128 bits"), std::string::npos)
      << ErrorOf(config);
  EXPECT_NE(ErrorOf(config).find("GEMM instruction"), std::string::npos) << ErrorOf(config);

  // A 2^12-deep accumulator no longer fits the GEMM and ALU factor fields.
  config = VTAConfig::Default();
  config.log_acc_buff_size = 18;
  EXPECT_NE(ErrorOf(config).find("GEMM instruction field 'wgt_factor_in'"), std::string::npos)
      << ErrorOf(config);

  // Accumulator 2^11, input 2^10, weight 2^11 deep: the instructions fit, but the micro-op
  // needs 11 + 11 + 11 bits.
  config = VTAConfig::Default();
  config.log_inp_buff_size = 14;
  config.log_wgt_buff_size = 19;
  EXPECT_NE(ErrorOf(config).find("micro-op field 'wgt_idx'"), std::string::npos)
      << ErrorOf(config);
  EXPECT_NE(ErrorOf(config).find("fit in 32 bits"), std::string::npos) << ErrorOf(config);
}

}  // namespace
}  // namespace loom::vta
