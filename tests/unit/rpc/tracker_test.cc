// The tracker on loopback, in a thread of the test: fake servers are registrations (the
// tracker never connects to a server), clients are TrackerClients or raw sockets.
#include "loom/rpc/tracker.h"

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "deadline.h"
#include "loom/rpc/protocol.h"
#include "loom/support/error.h"

namespace loom::rpc {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

class TrackerTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (!thread_.joinable()) return;
    stop_ = true;
    thread_.join();
  }

  void Start(TrackerOptions options = {}) {
    options.port = 0;
    std::promise<int> port;
    std::future<int> bound = port.get_future();
    thread_ = std::thread([options, &port, this] {
      bool listening = false;
      try {
        RunTracker(
            options,
            [&](int p) {
              listening = true;
              port.set_value(p);
            },
            &stop_);
      } catch (...) {
        if (!listening) port.set_exception(std::current_exception());
      }
    });
    ASSERT_EQ(bound.wait_for(std::chrono::seconds(30)), std::future_status::ready);
    address_ = Address{"127.0.0.1", bound.get()};
  }

  std::unique_ptr<TrackerRegistration> Register(const std::string& device_key, int port,
                                                const std::string& key = "") {
    auto server = std::make_unique<TrackerRegistration>(address_, key, device_key, "", port);
    std::string why;
    EXPECT_TRUE(server->Reconnect(&why)) << why;
    return server;
  }

  // Polls the tracker's status until `done` holds of it (the tracker notices closed
  // connections and queued requests on its own time).
  template <typename Predicate>
  FleetStatus WaitForStatus(Predicate done) {
    TrackerClient observer(address_, "");
    const auto give_up = steady_clock::now() + std::chrono::seconds(10);
    FleetStatus status = observer.Status();
    while (!done(status) && steady_clock::now() < give_up) {
      std::this_thread::sleep_for(milliseconds(10));
      status = observer.Status();
    }
    EXPECT_TRUE(done(status)) << status.str();
    return status;
  }

  void WaitForQueued(const std::string& device_key, int count) {
    WaitForStatus([&](const FleetStatus& s) {
      auto found = s.queued.find(device_key);
      return (found == s.queued.end() ? 0 : found->second) == count;
    });
  }

  // A raw connection, for messages no TrackerClient would send.
  Socket RawConnect() { return Connect(address_, 10, "test"); }

  static std::string Hello(uint32_t magic = kMagic, uint32_t version = kProtocolVersion,
                           const std::string& key = "") {
    return Writer()
        .U8(static_cast<uint8_t>(TrackerOp::kHello))
        .U32(magic)
        .U32(version)
        .Str(key)
        .data();
  }

  // Reads one reply: its status, and the message of an error reply.
  static std::pair<Reply, std::string> ReadReply(const Socket& socket) {
    std::string payload;
    EXPECT_EQ(RecvFrame(socket.fd(), 1 << 20, 10, &payload), FrameStatus::kOk);
    Reader r(payload, "reply");
    const auto reply = static_cast<Reply>(r.U8());
    return {reply, reply == Reply::kError ? r.Str() : ""};
  }

  static void ExpectClosed(const Socket& socket) {
    std::string payload;
    EXPECT_EQ(RecvFrame(socket.fd(), 1 << 20, 10, &payload), FrameStatus::kClosed);
  }

  // A client gets a server of device_key from the tracker.
  void ExpectServes(const std::string& device_key) {
    TrackerClient client(address_, "");
    Lease lease = client.Request(device_key, 5);
    EXPECT_GT(lease.id, 0u);
    client.Release(lease);
  }

  std::atomic<bool> stop_{false};
  std::thread thread_;
  Address address_;
};

TEST_F(TrackerTest, TwoServersServeTwoClientsAndAThirdWaitsForARelease) {
  Start();
  auto first = Register("cpu", 9001);
  auto second = Register("cpu", 9002);
  loom::test::RunWithDeadline("leasing two servers to three clients", [&] {
    TrackerClient a(address_, ""), b(address_, ""), c(address_, "");
    Lease lease_a = a.Request("cpu", 5);
    Lease lease_b = b.Request("cpu", 5);
    EXPECT_NE(lease_a.id, lease_b.id);
    EXPECT_EQ(lease_a.server.host, "127.0.0.1");
    EXPECT_NE(lease_a.server.port, lease_b.server.port);
    for (const Lease& lease : {lease_a, lease_b}) {
      EXPECT_TRUE(lease.server.port == 9001 || lease.server.port == 9002) << lease.server.str();
    }
    std::future<Lease> third = std::async(std::launch::async, [&] { return c.Request("cpu", 5); });
    WaitForQueued("cpu", 1);
    EXPECT_EQ(third.wait_for(milliseconds(200)), std::future_status::timeout);
    a.Release(lease_a);
    Lease lease_c = third.get();
    EXPECT_EQ(lease_c.server.port, lease_a.server.port);
    EXPECT_NE(lease_c.id, lease_a.id);
  });
}

TEST_F(TrackerTest, ClientsWaitingForOneKeyAreServedFirstComeFirstServed) {
  Start();
  auto server = Register("cpu", 9001);
  loom::test::RunWithDeadline("four clients queued for one server", [&] {
    TrackerClient holder(address_, "");
    Lease held = holder.Request("cpu", 5);
    constexpr int kClients = 4;
    std::mutex mutex;
    std::vector<int> served;
    std::vector<std::thread> clients;
    for (int i = 0; i < kClients; ++i) {
      // Each client connects before it queues, so that only the request's arrival orders them.
      auto client = std::make_shared<TrackerClient>(address_, "");
      clients.emplace_back([&, i, client] {
        Lease lease = client->Request("cpu", 10);
        {
          std::lock_guard<std::mutex> lock(mutex);
          served.push_back(i);
        }
        client->Release(lease);
      });
      WaitForQueued("cpu", i + 1);
    }
    holder.Release(held);
    for (std::thread& client : clients) client.join();
    EXPECT_EQ(served, (std::vector<int>{0, 1, 2, 3}));
  });
}

TEST_F(TrackerTest, StatusShowsKeysFreeBusyAndQueued) {
  Start();
  auto cpu1 = Register("cpu", 9001);
  auto cpu2 = Register("cpu", 9002);
  auto gpu = Register("gpu", 9003);
  loom::test::RunWithDeadline("status of a fleet", [&] {
    TrackerClient client(address_, ""), waiter(address_, "");
    Lease lease = client.Request("cpu", 5);
    std::future<void> queued =
        std::async(std::launch::async, [&] { EXPECT_THROW(waiter.Request("npu", 1), Error); });
    WaitForQueued("npu", 1);
    FleetStatus status = client.Status();
    ASSERT_EQ(status.servers.size(), 3u);
    EXPECT_EQ(status.servers[0].device_key, "cpu");
    EXPECT_EQ(status.servers[0].address, "127.0.0.1:9001");
    EXPECT_EQ(status.servers[2].device_key, "gpu");
    EXPECT_EQ(status.servers[0].busy + status.servers[1].busy, 1);
    EXPECT_FALSE(status.servers[2].busy);
    EXPECT_EQ(status.queued, (std::map<std::string, int>{{"npu", 1}}));
    const std::string table = status.str();
    EXPECT_NE(table.find("device key  free  busy  queued"), std::string::npos) << table;
    EXPECT_NE(table.find("cpu            1     1       0"), std::string::npos) << table;
    EXPECT_NE(table.find("gpu            1     0       0"), std::string::npos) << table;
    EXPECT_NE(table.find("npu            0     0       1"), std::string::npos) << table;
    EXPECT_NE(table.find("127.0.0.1:9003  free"), std::string::npos) << table;
    queued.get();
  });
}

TEST_F(TrackerTest, ServerWhoseConnectionClosesLeavesTheFleet) {
  Start();
  auto stays = Register("cpu", 9001);
  auto dies = Register("cpu", 9002);
  loom::test::RunWithDeadline("a server leaving", [&] {
    TrackerClient client(address_, "");
    Lease lease = client.Request("cpu", 5);
    Lease other = client.Request("cpu", 5);
    // The dead server's lease goes with it; releasing it anyway is no error.
    (lease.server.port == 9002 ? dies : stays)->Lost();
    (lease.server.port == 9002 ? dies : stays).reset();
    FleetStatus status = WaitForStatus([](const FleetStatus& s) { return s.servers.size() == 1; });
    EXPECT_TRUE(status.servers[0].busy);
    client.Release(lease);
    client.Release(other);
    ExpectServes("cpu");
  });
}

TEST_F(TrackerTest, ClientWhoseConnectionClosesReleasesItsLease) {
  Start();
  auto server = Register("cpu", 9001);
  loom::test::RunWithDeadline("a client leaving", [&] {
    TrackerClient waiter(address_, "");
    std::optional<TrackerClient> holder(std::in_place, address_, "");
    holder->Request("cpu", 5);
    std::future<Lease> next =
        std::async(std::launch::async, [&] { return waiter.Request("cpu", 5); });
    WaitForQueued("cpu", 1);
    holder.reset();
    EXPECT_EQ(next.get().server.port, 9001);
  });
}

TEST_F(TrackerTest, RequestTimeoutNamesTheKeyAndTheFleet) {
  Start();
  auto server = Register("cpu", 9001);
  loom::test::RunWithDeadline("a request timing out", [&] {
    TrackerClient client(address_, "");
    const auto start = steady_clock::now();
    try {
      client.Request("gpu", 0.3);
      ADD_FAILURE() << "a request for a key without servers got one";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("no free 'gpu' device within 0.3 s; the fleet has: "
                                           "'cpu': 1 server (0 busy)"),
                std::string::npos)
          << e.what();
    }
    EXPECT_GE(steady_clock::now() - start, milliseconds(300));
    // The connection stays usable after a timeout.
    Lease lease = client.Request("cpu", 5);
    EXPECT_EQ(lease.server.port, 9001);
  });
}

TEST_F(TrackerTest, WrongKeyIsRefused) {
  TrackerOptions options;
  options.key = "sesame";
  Start(options);
  loom::test::RunWithDeadline("peers with keys", [&] {
    try {
      TrackerClient client(address_, "open");
      ADD_FAILURE() << "a client with the wrong key was let in";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("wrong key"), std::string::npos) << e.what();
    }
    TrackerRegistration wrong(address_, "", "cpu", "", 9001);
    std::string why;
    EXPECT_FALSE(wrong.Reconnect(&why));
    EXPECT_NE(why.find("wrong key"), std::string::npos) << why;
    EXPECT_FALSE(wrong.connected());
    auto server = Register("cpu", 9001, "sesame");
    TrackerClient client(address_, "sesame");
    EXPECT_EQ(client.Request("cpu", 5).server.port, 9001);
  });
}

TEST_F(TrackerTest, WrongVersionOrMagicIsRefused) {
  Start();
  loom::test::RunWithDeadline("peers of other versions", [&] {
    Socket old = RawConnect();
    SendFrame(old.fd(), Hello(kMagic, kProtocolVersion + 1));
    auto [reply, message] = ReadReply(old);
    EXPECT_EQ(reply, Reply::kError);
    EXPECT_NE(message.find("version " + std::to_string(kProtocolVersion) + ", the peer version " +
                           std::to_string(kProtocolVersion + 1)),
              std::string::npos)
        << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    ExpectClosed(old);

    Socket stranger = RawConnect();
    SendFrame(stranger.fd(), Hello(0x12345678));
    std::tie(reply, message) = ReadReply(stranger);
    EXPECT_EQ(reply, Reply::kError);
    EXPECT_NE(message.find("not a Loom RPC peer"), std::string::npos) << message;
    ExpectClosed(stranger);
  });
}

TEST(TrackerStart, NonLoopbackHostWithoutKeyIsRefused) {
  TrackerOptions options;
  options.host = "0.0.0.0";
  options.port = 0;
  try {
    RunTracker(options, [](int) { ADD_FAILURE() << "the tracker listened"; });
    ADD_FAILURE() << "the tracker started without a key on 0.0.0.0";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("give --key or --key-file"), std::string::npos)
        << e.what();
  }
}

TEST_F(TrackerTest, BadFramesCloseTheirConnectionAndTheTrackerGoesOn) {
  TrackerOptions options;
  options.max_message_bytes = 1024;
  Start(options);
  auto server = Register("cpu", 9001);
  loom::test::RunWithDeadline("malformed messages", [&] {
    // Each one gets an error reply naming the problem, then its connection closes.
    auto expect_refused = [&](const std::vector<std::string>& frames, const std::string& why) {
      Socket socket = RawConnect();
      for (size_t i = 0; i + 1 < frames.size(); ++i) {
        SendFrame(socket.fd(), frames[i]);
        EXPECT_EQ(ReadReply(socket).first, Reply::kOk);
      }
      SendFrame(socket.fd(), frames.back());
      auto [reply, message] = ReadReply(socket);
      EXPECT_EQ(reply, Reply::kError);
      EXPECT_NE(message.find(why), std::string::npos) << message;
      ExpectClosed(socket);
    };
    const std::string request = Writer().U8(static_cast<uint8_t>(TrackerOp::kRequest)).data();
    expect_refused({Hello(), Writer().U8(99).data()}, "unknown request 99");
    expect_refused({Hello(), request + "\x05"}, "malformed tracker request");
    expect_refused({Hello(), ""}, "malformed tracker request");
    expect_refused({Hello(), Hello()}, "a second hello");
    expect_refused({Writer().U8(static_cast<uint8_t>(TrackerOp::kStatus)).data()},
                   "not a Loom RPC peer");
    expect_refused({Hello(), std::string(2000, 'x')}, "over the tracker's limit of 1024 bytes");

    // A header announcing too much is refused before its payload comes.
    Socket oversized = RawConnect();
    const std::string header = Writer().U32(1u << 30).data();
    ASSERT_EQ(send(oversized.fd(), header.data(), header.size(), MSG_NOSIGNAL), 4);
    auto [reply, message] = ReadReply(oversized);
    EXPECT_EQ(reply, Reply::kError);
    EXPECT_NE(message.find("1073741824 bytes"), std::string::npos) << message;

    // Cut off in the middle of a message, and silent in the middle of one: no reply to give.
    Socket cut = RawConnect();
    const std::string partial = Writer().U32(100).data() + "abc";
    ASSERT_EQ(send(cut.fd(), partial.data(), partial.size(), MSG_NOSIGNAL), 7);
    cut.Close();
    Socket stalled = RawConnect();
    ASSERT_EQ(send(stalled.fd(), partial.data(), partial.size(), MSG_NOSIGNAL), 7);

    ExpectServes("cpu");
    FleetStatus status = WaitForStatus([](const FleetStatus& s) { return !s.servers[0].busy; });
    EXPECT_EQ(status.servers.size(), 1u);
  });
}

TEST_F(TrackerTest, AMessageThatStopsArrivingClosesItsConnection) {
  TrackerOptions options;
  options.stall_timeout_s = 0.3;
  Start(options);
  auto server = Register("cpu", 9001);
  loom::test::RunWithDeadline("stalled message", [&] {
    Socket stalled = RawConnect();
    SendFrame(stalled.fd(), Hello());
    EXPECT_EQ(ReadReply(stalled).first, Reply::kOk);
    const std::string partial = Writer().U32(100).data() + "abc";
    ASSERT_EQ(send(stalled.fd(), partial.data(), partial.size(), MSG_NOSIGNAL), 7);
    auto [reply, message] = ReadReply(stalled);
    EXPECT_EQ(reply, Reply::kError);
    EXPECT_NE(message.find("a message stopped arriving: nothing more came within 0.3 s"),
              std::string::npos)
        << message;
    ExpectClosed(stalled);
    ExpectServes("cpu");
  });
}

TEST_F(TrackerTest, ConnectionsOverTheLimitAreRefused) {
  TrackerOptions options;
  options.max_connections = 2;
  Start(options);
  loom::test::RunWithDeadline("too many connections", [&] {
    std::optional<TrackerClient> first(std::in_place, address_, "");
    TrackerClient second(address_, "");
    try {
      TrackerClient third(address_, "");
      ADD_FAILURE() << "a third connection was served";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("the tracker serves at most 2 connections"),
                std::string::npos)
          << e.what();
    }
    first.reset();
    // The slot comes back once the tracker has seen the close.
    const auto give_up = steady_clock::now() + std::chrono::seconds(10);
    while (true) {
      try {
        TrackerClient third(address_, "");
        break;
      } catch (const Error& e) {
        ASSERT_LT(steady_clock::now(), give_up) << e.what();
        std::this_thread::sleep_for(milliseconds(10));
      }
    }
  });
}

TEST(TrackerFleetStatus, WritesAndReadsBack) {
  FleetStatus status;
  status.servers = {{"cpu", "10.0.0.1:9090", true}, {"gpu", "10.0.0.2:9090", false}};
  status.queued = {{"cpu", 3}};
  Writer w;
  status.Write(w);
  Reader r(w.data(), "status");
  FleetStatus back = FleetStatus::Read(r);
  ASSERT_EQ(back.servers.size(), 2u);
  EXPECT_EQ(back.servers[1].address, "10.0.0.2:9090");
  EXPECT_TRUE(back.servers[0].busy);
  EXPECT_EQ(back.queued, status.queued);
  EXPECT_EQ(back.str(), status.str());

  const std::string truncated = w.data().substr(0, w.data().size() - 1);
  Reader cut(truncated, "status");
  EXPECT_THROW(FleetStatus::Read(cut), Error);
}

TEST(TrackerKeys, MatchOnlyWhenEqual) {
  EXPECT_TRUE(KeysMatch("sesame", "sesame"));
  EXPECT_FALSE(KeysMatch("sesame", "sesamE"));
  EXPECT_FALSE(KeysMatch("sesame", "sesame!"));
  EXPECT_FALSE(KeysMatch("sesame", "sesam"));
  EXPECT_FALSE(KeysMatch("sesame", ""));
  EXPECT_TRUE(KeysMatch("", ""));
  EXPECT_FALSE(KeysMatch("", "x"));
}

}  // namespace
}  // namespace loom::rpc
