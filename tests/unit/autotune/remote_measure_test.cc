// The measurer on remote devices: a tracker and two `loom rpc server`s on loopback, run as the
// tool's processes, measuring candidates in parallel. Each kind of failure a candidate can have
// (a crash, a hang, a wrong result) is recorded as it is here, the devices go on serving, and a
// device that dies is replaced by another of its key.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "deadline.h"
#include "error_of.h"
#include "loom/autotune/measure.h"
#include "loom/rpc/tracker.h"
#include "loom_process.h"

namespace loom::autotune {
namespace {

namespace fs = std::filesystem;
using test::LoomProcess;
using topi::Config;

// The modes of the "test.faults" template (measure_test.cc registers it).
enum Mode : int64_t { kCorrect, kWrong, kCrash, kHang, kRefused };

class RemoteMeasure : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("loom_remote_measure_" + std::to_string(getpid()));
    fs::create_directories(dir_);
    tracker_ = std::make_unique<LoomProcess>(
        std::vector<std::string>{"rpc", "tracker", "--port", "0"}, Log("tracker"));
    for (int i = 0; i < 2; ++i) {
      servers_.push_back(std::make_unique<LoomProcess>(
          std::vector<std::string>{"rpc", "server", "--port", "0", "--tracker", tracker_->address(),
                                   "--device-key", "x86-test"},
          Log("server" + std::to_string(i))));
    }
    WaitForFleet(2);
  }
  void TearDown() override {
    servers_.clear();
    tracker_.reset();
    fs::remove_all(dir_);
  }
  std::string Log(const std::string& name) const { return (dir_ / (name + ".log")).string(); }
  // Waits until the tracker has `count` servers (they register once they listen).
  void WaitForFleet(size_t count) {
    rpc::TrackerClient tracker(rpc::ParseAddress(tracker_->address(), "test"), "");
    for (int i = 0; i < 100 && tracker.Status().servers.size() != count; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_EQ(tracker.Status().servers.size(), count);
  }
  MeasureOptions Remote() const {
    MeasureOptions options;
    options.run_timeout_s = 3;
    options.min_repeat_ms = 1;
    options.repeat = 2;
    options.remote.tracker = tracker_->address();
    options.remote.device_key = "x86-test";
    return options;
  }

  fs::path dir_;
  std::unique_ptr<LoomProcess> tracker_;
  std::vector<std::unique_ptr<LoomProcess>> servers_;
};

TEST_F(RemoteMeasure, RecordsEachKindOfFailureAndUsesEveryDevice) {
  test::RunWithDeadline("remote measurement", [&] {
    Measurer measurer({"test.faults", {}}, Target::Parse("llvm"), Remote());
    std::vector<MeasureResult> results = measurer.Measure(
        {Config({{"mode", kCorrect}}), Config({{"mode", kWrong}}), Config({{"mode", kCrash}}),
         Config({{"mode", kHang}}), Config({{"mode", kRefused}}), Config({{"mode", kCorrect}})});
    EXPECT_EQ(results[0].error, MeasureError::kNone) << results[0].message;
    EXPECT_EQ(results[0].costs.size(), 2u);
    EXPECT_EQ(results[1].error, MeasureError::kWrongResult) << results[1].message;
    EXPECT_EQ(results[2].error, MeasureError::kRuntimeError) << results[2].message;
    EXPECT_NE(results[2].message.find("closed the session"), std::string::npos)
        << results[2].message;
    EXPECT_EQ(results[3].error, MeasureError::kTimeout) << results[3].message;
    EXPECT_EQ(results[4].error, MeasureError::kCompileError);
    EXPECT_EQ(results[5].error, MeasureError::kNone) << results[5].message;
    EXPECT_TRUE(measurer.has_reference());
    // Both devices measured (each opened sessions).
    for (const auto& server : servers_) {
      EXPECT_NE(server->Log().find("session"), std::string::npos) << server->Log();
    }
  });
}

TEST_F(RemoteMeasure, MeasuresARealTemplateInRoundsAndOutlivesADevice) {
  test::RunWithDeadline("remote dense", [&] {
    graph::TuningWorkload dense{"x86.dense", {8, 64, 32}};
    Measurer measurer(dense, Target::Parse("llvm"), Remote());
    const graph::TuningTemplate& t = graph::FindTuningTemplate("x86.dense");
    topi::ConfigSpace space = t.space(dense.args);
    std::vector<Config> configs = {space.At(space.ValidIndices().front()),
                                   space.At(space.ValidIndices().back())};
    std::vector<std::vector<MeasureResult>> rounds = measurer.MeasureRounds(configs, 2);
    for (const auto& config_rounds : rounds) {
      ASSERT_EQ(config_rounds.size(), 2u);
      for (const MeasureResult& r : config_rounds) {
        EXPECT_EQ(r.error, MeasureError::kNone) << r.message;
        EXPECT_GT(r.cost(), 0);
      }
    }
    // One device dies: the tracker drops it and the measurements go to the other.
    servers_[0]->Stop(SIGKILL);
    WaitForFleet(1);
    for (const MeasureResult& r : measurer.Measure(configs)) {
      EXPECT_EQ(r.error, MeasureError::kNone) << r.message;
    }
  });
}

TEST_F(RemoteMeasure, AKeyWithoutDevicesIsAClearError) {
  MeasureOptions options = Remote();
  options.remote.device_key = "riscv-none";
  Measurer measurer({"test.faults", {}}, Target::Parse("llvm"), options);
  const std::string error = testing::ErrorOf([&] {
    measurer.Measure({Config({{"mode", kCorrect}})});
  });
  EXPECT_NE(error.find("has no 'riscv-none' device"), std::string::npos) << error;
  EXPECT_NE(error.find("x86-test"), std::string::npos) << error;
}

}  // namespace
}  // namespace loom::autotune
