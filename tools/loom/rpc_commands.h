// `loom rpc server|tracker|status|info` (docs/rpc.md), and what `loom run` and `loom bench`
// need to run a model on a remote device (--rpc, or --tracker with --device-key).
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>

#include "loom/rpc/tracker.h"
#include "loom/runtime/executor.h"

namespace loom::cli {

void AddRpcCommands(CLI::App& app);

// The options that send a model command to a remote device.
struct RemoteOptions {
  std::string server;      // --rpc HOST:PORT
  std::string tracker;     // --tracker HOST:PORT (with device_key)
  std::string device_key;  // --device-key
  std::string key;         // --key
  std::string key_file;    // --key-file
  bool remote() const { return !server.empty() || !tracker.empty(); }
};
void AddRemoteOptions(CLI::App& command, RemoteOptions& options);

// A model `run` and `bench` run: loaded here, or uploaded to a remote device and loaded there
// (with the lease that holds the device when it came from a tracker).
struct OpenedModel {
  std::unique_ptr<rpc::TrackerClient> tracker;
  std::unique_ptr<runtime::Executor> executor;
  std::string device;  // a remote device: "host:port (aarch64, 4 cores ...)"; "" here
  int threads = 0;     // the pool the kernels run on
};
// Here: sizes the thread pool (`threads`, default as ConfigureThreads), configures VTA from
// `vta_config` and loads the model. On a remote device (`remote`): checks the model's
// architecture against the device's, sizes the session's pool, uploads and loads it there
// (--vta-config is refused: a device is configured where it runs).
OpenedModel OpenModel(const std::string& model_path, std::optional<int> threads,
                      const std::string& vta_config, const RemoteOptions& remote);

// The key of --key or --key-file ("" for neither); both is an error.
std::string SharedKey(const std::string& key, const std::string& key_file);

}  // namespace loom::cli
