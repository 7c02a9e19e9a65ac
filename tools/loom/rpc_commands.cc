#include "rpc_commands.h"

#include <signal.h>

#include <atomic>
#include <cstdio>
#include <iostream>

#include "cli_common.h"
#include "loom/rpc/client.h"
#include "loom/rpc/server.h"
#include "loom/runtime/module.h"
#include "loom/support/error.h"
#include "loom/support/file.h"

namespace loom::cli {

namespace {

std::atomic<bool> g_stop{false};

void StopOnSignal(int) { g_stop = true; }

// SIGINT and SIGTERM end the server or tracker cleanly (its sessions ended, folders removed).
void InstallStopHandlers() {
  struct sigaction action {};
  action.sa_handler = StopOnSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

// The line tests and scripts wait for before they connect.
void AnnounceListening(const std::string& what, const std::string& host, int port) {
  std::printf("loom rpc %s: listening on %s:%d\n", what.c_str(), host.c_str(), port);
  std::fflush(stdout);
}

void AddKeyOptions(CLI::App& command, std::string& key, std::string& key_file) {
  command.add_option("--key", key, "Shared key (required from peers; needed off loopback)");
  command.add_option("--key-file", key_file, "File whose first line is the shared key");
}

struct ServerCommandOptions {
  rpc::ServerOptions server;
  std::string key_file;
  double max_message_mb = 64, max_upload_mb = 1024, max_array_mb = 8192;
};

void AddServerCommand(CLI::App& rpc) {
  auto options = std::make_shared<ServerCommandOptions>();
  CLI::App* command = rpc.add_subcommand("server", "Serve sessions that upload and run models");
  command->footer(
      "Each session (a client's connection) runs in a child process with a temporary folder for "
      "its uploads: a crashing or hanging kernel ends that session, and the server goes on. The "
      "server listens on loopback unless --host says otherwise, which then requires --key. "
      "With --tracker and --device-key it joins a tracker's fleet.\n\n"
      "Example: loom rpc server --port 9090\n"
      "         loom rpc server --host 0.0.0.0 --key-file key.txt --tracker tracker:9190 "
      "--device-key aarch64-neon\n");
  rpc::ServerOptions& s = options->server;
  command->add_option("--host", s.host, "Address to listen on")->capture_default_str();
  command->add_option("--port", s.port, "Port (0: any free one)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  AddKeyOptions(*command, s.key, options->key_file);
  command->add_option("--tracker", s.tracker, "HOST:PORT of a tracker to register with");
  command->add_option("--device-key", s.device_key, "The key to register under (aarch64-neon)");
  command->add_option("--advertise-host", s.advertise_host,
                      "The address clients reach this server at (default: as the tracker sees "
                      "it)");
  command->add_option("--max-sessions", s.max_sessions, "Sessions at once")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  command->add_option("--max-message-mb", options->max_message_mb, "Largest request, MiB")
      ->check(CLI::Range(0.01, 4095.0))
      ->capture_default_str();
  command->add_option("--max-upload-mb", options->max_upload_mb, "A session's uploads, MiB")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command->add_option("--max-array-mb", options->max_array_mb, "A session's arrays, MiB")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command->add_option("--idle-timeout-s", s.idle_timeout_s, "Close a session idle this long")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command->add_option("--max-call-s", s.max_call_s, "End a session whose request runs this long")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command->add_option("--work-dir", s.work_dir, "Where session folders go (default: the temp dir)");
  command->callback([options] {
    rpc::ServerOptions server = options->server;
    server.key = SharedKey(server.key, options->key_file);
    constexpr double kMiB = 1 << 20;
    server.max_message_bytes = static_cast<size_t>(options->max_message_mb * kMiB);
    server.max_upload_bytes = static_cast<uint64_t>(options->max_upload_mb * kMiB);
    server.max_array_bytes = static_cast<uint64_t>(options->max_array_mb * kMiB);
    InstallStopHandlers();
    rpc::RunServer(
        server, [&](int port) { AnnounceListening("server", server.host, port); }, &g_stop);
  });
}

void AddTrackerCommand(CLI::App& rpc) {
  auto options = std::make_shared<rpc::TrackerOptions>();
  auto key_file = std::make_shared<std::string>();
  CLI::App* command = rpc.add_subcommand("tracker", "Hand out a fleet's servers by device key");
  command->footer(
      "Servers register with a device key; clients ask for a key and get a free server of it, "
      "first come first served, until they release it or disconnect. A server whose "
      "connection drops leaves the fleet.\n\n"
      "Example: loom rpc tracker --port 9190\n");
  command->add_option("--host", options->host, "Address to listen on")->capture_default_str();
  command->add_option("--port", options->port, "Port (0: any free one)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  AddKeyOptions(*command, options->key, *key_file);
  command->add_option("--max-connections", options->max_connections, "Servers and clients at once")
      ->check(CLI::Range(1, 65536))
      ->capture_default_str();
  command->callback([options, key_file] {
    rpc::TrackerOptions tracker = *options;
    tracker.key = SharedKey(tracker.key, *key_file);
    InstallStopHandlers();
    rpc::RunTracker(
        tracker, [&](int port) { AnnounceListening("tracker", tracker.host, port); }, &g_stop);
  });
}

void AddStatusCommand(CLI::App& rpc) {
  auto tracker = std::make_shared<std::string>();
  auto key = std::make_shared<std::string>();
  auto key_file = std::make_shared<std::string>();
  CLI::App* command = rpc.add_subcommand("status", "Print a tracker's fleet");
  command->footer("Example: loom rpc status --tracker 127.0.0.1:9190\n");
  command->add_option("--tracker", *tracker, "HOST:PORT of the tracker")->required();
  AddKeyOptions(*command, *key, *key_file);
  command->callback([tracker, key, key_file] {
    rpc::TrackerClient client(rpc::ParseAddress(*tracker, "--tracker"), SharedKey(*key, *key_file));
    std::cout << client.Status().str();
  });
}

void AddInfoCommand(CLI::App& rpc) {
  auto server = std::make_shared<std::string>();
  auto key = std::make_shared<std::string>();
  auto key_file = std::make_shared<std::string>();
  CLI::App* command = rpc.add_subcommand("info", "Print a server's device");
  command->footer("Example: loom rpc info --rpc 127.0.0.1:9090\n");
  command->add_option("--rpc", *server, "HOST:PORT of the server")->required();
  AddKeyOptions(*command, *key, *key_file);
  command->callback([server, key, key_file] {
    auto session =
        rpc::Session::Connect(rpc::ParseAddress(*server, "--rpc"), SharedKey(*key, *key_file));
    std::cout << session->address().str() << ": " << session->device().str() << "\n";
  });
}

}  // namespace

std::string SharedKey(const std::string& key, const std::string& key_file) {
  LOOM_CHECK_USER(key.empty() || key_file.empty())
      << "--key and --key-file: give the shared key one way";
  if (key_file.empty()) return key;
  std::string text = ReadRegularFile(key_file, 4096, "--key-file");
  std::string first = text.substr(0, text.find('\n'));
  while (!first.empty() && (first.back() == '\r' || first.back() == ' ')) first.pop_back();
  LOOM_CHECK_USER(!first.empty()) << "--key-file " << key_file << ": the first line is empty";
  return first;
}

void AddRemoteOptions(CLI::App& command, RemoteOptions& options) {
  command.add_option("--rpc", options.server,
                     "HOST:PORT of a `loom rpc server`: upload the model and run it there");
  command.add_option("--tracker", options.tracker,
                     "HOST:PORT of a `loom rpc tracker` to get a device from (with --device-key)");
  command.add_option("--device-key", options.device_key, "The device key to ask the tracker for");
  AddKeyOptions(command, options.key, options.key_file);
}

OpenedModel OpenModel(const std::string& model_path, std::optional<int> threads,
                      const std::string& vta_config, const RemoteOptions& options) {
  OpenedModel model;
  if (!options.remote()) {
    model.threads = ConfigureThreads(threads);
    ConfigureVta(vta_config);
    model.executor = runtime::LoadExecutor(model_path);
    return model;
  }
  LOOM_CHECK_USER(vta_config.empty())
      << "--vta-config configures this machine's VTA device; a remote device's is configured "
         "where it runs";
  LOOM_CHECK_USER(options.server.empty() || options.tracker.empty())
      << "--rpc and --tracker: give the device one way (a server, or a tracker and a key)";
  LOOM_CHECK_USER(options.tracker.empty() || !options.device_key.empty())
      << "--tracker needs --device-key: the key of the devices to ask for";
  const std::string key = SharedKey(options.key, options.key_file);
  rpc::Address server;
  if (!options.tracker.empty()) {
    model.tracker =
        std::make_unique<rpc::TrackerClient>(rpc::ParseAddress(options.tracker, "--tracker"), key);
    model.tracker->RequireDevices(options.device_key);
    server = model.tracker->Request(options.device_key, /*timeout_s=*/600).server;
  } else {
    server = rpc::ParseAddress(options.server, "--rpc");
  }
  std::shared_ptr<rpc::Session> session = rpc::Session::Connect(server, key);
  const std::string arch = runtime::LibraryArchitecture(model_path);
  LOOM_CHECK_USER(arch == session->device().arch)
      << model_path << " was compiled for " << arch << ", and the device at " << server.str()
      << " is " << session->device().arch << ": compile the model for it (loom compile --target "
      << "...) or run it on another device";
  model.threads = session->SetThreads(threads.value_or(0));
  session->Upload(model_path, "model.so");
  model.executor = std::make_unique<rpc::RemoteExecutor>(session->LoadExecutor("model.so"));
  model.device = server.str() + " (" + session->device().str() + ")";
  return model;
}

void AddRpcCommands(CLI::App& app) {
  CLI::App* rpc = app.add_subcommand("rpc", "Remote devices: server, tracker, status, info");
  rpc->require_subcommand(1);
  AddServerCommand(*rpc);
  AddTrackerCommand(*rpc);
  AddStatusCommand(*rpc);
  AddInfoCommand(*rpc);
}

}  // namespace loom::cli
