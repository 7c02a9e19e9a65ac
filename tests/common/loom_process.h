// A `loom rpc server` or `loom rpc tracker` run by a test as the tool's own process, on a
// port the system picks: started, waited for until it announces its port, and killed when
// the test ends.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace loom::test {

class LoomProcess {
 public:
  // Runs `loom <args...>` with stderr to `log_path`; waits for "listening on HOST:PORT".
  LoomProcess(const std::vector<std::string>& args, const std::string& log_path)
      : log_path_(log_path) {
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[1], 1);
      std::FILE* log = std::fopen(log_path.c_str(), "w");
      if (log != nullptr) dup2(fileno(log), 2);
      close(fds[0]);
      std::vector<char*> argv{const_cast<char*>(LOOM_TEST_CLI)};
      for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
      argv.push_back(nullptr);
      execv(LOOM_TEST_CLI, argv.data());
      _exit(127);
    }
    close(fds[1]);
    std::FILE* out = fdopen(fds[0], "r");
    char line[512];
    while (std::fgets(line, sizeof line, out) != nullptr) {
      std::string text = line;
      size_t at = text.find("listening on ");
      if (at == std::string::npos) continue;
      port_ = std::stoi(text.substr(text.rfind(':') + 1));
      break;
    }
    stdout_ = out;  // kept open: the process may print more
    if (port_ == 0) {
      Stop();
      throw std::runtime_error("loom did not start listening; its log:\n" + Log());
    }
  }
  ~LoomProcess() {
    Stop();
    if (stdout_ != nullptr) std::fclose(stdout_);
  }
  LoomProcess(const LoomProcess&) = delete;
  LoomProcess& operator=(const LoomProcess&) = delete;

  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }
  // Sends `signal` and waits for the process to end.
  void Stop(int signal = SIGKILL) {
    if (pid_ <= 0) return;
    kill(pid_, signal);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  std::string Log() const {
    std::ifstream in(log_path_);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

 private:
  std::string log_path_;
  pid_t pid_ = -1;
  int port_ = 0;
  std::FILE* stdout_ = nullptr;
};

}  // namespace loom::test
