// runtime::TimeFunction: how many calls each timing makes, what it reports, and its errors.
#include "loom/runtime/time_evaluator.h"

#include <gtest/gtest.h>

#include <atomic>

#include "loom/support/error.h"

namespace loom::runtime {
namespace {

// A function that counts its calls and checks it gets the arrays it was timed with.
PackedFunc Counting(std::atomic<int>* calls, int expected_arguments) {
  return PackedFunc([calls, expected_arguments](PackedArgs args, RetValue*) {
    EXPECT_EQ(args.size(), expected_arguments);
    ++*calls;
  });
}

std::vector<NDArray> TwoArrays() {
  return {NDArray::Empty({1024}, DataType::Float(32)), NDArray::Empty({16}, DataType::Int(8))};
}

TEST(TimeFunction, AFixedNumberMakesRepeatTimesNumberCalls) {
  std::atomic<int> calls{0};
  TimeOptions options;
  options.number = 7;
  options.repeat = 3;
  std::vector<double> seconds = TimeFunction(Counting(&calls, 2), TwoArrays(), options);
  EXPECT_EQ(calls.load(), 21);
  ASSERT_EQ(seconds.size(), 3u);
  for (double s : seconds) EXPECT_GE(s, 0);
}

TEST(TimeFunction, NumberZeroFillsTheMinimumTimeAfterOneUntimedCall) {
  for (bool cold : {false, true}) {
    std::atomic<int> calls{0};
    TimeOptions options;
    options.repeat = 2;
    options.min_repeat_ms = 2;
    if (cold) options.cold_arguments = {0, 1};
    std::vector<double> seconds = TimeFunction(Counting(&calls, 2), TwoArrays(), options);
    ASSERT_EQ(seconds.size(), 2u);
    // One untimed call, then the same number of calls per timing.
    EXPECT_EQ((calls.load() - 1) % 2, 0) << cold;
    EXPECT_GE(calls.load(), 3) << cold;
    for (double s : seconds) EXPECT_GT(s, 0) << cold;
  }
}

TEST(TimeFunction, RefusesBadOptionsNamingThem) {
  std::atomic<int> calls{0};
  TimeOptions options;
  options.repeat = 0;
  try {
    TimeFunction(Counting(&calls, 2), TwoArrays(), options);
    FAIL() << "repeat 0 was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("repeat must be at least 1"), std::string::npos);
  }
  options.repeat = 1;
  options.cold_arguments = {2};
  try {
    TimeFunction(Counting(&calls, 2), TwoArrays(), options);
    FAIL() << "a cold argument past the arguments was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cold argument 2 is past its 2 arguments"),
              std::string::npos);
  }
  EXPECT_EQ(calls.load(), 0);
}

}  // namespace
}  // namespace loom::runtime
