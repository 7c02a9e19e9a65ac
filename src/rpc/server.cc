// The server's own process only accepts: each session is forked into a child (session.cc),
// which takes the connection, its folder and its limits with it. The parent counts the
// children, reaps them, removes their folders and keeps the tracker registration alive.
#include "loom/rpc/server.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>

#include "loom/rpc/protocol.h"
#include "loom/rpc/tracker.h"
#include "loom/rpc/wire.h"
#include "loom/runtime/module.h"
#include "loom/support/error.h"
#include "session.h"

namespace loom::rpc {

namespace {

using Clock = std::chrono::steady_clock;

constexpr double kTrackerRetrySeconds = 5;

void Log(const std::string& line) { std::fprintf(stderr, "loom rpc server: %s\n", line.c_str()); }

void CheckOptions(const ServerOptions& options) {
  LOOM_CHECK_USER(IsLoopbackHost(options.host) || !options.key.empty())
      << "loom rpc server: --host " << options.host
      << " is not a loopback address, and a server reachable from other machines runs what "
         "anyone uploads: give a shared key (--key or --key-file), which clients then give too";
  LOOM_CHECK_USER(options.max_sessions >= 1 && options.max_message_bytes >= 4096 &&
                  options.max_upload_bytes >= 1 && options.max_array_bytes >= 1 &&
                  options.idle_timeout_s > 0 && options.max_call_s > 0)
      << "loom rpc server: --max-sessions, the size limits and the timeouts must be positive "
         "(and messages at least 4 KiB)";
  LOOM_CHECK_USER(options.tracker.empty() || !options.device_key.empty())
      << "loom rpc server: --tracker needs --device-key, the key clients ask the tracker for "
         "(for example aarch64-neon or x86-avx512)";
}

std::string MakeSessionFolder(const std::string& work_dir) {
  const std::filesystem::path parent =
      work_dir.empty() ? std::filesystem::temp_directory_path() : std::filesystem::path(work_dir);
  std::string pattern = (parent / "loom-rpc-session-XXXXXX").string();
  LOOM_CHECK_USER(mkdtemp(pattern.data()) != nullptr)
      << "cannot make a session folder in " << parent.string() << ": " << std::strerror(errno);
  return pattern;
}

// The accepting loop waits only briefly for a refused client's hello to arrive and be dropped.
void Refuse(int fd, const std::string& message) {
  Writer w;
  w.U8(static_cast<uint8_t>(Reply::kError)).Str(message);
  SendLastFrame(fd, w.data(), /*drain_s=*/0.1);
}

std::string HowItEnded(int status) {
  if (WIFSIGNALED(status)) {
    const int signal = WTERMSIG(status);
    return signal == SIGALRM ? "ended: a request ran past --max-call-s"
                             : std::string("ended by signal ") + std::to_string(signal) + " (" +
                                   strsignal(signal) + ")";
  }
  return "ended";
}

class Server {
 public:
  explicit Server(const ServerOptions& options) : options_(options) {}
  void Run(const std::function<void(int port)>& on_listening, const std::atomic<bool>* stop);

 private:
  void Reap();
  void KeepRegistered();
  void Accept();
  void EndSessions();

  const ServerOptions& options_;
  Socket listener_;
  std::optional<TrackerRegistration> registration_;
  Clock::time_point last_registration_attempt_;
  std::map<pid_t, std::string> sessions_;  // child process -> its folder
};

void Server::Run(const std::function<void(int port)>& on_listening, const std::atomic<bool>* stop) {
  CheckOptions(options_);
  int port = 0;
  listener_ = Listen(options_.host, options_.port, &port);
  // A connection that vanishes between poll and accept must not block the loop in accept.
  fcntl(listener_.fd(), F_SETFL, fcntl(listener_.fd(), F_GETFL) | O_NONBLOCK);
  if (!options_.tracker.empty()) {
    registration_.emplace(ParseAddress(options_.tracker, "--tracker"), options_.key,
                          options_.device_key, options_.advertise_host, port);
    last_registration_attempt_ = Clock::now() - std::chrono::hours(1);
    KeepRegistered();
  }
  Log("listening on " + options_.host + ":" + std::to_string(port) + " (" +
      runtime::HostArchitecture() + ")");
  on_listening(port);
  while (stop == nullptr || !stop->load()) {
    Reap();
    KeepRegistered();
    pollfd fds[2] = {{listener_.fd(), POLLIN, 0}, {-1, POLLIN, 0}};
    if (registration_ && registration_->connected()) fds[1].fd = registration_->fd();
    if (poll(fds, 2, 200) <= 0) continue;
    if (fds[1].fd >= 0 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      // The tracker sends nothing after the registration: readable means it went away.
      char byte;
      if (recv(fds[1].fd, &byte, 1, MSG_DONTWAIT) <= 0) {
        registration_->Lost();
        Log("lost the tracker at " + registration_->tracker().str() + "; registering again every " +
            std::to_string(static_cast<int>(kTrackerRetrySeconds)) + " s");
      }
    }
    if ((fds[0].revents & POLLIN) != 0) Accept();
  }
  EndSessions();
}

void Server::Reap() {
  int status = 0;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
    auto it = sessions_.find(pid);
    if (it == sessions_.end()) continue;
    std::error_code ignored;
    std::filesystem::remove_all(it->second, ignored);
    Log("session " + std::to_string(pid) + " " + HowItEnded(status));
    sessions_.erase(it);
  }
}

void Server::KeepRegistered() {
  if (!registration_ || registration_->connected()) return;
  if (std::chrono::duration<double>(Clock::now() - last_registration_attempt_).count() <
      kTrackerRetrySeconds) {
    return;
  }
  last_registration_attempt_ = Clock::now();
  std::string why;
  if (registration_->Reconnect(&why)) {
    Log("registered with the tracker at " + registration_->tracker().str() + " as '" +
        options_.device_key + "'");
  } else {
    Log("cannot register with the tracker at " + registration_->tracker().str() + ": " + why +
        " (retrying every " + std::to_string(static_cast<int>(kTrackerRetrySeconds)) + " s)");
  }
}

void Server::Accept() {
  Socket connection(accept4(listener_.fd(), nullptr, nullptr, SOCK_CLOEXEC));
  if (!connection.valid()) return;
  const std::string peer = PeerHost(connection.fd());
  if (static_cast<int>(sessions_.size()) >= options_.max_sessions) {
    Refuse(connection.fd(), "the server is busy: it runs at most " +
                                std::to_string(options_.max_sessions) +
                                " sessions at once (--max-sessions); try again later");
    Log("refused a session from " + peer + ": " + std::to_string(sessions_.size()) +
        " sessions are running");
    return;
  }
  std::string folder;
  try {
    folder = MakeSessionFolder(options_.work_dir);
  } catch (const Error& e) {
    Refuse(connection.fd(), e.what());
    Log(e.what());
    return;
  }
  std::fflush(nullptr);  // nothing buffered is written twice
  const pid_t server = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    Refuse(connection.fd(),
           std::string("the server cannot start a session: ") + std::strerror(errno));
    std::error_code ignored;
    std::filesystem::remove_all(folder, ignored);
    return;
  }
  if (pid == 0) {
    // The session dies with the server: a killed server leaves no orphan running kernels.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != server) _exit(1);  // it died before the request took effect
    close(listener_.Release());
    if (registration_) registration_->Lost();
    ServeSession(connection.fd(), folder, options_);
    std::fflush(nullptr);
    _exit(0);  // no exit handlers: they belong to the server
  }
  sessions_[pid] = folder;
  Log("session " + std::to_string(pid) + " for " + peer);
}

void Server::EndSessions() {
  for (const auto& [pid, folder] : sessions_) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    std::error_code ignored;
    std::filesystem::remove_all(folder, ignored);
  }
  sessions_.clear();
}

}  // namespace

void RunServer(const ServerOptions& options, const std::function<void(int port)>& on_listening,
               const std::atomic<bool>* stop) {
  Server server(options);
  server.Run(on_listening, stop);
}

}  // namespace loom::rpc
