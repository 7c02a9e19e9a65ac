// The `loom vta ...` commands.
#pragma once

#include <CLI/CLI.hpp>

namespace loom::cli {

// Adds the `vta` subcommand group to `app`.
void AddVtaCommands(CLI::App& app);

}  // namespace loom::cli
