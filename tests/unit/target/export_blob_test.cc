// ExportLibrary with embedded data blobs (what a model artifact's graph and weights use):
// each blob is its bytes, 64-byte aligned and zero-terminated, plus `<symbol>_size`; the
// library's kernels still work; bad symbol names are errors naming the blob.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>

#include "error_of.h"
#include "loom/te/lower.h"
#include "loom/te/operation.h"
#include "loom/te/schedule.h"
#include "target_test_util.h"

namespace loom::target_test {
namespace {

runtime::Module BuildNegate() {
  te::Tensor a = te::placeholder({16}, DataType::Float(32), "a");
  te::Tensor b = te::compute({16}, [&](Var i) { return -a(i); }, "b");
  return build(te::lower(te::create_schedule({b.op()}), {a, b}, "negate"), Target::Parse("llvm"));
}

std::string TempLibrary(const char* tag) {
  return "/tmp/loom_export_blob_" + std::string(tag) + "_" + std::to_string(getpid()) + ".so";
}

TEST(ExportBlob, BlobsAreAlignedZeroTerminatedAndSized) {
  runtime::Module module = BuildNegate();
  std::string text = "{\"format\": \"x\"}";
  std::vector<uint8_t> bytes(1000003);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 131 + 7);
  std::string path = TempLibrary("ok");
  ExportLibrary(module, path,
                {{"text_blob", text.data(), text.size()},
                 {"byte_blob", bytes.data(), bytes.size()},
                 {"empty_blob", nullptr, 0}});
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  const auto* text_data = static_cast<const char*>(dlsym(handle, "text_blob"));
  const auto* byte_data = static_cast<const uint8_t*>(dlsym(handle, "byte_blob"));
  const auto* empty_data = static_cast<const uint8_t*>(dlsym(handle, "empty_blob"));
  ASSERT_TRUE(text_data != nullptr && byte_data != nullptr && empty_data != nullptr);
  EXPECT_EQ(std::string(text_data), text);  // zero-terminated
  EXPECT_EQ(*static_cast<const uint64_t*>(dlsym(handle, "text_blob_size")), text.size());
  EXPECT_EQ(*static_cast<const uint64_t*>(dlsym(handle, "byte_blob_size")), bytes.size());
  EXPECT_EQ(*static_cast<const uint64_t*>(dlsym(handle, "empty_blob_size")), 0u);
  EXPECT_EQ(std::memcmp(byte_data, bytes.data(), bytes.size()), 0);
  EXPECT_EQ(byte_data[bytes.size()], 0);
  EXPECT_EQ(empty_data[0], 0);
  for (const void* data : {static_cast<const void*>(text_data), static_cast<const void*>(byte_data),
                           static_cast<const void*>(empty_data)}) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(data) % 64, 0u);
  }
  dlclose(handle);

  // The kernels are unaffected by the data beside them.
  runtime::Module library = runtime::LoadModuleFromFile(path);
  tir::HostArray a = RandomArray(DataType::Float(32), {16}, 5);
  tir::HostArray b(DataType::Float(32), {16});
  CallWithArrays(library, "negate", {a, b});
  for (int64_t i = 0; i < 16; ++i) EXPECT_EQ(b.GetFloat(i), -a.GetFloat(i));
  std::remove(path.c_str());
}

TEST(ExportBlob, BadSymbolsAreErrorsNamingTheBlob) {
  runtime::Module module = BuildNegate();
  std::string path = TempLibrary("bad");
  char byte = 1;
  auto export_with = [&](std::vector<LibraryBlob> blobs) {
    return testing::ErrorOf([&] { ExportLibrary(module, path, blobs); });
  };
  EXPECT_EQ(export_with({{"model.json", &byte, 1}}),
            "ExportLibrary('" + path + "'): blob symbol 'model.json' is not a C identifier");
  EXPECT_EQ(export_with({{"negate", &byte, 1}}),
            "ExportLibrary('" + path + "'): blob symbol 'negate' is already defined (by a kernel "
            "or another blob); give the blob another name");
  EXPECT_EQ(export_with({{"w", &byte, 1}, {"w_size", &byte, 1}}),
            "ExportLibrary('" + path + "'): blob symbol 'w_size' is already defined (by a kernel "
            "or another blob); give the blob another name");
  EXPECT_EQ(export_with({{"w", nullptr, 4}}),
            "ExportLibrary('" + path + "'): blob 'w' has no data");
  std::remove(path.c_str());
  std::remove((path + ".o").c_str());
}

}  // namespace
}  // namespace loom::target_test
