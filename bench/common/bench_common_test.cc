// The benchmark harness's pieces that need no clock: option parsing and its errors, the
// number of calls the timing makes and the settling sleep before each batch (a lower bound
// only), the geometric mean, formatting.
#include "bench_common.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "loom/support/error.h"

namespace loom::bench {
namespace {

std::string ParseFlagsError(std::vector<std::string> args,
                            const std::vector<FlagHandler>& handlers) {
  args.insert(args.begin(), "prog");
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  try {
    ParseFlags(static_cast<int>(argv.size()), argv.data(), "prog", handlers);
  } catch (const Error& error) {
    return error.what();
  }
  return "no error";
}

TEST(BenchCommon, ParseFlagsHandsEachValueToItsFlagAndNamesWhatItAccepts) {
  std::vector<std::string> seen;
  std::vector<FlagHandler> handlers{
      {"--a", [&](const std::string& value) { seen.push_back("a=" + value); }},
      {"--b", [&](const std::string& value) { seen.push_back("b=" + value); }}};
  EXPECT_EQ(ParseFlagsError({"--b", "2", "--a", "1", "--b", "3"}, handlers), "no error");
  EXPECT_EQ(seen, std::vector<std::string>({"b=2", "a=1", "b=3"}));
  EXPECT_EQ(ParseFlagsError({"--c", "1"}, handlers),
            "prog: unknown option '--c' (accepted: --a|--b)");
  EXPECT_EQ(ParseFlagsError({"1"}, handlers), "prog: unknown option '1' (accepted: --a|--b)");
  EXPECT_EQ(ParseFlagsError({"--a", "1", "--b"}, handlers),
            "prog: option '--b' needs a value (accepted: --a|--b, each followed by its value)");
}

TEST(BenchCommon, PositiveIntegersAndCommaLists) {
  EXPECT_EQ(ParsePositive("12", "prog", "--n"), 12);
  EXPECT_EQ(ParsePositiveList("1,2,3", "prog", "--n"), std::vector<int64_t>({1, 2, 3}));
  for (std::string bad : {"0", "-1", "x", "1.5", "", " 5", "+5", "5 "}) {
    try {
      ParsePositive(bad, "prog", "--n");
      ADD_FAILURE() << "'" << bad << "' was accepted";
    } catch (const Error& error) {
      EXPECT_EQ(std::string(error.what()), "prog: --n takes positive integers, got '" + bad + "'");
    }
  }
  EXPECT_THROW(ParsePositiveList("1,,2", "prog", "--n"), Error);
  EXPECT_EQ(ParsePositive("9223372036854775807", "prog", "--n"), INT64_MAX);
  EXPECT_EQ(ParsePositive("7", "prog", "--n", 7), 7);
  EXPECT_EQ(ParsePositiveList("2147483647", "prog", "--n", INT32_MAX),
            std::vector<int64_t>({INT32_MAX}));
}

std::string ParsePositiveError(const std::string& text, int64_t max) {
  try {
    ParsePositiveList(text, "prog", "--n", max);
  } catch (const Error& error) {
    return error.what();
  }
  return "no error";
}

TEST(BenchCommon, IntegersPastTheLimitAreErrorsNamingIt) {
  EXPECT_EQ(ParsePositiveError("8", 7), "prog: --n takes positive integers up to 7, got '8'");
  // 2^32 + 1 would narrow to 1 as an int.
  EXPECT_EQ(ParsePositiveError("1,4294967297", INT32_MAX),
            "prog: --n takes positive integers up to 2147483647, got '4294967297'");
  // Past int64_t: strtoll clamps and sets ERANGE.
  EXPECT_EQ(ParsePositiveError("9223372036854775808", INT64_MAX),
            "prog: --n takes positive integers up to 9223372036854775807, got "
            "'9223372036854775808'");
  EXPECT_EQ(ParsePositiveError("99999999999999999999999", INT64_MAX),
            "prog: --n takes positive integers up to 9223372036854775807, got "
            "'99999999999999999999999'");
  EXPECT_EQ(SplitCommas("a,b"), std::vector<std::string>({"a", "b"}));
  EXPECT_TRUE(SplitCommas("").empty());
  EXPECT_EQ(JoinCommas(std::vector<std::string>{"a", "b"}), "a,b");
  EXPECT_EQ(JoinCommas(std::vector<int64_t>{1024, 7}), "1024,7");
}

TEST(BenchCommon, WithoutAMinimumEachSampleIsOneCallAfterOneWarmUpCall) {
  int first = 0, second = 0;
  std::vector<double> medians = MedianSeconds({[&] { ++first; }, [&] { ++second; }}, 5);
  EXPECT_EQ(first, 6);
  EXPECT_EQ(second, 6);
  ASSERT_EQ(medians.size(), 2u);
  EXPECT_GE(medians[0], 0);
}

TEST(BenchCommon, EachTimedBatchStartsAfterTheThreadsSettle) {
  using Clock = std::chrono::steady_clock;
  Clock::time_point last_call_end{};
  std::vector<double> gaps;
  auto call = [&] {
    Clock::time_point now = Clock::now();
    if (last_call_end != Clock::time_point{})
      gaps.push_back(std::chrono::duration<double>(now - last_call_end).count());
    last_call_end = Clock::now();
  };
  MedianSeconds({call, call}, 3);
  // Two warm-up calls, then the three rounds' six one-call batches, each after a 6 ms
  // settling pause.
  ASSERT_EQ(gaps.size(), 7u);
  for (size_t g = 1; g < gaps.size(); ++g) EXPECT_GE(gaps[g], 6e-3) << "gap " << g;
}

TEST(BenchCommon, AMinimumSampleTimeBatchesCalls) {
  int calls = 0;
  // Any call takes well under 2 ms, so a sample of at least 2 ms needs several.
  MedianSeconds({[&] { ++calls; }}, 3, 2e-3);
  EXPECT_GT(calls, 3 * 2);
}

TEST(BenchCommon, GeometricMeanAndFormat) {
  EXPECT_DOUBLE_EQ(GeometricMean({2.0, 8.0}), 4.0);
  EXPECT_DOUBLE_EQ(GeometricMean({}), 1.0);
  EXPECT_EQ(Format("x=%d y=%.2f %s", 3, 1.005, "z"), "x=3 y=1.00 z");
  EXPECT_EQ(Format("%s", std::string(300, 'a').c_str()).size(), 300u);
}

}  // namespace
}  // namespace loom::bench
