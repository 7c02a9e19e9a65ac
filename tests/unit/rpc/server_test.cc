// `loom rpc server` as the tool runs it, on loopback, through the client API: models and
// kernels run remotely as they run here, and every kind of bad input - crashing and hanging
// kernels, paths outside the session, caps, keys, versions, another architecture's library,
// a killed server, malformed traffic - is a clear error while the server goes on serving.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "deadline.h"
#include "loom/rpc/client.h"
#include "loom/rpc/wire.h"
#include "loom/runtime/executor.h"
#include "loom/runtime/module.h"
#include "loom/support/error.h"
#include "loom_process.h"

namespace loom::rpc {
namespace {

namespace fs = std::filesystem;
using runtime::NDArray;
using test::LoomProcess;

const std::string kGraphModel = std::string(LOOM_TEST_GRAPH_DIR) + "/graph_model.so";
const std::string kGraphKernels = std::string(LOOM_TEST_GRAPH_DIR) + "/graph_kernels.so";
const std::string kFixture = LOOM_TEST_FIXTURE_LIBRARY;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

NDArray Sequence(const std::vector<int64_t>& shape, float scale) {
  NDArray array = NDArray::Empty(shape, DataType::Float(32));
  float* data = static_cast<float*>(array.data());
  for (int64_t i = 0; i < array.NumElements(); ++i) data[i] = scale * static_cast<float>(i % 7 - 3);
  return array;
}

void ExpectSameValues(const NDArray& got, const NDArray& want) {
  ASSERT_EQ(got.Shape(), want.Shape());
  ASSERT_EQ(got.dtype(), want.dtype());
  EXPECT_EQ(std::memcmp(got.data(), want.data(), want.NumBytes()), 0);
}

// The message of the loom::Error `body` throws ("" when it throws none).
template <typename Body>
std::string ErrorOf(Body body) {
  try {
    body();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

class RpcServer : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("loom_rpc_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<LoomProcess> StartServer(std::vector<std::string> extra = {}) {
    std::vector<std::string> args{"rpc", "server", "--port", "0"};
    args.insert(args.end(), extra.begin(), extra.end());
    return std::make_unique<LoomProcess>(
        args, (dir_ / ("server" + std::to_string(++servers_) + ".log")).string());
  }
  static std::shared_ptr<Session> Open(const LoomProcess& server, const std::string& key = "") {
    return Session::Connect(ParseAddress(server.address(), "test"), key);
  }
  // The graph fixture run remotely, checked against the local runtime's outputs.
  static void ExpectModelRunsAsLocally(Session& session) {
    session.Upload(kGraphModel, "model.so");
    RemoteExecutor remote = session.LoadExecutor("model.so");
    std::unique_ptr<runtime::Executor> local = runtime::LoadExecutor(kGraphModel);
    ASSERT_EQ(remote.NumInputs(), local->NumInputs());
    ASSERT_EQ(remote.NumOutputs(), local->NumOutputs());
    NDArray data = Sequence(local->InputShape(0), 0.5f);
    remote.SetInput(local->InputName(0), data);
    local->SetInput(0, data);
    remote.Run();
    local->Run();
    for (int i = 0; i < local->NumOutputs(); ++i) {
      EXPECT_EQ(remote.OutputName(i), local->OutputName(i));
      ExpectSameValues(remote.GetOutput(i), local->GetOutput(i));
    }
  }

  fs::path dir_;
  int servers_ = 0;
};

TEST_F(RpcServer, RunsAModelAsTheLocalRuntimeDoes) {
  test::RunWithDeadline("remote model", [&] {
    auto server = StartServer();
    auto session = Open(*server);
    EXPECT_EQ(session->device().arch, runtime::HostArchitecture());
    EXPECT_GE(session->device().physical_cores, 1);
    EXPECT_GT(session->device().memory_bytes, 0u);
    ExpectModelRunsAsLocally(*session);
    RemoteExecutor model = session->LoadExecutor("model.so");
    EXPECT_EQ(std::string(model.kind()), "graph");
    model.SetInput(0, Sequence(model.InputShape(0), 1));
    std::vector<double> seconds = model.TimeRuns(/*warmup=*/1, /*repeat=*/4);
    ASSERT_EQ(seconds.size(), 4u);
    for (double s : seconds) EXPECT_GT(s, 0);
    // A wrong input is refused by the server's runtime, with the local message.
    EXPECT_NE(ErrorOf([&] { model.SetInput(0, Sequence({3}, 1)); }).find("shape"),
              std::string::npos);
  });
}

TEST_F(RpcServer, CallsAndTimesKernelsOnRemoteArrays) {
  test::RunWithDeadline("remote kernels", [&] {
    auto server = StartServer();
    auto session = Open(*server);
    session->Upload(kGraphKernels, "kernels.so");
    RemoteModule kernels = session->LoadModule("kernels.so");
    RemoteFunction add = kernels.GetFunction("add");
    NDArray a = Sequence({2, 8}, 1), b = Sequence({2, 8}, 0.25f);
    RemoteArray ra = session->CopyOf(a), rb = session->CopyOf(b);
    RemoteArray rc = session->Empty({2, 8}, DataType::Float(32));
    add.Call({ra, rb, rc});
    NDArray c = rc.ToHost();
    for (int i = 0; i < 16; ++i) {
      EXPECT_EQ(static_cast<float*>(c.data())[i],
                static_cast<float*>(a.data())[i] + static_cast<float*>(b.data())[i]);
    }
    TimeRequest request;
    request.repeat = 3;
    request.min_repeat_ms = 1;
    request.cold_arguments = {1};
    std::vector<double> seconds = add.Time({ra, rb, rc}, request);
    ASSERT_EQ(seconds.size(), 3u);
    for (double s : seconds) EXPECT_GT(s, 0);
    request.cold_arguments = {7};
    EXPECT_NE(ErrorOf([&] {
                add.Time({ra, rb, rc}, request);
              }).find("cold argument 7"),
              std::string::npos);
    EXPECT_NE(ErrorOf([&] { kernels.GetFunction("no_such_kernel"); }).find("no_such_kernel"),
              std::string::npos);
    // A kernel's own error comes back as the message it set; the session goes on.
    session->Upload(kFixture, "fixture.so");
    RemoteFunction failing =
        session->LoadModule("fixture.so").GetFunction("loom_fixture_fail_in_task");
    EXPECT_NE(ErrorOf([&] { failing.Call({}); }).find("the last task refused to run"),
              std::string::npos);
    add.Call({ra, rb, rc});
  });
}

TEST_F(RpcServer, ACrashingOrHangingKernelEndsOnlyItsSession) {
  test::RunWithDeadline("crashing kernels", [&] {
    auto server = StartServer({"--max-call-s", "1"});
    for (const char* kernel : {"loom_fixture_crash", "loom_fixture_hang"}) {
      auto session = Open(*server);
      session->Upload(kFixture, "fixture.so");
      RemoteFunction function = session->LoadModule("fixture.so").GetFunction(kernel);
      EXPECT_NE(ErrorOf([&] { function.Call({}); }).find("closed the session"), std::string::npos)
          << kernel;
      EXPECT_FALSE(session->open());
      EXPECT_NE(ErrorOf([&] { session->SetThreads(1); }).find("is closed"), std::string::npos);
    }
    auto fresh = Open(*server);
    ExpectModelRunsAsLocally(*fresh);
    fresh->Close();
    // The server's log says how each ended (reaped within its 200 ms poll).
    for (int i = 0; i < 50 && server->Log().find("--max-call-s") == std::string::npos; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_NE(server->Log().find("ended by signal 6"), std::string::npos) << server->Log();
    EXPECT_NE(server->Log().find("ran past --max-call-s"), std::string::npos) << server->Log();
  });
}

TEST_F(RpcServer, UploadsStayInTheSessionsFolder) {
  test::RunWithDeadline("upload names", [&] {
    auto server = StartServer();
    auto session = Open(*server);
    for (const char* name : {"../escape.so", "/tmp/escape.so", "a/b.so", "..", ""}) {
      std::string error = ErrorOf([&] { session->UploadBytes("bytes", name); });
      EXPECT_NE(error.find("upload name"), std::string::npos) << name << ": " << error;
    }
    EXPECT_FALSE(fs::exists("/tmp/escape.so"));
    EXPECT_NE(ErrorOf([&] { session->LoadModule("never_uploaded.so"); }).find("was not uploaded"),
              std::string::npos);
    // Parts out of order are refused; in order they make one file.
    EXPECT_NE(ErrorOf([&] {
                session->Call(
                    Writer().U8(static_cast<uint8_t>(Op::kUpload)).Str("x.so").U64(5).Blob("abc"),
                    Op::kUpload);
              }).find("at offset 5"),
              std::string::npos);
    // A new upload under a name replaces the file, unless the session loaded it.
    session->UploadBytes("first version", "again.so");
    session->UploadBytes("not a library either", "again.so");
    EXPECT_NE(ErrorOf([&] { session->LoadModule("again.so"); }).find("no ELF header"),
              std::string::npos);
    session->Upload(kGraphKernels, "kernels.so");
    session->LoadModule("kernels.so");
    EXPECT_NE(
        ErrorOf([&] { session->Upload(kGraphKernels, "kernels.so"); }).find("loaded it already"),
        std::string::npos);
    // Not a library: the runtime's message, and the session goes on.
    session->UploadBytes("not a library", "text.so");
    EXPECT_NE(ErrorOf([&] { session->LoadModule("text.so"); }).find("no ELF header"),
              std::string::npos);
    ExpectModelRunsAsLocally(*session);
  });
}

TEST_F(RpcServer, RefusesALibraryBuiltForAnotherArchitecture) {
  test::RunWithDeadline("architecture", [&] {
    auto server = StartServer();
    auto session = Open(*server);
    std::string library = ReadFile(kGraphModel);
    const bool host_is_arm = runtime::HostArchitecture() == "aarch64";
    const uint16_t other = host_is_arm ? 62 /* EM_X86_64 */ : 183 /* EM_AARCH64 */;
    std::memcpy(library.data() + 18, &other, sizeof other);  // e_machine
    session->UploadBytes(library, "other.so");
    std::string error = ErrorOf([&] { session->LoadExecutor("other.so"); });
    EXPECT_NE(error.find(std::string("built for ") + (host_is_arm ? "x86_64" : "aarch64")),
              std::string::npos)
        << error;
  });
}

TEST_F(RpcServer, CapsAreClearErrorsAndTheServerGoesOn) {
  test::RunWithDeadline("caps", [&] {
    auto server = StartServer({"--max-sessions", "1", "--max-upload-mb", "0.05", "--max-array-mb",
                               "0.05", "--max-message-mb", "0.1", "--idle-timeout-s", "1"});
    {
      auto session = Open(*server);
      EXPECT_NE(ErrorOf([&] { Open(*server); }).find("at most 1 sessions"), std::string::npos);
      EXPECT_NE(ErrorOf([&] {
                  session->UploadBytes(std::string(60 << 10, 'x'), "big.so");
                }).find("--max-upload-mb"),
                std::string::npos);
      EXPECT_NE(
          ErrorOf([&] { session->Empty({100000}, DataType::Float(32)); }).find("--max-array-mb"),
          std::string::npos);
      // An over-long message breaks the framing: the server says so and ends the session.
      std::string error = ErrorOf([&] {
        session->Call(Writer()
                          .U8(static_cast<uint8_t>(Op::kUpload))
                          .Str("m.so")
                          .U64(0)
                          .Blob(std::string(150 << 10, 'x')),
                      Op::kUpload);
      });
      EXPECT_NE(error.find("over the limit"), std::string::npos) << error;
    }
    // An idle session is closed by the server.
    std::shared_ptr<Session> idle;
    for (int attempt = 0; attempt < 50 && !idle; ++attempt) {
      try {
        idle = Open(*server);
      } catch (const Error&) {  // the previous session is still being reaped
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
    ASSERT_TRUE(idle);
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    EXPECT_NE(ErrorOf([&] { idle->SetThreads(1); }).find("closed the session"), std::string::npos);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    auto session = Open(*server);
    session->Upload(kGraphModel, "model.so");
  });
}

TEST_F(RpcServer, UploadsAndArraysTravelInPartsThatFitTheServersLimit) {
  test::RunWithDeadline("parts", [&] {
    auto server = StartServer({"--max-message-mb", "0.05"});
    auto session = Open(*server);
    session->UploadBytes(std::string(200 << 10, 'x'), "large.bin");
    NDArray large = Sequence({100000}, 0.5f);  // 400 KB: eight parts each way
    ExpectSameValues(session->CopyOf(large).ToHost(), large);
    ExpectModelRunsAsLocally(*session);
  });
}

TEST_F(RpcServer, KeysAndVersionsAreCheckedAtHello) {
  test::RunWithDeadline("hello", [&] {
    auto server = StartServer({"--key", "s3cret"});
    EXPECT_NE(ErrorOf([&] { Open(*server); }).find("wrong key"), std::string::npos);
    EXPECT_NE(ErrorOf([&] { Open(*server, "guess"); }).find("wrong key"), std::string::npos);
    Open(*server, "s3cret");
    auto raw_hello = [&](const Writer& hello) {
      Socket socket = Connect(ParseAddress(server->address(), "test"), 10, "test");
      SendFrame(socket.fd(), hello.data());
      std::string reply;
      EXPECT_EQ(RecvFrame(socket.fd(), 1 << 20, 10, &reply), FrameStatus::kOk);
      Reader r(reply, "reply");
      EXPECT_EQ(r.U8(), static_cast<uint8_t>(Reply::kError));
      return r.Str();
    };
    EXPECT_NE(raw_hello(Writer().U8(1).U32(kMagic).U32(999).Str("s3cret").F64(0))
                  .find("protocol version mismatch: the server speaks version 1, the client 999"),
              std::string::npos);
    EXPECT_NE(raw_hello(Writer().U8(9).U32(1234)).find("not a Loom RPC client"), std::string::npos);
    EXPECT_NE(raw_hello(Writer().U8(1).U32(kMagic).U32(kProtocolVersion).Str("s3cret").F64(0).U8(7))
                  .find("1 bytes past the last field"),
              std::string::npos);
  });
}

TEST_F(RpcServer, OffLoopbackItNeedsAKey) {
  std::string command = std::string(LOOM_TEST_CLI) + " rpc server --host 0.0.0.0 --port 0 2>&1";
  std::FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char buffer[1024] = {};
  size_t n = std::fread(buffer, 1, sizeof buffer - 1, pipe);
  int status = pclose(pipe);
  EXPECT_NE(status, 0);
  EXPECT_NE(std::string(buffer, n).find("give a shared key (--key or --key-file)"),
            std::string::npos)
      << buffer;
}

TEST_F(RpcServer, AKilledServerEndsItsSessionsWithAClearError) {
  test::RunWithDeadline("killed server", [&] {
    auto server = StartServer();
    auto session = Open(*server);
    session->Upload(kGraphModel, "model.so");
    server->Stop(SIGKILL);
    std::string error = ErrorOf([&] { session->LoadExecutor("model.so"); });
    EXPECT_TRUE(error.find("closed the session") != std::string::npos ||
                error.find("broke") != std::string::npos)
        << error;
    EXPECT_NE(ErrorOf([&] { Open(*server); }).find("cannot connect"), std::string::npos);
  });
}

// Malformed, truncated and oversized messages, and random requests inside a session, from a
// seeded generator: the server must answer or drop each, and then serve a good client.
TEST_F(RpcServer, SurvivesMalformedTruncatedAndOversizedMessages) {
  test::RunWithDeadline("fuzz", [&] {
    auto server =
        StartServer({"--max-sessions", "64", "--max-array-mb", "16", "--max-message-mb", "1"});
    const Address address = ParseAddress(server->address(), "test");
    std::mt19937 rng(20261202);
    auto random_bytes = [&](size_t n) {
      std::string bytes(n, '\0');
      for (char& c : bytes) c = static_cast<char>(rng());
      return bytes;
    };
    auto send_raw = [](int fd, const std::string& bytes) {
      (void)!send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    };
    const auto start = std::chrono::steady_clock::now();
    int cases = 0;
    for (; cases < 300 && std::chrono::steady_clock::now() - start < std::chrono::seconds(20);
         ++cases) {
      Socket socket = Connect(address, 10, "fuzz");
      std::string header(4, '\0');
      switch (rng() % 5) {
        case 0:  // noise
          send_raw(socket.fd(), random_bytes(rng() % 64));
          break;
        case 1: {  // a frame announcing more than the limit
          const uint32_t size = (64u << 20) + rng() % 1000;
          std::memcpy(header.data(), &size, 4);
          send_raw(socket.fd(), header + random_bytes(16));
          break;
        }
        case 2: {  // a frame cut off
          const uint32_t size = 100;
          std::memcpy(header.data(), &size, 4);
          send_raw(socket.fd(), header + random_bytes(rng() % 100));
          break;
        }
        default: {  // a good hello, then requests of random fields
          SendFrame(socket.fd(),
                    Writer().U8(1).U32(kMagic).U32(kProtocolVersion).Str("").F64(0).data());
          std::string reply;
          RecvFrame(socket.fd(), 1 << 20, 10, &reply);
          for (int request = 0; request < 8; ++request) {
            // The server ends a session whose framing broke: sending then fails.
            if (send(socket.fd(), "", 0, MSG_NOSIGNAL) < 0) break;
            Writer w;
            w.U8(static_cast<uint8_t>(rng() % 20));
            std::string fields = random_bytes(rng() % 48);
            // Small handles and sizes now and then, so requests get past their first checks.
            if (rng() % 2 == 0) w.U32(rng() % 4).U64(rng() % 64);
            try {
              SendFrame(socket.fd(), w.data() + fields);
              if (RecvFrame(socket.fd(), 1 << 20, 10, &reply) != FrameStatus::kOk) break;
            } catch (const Error&) {
              break;  // the server closed this session
            }
          }
        }
      }
    }
    EXPECT_GE(cases, 50);
    auto session = Open(*server);
    ExpectModelRunsAsLocally(*session);
  });
}

}  // namespace
}  // namespace loom::rpc
