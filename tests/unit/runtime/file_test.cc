// Careful file writing and reading (loom/support/file.h): outputs replace their path without
// following a symbolic link planted there; inputs must be regular files of a bounded size.
#include "loom/support/file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "error_of.h"
#include "loom/runtime/ndarray.h"
#include "loom/support/error.h"

namespace loom {
namespace {

namespace fs = std::filesystem;
using ::loom::testing::ErrorOf;

std::string Contents(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class FileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("loom_file_test_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(FileTest, AnOutputReplacesASymbolicLinkInsteadOfFollowingIt) {
  std::ofstream(dir_ / "victim") << "keep me";
  fs::create_symlink(dir_ / "victim", dir_ / "out.npy");
  runtime::NDArray x = runtime::NDArray::Empty({2}, DataType::Float(32));
  std::memset(x.data(), 0, x.NumBytes());
  x.SaveNpy((dir_ / "out.npy").string());
  EXPECT_EQ(Contents(dir_ / "victim"), "keep me");
  EXPECT_FALSE(fs::is_symlink(dir_ / "out.npy"));
  EXPECT_EQ(runtime::NDArray::LoadNpy((dir_ / "out.npy").string()).NumElements(), 2);
  // Nothing but the output is left in the folder (no temporary file).
  size_t entries = 0;
  for (const auto& entry : fs::directory_iterator(dir_)) entries += entry.exists();
  EXPECT_EQ(entries, 2u);
}

TEST_F(FileTest, AnUncommittedReplacementLeavesThePathAlone) {
  std::ofstream(dir_ / "model.so") << "old";
  {
    ReplacingFile file((dir_ / "model.so").string());
    std::ofstream(file.temp_path()) << "half written";
  }
  EXPECT_EQ(Contents(dir_ / "model.so"), "old");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
  EXPECT_NE(ErrorOf([&] {
              ReplacingFile((dir_ / "no" / "such" / "x").string());
            }).find("does its folder exist"),
            std::string::npos);
}

TEST_F(FileTest, InputsMustBeRegularFilesOfBoundedSize) {
  std::ofstream(dir_ / "config.json") << "{}";
  EXPECT_EQ(ReadRegularFile((dir_ / "config.json").string(), 100, "config"), "{}");
  EXPECT_EQ(ErrorOf([&] { ReadRegularFile("/dev/zero", 100, "config"); }),
            "config '/dev/zero' is not a regular file");
  EXPECT_EQ(ErrorOf([&] { ReadRegularFile(dir_.string(), 100, "config"); }),
            "config '" + dir_.string() + "' is not a regular file");
  EXPECT_EQ(ErrorOf([&] { ReadRegularFile((dir_ / "config.json").string(), 1, "config"); }),
            "config '" + (dir_ / "config.json").string() +
                "' is 2 bytes, more than the 1 such a file can be");
  EXPECT_NE(ErrorOf([&] {
              ReadRegularFile((dir_ / "absent").string(), 1, "config");
            }).find("cannot be opened"),
            std::string::npos);
}

}  // namespace
}  // namespace loom
