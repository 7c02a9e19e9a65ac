#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "loom/runtime/ndarray.h"
#include "loom/support/error.h"
#include "runtime_test_util.h"

namespace loom::runtime {
namespace {

namespace fs = std::filesystem;

class NpyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("loom_npy_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  std::string Write(const std::string& name, const std::string& bytes) const {
    std::ofstream(Path(name), std::ios::binary) << bytes;
    return Path(name);
  }

  static std::string Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

  static std::string LoadError(const std::string& path) {
    return ErrorOf([&] { NDArray::LoadNpy(path); });
  }

  // A version-1 file with `dict` as its header, padded like numpy does, followed by `data`.
  static std::string NpyBytes(const std::string& dict, const std::string& data) {
    std::string header = dict;
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    std::string bytes("\x93NUMPY\x01\x00", 8);
    bytes += static_cast<char>(header.size() & 0xFF);
    bytes += static_cast<char>(header.size() >> 8);
    return bytes + header + data;
  }

  fs::path dir_;
};

TEST_F(NpyTest, HeaderBytesMatchNumpyExactly) {
  NDArray array = NDArray::Empty({2, 3}, DataType::Float(32));
  std::vector<float> values = {1, 2, 3, 4, 5, 6};
  array.CopyFromBytes(values.data(), 24);
  array.SaveNpy(Path("a.npy"));
  std::string bytes = Read(Path("a.npy"));
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  std::string expected("\x93NUMPY\x01\x00\x76\x00", 10);
  expected += dict + std::string(128 - 10 - dict.size() - 1, ' ') + "\n";
  ASSERT_EQ(bytes.size(), 128u + 24u);
  EXPECT_EQ(bytes.substr(0, 128), expected);
  EXPECT_EQ(bytes.substr(128), std::string(reinterpret_cast<const char*>(values.data()), 24));
}

TEST_F(NpyTest, OneDimensionalAndScalarShapesUsePythonTupleSyntax) {
  NDArray::Empty({7}, DataType::Int(64)).SaveNpy(Path("v.npy"));
  EXPECT_NE(Read(Path("v.npy")).find("'shape': (7,), }"), std::string::npos);
  NDArray::Empty({}, DataType::Int(8)).SaveNpy(Path("s.npy"));
  EXPECT_NE(Read(Path("s.npy")).find("{'descr': '|i1', 'fortran_order': False, 'shape': (), }"),
            std::string::npos);
}

TEST_F(NpyTest, RoundTripsEveryDtypeAndRank) {
  const std::vector<DataType> dtypes = {
      DataType::Bool(),    DataType::Int(8),    DataType::Int(16),   DataType::Int(32),
      DataType::Int(64),   DataType::UInt(8),   DataType::UInt(16),  DataType::UInt(32),
      DataType::UInt(64),  DataType::Float(16), DataType::Float(32), DataType::Float(64)};
  const std::vector<std::vector<int64_t>> shapes = {{}, {5}, {2, 3}, {2, 1, 4}, {1, 2, 2, 3}, {0, 3}};
  for (DataType dtype : dtypes) {
    for (const auto& shape : shapes) {
      NDArray array = NDArray::Empty(shape, dtype);
      std::vector<uint8_t> bytes(array.NumBytes());
      for (size_t i = 0; i < bytes.size(); ++i) {
        bytes[i] = dtype.is_bool() ? i % 2 : static_cast<uint8_t>(i * 37 + 11);
      }
      array.CopyFromBytes(bytes.data(), bytes.size());
      array.SaveNpy(Path("r.npy"));
      NDArray loaded = NDArray::LoadNpy(Path("r.npy"));
      EXPECT_EQ(loaded.dtype(), dtype);
      EXPECT_EQ(loaded.Shape(), shape) << dtype;
      std::vector<uint8_t> back(loaded.NumBytes());
      loaded.CopyToBytes(back.data(), back.size());
      EXPECT_EQ(back, bytes) << dtype << " " << ShapeString(shape);
    }
  }
}

TEST_F(NpyTest, ReadsVersionTwoNativeOrderAndPython2Longs) {
  std::string dict = "{'descr': '=i4', 'fortran_order': False, 'shape': (2L,), }";
  std::string header = dict;
  while ((12 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string bytes("\x93NUMPY\x02\x00", 8);
  uint32_t length = static_cast<uint32_t>(header.size());
  bytes.append(reinterpret_cast<const char*>(&length), 4);
  int32_t data[2] = {-7, 9};
  bytes += header + std::string(reinterpret_cast<const char*>(data), 8);
  NDArray loaded = NDArray::LoadNpy(Write("v2.npy", bytes));
  EXPECT_EQ(loaded.dtype(), DataType::Int(32));
  EXPECT_EQ(static_cast<int32_t*>(loaded.data())[0], -7);
  EXPECT_EQ(static_cast<int32_t*>(loaded.data())[1], 9);
}

TEST_F(NpyTest, FortranOrderOfOneDimensionIsStillCOrder) {
  std::string path = Write("f1.npy", NpyBytes("{'descr': '<i2', 'fortran_order': True, 'shape': (2,), }",
                                              std::string("\x01\x00\x02\x00", 4)));
  EXPECT_EQ(static_cast<int16_t*>(NDArray::LoadNpy(path).data())[1], 2);
}

struct CorruptCase {
  const char* name;
  std::string bytes;
  std::string expected;
};

TEST_F(NpyTest, CorruptFilesNameTheFileAndTheProblem) {
  std::string four_floats(16, '\0');
  std::vector<CorruptCase> cases = {
      {"empty.npy", "", "not a .npy file: it does not start with the \\x93NUMPY magic"},
      {"magic.npy", "PK\x03\x04 zip archive", "not a .npy file"},
      {"version.npy", std::string("\x93NUMPY\x04\x00", 8),
       "format version 4.0 is not supported (1.0, 2.0 and 3.0 are)"},
      {"short_header.npy", std::string("\x93NUMPY\x01\x00\x76\x00{'descr'", 17),
       "file is truncated: the header needs 128 bytes but the file has 17"},
      {"data.npy", NpyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", four_floats),
       "file is truncated: shape [2, 3] of <f4 needs 24 data bytes but only 16 follow the header"},
      {"extra.npy", NpyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", four_floats),
       "file is corrupt: 8 unexpected bytes follow the 8 data bytes"},
      {"fortran.npy", NpyBytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", four_floats),
       "the array is stored in Fortran order; only C order is supported"},
      {"big.npy", NpyBytes("{'descr': '>f4', 'fortran_order': False, 'shape': (4,), }", four_floats),
       "dtype '>f4' is big-endian"},
      {"complex.npy", NpyBytes("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", four_floats),
       "dtype '<c8' is not supported; supported dtypes: |b1, |i1"},
      {"dict.npy", NpyBytes("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (4,), }", four_floats),
       "malformed header: expected True or False at offset"},
      {"keys.npy", NpyBytes("{'descr': '<f4', 'shape': (4,), }", four_floats),
       "malformed header: it must have the keys 'descr', 'fortran_order' and 'shape'"},
  };
  for (const CorruptCase& c : cases) {
    std::string path = Write(c.name, c.bytes);
    std::string message = LoadError(path);
    EXPECT_EQ(message.rfind("LoadNpy('" + path + "'): ", 0), 0u) << message;
    EXPECT_NE(message.find(c.expected), std::string::npos) << c.name << ": " << message;
  }
}

TEST_F(NpyTest, MissingFileAndUnsupportedSaveDtypeAreErrors) {
  std::string message = LoadError(Path("absent.npy"));
  EXPECT_NE(message.find("LoadNpy('" + Path("absent.npy") +
                         "'): cannot open the file (No such file or directory)"),
            std::string::npos)
      << message;
  try {
    NDArray::Empty({2}, DataType::BFloat16()).SaveNpy(Path("bf.npy"));
    FAIL() << "saving bfloat16 should fail";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("SaveNpy('" + Path("bf.npy") +
                                             "'): dtype bfloat16 has no NumPy equivalent"),
              std::string::npos)
        << error.what();
  }
}

// Differential check against NumPy itself, when the project's test interpreter has it.
TEST_F(NpyTest, AgreesWithNumpy) {
  std::string python = LOOM_TEST_PYTHON;
  if (!fs::exists(python) ||
      std::system((python + " -c 'import numpy' >/dev/null 2>&1").c_str()) != 0) {
    GTEST_SKIP() << "no Python with NumPy at " << python;
  }
  NDArray array = NDArray::Empty({3, 4}, DataType::Int(16));
  std::vector<int16_t> values(12);
  for (int i = 0; i < 12; ++i) values[i] = static_cast<int16_t>(i * 1000 - 5000);
  array.CopyFromBytes(values.data(), 24);
  array.SaveNpy(Path("loom.npy"));
  std::string script =
      "import numpy as np, sys\n"
      "a = np.load(sys.argv[1])\n"
      "assert a.dtype == np.int16 and a.shape == (3, 4), (a.dtype, a.shape)\n"
      "assert (a.ravel() == np.arange(12) * 1000 - 5000).all(), a\n"
      "np.save(sys.argv[2], np.linspace(0, 1, 10, dtype=np.float64).reshape(2, 5))\n";
  std::ofstream(Path("check.py")) << script;
  std::string command =
      python + " " + Path("check.py") + " " + Path("loom.npy") + " " + Path("numpy.npy");
  ASSERT_EQ(std::system(command.c_str()), 0) << "NumPy rejected Loom's file";
  NDArray loaded = NDArray::LoadNpy(Path("numpy.npy"));
  EXPECT_EQ(loaded.Shape(), (std::vector<int64_t>{2, 5}));
  EXPECT_DOUBLE_EQ(static_cast<double*>(loaded.data())[9], 1.0);
  loaded.SaveNpy(Path("again.npy"));
  EXPECT_EQ(Read(Path("again.npy")), Read(Path("numpy.npy")));
}

}  // namespace
}  // namespace loom::runtime
