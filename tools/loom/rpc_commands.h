// `loom rpc server|tracker|status|info` (docs/rpc.md), and what `loom run` and `loom bench`
// need to run a model on a remote device (--rpc, or --tracker with --device-key).
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
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

// A model uploaded to a remote device and loaded there, with the lease that holds the device
// when it came from a tracker.
struct RemoteModel {
  std::unique_ptr<rpc::TrackerClient> tracker;
  std::unique_ptr<runtime::Executor> executor;
  std::string device;  // "host:port (aarch64, 4 cores ...)"
  int threads = 0;     // the session's pool
};
// Checks the model's architecture against the device's, uploads it and loads it; `threads`
// (0: the device's default) sizes the session's pool.
RemoteModel OpenRemoteModel(const RemoteOptions& options, const std::string& model_path,
                            int threads);

// The key of --key or --key-file ("" for neither); both is an error.
std::string SharedKey(const std::string& key, const std::string& key_file);

}  // namespace loom::cli
