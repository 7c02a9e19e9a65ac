// `loom rpc server`: runs what clients upload - compiled models and kernels - on this
// machine, and times them. Each session runs in a child process of its own, with a temporary
// folder for its uploads, so a kernel that crashes or hangs ends that session only: the
// server goes on serving. The server listens on loopback unless told otherwise, and then
// requires a shared key from every client.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

namespace loom::rpc {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 9090;  // 0: any free port
  // Required from every client when given; required to be given when host is not a loopback
  // address.
  std::string key;
  int max_sessions = 4;                           // sessions at once; more are refused
  size_t max_message_bytes = size_t{64} << 20;    // one request
  uint64_t max_upload_bytes = uint64_t{1} << 30;  // all of a session's uploads together
  uint64_t max_array_bytes = uint64_t{8} << 30;   // a session's arrays at once
  double idle_timeout_s = 600;  // a session that sends nothing for this long is closed
  double max_call_s = 600;      // a request running longer ends its session (a hung kernel)
  // Registration with a tracker ("host:port", "" for none) under device_key; `advertise_host`
  // is the address clients reach this server at ("": the address the tracker sees).
  std::string tracker;
  std::string device_key;
  std::string advertise_host;
  // Where the session folders are made ("": the system's temporary folder).
  std::string work_dir;
};

// Serves until *stop becomes true (checked at least every 200 ms; null: forever), then ends
// its sessions. on_listening gets the bound port once the socket listens. Options that make
// no sense (a non-loopback host without a key, a tracker without a device key, caps below 1)
// and a port that cannot be bound are loom::Errors; a misbehaving client never stops the
// server.
void RunServer(const ServerOptions& options, const std::function<void(int port)>& on_listening,
               const std::atomic<bool>* stop = nullptr);

}  // namespace loom::rpc
