#include "runtime_test_util.h"
#include "loom/runtime/cpu_features.h"
#include "loom/runtime/module.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "loom/support/error.h"

namespace loom::runtime {
namespace {

namespace fs = std::filesystem;

constexpr const char* kFixture = LOOM_TEST_FIXTURE_LIBRARY;

class ModuleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("loom_module_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A copy of the fixture library cut to its first `size` bytes.
  std::string TruncatedFixture(size_t size) const {
    std::ifstream in(kFixture, std::ios::binary);
    std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    std::string path = (dir_ / ("cut_" + std::to_string(size) + ".so")).string();
    std::ofstream(path, std::ios::binary) << bytes.substr(0, size);
    return path;
  }

  fs::path dir_;
};

TEST_F(ModuleTest, LoadsTheFixtureAndRunsItsParallelKernel) {
  Module module = LoadModuleFromFile(kFixture);
  EXPECT_EQ(module->type_key(), "dso");
  PackedFunc scale_add = module.GetFunction("loom_fixture_scale_add");
  ASSERT_TRUE(scale_add.defined());
  constexpr int kLength = 1003;
  NDArray x = NDArray::Empty({kLength}, DataType::Float(32));
  NDArray y = NDArray::Empty({kLength}, DataType::Float(32));
  std::vector<float> values(kLength), result(kLength);
  float sum = 0;
  for (int i = 0; i < kLength; ++i) sum += values[i] = static_cast<float>(i % 5);
  x.CopyFromBytes(values.data(), sizeof(float) * kLength);
  EXPECT_EQ(scale_add(x, y, 3.0).AsInt(), kLength);
  y.CopyToBytes(result.data(), sizeof(float) * kLength);
  for (int i = 0; i < kLength; ++i) ASSERT_FLOAT_EQ(result[i], 3.0f * values[i] + sum) << i;
}

TEST_F(ModuleTest, WrongArgumentsGiveTheFunctionsOwnMessage) {
  PackedFunc scale_add = LoadModuleFromFile(kFixture).GetFunction("loom_fixture_scale_add");
  NDArray x = NDArray::Empty({4}, DataType::Float(32));
  NDArray ints = NDArray::Empty({4}, DataType::Int(32));
  EXPECT_EQ(ErrorOf([&] { scale_add(x, x); }),
            "loom_fixture_scale_add: expected 3 arguments, got 2");
  EXPECT_EQ(ErrorOf([&] { scale_add(x, 7, 1.0); }),
            "loom_fixture_scale_add: argument 1 must be a DLTensor*, got type code 0");
  EXPECT_EQ(ErrorOf([&] { scale_add(x, ints, 1.0); }),
            "loom_fixture_scale_add: argument 1 must be a 1-d float32 tensor");
}

TEST_F(ModuleTest, AFailingParallelTaskReportsItsMessage) {
  PackedFunc fail = LoadModuleFromFile(kFixture).GetFunction("loom_fixture_fail_in_task");
  EXPECT_EQ(ErrorOf([&] { fail(); }), "loom_fixture_fail_in_task: the last task refused to run");
}

TEST_F(ModuleTest, OnlyTheLibrarysOwnSymbolsAreFunctions) {
  Module module = LoadModuleFromFile(kFixture);
  EXPECT_FALSE(module.GetFunction("no_such_function").defined());
  // Defined by libc, which the fixture depends on, not by the fixture.
  EXPECT_FALSE(module.GetFunction("snprintf").defined());
  std::string message = ErrorOf([&] { module.GetRequiredFunction("no_such_function"); });
  EXPECT_EQ(message, "library '" + std::string(kFixture) +
                         "' has no function 'no_such_function' (nor do its imports); check the "
                         "name the function was compiled under");
}

// A symbol that names data (a corrupt or hostile graph document's kernel) is refused: called,
// it would jump into the data.
TEST_F(ModuleTest, ASymbolThatIsDataIsNoFunction) {
  Module module = LoadModuleFromFile(kFixture);
  EXPECT_EQ(ErrorOf([&] { module.GetFunction("loom_fixture_data"); }),
            "library '" + std::string(kFixture) +
                "': 'loom_fixture_data' is not a function but data; the artifact is corrupt or "
                "not a Loom model");
}

TEST_F(ModuleTest, FunctionsKeepTheirLibraryLoaded) {
  PackedFunc greeting = LoadModuleFromFile(kFixture).GetFunction("loom_fixture_greeting");
  EXPECT_EQ(greeting().AsString(), "hello from the fixture");
}

TEST_F(ModuleTest, MissingFileIsAnError) {
  std::string path = (dir_ / "absent.so").string();
  EXPECT_NE(ErrorOf([&] { LoadModuleFromFile(path); })
                .find("LoadModuleFromFile('" + path + "'): no such file; check the path"),
            std::string::npos);
}

TEST_F(ModuleTest, TextFileNamedSoIsAnError) {
  std::string path = (dir_ / "model.so").string();
  std::ofstream(path) << "this is not a library\n";
  EXPECT_EQ(ErrorOf([&] { LoadModuleFromFile(path); }),
            "LoadModuleFromFile('" + path +
                "'): not a shared library (the file has no ELF header); pass a shared library "
                "exported by the Loom compiler");
  EXPECT_NE(ErrorOf([&] { LoadModuleFromFile(dir_.string()); }).find("not a regular file"),
            std::string::npos);
}

TEST_F(ModuleTest, TruncatedLibraryIsAnErrorWhereverItIsCut) {
  size_t full = fs::file_size(kFixture);
  for (size_t size : {size_t{40}, size_t{100}, size_t{2000}, full / 2, full - 1}) {
    std::string path = TruncatedFixture(size);
    std::string message = ErrorOf([&] { LoadModuleFromFile(path); });
    EXPECT_EQ(message.rfind("LoadModuleFromFile('" + path + "'): the library is truncated or "
                                "corrupt: its ",
                            0),
              0u)
        << "cut at " << size << ": " << message;
    EXPECT_NE(message.find("but the file has " + std::to_string(size) + " bytes"),
              std::string::npos)
        << message;
  }
}

// A library for another architecture is refused before the loader maps it, naming both.
TEST_F(ModuleTest, ALibraryForAnotherMachineNamesBothMachines) {
  std::string path = (dir_ / "aarch64.so").string();
  fs::copy_file(kFixture, path);
  {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(18);  // e_machine
    const char aarch64[2] = {static_cast<char>(183), 0};
    file.write(aarch64, 2);
  }
  std::string message = ErrorOf([&] { LoadModuleFromFile(path); });
  EXPECT_NE(message.find("the library was built for aarch64, and this runtime runs on x86_64; "
                         "compile the model for this machine (--target llvm) or run it on a "
                         "aarch64 machine"),
            std::string::npos) << message;
}

// An artifact's target enabling CPU features this CPU lacks is refused at load, naming them.
TEST(CpuFeatures, FeaturesTheCpuLacksAreFoundInTheTarget) {
  auto host = [](const std::string& name) -> std::optional<bool> {
    if (name == "avx2" || name == "fma") return true;
    if (name == "avx512f" || name == "amx-int8") return false;
    return std::nullopt;  // a name the runtime does not check
  };
  EXPECT_EQ(MissingCpuFeatures("llvm -mcpu=x -mattr=+avx2,+avx512f,-amx-int8,+fma,+made-up "
                               "-mattr=+amx-int8", host),
            (std::vector<std::string>{"avx512f", "amx-int8"}));
  EXPECT_TRUE(MissingCpuFeatures("c -opt-level=2", host).empty());
  std::string message = ErrorOf([&] { CheckCpuFeatures("llvm -mattr=+avx2,+avx512f", host); });
  EXPECT_EQ(message, "the model was compiled for target 'llvm -mattr=+avx2,+avx512f', which uses "
                     "CPU features this CPU lacks (avx512f): its kernels would stop with an "
                     "illegal instruction; compile it for this CPU (--target llvm) or for a tag "
                     "this CPU has (such as x86-64-avx2)");
  CheckCpuFeatures("llvm -mattr=+avx2,-avx512f", host);  // nothing missing: no error
  // This CPU has what a target made for it enables.
#if defined(__x86_64__)
  EXPECT_EQ(HostHasCpuFeature("sse4.2"), true);
#endif
  EXPECT_EQ(HostHasCpuFeature("made-up"), std::nullopt);
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
// The runtime reads CPUID itself (a table of leaves and bits); GCC 12's own reading, which
// knows every name in that table, agrees with it on this CPU.
TEST(CpuFeatures, CpuidTableAgreesWithTheCompilersReading) {
  const std::pair<const char*, bool> compiler[] = {
      {"sse4.2", __builtin_cpu_supports("sse4.2") != 0},
      {"avx", __builtin_cpu_supports("avx") != 0},
      {"avx2", __builtin_cpu_supports("avx2") != 0},
      {"fma", __builtin_cpu_supports("fma") != 0},
      {"f16c", __builtin_cpu_supports("f16c") != 0},
      {"bmi2", __builtin_cpu_supports("bmi2") != 0},
      {"avxvnni", __builtin_cpu_supports("avxvnni") != 0},
      {"avx512f", __builtin_cpu_supports("avx512f") != 0},
      {"avx512bw", __builtin_cpu_supports("avx512bw") != 0},
      {"avx512cd", __builtin_cpu_supports("avx512cd") != 0},
      {"avx512dq", __builtin_cpu_supports("avx512dq") != 0},
      {"avx512vl", __builtin_cpu_supports("avx512vl") != 0},
      {"avx512vnni", __builtin_cpu_supports("avx512vnni") != 0},
      {"avx512vbmi", __builtin_cpu_supports("avx512vbmi") != 0},
      {"avx512bf16", __builtin_cpu_supports("avx512bf16") != 0},
      {"avx512fp16", __builtin_cpu_supports("avx512fp16") != 0},
      {"amx-tile", __builtin_cpu_supports("amx-tile") != 0},
      {"amx-int8", __builtin_cpu_supports("amx-int8") != 0},
      {"amx-bf16", __builtin_cpu_supports("amx-bf16") != 0},
  };
  for (const auto& [name, present] : compiler) {
    EXPECT_EQ(HostHasCpuFeature(name), present) << name;
  }
}
#endif

class TableModule final : public ModuleNode {
 public:
  explicit TableModule(std::map<std::string, int> values) : values_(std::move(values)) {}
  std::string type_key() const override { return "table"; }
  PackedFunc GetFunction(const std::string& name) override {
    auto it = values_.find(name);
    if (it == values_.end()) return PackedFunc();
    int value = it->second;
    return PackedFunc([value](PackedArgs, RetValue* ret) { ret->SetInt(value); });
  }

 private:
  std::map<std::string, int> values_;
};

TEST(Module, LooksThroughImportsOnlyWhenAsked) {
  Module host(std::make_shared<TableModule>(std::map<std::string, int>{{"host", 1}}));
  Module device(std::make_shared<TableModule>(std::map<std::string, int>{{"kernel", 2}}));
  host.Import(device);
  ASSERT_EQ(host->imports().size(), 1u);
  EXPECT_FALSE(host.GetFunction("kernel").defined());
  EXPECT_EQ(host.GetFunction("kernel", true)().AsInt(), 2);
  EXPECT_EQ(host.GetRequiredFunction("host")().AsInt(), 1);
  EXPECT_EQ(ErrorOf([&] { host.GetRequiredFunction("missing"); }),
            "a 'table' module has no function 'missing' (nor do its imports); check the name "
            "the function was compiled under");
  EXPECT_EQ(ErrorOf([&] { host.Import(Module()); }),
            "Import into a 'table' module: the imported module is undefined");
}

TEST(InitBackendServices, FillsTheGlobalsItFindsAndSkipsTheRest) {
  LoomBackendParallelLaunchFn launch = nullptr;
  LoomAPISetLastErrorFn set_error = nullptr;
  void* context = nullptr;
  std::vector<std::string> asked;
  ModuleNode* module = reinterpret_cast<ModuleNode*>(&asked);  // only its address is used
  InitBackendServices(
      [&](const char* symbol) -> void* {
        asked.push_back(symbol);
        if (asked.back() == LOOM_BACKEND_PARALLEL_LAUNCH_SYMBOL) return &launch;
        if (asked.back() == LOOM_API_SET_LAST_ERROR_SYMBOL) return &set_error;
        if (asked.back() == LOOM_MODULE_CONTEXT_SYMBOL) return &context;
        return nullptr;
      },
      module);
  EXPECT_EQ(launch, &LoomBackendParallelLaunch);
  EXPECT_EQ(set_error, &LoomAPISetLastError);
  EXPECT_EQ(context, module);
  EXPECT_EQ(asked.size(), 8u);
}

// How an exported library's imports come back: by the loader registered for their type key.
TEST(ModuleLoaders, LoadByTypeKeyAndNameTheUnknownOnes) {
  RegisterModuleLoader("test_table", [](const std::string& bytes) {
    return Module(std::make_shared<TableModule>(
        std::map<std::string, int>{{bytes, static_cast<int>(bytes.size())}}));
  });
  Module loaded = LoadModuleFromBytes("test_table", "kernel", "library 'x.so' (import 0)");
  EXPECT_EQ(loaded.GetRequiredFunction("kernel")().AsInt(), 6);
  std::string error =
      ErrorOf([&] { LoadModuleFromBytes("test_gpu", "", "library 'x.so' (import 1)"); });
  EXPECT_NE(error.find("library 'x.so' (import 1) holds a 'test_gpu' module, and no loader for "
                       "it is registered in this process (known: cuda, dso,"),
            std::string::npos)
      << error;
}

TEST(LoomBackendCallPacked, CallsTheImportsOfTheCallingModule) {
  auto host = std::make_shared<TableModule>(std::map<std::string, int>{{"host", 1}});
  host->Import(Module(std::make_shared<TableModule>(std::map<std::string, int>{{"kernel", 2}})));
  LoomValue value;
  value.v_int64 = 42;
  int32_t code = kLoomArgInt;
  EXPECT_EQ(LoomBackendCallPacked(host.get(), "kernel", &value, &code, 1), 0);
  // Only the imports: the calling module's own functions are not device kernels.
  EXPECT_NE(LoomBackendCallPacked(host.get(), "host", &value, &code, 1), 0);
  EXPECT_NE(LoomBackendCallPacked(host.get(), "missing", &value, &code, 1), 0);
  EXPECT_EQ(std::string(LoomGetLastError()),
            "LoomBackendCallPacked: no module that a 'table' module imports has a function "
            "'missing'; build host and device code together with loom::build");
  EXPECT_NE(LoomBackendCallPacked(nullptr, "kernel", &value, &code, 1), 0);
}

}  // namespace
}  // namespace loom::runtime
