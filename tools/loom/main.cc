// `loom`: command-line entry point. A failure prints "loom: error: <message>" and exits 1;
// the message is one line (the few that list several problems keep a line for each), and
// LOOM_BACKTRACE=1 adds the stack of the throw.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <string>

#include "loom/support/error.h"
#include "model_commands.h"
#include "rpc_commands.h"
#include "throw_backtrace.h"
#include "vta_commands.h"

namespace {

// "loom compile --help": the help of the (sub)command being parsed.
std::string HelpHint(const CLI::App& app) {
  std::string command = "loom";
  const CLI::App* current = &app;
  while (!current->get_subcommands().empty()) {
    current = current->get_subcommands().front();
    command += " " + current->get_name();
  }
  return command + " --help";
}

int Fail(const std::string& message) {
  std::cerr << "loom: error: " << message << "\n";
  if (loom::cli::BacktraceEnabled()) loom::cli::PrintLastThrowBacktrace(std::cerr);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Loom deep-learning compiler: compile ONNX models, run and measure them", "loom"};
  app.require_subcommand(1);
  app.footer(
      "Run `loom COMMAND --help` for a command's options. LOOM_BACKTRACE=1 prints the "
      "stack of a failure.");
  loom::cli::AddCompileCommand(app);
  loom::cli::AddTuneCommand(app);
  loom::cli::AddRunCommand(app);
  loom::cli::AddBenchCommand(app);
  loom::cli::AddInspectCommand(app);
  loom::cli::AddVtaCommands(app);
  loom::cli::AddRpcCommands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForAllHelp& help) {
    return app.exit(help);
  } catch (const CLI::ParseError& error) {
    return Fail(std::string(error.what()) + " (see " + HelpHint(app) + ")");
  } catch (const loom::Error& error) {
    return Fail(error.what());
  } catch (const loom::InternalError& error) {
    return Fail(error.what());
  } catch (const std::exception& error) {
    return Fail(std::string("internal: ") + error.what());
  }
  return 0;
}
