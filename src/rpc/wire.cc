#include "loom/rpc/wire.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>

#include "loom/support/error.h"

namespace loom::rpc {

namespace {

using Clock = std::chrono::steady_clock;

// The rest of a frame that began must follow within this long.
constexpr double kStallSeconds = 60;

// Milliseconds left until `deadline` for poll (-1: no deadline).
int MillisecondsLeft(std::optional<Clock::time_point> deadline) {
  if (!deadline) return -1;
  // Rounded up: a poll that wakes before the deadline would be taken for the peer's close.
  auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - Clock::now());
  return static_cast<int>(std::max<int64_t>(0, left.count()));
}

// Waits until `fd` is readable (or writable); false when the deadline passed first.
bool WaitFor(int fd, short events, std::optional<Clock::time_point> deadline) {
  while (true) {
    pollfd p{fd, events, 0};
    int n = poll(&p, 1, MillisecondsLeft(deadline));
    if (n > 0) return true;
    if (n == 0 && Clock::now() >= *deadline) return false;
    if (n == 0) continue;
    if (errno != EINTR) LOOM_THROW << "rpc: poll failed: " << std::strerror(errno);
  }
}

// Reads exactly `size` bytes. Returns the bytes read before the peer closed or the deadline
// passed (fewer than size then).
size_t ReadFully(int fd, char* out, size_t size, std::optional<Clock::time_point> deadline) {
  size_t done = 0;
  while (done < size) {
    // What has arrived is taken without a poll first: one system call per read, not two.
    ssize_t n = recv(fd, out + done, size - done, MSG_DONTWAIT);
    if (n == 0) return done;
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        if (!WaitFor(fd, POLLIN, deadline)) return done;
        continue;
      }
      if (errno == EINTR) continue;
      if (errno == ECONNRESET) return done;
      LOOM_THROW << "rpc: reading from the connection failed: " << std::strerror(errno);
    }
    done += static_cast<size_t>(n);
  }
  return done;
}

template <typename T>
void PutLittleEndian(std::string& out, T value) {
  char bytes[sizeof(T)];
  for (size_t i = 0; i < sizeof(T); ++i) bytes[i] = static_cast<char>((value >> (8 * i)) & 0xff);
  out.append(bytes, sizeof(T));
}

template <typename T>
T GetLittleEndian(std::string_view bytes) {
  T value = 0;
  for (size_t i = 0; i < sizeof(T); ++i) {
    value |= static_cast<T>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  }
  return value;
}

addrinfo* Resolve(const std::string& host, int port, bool passive, const std::string& what) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (passive) hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
  LOOM_CHECK_USER(rc == 0 && found != nullptr)
      << what << ": cannot resolve host '" << host << "': " << gai_strerror(rc);
  return found;
}

}  // namespace

Socket& Socket::operator=(Socket&& other) noexcept {
  if (this != &other) {
    Close();
    fd_ = other.Release();
  }
  return *this;
}

int Socket::Release() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

void Socket::Close() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

Address ParseAddress(const std::string& text, const std::string& what) {
  size_t colon = text.rfind(':');
  LOOM_CHECK_USER(colon != std::string::npos && colon > 0 && colon + 1 < text.size())
      << what << " '" << text << "': expected HOST:PORT, e.g. 127.0.0.1:9090";
  Address address;
  address.host = text.substr(0, colon);
  if (address.host.size() > 2 && address.host.front() == '[' && address.host.back() == ']') {
    address.host = address.host.substr(1, address.host.size() - 2);
  }
  const std::string port = text.substr(colon + 1);
  LOOM_CHECK_USER(port.size() <= 5 && port.find_first_not_of("0123456789") == std::string::npos &&
                  std::stoi(port) <= 65535)
      << what << " '" << text << "': the port must be a number from 0 to 65535";
  address.port = std::stoi(port);
  return address;
}

bool IsLoopbackHost(const std::string& host) {
  if (host == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

Socket Listen(const std::string& host, int port, int* bound_port) {
  const std::string what = "listening on " + host + ":" + std::to_string(port);
  addrinfo* found = Resolve(host, port, /*passive=*/true, what);
  std::string failure;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    Socket socket(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
    if (!socket.valid()) continue;
    int one = 1;
    setsockopt(socket.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(socket.fd(), a->ai_addr, a->ai_addrlen) != 0 || listen(socket.fd(), 64) != 0) {
      failure = std::strerror(errno);
      continue;
    }
    freeaddrinfo(found);
    sockaddr_storage local{};
    socklen_t length = sizeof local;
    getsockname(socket.fd(), reinterpret_cast<sockaddr*>(&local), &length);
    *bound_port = local.ss_family == AF_INET6
                      ? ntohs(reinterpret_cast<sockaddr_in6*>(&local)->sin6_port)
                      : ntohs(reinterpret_cast<sockaddr_in*>(&local)->sin_port);
    return socket;
  }
  freeaddrinfo(found);
  if (failure.empty()) failure = "no usable address";
  throw Error(what + ": " + failure +
              " (is another program using the port? choose another with --port)");
}

Socket Connect(const Address& address, double timeout_s, const std::string& what) {
  addrinfo* found = Resolve(address.host, address.port, /*passive=*/false, what);
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(timeout_s));
  std::string failure = "no usable address";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    Socket socket(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
    if (!socket.valid()) continue;
    int flags = fcntl(socket.fd(), F_GETFL);
    fcntl(socket.fd(), F_SETFL, flags | O_NONBLOCK);
    int rc = connect(socket.fd(), a->ai_addr, a->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      if (!WaitFor(socket.fd(), POLLOUT, deadline)) {
        failure = "no answer within " + std::to_string(static_cast<int>(timeout_s)) + " s";
        continue;
      }
      int error = 0;
      socklen_t length = sizeof error;
      getsockopt(socket.fd(), SOL_SOCKET, SO_ERROR, &error, &length);
      rc = error == 0 ? 0 : -1;
      errno = error;
    }
    if (rc != 0) {
      failure = std::strerror(errno);
      continue;
    }
    fcntl(socket.fd(), F_SETFL, flags);
    int one = 1;
    setsockopt(socket.fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    freeaddrinfo(found);
    return socket;
  }
  freeaddrinfo(found);
  throw Error(what + ": cannot connect to " + address.str() + ": " + failure +
              " (is the server running there?)");
}

void KeepAlive(int fd) {
  int one = 1, idle = 10, interval = 5, count = 3;
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
}

std::string PeerHost(int fd) {
  sockaddr_storage peer{};
  socklen_t length = sizeof peer;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &length) != 0) return "?";
  char text[INET6_ADDRSTRLEN] = "?";
  if (peer.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&peer)->sin_addr, text, sizeof text);
  } else if (peer.ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(&peer)->sin6_addr, text, sizeof text);
  }
  return text;
}

void SendFrame(int fd, std::string_view payload) {
  LOOM_CHECK_USER(payload.size() <= UINT32_MAX)
      << "rpc: a message of " << payload.size() << " bytes is longer than a frame can say";
  std::string header;
  PutLittleEndian<uint32_t>(header, static_cast<uint32_t>(payload.size()));
  // Header and payload in one call: sent apart, the payload would wait for the header's
  // acknowledgement (Nagle's algorithm against delayed ACKs: 40 ms a message).
  iovec parts[2] = {{header.data(), header.size()},
                    {const_cast<char*>(payload.data()), payload.size()}};
  size_t first = 0;
  while (first < 2) {
    msghdr message{};
    message.msg_iov = parts + first;
    message.msg_iovlen = 2 - first;
    ssize_t n = sendmsg(fd, &message, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    LOOM_CHECK_USER(n > 0) << "rpc: the connection closed while sending (" << std::strerror(errno)
                           << ")";
    size_t sent = static_cast<size_t>(n);
    while (first < 2 && sent >= parts[first].iov_len) sent -= parts[first++].iov_len;
    if (first < 2) {
      parts[first].iov_base = static_cast<char*>(parts[first].iov_base) + sent;
      parts[first].iov_len -= sent;
    }
  }
}

void SendLastFrame(int fd, std::string_view payload, double drain_s) {
  try {
    SendFrame(fd, payload);
  } catch (const Error&) {
    return;
  }
  shutdown(fd, SHUT_WR);
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(drain_s));
  char buffer[65536];
  while (WaitFor(fd, POLLIN, deadline)) {
    ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) return;
  }
}

FrameStatus RecvFrame(int fd, size_t max_bytes, double timeout_s, std::string* payload) {
  std::optional<Clock::time_point> deadline;
  if (timeout_s >= 0) {
    deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                  std::chrono::duration<double>(timeout_s));
  }
  char header[4];
  size_t got = ReadFully(fd, header, 1, deadline);
  if (got == 0) {
    return deadline && Clock::now() >= *deadline ? FrameStatus::kTimeout : FrameStatus::kClosed;
  }
  auto stall = [] {
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(kStallSeconds));
  };
  LOOM_CHECK_USER(ReadFully(fd, header + 1, 3, stall()) == 3)
      << "rpc: the connection closed in the middle of a message header";
  const uint32_t size = GetLittleEndian<uint32_t>(std::string_view(header, 4));
  LOOM_CHECK_USER(size <= max_bytes)
      << "rpc: a message of " << size << " bytes is over the limit of " << max_bytes
      << " bytes the receiver takes";
  payload->resize(size);
  LOOM_CHECK_USER(ReadFully(fd, payload->data(), size, stall()) == size)
      << "rpc: the connection closed in the middle of a message (" << size << " bytes announced)";
  return FrameStatus::kOk;
}

Writer& Writer::U8(uint8_t value) {
  data_.push_back(static_cast<char>(value));
  return *this;
}
Writer& Writer::U32(uint32_t value) {
  PutLittleEndian(data_, value);
  return *this;
}
Writer& Writer::U64(uint64_t value) {
  PutLittleEndian(data_, value);
  return *this;
}
Writer& Writer::I64(int64_t value) { return U64(static_cast<uint64_t>(value)); }
Writer& Writer::F64(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return U64(bits);
}
Writer& Writer::Str(std::string_view value) {
  U32(static_cast<uint32_t>(value.size()));
  data_.append(value);
  return *this;
}
Writer& Writer::Dtype(DataType dtype) {
  return U8(static_cast<uint8_t>(dtype.code()))
      .U8(static_cast<uint8_t>(dtype.bits()))
      .U32(static_cast<uint32_t>(dtype.lanes()));
}
Writer& Writer::Shape(const std::vector<int64_t>& shape) {
  U32(static_cast<uint32_t>(shape.size()));
  for (int64_t extent : shape) I64(extent);
  return *this;
}

std::string_view Reader::Take(size_t n, const char* field) {
  if (n > remaining()) {
    Malformed(std::string("the ") + field + " needs " + std::to_string(n) + " bytes, " +
              std::to_string(remaining()) + " are left");
  }
  std::string_view bytes = data_.substr(offset_, n);
  offset_ += n;
  return bytes;
}

void Reader::Malformed(const std::string& why) const {
  throw Error("rpc: malformed " + what_ + ": " + why);
}

uint8_t Reader::U8() { return static_cast<uint8_t>(Take(1, "u8 field")[0]); }
uint32_t Reader::U32() { return GetLittleEndian<uint32_t>(Take(4, "u32 field")); }
uint64_t Reader::U64() { return GetLittleEndian<uint64_t>(Take(8, "u64 field")); }
int64_t Reader::I64() { return static_cast<int64_t>(U64()); }
double Reader::F64() {
  uint64_t bits = U64();
  double value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

std::string Reader::Str(size_t max_bytes) {
  uint32_t size = U32();
  if (size > max_bytes) {
    Malformed("a string of " + std::to_string(size) + " bytes (at most " +
              std::to_string(max_bytes) + ")");
  }
  return std::string(Take(size, "string"));
}

std::string_view Reader::Blob() { return Take(U32(), "byte block"); }

DataType Reader::Dtype() {
  const uint8_t code = U8(), bits = U8();
  const uint32_t lanes = U32();
  if (code > static_cast<uint8_t>(DataType::Code::kBool) || bits == 0 || bits > 64 || lanes == 0 ||
      lanes > 64) {
    Malformed("dtype (code " + std::to_string(code) + ", " + std::to_string(bits) + " bits, " +
              std::to_string(lanes) + " lanes)");
  }
  try {
    return DataType(static_cast<DataType::Code>(code), bits, static_cast<int>(lanes));
  } catch (const Error& e) {
    Malformed(std::string("dtype: ") + e.what());
  }
}

std::vector<int64_t> Reader::Shape(bool allow_unknown) {
  constexpr int64_t kMaxExtent = int64_t{1} << 40;
  const uint32_t rank = U32();
  if (rank > 32) Malformed("a shape of rank " + std::to_string(rank) + " (at most 32)");
  std::vector<int64_t> shape(rank);
  int64_t elements = 1;
  for (int64_t& extent : shape) {
    extent = I64();
    if (allow_unknown && extent == -1) continue;
    if (extent < 0 || extent > kMaxExtent) Malformed("extent " + std::to_string(extent));
    if (elements != 0 && extent > kMaxExtent / elements) {
      Malformed("a shape of more than 2^40 elements");
    }
    elements *= extent;
  }
  return shape;
}

void Reader::ExpectEnd() const {
  if (remaining() != 0) Malformed(std::to_string(remaining()) + " bytes past the last field");
}

}  // namespace loom::rpc
