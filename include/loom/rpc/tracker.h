// The tracker: one place that knows a fleet of RPC servers by device key and hands them out.
// A server registers over a connection it keeps open (its key, its port); while that
// connection lives the server is in the fleet, and when it closes (the server died or its
// machine vanished: TCP keep-alive notices within a minute) the server is gone. A client asks
// for a device key and waits; the tracker gives each free server of that key to the client
// that has waited longest for it (first come, first served, per key), and the server is busy
// until the client releases it or the client's connection closes.
//
//   TrackerClient tracker(ParseAddress("127.0.0.1:9190", "--tracker"), key);
//   Lease lease = tracker.Request("aarch64-neon", /*timeout_s=*/600);
//   auto session = Session::Connect(lease.server, key);   // client.h
//   ...
//   tracker.Release(lease);   // or let the TrackerClient go
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "loom/rpc/wire.h"

namespace loom::rpc {

// The tracker's requests (same framing as a session; replies start with Reply).
enum class TrackerOp : uint8_t {
  kHello = 1,     // u32 magic, u32 version, str key -> u32 version
  kRegister = 2,  // str device_key, str host ("": the address the connection comes from),
                  // u32 port -> u64 server id
  kRequest = 3,   // str device_key, f64 timeout_s -> (once a server is free) u64 lease, str host,
                  // u32 port; kReplyError when timeout_s passed first
  kRelease = 4,   // u64 lease ->
  kStatus = 5,    // -> FleetStatus
};

struct TrackerOptions {
  std::string host = "127.0.0.1";
  int port = 9190;  // 0: any free port
  // Required from every peer when host is not a loopback address ("" otherwise: none).
  std::string key;
  int max_connections = 256;
  size_t max_message_bytes = 1 << 20;
  // A message begun must go on arriving: a peer silent this long in the middle of one is
  // closed (it would hold a connection slot for ever).
  double stall_timeout_s = 60;
};

struct FleetStatus {
  struct Server {
    std::string device_key;
    std::string address;  // host:port
    bool busy = false;
  };
  std::vector<Server> servers;        // in registration order
  std::map<std::string, int> queued;  // clients waiting, by device key (keys with none left out)

  void Write(Writer& w) const;
  static FleetStatus Read(Reader& r);
  // A table: one line per device key (free, busy, queued), then one per server.
  std::string str() const;
};

// Runs a tracker until *stop becomes true (checked at least every 100 ms; null: forever).
// on_listening gets the bound port once the socket listens. A loom::Error when the options
// are invalid (a non-loopback host without a key) or the port cannot be bound; a
// misbehaving peer never stops the tracker (its connection is closed, logged on stderr).
void RunTracker(const TrackerOptions& options, const std::function<void(int port)>& on_listening,
                const std::atomic<bool>* stop = nullptr);

struct Lease {
  uint64_t id = 0;
  Address server;
};

// A client's connection to the tracker. Requests are sent one at a time; the leases it holds
// are released when it is destroyed (the connection closes).
class TrackerClient {
 public:
  TrackerClient(const Address& tracker, const std::string& key, double connect_timeout_s = 10);
  // Waits up to timeout_s for a free server of device_key; a loom::Error naming the key and
  // the fleet's keys when none came.
  Lease Request(const std::string& device_key, double timeout_s);
  void Release(const Lease& lease);
  FleetStatus Status();
  // The number of servers of device_key in the fleet; none is a loom::Error naming the key and
  // the fleet (a request for it would wait for a server that may never come).
  int RequireDevices(const std::string& device_key);

 private:
  std::string Call(const std::string& request, double timeout_s, const std::string& what);

  Address tracker_;
  Socket socket_;
};

// A server's registration: connects, says hello and registers (device_key, port). The
// connection stays open for as long as the server is in the fleet; the server polls fd() and
// calls Lost() when it reads an end of file, then Reconnect()s from time to time.
class TrackerRegistration {
 public:
  TrackerRegistration(Address tracker, std::string key, std::string device_key, std::string host,
                      int port);
  // Connects and registers; false (with the reason in *why) when the tracker cannot be
  // reached or refused.
  bool Reconnect(std::string* why);
  bool connected() const { return socket_.valid(); }
  int fd() const { return socket_.fd(); }
  void Lost() { socket_.Close(); }
  const Address& tracker() const { return tracker_; }

 private:
  Address tracker_;
  std::string key_, device_key_, host_;
  int port_;
  Socket socket_;
};

// Compares a peer's key with the expected one in time independent of where they differ.
bool KeysMatch(const std::string& expected, const std::string& given);

}  // namespace loom::rpc
