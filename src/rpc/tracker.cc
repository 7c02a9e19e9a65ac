#include "loom/rpc/tracker.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <deque>
#include <iomanip>
#include <sstream>

#include "loom/rpc/protocol.h"
#include "loom/support/error.h"

namespace loom::rpc {

namespace {

using Clock = std::chrono::steady_clock;

// Device keys travel inside a server's DeviceInfo too, which allows this many bytes.
constexpr size_t kMaxDeviceKeyBytes = 256;
// A request's wait beyond this is as good as forever (and keeps the deadline in range).
constexpr double kMaxRequestSeconds = 1e8;
// A peer that connects but never says hello gives its slot back after this long.
constexpr double kHelloSeconds = 10;
// How long a client waits for the tracker's answer to anything but a device request.
constexpr double kReplySeconds = 30;
// Replies the tracker holds for a peer that does not read them; past this, it stops reading
// that peer's requests until the peer catches up.
constexpr size_t kMaxUnsentBytes = size_t{1} << 20;
// The longest reply a client takes (a status of a very large fleet).
constexpr size_t kMaxReplyBytes = size_t{64} << 20;
// How long a server's registration waits to connect and for each reply.
constexpr double kConnectSeconds = 10;

Clock::time_point After(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

void Log(const std::string& line) { std::fprintf(stderr, "loom rpc tracker: %s\n", line.c_str()); }

// A reply under way: kOk, then the results.
Writer Ok() {
  Writer w;
  w.U8(static_cast<uint8_t>(Reply::kOk));
  return w;
}

std::string ErrorReply(const std::string& message) {
  return Writer().U8(static_cast<uint8_t>(Reply::kError)).Str(message).data();
}

struct KeyCounts {
  int free = 0, busy = 0, queued = 0;
};

std::map<std::string, KeyCounts> CountByKey(const FleetStatus& status) {
  std::map<std::string, KeyCounts> counts;
  for (const FleetStatus::Server& server : status.servers) {
    ++(server.busy ? counts[server.device_key].busy : counts[server.device_key].free);
  }
  for (const auto& [key, queued] : status.queued) counts[key].queued = queued;
  return counts;
}

// "'cpu': 2 servers (1 busy), 'gpu': 1 server (0 busy)".
std::string DescribeFleet(const FleetStatus& status) {
  std::string text;
  for (const auto& [key, counts] : CountByKey(status)) {
    const int servers = counts.free + counts.busy;
    if (servers == 0) continue;
    text += (text.empty() ? "'" : ", '") + key + "': " + std::to_string(servers) +
            (servers == 1 ? " server (" : " servers (") + std::to_string(counts.busy) + " busy)";
  }
  return text.empty() ? "no servers" : text;
}

struct Connection {
  uint64_t id = 0;
  Socket socket;
  std::string peer;    // "connection 7 from 10.0.0.2", for the log
  std::string inbox;   // bytes received, not yet a whole request
  std::string outbox;  // replies not yet taken by the socket
  Clock::time_point hello_deadline = After(kHelloSeconds);
  Clock::time_point last_read = Clock::now();  // a message begun must go on arriving
  bool greeted = false;
  bool waiting = false;    // a device request is queued: later requests wait in the inbox
  uint64_t server_id = 0;  // the server this connection registered (0: none)
  std::string closing;     // why the connection is to be closed ("": it is not)
};

struct ServerEntry {
  std::string device_key;
  Address address;
  uint64_t lease = 0;  // 0: free
};

struct LeaseEntry {
  uint64_t server = 0;
  uint64_t client = 0;  // the connection holding it
};

struct Waiter {
  uint64_t connection = 0;
  double timeout_s = 0;
  Clock::time_point deadline;
};

class Tracker {
 public:
  Tracker(const TrackerOptions& options, Socket listener)
      : options_(options), listener_(std::move(listener)) {}
  void Run(const std::atomic<bool>* stop);

 private:
  void Accept();
  void Receive(Connection& c);
  void Flush(Connection& c);
  void Send(Connection& c, const std::string& payload);
  void Refuse(Connection& c, const std::string& message);
  void HandleInbox(Connection& c);
  void Handle(Connection& c, std::string_view payload);
  void Hello(Connection& c, Reader& r);
  void Register(Connection& c, Reader& r);
  void Request(Connection& c, Reader& r);
  void Release(Connection& c, Reader& r);
  void Dispatch(const std::string& device_key);
  void ExpireWaits();
  void CloseMarked();
  void Remove(uint64_t id);
  void FreeServer(uint64_t server_id);
  FleetStatus Status() const;

  TrackerOptions options_;
  Socket listener_;
  std::map<uint64_t, Connection> connections_;
  std::map<uint64_t, ServerEntry> servers_;  // by id, which is registration order
  std::map<uint64_t, LeaseEntry> leases_;
  std::map<std::string, std::deque<Waiter>> queues_;
  uint64_t next_connection_ = 1, next_server_ = 1, next_lease_ = 1;
};

void Tracker::Run(const std::atomic<bool>* stop) {
  while (stop == nullptr || !stop->load()) {
    std::vector<pollfd> fds{{listener_.fd(), POLLIN, 0}};
    std::vector<uint64_t> ids;
    for (auto& [id, c] : connections_) {
      short events = c.outbox.empty() ? 0 : POLLOUT;
      // Back-pressure: a peer with a full inbox or unread replies is not read from for now.
      if (c.inbox.size() <= options_.max_message_bytes + 4 && c.outbox.size() < kMaxUnsentBytes) {
        events |= POLLIN;
      }
      fds.push_back({c.socket.fd(), events, 0});
      ids.push_back(id);
    }
    if (poll(fds.data(), fds.size(), 100) < 0 && errno != EINTR) {
      LOOM_THROW << "rpc tracker: poll failed: " << std::strerror(errno);
    }
    for (size_t i = 0; i < ids.size(); ++i) {
      Connection& c = connections_.at(ids[i]);
      if (fds[i + 1].revents & POLLOUT) Flush(c);
      if (fds[i + 1].revents & (POLLIN | POLLHUP | POLLERR)) Receive(c);
    }
    if (fds[0].revents & POLLIN) Accept();
    ExpireWaits();
    for (auto& [id, c] : connections_) HandleInbox(c);
    CloseMarked();
  }
}

void Tracker::Accept() {
  while (true) {
    Socket socket(accept4(listener_.fd(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!socket.valid()) return;  // none left (or one that vanished before it was taken)
    const uint64_t id = next_connection_++;
    Connection& c = connections_[id];
    c.id = id;
    c.peer = "connection " + std::to_string(id) + " from " + PeerHost(socket.fd());
    c.socket = std::move(socket);
    if (connections_.size() > static_cast<size_t>(options_.max_connections)) {
      Refuse(c, "the tracker serves at most " + std::to_string(options_.max_connections) +
                    " connections; try again later, or start it with a higher limit");
    }
  }
}

void Tracker::Receive(Connection& c) {
  char chunk[65536];
  while (c.closing.empty()) {
    ssize_t n = recv(c.socket.fd(), chunk, sizeof chunk, MSG_DONTWAIT);
    if (n > 0) {
      c.inbox.append(chunk, static_cast<size_t>(n));
      c.last_read = Clock::now();
      if (c.inbox.size() > options_.max_message_bytes + 4) return;
    } else if (n == 0) {
      c.closing = c.inbox.empty() ? "by the peer" : "by the peer in the middle of a message";
    } else if (errno != EINTR) {
      if (errno != EAGAIN && errno != EWOULDBLOCK) c.closing = std::strerror(errno);
      return;
    }
  }
}

void Tracker::Flush(Connection& c) {
  while (!c.outbox.empty()) {
    ssize_t n = send(c.socket.fd(), c.outbox.data(), c.outbox.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) {
      c.outbox.erase(0, static_cast<size_t>(n));
    } else if (n < 0 && errno != EINTR) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && c.closing.empty()) {
        c.closing = std::string("sending failed: ") + std::strerror(errno);
      }
      return;
    }
  }
}

void Tracker::Send(Connection& c, const std::string& payload) {
  c.outbox += Writer().U32(static_cast<uint32_t>(payload.size())).data();
  c.outbox += payload;
  Flush(c);
}

void Tracker::Refuse(Connection& c, const std::string& message) {
  Send(c, ErrorReply(message));
  if (c.closing.empty()) c.closing = "refused: " + message;
}

// Handles the whole requests received so far, in order; those after a queued device request
// wait for its answer, so that each request's reply comes in the order it was asked.
void Tracker::HandleInbox(Connection& c) {
  size_t consumed = 0;
  while (c.closing.empty() && !c.waiting && c.outbox.size() < kMaxUnsentBytes &&
         c.inbox.size() - consumed >= 4) {
    Reader header(std::string_view(c.inbox).substr(consumed, 4), "frame header");
    const uint32_t size = header.U32();
    if (size > options_.max_message_bytes) {
      Refuse(c, "a message of " + std::to_string(size) + " bytes is over the tracker's limit of " +
                    std::to_string(options_.max_message_bytes) + " bytes");
      break;
    }
    if (c.inbox.size() - consumed - 4 < size) break;
    Handle(c, std::string_view(c.inbox).substr(consumed + 4, size));
    consumed += 4 + size;
  }
  c.inbox.erase(0, consumed);
}

void Tracker::Handle(Connection& c, std::string_view payload) {
  Reader r(payload, "tracker request");
  try {
    const auto op = static_cast<TrackerOp>(r.U8());
    if (!c.greeted) {
      LOOM_CHECK_USER(op == TrackerOp::kHello)
          << "not a Loom RPC peer (its first message is not a hello)";
      return Hello(c, r);
    }
    switch (op) {
      case TrackerOp::kRegister:
        return Register(c, r);
      case TrackerOp::kRequest:
        return Request(c, r);
      case TrackerOp::kRelease:
        return Release(c, r);
      case TrackerOp::kHello:
        r.Malformed("a second hello");
      case TrackerOp::kStatus: {
        r.ExpectEnd();
        Writer w = Ok();
        Status().Write(w);
        return Send(c, w.data());
      }
      default:
        r.Malformed("unknown request " + std::to_string(static_cast<int>(op)));
    }
  } catch (const Error& e) {
    Refuse(c, e.what());
  }
}

void Tracker::Hello(Connection& c, Reader& r) {
  const uint32_t magic = r.U32();
  LOOM_CHECK_USER(magic == kMagic) << "not a Loom RPC peer (its hello lacks Loom's magic number)";
  const uint32_t version = r.U32();
  LOOM_CHECK_USER(version == kProtocolVersion)
      << "this tracker speaks RPC protocol version " << kProtocolVersion << ", the peer version "
      << version << "; run the same Loom release on both sides";
  const std::string key = r.Str();
  r.ExpectEnd();
  LOOM_CHECK_USER(options_.key.empty() || KeysMatch(options_.key, key))
      << "wrong key: the tracker requires the key it was started with (its --key or "
         "--key-file); give the same one to this peer";
  c.greeted = true;
  Send(c, Ok().U32(kProtocolVersion).data());
}

std::string ReadDeviceKey(Reader& r) {
  std::string key = r.Str(kMaxDeviceKeyBytes);
  if (key.empty()) r.Malformed("an empty device key");
  return key;
}

void Tracker::Register(Connection& c, Reader& r) {
  ServerEntry server;
  server.device_key = ReadDeviceKey(r);
  server.address.host = r.Str(1024);
  const uint32_t port = r.U32();
  r.ExpectEnd();
  if (port == 0 || port > 65535) r.Malformed("port " + std::to_string(port));
  LOOM_CHECK_USER(c.server_id == 0) << "this connection already registered server " << c.server_id
                                    << "; register each server over a connection of its own";
  if (server.address.host.empty()) server.address.host = PeerHost(c.socket.fd());
  server.address.port = static_cast<int>(port);
  c.server_id = next_server_++;
  KeepAlive(c.socket.fd());
  Log("server " + std::to_string(c.server_id) + " '" + server.device_key + "' at " +
      server.address.str() + " registered (" + c.peer + ")");
  const std::string key = server.device_key;
  servers_[c.server_id] = std::move(server);
  Send(c, Ok().U64(c.server_id).data());
  Dispatch(key);
}

void Tracker::Request(Connection& c, Reader& r) {
  const std::string device_key = ReadDeviceKey(r);
  const double timeout_s = r.F64();
  r.ExpectEnd();
  if (!(timeout_s >= 0)) r.Malformed("a timeout of " + std::to_string(timeout_s) + " s");
  c.waiting = true;
  queues_[device_key].push_back({c.id, timeout_s, After(std::min(timeout_s, kMaxRequestSeconds))});
  Dispatch(device_key);
}

void Tracker::Release(Connection& c, Reader& r) {
  const uint64_t lease = r.U64();
  r.ExpectEnd();
  auto found = leases_.find(lease);
  // A lease that is gone died with its server; releasing it is then already done.
  if (found != leases_.end()) {
    LOOM_CHECK_USER(found->second.client == c.id)
        << "lease " << lease << " belongs to another client";
    const uint64_t server = found->second.server;
    leases_.erase(found);
    Log("lease " + std::to_string(lease) + " released by " + c.peer);
    FreeServer(server);
  }
  Send(c, Ok().data());
}

// Gives each free server of device_key to the client that has waited longest for one.
void Tracker::Dispatch(const std::string& device_key) {
  auto queue = queues_.find(device_key);
  for (auto& [server_id, server] : servers_) {
    if (queue == queues_.end() || queue->second.empty()) break;
    if (server.device_key != device_key || server.lease != 0) continue;
    const Waiter waiter = queue->second.front();
    queue->second.pop_front();
    Connection& client = connections_.at(waiter.connection);
    client.waiting = false;
    server.lease = next_lease_++;
    leases_[server.lease] = {server_id, waiter.connection};
    Log("lease " + std::to_string(server.lease) + ": server " + std::to_string(server_id) + " '" +
        device_key + "' at " + server.address.str() + " to " + client.peer);
    const auto port = static_cast<uint32_t>(server.address.port);
    Send(client, Ok().U64(server.lease).Str(server.address.host).U32(port).data());
  }
  if (queue != queues_.end() && queue->second.empty()) queues_.erase(queue);
}

void Tracker::ExpireWaits() {
  const auto now = Clock::now();
  for (auto queue = queues_.begin(); queue != queues_.end();) {
    auto& waiters = queue->second;
    for (auto waiter = waiters.begin(); waiter != waiters.end();) {
      if (waiter->deadline > now) {
        ++waiter;
        continue;
      }
      Connection& client = connections_.at(waiter->connection);
      client.waiting = false;
      std::ostringstream message;
      message << "no free '" << queue->first << "' device within " << waiter->timeout_s
              << " s; the fleet has: " << DescribeFleet(Status());
      Log(client.peer + ": " + message.str());
      Send(client, ErrorReply(message.str()));
      waiter = waiters.erase(waiter);
    }
    queue = waiters.empty() ? queues_.erase(queue) : std::next(queue);
  }
  for (auto& [id, c] : connections_) {
    if (!c.greeted && c.closing.empty() && now > c.hello_deadline) {
      Refuse(c, "no hello within " + std::to_string(static_cast<int>(kHelloSeconds)) + " s");
    }
    // Half a message and then silence would hold a connection slot for ever.
    if (!c.waiting && !c.inbox.empty() && c.closing.empty() &&
        std::chrono::duration<double>(now - c.last_read).count() > options_.stall_timeout_s) {
      std::ostringstream why;
      why << "a message stopped arriving: nothing more came within " << options_.stall_timeout_s
          << " s";
      Refuse(c, why.str());
    }
  }
}

void Tracker::CloseMarked() {
  for (auto it = connections_.begin(); it != connections_.end();) {
    const uint64_t id = it->first;
    ++it;
    if (!connections_.at(id).closing.empty()) Remove(id);
  }
}

// Ends a connection and what it held: its server leaves the fleet (with its lease), its
// leases free their servers for the next clients, its queued request is dropped.
void Tracker::Remove(uint64_t id) {
  Connection& c = connections_.at(id);
  Flush(c);  // the last reply (a refusal) goes out if the socket takes it now
  std::string event = c.peer + " closed (" + c.closing + ")";
  if (c.server_id != 0) {
    const ServerEntry& server = servers_.at(c.server_id);
    event = "server " + std::to_string(c.server_id) + " '" + server.device_key + "' at " +
            server.address.str() + " left the fleet: " + event;
    if (server.lease != 0) leases_.erase(server.lease);
    servers_.erase(c.server_id);
  }
  for (auto& [key, waiters] : queues_) {
    std::erase_if(waiters, [&](const Waiter& w) { return w.connection == id; });
  }
  std::vector<uint64_t> freed;
  std::erase_if(leases_, [&](const auto& lease) {
    if (lease.second.client == id) freed.push_back(lease.second.server);
    return lease.second.client == id;
  });
  if (!freed.empty()) event += "; its " + std::to_string(freed.size()) + " lease(s) released";
  Log(event);
  connections_.erase(id);
  for (uint64_t server : freed) FreeServer(server);
}

void Tracker::FreeServer(uint64_t server_id) {
  ServerEntry& server = servers_.at(server_id);
  server.lease = 0;
  Dispatch(server.device_key);
}

FleetStatus Tracker::Status() const {
  FleetStatus status;
  for (const auto& [id, server] : servers_) {
    status.servers.push_back({server.device_key, server.address.str(), server.lease != 0});
  }
  for (const auto& [key, waiters] : queues_) {
    if (!waiters.empty()) status.queued[key] = static_cast<int>(waiters.size());
  }
  return status;
}

}  // namespace

void FleetStatus::Write(Writer& w) const {
  w.U32(static_cast<uint32_t>(servers.size()));
  for (const Server& server : servers) {
    w.Str(server.device_key).Str(server.address).U8(server.busy ? 1 : 0);
  }
  w.U32(static_cast<uint32_t>(queued.size()));
  for (const auto& [key, count] : queued) w.Str(key).U32(static_cast<uint32_t>(count));
}

FleetStatus FleetStatus::Read(Reader& r) {
  FleetStatus status;
  // Each entry takes bytes, so a count larger than the message runs out of them and fails.
  for (uint32_t i = 0, n = r.U32(); i < n; ++i) {
    Server server;
    server.device_key = r.Str(kMaxDeviceKeyBytes);
    server.address = r.Str(1100);
    const uint8_t busy = r.U8();
    if (busy > 1) r.Malformed("a server state of " + std::to_string(busy));
    server.busy = busy == 1;
    status.servers.push_back(std::move(server));
  }
  for (uint32_t i = 0, n = r.U32(); i < n; ++i) {
    std::string key = r.Str(kMaxDeviceKeyBytes);
    const uint32_t count = r.U32();
    if (count > INT_MAX) r.Malformed(std::to_string(count) + " queued clients");
    status.queued[key] = static_cast<int>(count);
  }
  r.ExpectEnd();
  return status;
}

std::string FleetStatus::str() const {
  const auto counts = CountByKey(*this);
  if (counts.empty()) return "no servers registered, no clients waiting\n";
  size_t key_width = std::string("device key").size(), address_width = 0;
  for (const auto& [key, count] : counts) key_width = std::max(key_width, key.size());
  for (const Server& server : servers) {
    address_width = std::max(address_width, server.address.size());
  }
  std::ostringstream text;
  text << std::left << std::setw(static_cast<int>(key_width)) << "device key"
       << "  free  busy  queued\n"
       << std::right;
  for (const auto& [key, count] : counts) {
    text << std::left << std::setw(static_cast<int>(key_width)) << key << std::right << std::setw(6)
         << count.free << std::setw(6) << count.busy << std::setw(8) << count.queued << "\n";
  }
  for (const Server& server : servers) {
    text << std::left << "server " << std::setw(static_cast<int>(key_width)) << server.device_key
         << "  " << std::setw(static_cast<int>(address_width)) << server.address << "  "
         << (server.busy ? "busy" : "free") << "\n";
  }
  return text.str();
}

void RunTracker(const TrackerOptions& options, const std::function<void(int port)>& on_listening,
                const std::atomic<bool>* stop) {
  LOOM_CHECK_USER(IsLoopbackHost(options.host) || !options.key.empty())
      << "rpc tracker: listening on " << options.host
      << " (not a loopback address) lets other machines in, so every peer must present a key; "
         "give --key or --key-file";
  LOOM_CHECK_USER(options.max_connections >= 1 && options.max_message_bytes >= 256)
      << "rpc tracker: at least 1 connection and 256-byte messages are needed (got "
      << options.max_connections << " and " << options.max_message_bytes << ")";
  int port = 0;
  Socket listener = Listen(options.host, options.port, &port);
  // Accepting must not block when a connection vanishes between poll and accept.
  fcntl(listener.fd(), F_SETFL, fcntl(listener.fd(), F_GETFL) | O_NONBLOCK);
  Log("listening on " + Address{options.host, port}.str());
  if (on_listening) on_listening(port);
  Tracker(options, std::move(listener)).Run(stop);
}

namespace {

// A request under way: its op, then its fields.
Writer Message(TrackerOp op) {
  Writer w;
  w.U8(static_cast<uint8_t>(op));
  return w;
}

struct Answer {
  bool ok = false;
  std::string body;  // the results, or the tracker's message
};

// Sends one request and reads its reply; a lost connection or a silent tracker is a
// loom::Error (the connection is then out of step).
Answer Exchange(int fd, const Address& tracker, const std::string& request, double timeout_s,
                const std::string& what) {
  // A tracker that refuses a peer says why and closes at once, maybe before the request is
  // all sent: the reason is still there to read.
  std::string send_failure = "did it stop or restart?";
  try {
    SendFrame(fd, request);
  } catch (const Error& e) {
    send_failure = e.what();
  }
  std::string payload;
  const FrameStatus status = RecvFrame(fd, kMaxReplyBytes, timeout_s, &payload);
  LOOM_CHECK_USER(status != FrameStatus::kClosed)
      << "tracker " << tracker.str() << " closed the connection during " << what << " ("
      << send_failure << ")";
  LOOM_CHECK_USER(status != FrameStatus::kTimeout)
      << "tracker " << tracker.str() << ": no reply to " << what << " within " << timeout_s << " s";
  Reader r(payload, "tracker reply to " + what);
  const uint8_t reply = r.U8();
  if (reply == static_cast<uint8_t>(Reply::kError)) return {false, r.Str()};
  if (reply != static_cast<uint8_t>(Reply::kOk)) r.Malformed("reply " + std::to_string(reply));
  return {true, payload.substr(1)};
}

std::string ResultsOf(const Address& tracker, const Answer& answer) {
  LOOM_CHECK_USER(answer.ok) << "tracker " << tracker.str() << ": " << answer.body;
  return answer.body;
}

void SayHello(int fd, const Address& tracker, const std::string& key, double timeout_s) {
  const std::string hello =
      Message(TrackerOp::kHello).U32(kMagic).U32(kProtocolVersion).Str(key).data();
  const std::string results = ResultsOf(tracker, Exchange(fd, tracker, hello, timeout_s, "hello"));
  Reader r(results, "tracker hello reply");
  const uint32_t version = r.U32();
  r.ExpectEnd();
  LOOM_CHECK_USER(version == kProtocolVersion)
      << "tracker " << tracker.str() << " speaks RPC protocol version " << version
      << ", this program version " << kProtocolVersion
      << "; run the same Loom release on both sides";
}

}  // namespace

TrackerClient::TrackerClient(const Address& tracker, const std::string& key,
                             double connect_timeout_s)
    : tracker_(tracker), socket_(Connect(tracker, connect_timeout_s, "--tracker")) {
  SayHello(socket_.fd(), tracker_, key, kReplySeconds);
}

std::string TrackerClient::Call(const std::string& request, double timeout_s,
                                const std::string& what) {
  LOOM_CHECK_USER(socket_.valid())
      << "the connection to tracker " << tracker_.str()
      << " was lost by an earlier request; make a new TrackerClient to connect again";
  Answer answer;
  try {
    answer = Exchange(socket_.fd(), tracker_, request, timeout_s, what);
  } catch (const Error&) {
    socket_.Close();
    throw;
  }
  return ResultsOf(tracker_, answer);
}

Lease TrackerClient::Request(const std::string& device_key, double timeout_s) {
  LOOM_CHECK_USER(timeout_s >= 0) << "a request for a '" << device_key
                                  << "' device: the timeout must be at least 0 s, got "
                                  << timeout_s;
  timeout_s = std::min(timeout_s, kMaxRequestSeconds);
  const std::string request = Message(TrackerOp::kRequest).Str(device_key).F64(timeout_s).data();
  // The tracker answers by timeout_s; the margin covers a slow network.
  const std::string results =
      Call(request, timeout_s + 10, "the request for a '" + device_key + "' device");
  Reader r(results, "tracker lease");
  Lease lease;
  lease.id = r.U64();
  lease.server.host = r.Str(1024);
  lease.server.port = static_cast<int>(r.U32());
  r.ExpectEnd();
  return lease;
}

void TrackerClient::Release(const Lease& lease) {
  const std::string request = Message(TrackerOp::kRelease).U64(lease.id).data();
  Reader(Call(request, kReplySeconds, "the release of lease " + std::to_string(lease.id)),
         "tracker release reply")
      .ExpectEnd();
}

FleetStatus TrackerClient::Status() {
  const std::string request = Message(TrackerOp::kStatus).data();
  const std::string results = Call(request, kReplySeconds, "the status request");
  Reader r(results, "tracker status");
  return FleetStatus::Read(r);
}

int TrackerClient::RequireDevices(const std::string& device_key) {
  const FleetStatus fleet = Status();
  int count = 0;
  for (const FleetStatus::Server& server : fleet.servers) count += server.device_key == device_key;
  if (count == 0) {
    LOOM_THROW << "the tracker at " << tracker_.str() << " has no '" << device_key
               << "' device; its fleet: " << DescribeFleet(fleet)
               << ". Start `loom rpc server --tracker " << tracker_.str() << " --device-key "
               << device_key << "` on the device, or ask for a key the fleet has";
  }
  return count;
}

TrackerRegistration::TrackerRegistration(Address tracker, std::string key, std::string device_key,
                                         std::string host, int port)
    : tracker_(std::move(tracker)),
      key_(std::move(key)),
      device_key_(std::move(device_key)),
      host_(std::move(host)),
      port_(port) {}

bool TrackerRegistration::Reconnect(std::string* why) {
  socket_.Close();
  try {
    Socket socket = Connect(tracker_, kConnectSeconds, "--tracker");
    SayHello(socket.fd(), tracker_, key_, kConnectSeconds);
    const auto port = static_cast<uint32_t>(port_);
    const std::string request =
        Message(TrackerOp::kRegister).Str(device_key_).Str(host_).U32(port).data();
    const std::string results =
        ResultsOf(tracker_, Exchange(socket.fd(), tracker_, request, kConnectSeconds,
                                     "the registration of '" + device_key_ + "'"));
    Reader r(results, "tracker registration reply");
    r.U64();  // the server's id, which only the tracker's log uses
    r.ExpectEnd();
    KeepAlive(socket.fd());
    socket_ = std::move(socket);
    return true;
  } catch (const Error& e) {
    if (why != nullptr) *why = e.what();
    return false;
  }
}

bool KeysMatch(const std::string& expected, const std::string& given) {
  if (expected.empty()) return given.empty();
  // Every byte of `given` is compared, and none ends the loop early, so the time depends on
  // the given key's length only.
  unsigned difference = expected.size() != given.size() ? 1 : 0;
  for (size_t i = 0; i < given.size(); ++i) {
    difference |= static_cast<unsigned char>(given[i] ^ expected[i % expected.size()]);
  }
  return difference == 0;
}

}  // namespace loom::rpc
