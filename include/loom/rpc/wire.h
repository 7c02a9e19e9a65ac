// The bytes under Loom's RPC: TCP sockets, length-prefixed frames and the little-endian
// encoding of a frame's fields. Every message, between a client and a server or a tracker,
// is one frame: a u32 payload length, then the payload. The reader of a frame checks every
// field against what is left, so a malformed or truncated message is a loom::Error naming
// the field, never a read past the end.
//
//   Writer w;
//   w.U8(op).Str(name).U64(offset).Blob(bytes);
//   SendFrame(socket.fd(), w.data());
//   std::string payload;
//   if (RecvFrame(fd, limits.max_message_bytes, 30, &payload) == FrameStatus::kOk) {
//     Reader r(payload, "an upload");
//     std::string name = r.Str(); ...; r.ExpectEnd();
//   }
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "loom/runtime/data_type.h"

namespace loom::rpc {

// An open file descriptor, closed when the Socket dies.
class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() { Close(); }
  Socket(Socket&& other) noexcept : fd_(other.Release()) {}
  Socket& operator=(Socket&& other) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int Release();
  void Close();

 private:
  int fd_ = -1;
};

struct Address {
  std::string host;
  int port = 0;
  std::string str() const { return host + ":" + std::to_string(port); }
};
// "host:port" (a port from 0 to 65535); anything else is a loom::Error naming `what`
// ("--rpc", "--tracker").
Address ParseAddress(const std::string& text, const std::string& what);
// Whether `host` names this machine's loopback interface ("127.0.0.1", "localhost", "::1").
bool IsLoopbackHost(const std::string& host);

// A listening TCP socket on host:port (port 0: one the system picks); *bound_port is the port.
Socket Listen(const std::string& host, int port, int* bound_port);
// A connected socket, within timeout_s; a refusal or timeout is a loom::Error naming the
// address and `what`.
Socket Connect(const Address& address, double timeout_s, const std::string& what);
// Turns on TCP keep-alive with short intervals, so a peer whose machine vanished is noticed
// within a minute rather than hours.
void KeepAlive(int fd);
// The peer's IP address as text.
std::string PeerHost(int fd);

// Sends one frame (u32 length, payload); a closed or failing connection is a loom::Error.
void SendFrame(int fd, std::string_view payload);
// Sends a last frame (an error saying why the connection ends), then reads and drops what
// the peer still sends for up to drain_s: closing a socket with unread bytes resets the
// connection, and the peer would lose the frame. Failures are ignored (the peer may be gone).
void SendLastFrame(int fd, std::string_view payload, double drain_s);
enum class FrameStatus { kOk, kClosed, kTimeout };
// Reads one frame into *payload. kClosed: the peer closed the connection before a frame
// began; kTimeout: nothing arrived within timeout_s (< 0: wait forever). A frame longer than
// max_bytes, or one cut off, is a loom::Error (the connection is then out of step: close it).
FrameStatus RecvFrame(int fd, size_t max_bytes, double timeout_s, std::string* payload);

// Appends fields to a payload.
class Writer {
 public:
  Writer& U8(uint8_t value);
  Writer& U32(uint32_t value);
  Writer& U64(uint64_t value);
  Writer& I64(int64_t value);
  Writer& F64(double value);
  // A u32 length, then the bytes.
  Writer& Str(std::string_view value);
  Writer& Blob(std::string_view value) { return Str(value); }
  Writer& Dtype(DataType dtype);
  Writer& Shape(const std::vector<int64_t>& shape);
  const std::string& data() const { return data_; }

 private:
  std::string data_;
};

// Reads fields from a payload, in order; a field that does not fit what is left, or a value
// out of its range, is a loom::Error "malformed <what>: ...".
class Reader {
 public:
  Reader(std::string_view payload, std::string what) : data_(payload), what_(std::move(what)) {}
  uint8_t U8();
  uint32_t U32();
  uint64_t U64();
  int64_t I64();
  double F64();
  // At most max_bytes long.
  std::string Str(size_t max_bytes = 1 << 16);
  std::string_view Blob();
  // A dtype of at most 64 bits and 64 lanes.
  DataType Dtype();
  // At most 32 dimensions, each of 0..2^40 (or -1 when allow_unknown), at most 2^40 elements.
  std::vector<int64_t> Shape(bool allow_unknown = false);
  // A loom::Error when bytes are left over.
  void ExpectEnd() const;
  size_t remaining() const { return data_.size() - offset_; }
  [[noreturn]] void Malformed(const std::string& why) const;

 private:
  std::string_view Take(size_t n, const char* field);

  std::string_view data_;
  std::string what_;
  size_t offset_ = 0;
};

}  // namespace loom::rpc
