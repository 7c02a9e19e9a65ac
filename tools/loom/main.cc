// `loom`: command-line entry point. Errors print as "loom: error: <message>" and exit 1.
#include <exception>
#include <iostream>

#include <CLI/CLI.hpp>

#include "loom/support/error.h"
#include "vta_commands.h"

int main(int argc, char** argv) {
  CLI::App app{"Loom deep-learning compiler tools", "loom"};
  app.require_subcommand(1);
  loom::cli::AddVtaCommands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForAllHelp& help) {
    return app.exit(help);
  } catch (const CLI::ParseError& error) {
    std::cerr << "loom: error: " << error.what() << "\n"
              << "Run with --help for more information.\n";
    return 1;
  } catch (const loom::Error& error) {
    std::cerr << "loom: error: " << error.what() << "\n";
    return 1;
  } catch (const std::exception& error) {
    std::cerr << "loom: error: internal: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
