#include <gtest/gtest.h>

#include "error_of.h"
#include "loom/frontend/onnx.h"

namespace loom::frontend::onnx {
namespace {

using loom::testing::ErrorOf;

TEST(ParseInputShape, NameAndDimensions) {
  auto [name, shape] = ParseInputShape("input=1x3x224x224");
  EXPECT_EQ(name, "input");
  EXPECT_EQ(shape, (std::vector<int64_t>{1, 3, 224, 224}));
  // Names may hold '=' (the last one separates the dimensions).
  auto [odd_name, odd_shape] = ParseInputShape("a=b=7");
  EXPECT_EQ(odd_name, "a=b");
  EXPECT_EQ(odd_shape, (std::vector<int64_t>{7}));
}

TEST(ParseInputShape, MalformedTextShowsTheExpectedForm) {
  for (const char* text : {"input", "=1x3", "input=", "input=1xx3", "input=1x-3", "input=1x3x"}) {
    std::string message = ErrorOf([&] { ParseInputShape(text); });
    EXPECT_NE(message.find(std::string("invalid input shape '") + text + "'"), std::string::npos)
        << message;
    EXPECT_NE(message.find("input=1x3x224x224"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace loom::frontend::onnx
