#include "vta_commands.h"

#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "loom/support/error.h"
#include "loom/support/file.h"
#include "loom/vta/config.h"
#include "loom/vta/disasm.h"

namespace loom::cli {
namespace {

struct DisasmOptions {
  std::string input_path;
  std::string config_path;
  bool uops = false;
};

// An instruction stream is at most this long (16 million instructions).
constexpr size_t kMaxStreamBytes = size_t{256} << 20;

std::vector<uint8_t> ReadFile(const std::string& path) {
  const std::string bytes = ReadRegularFile(path, kMaxStreamBytes, "instruction file");
  return {bytes.begin(), bytes.end()};
}

void RunDisasm(const DisasmOptions& options) {
  vta::VTAConfig config = options.config_path.empty()
                              ? vta::VTAConfig::Default()
                              : vta::VTAConfig::FromFile(options.config_path);
  std::vector<uint8_t> bytes = ReadFile(options.input_path);
  try {
    if (!options.uops) {
      std::cout << vta::DisassembleBytes(config, bytes);
      return;
    }
    LOOM_CHECK_USER(bytes.size() % vta::kUopBytes == 0)
        << "a micro-op file is a sequence of " << vta::kUopBytes
        << "-byte micro-ops, but its size " << bytes.size() << " is not a multiple of "
        << vta::kUopBytes;
    std::vector<uint32_t> words(bytes.size() / vta::kUopBytes);
    for (size_t i = 0; i < bytes.size(); ++i) {
      words[i / vta::kUopBytes] |= uint32_t{bytes[i]} << (8 * (i % vta::kUopBytes));
    }
    std::cout << vta::DisassembleUops(config, words);
  } catch (const Error& error) {
    LOOM_THROW << options.input_path << ": " << error.what();
  }
}

}  // namespace

void AddVtaCommands(CLI::App& app) {
  CLI::App* vta = app.add_subcommand("vta", "VTA accelerator tools");
  vta->require_subcommand(1);

  auto options = std::make_shared<DisasmOptions>();
  CLI::App* disasm = vta->add_subcommand("disasm", "Print a VTA instruction stream readably");
  disasm->footer(
      "The file is a raw VTA instruction stream: consecutive 128-bit instructions of 16 bytes "
      "each, little-endian (bits 0-63 in the first 8 bytes, bits 64-127 in the next 8), "
      "encoded as the VTA hardware specification lays them out for the configuration. "
      "With --uops, the file instead holds 32-bit little-endian micro-ops (4 bytes each). "
      "The configuration is VTA's JSON parameter file (LOG_INP_WIDTH, LOG_BLOCK, ...); "
      "without --config the standard simulator configuration is used.\n");
  disasm->add_option("file", options->input_path, "Instruction (or micro-op) file")
      ->required();
  disasm->add_option("--config", options->config_path, "VTA configuration JSON file");
  disasm->add_flag("--uops", options->uops, "The file holds micro-ops, not instructions");
  disasm->callback([options] { RunDisasm(*options); });
}

}  // namespace loom::cli
