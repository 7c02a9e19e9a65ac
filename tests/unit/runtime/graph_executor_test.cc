// The graph executor on the test model that graph_model_fixture.cc exports at build time
// (TE kernels add, relu, mul; a hand-written graph; two parameters):
//   hidden = relu(data + w), out = (hidden + w2) * hidden
// Outputs are compared with a reference computed here; the graph's checks, the input checks
// and the artifact loader are tested through their messages.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "loom/runtime/cpu_features.h"
#include "loom/runtime/graph_executor.h"
#include "loom/runtime/thread_pool.h"
#include "runtime_test_util.h"

namespace loom::runtime {
namespace {

constexpr int kRows = 2;
constexpr int kCols = 8;
constexpr int kCount = kRows * kCols;
const std::string kDir = LOOM_TEST_GRAPH_DIR;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

const std::string& GraphJson() {
  static const std::string json = ReadFile(kDir + "/graph_model.json");
  return json;
}

// The parameters blob in 64-byte aligned memory that the returned owner keeps alive.
std::shared_ptr<const void> Params(size_t* size) {
  std::string bytes = ReadFile(kDir + "/graph_params.bin");
  NDArray blob = NDArray::Empty({static_cast<int64_t>(bytes.size())}, DataType::UInt(8));
  blob.CopyFromBytes(bytes.data(), bytes.size());
  *size = bytes.size();
  return std::make_shared<NDArray>(blob);
}

const Module& Kernels() {
  static const Module kernels = LoadModuleFromFile(kDir + "/graph_kernels.so");
  return kernels;
}

std::shared_ptr<const GraphModel> FromJson(const std::string& json) {
  size_t size = 0;
  std::shared_ptr<const void> owner = Params(&size);
  const void* data = static_cast<const NDArray*>(owner.get())->data();
  return MakeGraphModel(Kernels(), json, data, size, owner);
}

// `json` with its first `from` replaced by `to` (which must be there).
std::string Edit(std::string json, const std::string& from, const std::string& to) {
  size_t at = json.find(from);
  EXPECT_NE(at, std::string::npos) << "the fixture graph has no '" << from << "'";
  if (at != std::string::npos) json.replace(at, from.size(), to);
  return json;
}

NDArray Input(float seed) {
  NDArray data = NDArray::Empty({kRows, kCols}, DataType::Float(32));
  auto* values = static_cast<float*>(data.data());
  for (int k = 0; k < kCount; ++k) values[k] = static_cast<float>((k * 7) % 11) * 0.25f - seed;
  return data;
}

struct Reference {
  std::vector<float> add1, hidden, add2, out;
};

// The model computed directly, with the fixture's parameters.
Reference Compute(const NDArray& data) {
  const auto* x = static_cast<const float*>(data.data());
  Reference r;
  for (int k = 0; k < kCount; ++k) {
    float w = 0.25f * static_cast<float>(k % 5) - 0.5f;
    float w2 = 0.125f * static_cast<float>(k) - 1.0f;
    r.add1.push_back(x[k] + w);
    r.hidden.push_back(std::max(r.add1.back(), 0.0f));
    r.add2.push_back(r.hidden.back() + w2);
    r.out.push_back(r.add2.back() * r.hidden.back());
  }
  return r;
}

void ExpectValues(const NDArray& array, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(array.Shape(), (std::vector<int64_t>{kRows, kCols})) << what;
  ASSERT_EQ(array.dtype(), DataType::Float(32)) << what;
  const auto* got = static_cast<const float*>(array.data());
  for (int k = 0; k < kCount; ++k) EXPECT_EQ(got[k], want[k]) << what << " element " << k;
}

void ExpectContains(const std::string& message, const std::string& fragment) {
  EXPECT_NE(message.find(fragment), std::string::npos) << "got: " << message;
}

TEST(GraphModel, ParsesTheGraph) {
  auto model = FromJson(GraphJson());
  EXPECT_EQ(model->target(), "llvm");
  ASSERT_EQ(model->entries().size(), 7u);
  EXPECT_EQ(model->entries()[1].param, 0);
  EXPECT_EQ(model->entries()[4].offset, 64u);  // w2's place in the blob
  EXPECT_EQ(model->entries()[6].bytes, 64u);
  ASSERT_EQ(model->kernels().size(), 4u);
  EXPECT_EQ(model->kernels()[3].func, "mul");
  EXPECT_EQ(model->kernels()[1].nodes, std::vector<std::string>{"relu/1"});
}

TEST(GraphModel, EachInvalidGraphIsAnErrorNamingTheField) {
  const std::string& json = GraphJson();
  struct Case {
    std::string from, to, message;
  };
  std::vector<Case> cases = {
      {"loom-graph-1", "loom-graph-9",
       "graph JSON: unknown format 'loom-graph-9'; this runtime reads 'loom-graph-1'"},
      {R"("storage": 3, "offset": 0)", R"("storage": 4, "offset": 0)",
       "graph JSON: entries[6].storage = 4 is out of range: the graph has 4 storages"},
      {R"({"bytes": 64}, {"bytes": 64}])", R"({"bytes": 64}, {"bytes": 32}])",
       "graph JSON: entries[6] ('mul1', float32[2, 8], 64 bytes at offset 0) does not fit "
       "storages[3] of 32 bytes"},
      {R"("name": "add1", "shape": [2, 8], "dtype": "float32")",
       R"("name": "add1", "shape": [2, 8], "dtype": "float31")",
       "graph JSON: entries[2].dtype 'float31' is not a known dtype"},
      {R"("func": "relu")", R"("func": "gelu")",
       "graph JSON: kernels[1].func: kernel 'relu/1' calls function 'gelu', which library '"},
      {R"("args": [5, 3, 6])", R"("args": [5, 3, 7])",
       "graph JSON: kernels[3].args[2] = 7 is not an entry id (the graph has 7 entries)"},
      {R"("param": 1})", R"("param": 2})",
       "graph JSON: entries[4].param = 2 is out of range: the graph has 2 params"},
      {R"("offset": 64, "bytes": 64)", R"("offset": 128, "bytes": 64)",
       "graph JSON: params[1] ('w2') spans bytes 128 to 192 but the parameters blob has 128 "
       "bytes"},
      {R"("offset": 64, "bytes": 64)", R"("offset": 32, "bytes": 64)",
       "graph JSON: params[1].offset = 32 ('w2') must be a multiple of 64 bytes"},
      {R"({"name": "w", "offset": 0, "bytes": 64})", R"({"name": "w", "offset": 0, "bytes": 60})",
       "graph JSON: entries[1] ('w', float32[2, 8]) needs 64 bytes but params[0] ('w') has 60"},
      {R"("args": [0, 1, 2])", R"("args": [0, 2, 1])",
       "graph JSON: kernels[0].args[2] = 1 ('w') is an output of kernel 'add1' but is a "
       "parameter"},
      {R"("entry": 6})", R"("entry": 5})",
       "graph JSON: outputs[0].entry = 5 ('out') lives in storages[1], which 1 other entries "
       "share; inputs and outputs need slots of their own"},
      {R"("num_outputs": 1, "nodes": ["mul1"])", R"("num_outputs": 4, "nodes": ["mul1"])",
       "graph JSON: kernels[3].num_outputs = 4 ('mul1') must be between 1 and the number of "
       "args (3)"},
      {R"("num_outputs": 1, "nodes": ["add1"])", R"("num_outputs": "1", "nodes": ["add1"])",
       "graph JSON: kernels[0].num_outputs must be an integer >= 0, got \"1\""},
      // A kernel of a device the runtime does not have (libloom_vta registers ext_dev).
      {R"("num_outputs": 1, "nodes": ["add1"])",
       R"("num_outputs": 1, "device_type": 12, "nodes": ["add1"])",
       "graph JSON: kernels[0].device_type = 12 ('add1') is not a device this runtime has "
       "(dlpack-device-12); link or load the device's library (libloom_vta for VTA)"},
      {R"("num_outputs": 1, "nodes": ["add1"])",
       R"("num_outputs": 1, "device_type": 1, "nodes": ["add1"])",
       "graph JSON: kernels[0].device_type = 1 ('add1') is the host's; only a device's kernel "
       "has a device_type"},
      // Would pass as 1 if narrowed to int before the range check.
      {R"("num_outputs": 1, "nodes": ["mul1"])",
       R"("num_outputs": 4294967297, "nodes": ["mul1"])",
       "graph JSON: kernels[3].num_outputs = 4294967297 ('mul1') must be between 1 and the "
       "number of args (3)"},
      // 2^62 * 8 elements * 4 bytes wraps to 0 bytes, which would fit any slot.
      {R"({"name": "mul1", "shape": [2, 8])",
       R"({"name": "mul1", "shape": [4611686018427387904, 8])",
       "graph JSON: entries[6] ('mul1', float32[4611686018427387904, 8]) is too large: its size "
       "in bytes overflows 63 bits"},
      {R"({"name": "mul1", "shape": [2, 8])", R"({"name": "mul1", "shape": [2, -8])",
       "graph JSON: entries[6].shape[1] must be an integer >= 0, got -8"},
      {R"("storages": [{"bytes": 64},)", R"("storages": [{"bytes": 18446744073709551615},)",
       "graph JSON: storages[0].bytes = 18446744073709551615 is too large (at most 2^63 - 1)"},
      {R"("storages": [{"bytes": 64}, {"bytes": 64},)", R"("storages": [{"bytes": 64}, 64,)",
       "graph JSON: storages[1] must be an object, got 64"},
      {R"({"func": "add", "name": "add1", "args": [0, 1, 2], "num_outputs": 1, "nodes": ["add1"]})",
       R"("add1")", "graph JSON: kernels[0] must be an object, got \"add1\""},
      {R"("nodes": ["mul1"])", R"("nodes": [7])",
       "graph JSON: kernels[3].nodes[0] must be a string, got 7"},
      // A mistyped field's value is quoted cut short.
      {R"("nodes": ["mul1"])", "\"nodes\": \"" + std::string(100, 'x') + "\"",
       "graph JSON: kernels[3].nodes must be an array, got \"" + std::string(59, 'x') + "..."},
      {R"({"name": "hidden", "entry": 3})", R"({"name": "out", "entry": 3})",
       "graph JSON: outputs[1].name 'out' repeats outputs[0].name; outputs need distinct names"},
      {R"("args": [0, 1, 2])", R"("args": [0, 1, 5])",
       "graph JSON: kernels[1].args[0] = 2 ('add1') is read by kernel 'relu/1' before any "
       "kernel writes it (kernels are listed in execution order)"},
      {R"("args": [5, 3, 6])", R"("args": [5, 3, 5])",
       "graph JSON: outputs[0].entry = 6 ('out') is written by no kernel"},
      {R"("storages": [{"bytes": 64},)", R"("storages": [{"size": 64},)",
       "graph JSON: storages[0] has no 'bytes' field"},
      {R"("shape": [2, 8], "dtype": "float32", "param": 0)",
       R"("shape": [2, 8], "dtype": "float32", "storage": 0, "offset": 0, "param": 0)",
       "graph JSON: entries[1] ('w') must have exactly one of 'storage' (a slot) and 'param'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("edit: " + c.from + " -> " + c.to);
    ExpectContains(ErrorOf([&] { FromJson(Edit(json, c.from, c.to)); }), c.message);
  }
  ExpectContains(ErrorOf([&] { FromJson("{\"format\": "); }),
                 "graph JSON: the document does not parse (parse error at line 1, column 12");
  EXPECT_EQ(ErrorOf([&] { FromJson("[1, 2]"); }),
            "graph JSON: the document must be an object, got [1,2]");
}

// Whatever the document, the reader either accepts it or throws loom::Error: never another
// exception, never a crash (and a model it accepts runs or fails with loom::Error too).
void ExpectOnlyLoomErrors(const std::string& json, const std::string& what) {
  try {
    GraphExecutor exec(FromJson(json));
    exec.SetInput(0, Input(1.0f));
    exec.Run();
  } catch (const Error&) {
  } catch (const std::exception& error) {
    ADD_FAILURE() << what << ": threw a non-loom exception: " << error.what();
  }
}

TEST(GraphModel, EveryTruncationOfTheGraphIsAParseError) {
  const std::string& json = GraphJson();
  size_t end = json.rfind('}');
  for (size_t n = 0; n < end; ++n) {
    std::string message = ErrorOf([&] { FromJson(json.substr(0, n)); });
    ASSERT_NE(message.find("graph JSON: the document does not parse"), std::string::npos)
        << "prefix of " << n << " bytes: " << message;
  }
}

TEST(GraphModel, FuzzedFieldsAreLoomErrorsOrValidModels) {
  nlohmann::json doc = nlohmann::json::parse(GraphJson());
  std::vector<nlohmann::json> replacements = {
      nullptr, true, -1, 0, 1, 1e300, 4611686018427387904LL, 18446744073709551615ULL, "x",
      nlohmann::json::array(), nlohmann::json::object()};
  size_t mutations = 0;
  const nlohmann::json leaves = doc.flatten();
  for (const auto& leaf : leaves.items()) {
    nlohmann::json::json_pointer pointer(leaf.key());
    for (const nlohmann::json& replacement : replacements) {
      nlohmann::json mutated = doc;
      mutated[pointer] = replacement;
      ExpectOnlyLoomErrors(mutated.dump(), leaf.key() + " = " + replacement.dump());
      ++mutations;
    }
    // The field removed (from its object) or the array element dropped.
    nlohmann::json mutated = doc;
    nlohmann::json& parent = mutated[pointer.parent_pointer()];
    if (parent.is_object()) {
      parent.erase(pointer.back());
    } else {
      parent.erase(static_cast<size_t>(std::stoul(pointer.back())));
    }
    ExpectOnlyLoomErrors(mutated.dump(), "without " + leaf.key());
    ++mutations;
  }
  EXPECT_GT(mutations, 1000u);
}

TEST(GraphExecutor, OutputsEqualTheReferenceWithSharedStorage) {
  GraphExecutor exec(FromJson(GraphJson()));
  EXPECT_EQ(exec.NumInputs(), 1);
  EXPECT_EQ(exec.NumOutputs(), 2);
  EXPECT_EQ(exec.InputName(0), "data");
  EXPECT_EQ(exec.OutputName(0), "out");
  EXPECT_EQ(exec.OutputShape(1), (std::vector<int64_t>{kRows, kCols}));
  EXPECT_EQ(exec.InputDtype(0), DataType::Float(32));
  // Seven entries, two of them parameters, add1 and add2 in one slot: four 64-byte slots.
  EXPECT_EQ(exec.StorageBytes(), 4u * 64u);

  const void* out_memory = nullptr;
  for (float seed : {1.0f, 0.5f, 2.0f}) {
    NDArray data = Input(seed);
    exec.SetInput("data", data);
    exec.Run();
    Reference want = Compute(data);
    ExpectValues(exec.GetOutput(0), want.out, "out");
    ExpectValues(exec.GetOutput(1), want.hidden, "hidden");
    // Run allocates nothing: the outputs stay where the executor put them at construction.
    if (out_memory == nullptr) out_memory = exec.GetOutput(0).data();
    EXPECT_EQ(exec.GetOutput(0).data(), out_memory);
  }
}

// The thread count is the executor's own parameter: any count up to the pool's gives the
// same outputs; others are errors naming the pool's size.
TEST(GraphExecutor, ThreadCountIsAParameterOfTheExecutor) {
  GraphExecutor exec(FromJson(GraphJson()));
  EXPECT_EQ(exec.num_threads(), 0);
  int pool = ThreadPool::Global().num_threads();
  NDArray data = Input(1.5f);
  Reference want = Compute(data);
  for (int threads : {1, pool, 0}) {
    exec.SetNumThreads(threads);
    EXPECT_EQ(exec.num_threads(), threads);
    exec.SetInput("data", data);
    exec.Run();
    ExpectValues(exec.GetOutput(0), want.out, "out with " + std::to_string(threads) + " threads");
  }
  std::string e = ErrorOf([&] { exec.SetNumThreads(pool + 1); });
  EXPECT_NE(e.find("SetNumThreads(" + std::to_string(pool + 1) + "): an executor runs on 1 to " +
                   std::to_string(pool) + " threads"),
            std::string::npos) << e;
  EXPECT_NE(ErrorOf([&] { exec.SetNumThreads(-1); }).find("SetNumThreads(-1)"),
            std::string::npos);
}

// A model compiled for CPU features this CPU lacks is refused when it loads, naming them.
TEST(GraphModel, AModelForFeaturesThisCpuLacksIsRefused) {
  std::string lacking;
  for (const char* feature : {"amx-int8", "avx512fp16", "avx512bf16", "avx512f", "avx2"}) {
    if (HostHasCpuFeature(feature) == false) {
      lacking = feature;
      break;
    }
  }
  if (lacking.empty()) GTEST_SKIP() << "this CPU has every feature the test could ask for";
  std::string json = GraphJson();
  std::string target = "llvm -mcpu=sapphirerapids -mattr=+sse4.2,+" + lacking;
  std::string edited = Edit(json, "\"target\": \"llvm\"", "\"target\": \"" + target + "\"");
  ASSERT_NE(edited, json);
  std::string message = ErrorOf([&] { FromJson(edited); });
  ExpectContains(message, "the model was compiled for target '" + target +
                              "', which uses CPU features this CPU lacks (" + lacking + ")");
  ExpectContains(message, "compile it for this CPU (--target llvm)");
}

TEST(GraphExecutor, AnOutputViewOutlivesItsExecutor) {
  NDArray data = Input(1.0f);
  NDArray out;
  {
    GraphExecutor exec(FromJson(GraphJson()));
    exec.SetInput(0, data);
    exec.Run();
    out = exec.GetOutput(0);
  }
  ExpectValues(out, Compute(data).out, "out after the executor is gone");
}

TEST(GraphExecutor, SetInputChecksNameDtypeAndShape) {
  GraphExecutor exec(FromJson(GraphJson()));
  NDArray data = Input(1.0f);
  EXPECT_EQ(ErrorOf([&] { exec.SetInput("image", data); }),
            "GraphExecutor::SetInput: the model has no input 'image'; its inputs are 'data'");
  NDArray int64_data = NDArray::Empty({kRows, kCols}, DataType::Int(64));
  NDArray flat_data = NDArray::Empty({kCount}, DataType::Float(32));
  EXPECT_EQ(ErrorOf([&] { exec.SetInput("data", int64_data); }),
            "GraphExecutor::SetInput: input 'data' expects dtype float32, got int64");
  EXPECT_EQ(ErrorOf([&] { exec.SetInput("data", flat_data); }),
            "GraphExecutor::SetInput: input 'data' expects shape [2, 8], got [16]");
  EXPECT_EQ(ErrorOf([&] { exec.SetInput(1, data); }),
            "GraphExecutor: input index 1 is out of range; the model has 1 inputs");
  EXPECT_EQ(ErrorOf([&] { exec.GetOutput(2); }),
            "GraphExecutor: output index 2 is out of range; the model has 2 outputs");
}

TEST(GraphExecutor, AnUnallocatableSlotIsAnErrorNamingIt) {
  std::string json = Edit(GraphJson(), R"({"bytes": 64}])", R"({"bytes": 4611686018427387904}])");
  ExpectContains(ErrorOf([&] { GraphExecutor exec(FromJson(json)); }),
                 "GraphExecutor: cannot allocate storages[3] of the memory plan "
                 "(4611686018427387904 bytes) on cpu: ");
}

TEST(GraphExecutor, InputAndOutputEntriesAreTheGraphs) {
  GraphExecutor exec(FromJson(GraphJson()));
  EXPECT_EQ(exec.InputEntry(0).name, "data");
  EXPECT_EQ(exec.OutputEntry(1).name, "relu/1");
  EXPECT_EQ(&exec.OutputEntry(0), &exec.model().entries()[6]);
  EXPECT_EQ(ErrorOf([&] { exec.OutputEntry(-1); }),
            "GraphExecutor: output index -1 is out of range; the model has 2 outputs");
}

TEST(GraphExecutor, AKernelFailureNamesTheKernel) {
  // A graph whose hidden value is declared [16]: relu (compiled for [2, 8]) rejects it.
  std::string json = Edit(GraphJson(), R"("name": "relu/1", "shape": [2, 8])",
                          R"("name": "relu/1", "shape": [16])");
  GraphExecutor exec(FromJson(json));
  exec.SetInput("data", Input(1.0f));
  ExpectContains(ErrorOf([&] { exec.Run(); }),
                 "GraphExecutor: kernel 1 'relu/1' (function 'relu') failed: ");
}

TEST(GraphModel, ExportedArtifactRoundTrips) {
  auto loaded = LoadModel(kDir + "/graph_model.so");
  EXPECT_EQ(loaded->kernels().size(), 4u);
  GraphExecutor from_artifact(loaded);
  GraphExecutor from_parts(FromJson(GraphJson()));
  NDArray data = Input(0.75f);
  for (GraphExecutor* exec : {&from_artifact, &from_parts}) {
    exec->SetInput("data", data);
    exec->Run();
  }
  Reference want = Compute(data);
  ExpectValues(from_artifact.GetOutput(0), want.out, "out from the artifact");
  ExpectValues(from_artifact.GetOutput(1), want.hidden, "hidden from the artifact");
  ExpectValues(from_parts.GetOutput(0), want.out, "out from the parts");
  // The weights are used where the library maps them, 64-byte aligned.
  EXPECT_EQ(reinterpret_cast<uintptr_t>(loaded->ParamData(loaded->entries()[1])) % 64, 0u);
}

TEST(GraphModel, LoadingALibraryWithoutAGraphIsAClearError) {
  std::string path = kDir + "/graph_kernels.so";
  EXPECT_EQ(ErrorOf([&] { LoadModel(path); }),
            "LoadModel('" + path + "'): the library has no symbol 'loom_graph_json': it holds "
            "kernels but no model; load a model library written by ExportModel (loom compile), "
            "or load kernels alone with LoadModuleFromFile");
  ExpectContains(ErrorOf([&] { LoadModel(kDir + "/graph_model.json"); }),
                 "not a shared library (the file has no ELF header)");
}

TEST(GraphExecutor, ExecutorsOfOneModelRunOnTwoThreads) {
  auto model = LoadModel(kDir + "/graph_model.so");
  std::vector<float> seeds = {0.5f, 1.75f};
  std::vector<std::string> errors(seeds.size());
  std::vector<std::thread> threads;
  for (size_t t = 0; t < seeds.size(); ++t) {
    threads.emplace_back([&, t] {
      GraphExecutor exec(model);
      NDArray data = Input(seeds[t]);
      std::vector<float> want = Compute(data).out;
      for (int run = 0; run < 200; ++run) {
        exec.SetInput("data", data);
        exec.Run();
        const auto* got = static_cast<const float*>(exec.GetOutput(0).data());
        if (!std::equal(want.begin(), want.end(), got)) {
          errors[t] = "thread " + std::to_string(t) + " run " + std::to_string(run) + " differs";
          return;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::string& error : errors) EXPECT_EQ(error, "");
}

TEST(GraphExecutor, ProfileKernelsTimesEachKernel) {
  GraphExecutor exec(FromJson(GraphJson()));
  exec.SetInput("data", Input(1.0f));
  std::vector<GraphExecutor::KernelTime> times = exec.ProfileKernels(5);
  ASSERT_EQ(times.size(), 4u);
  std::vector<std::string> funcs, names;
  for (const auto& time : times) {
    funcs.push_back(time.func);
    names.push_back(time.name);
    EXPECT_GE(time.ms, 0.0);
  }
  EXPECT_EQ(funcs, (std::vector<std::string>{"add", "relu", "add", "mul"}));
  EXPECT_EQ(names, (std::vector<std::string>{"add1", "relu/1", "add2", "mul1"}));
  EXPECT_EQ(ErrorOf([&] { exec.ProfileKernels(0); }),
            "GraphExecutor::ProfileKernels: repeat must be >= 1, got 0");
}

TEST(GraphExecutor, DumpIntermediatesWritesEveryProducedEntry) {
  GraphExecutor exec(FromJson(GraphJson()));
  NDArray data = Input(1.25f);
  exec.SetInput("data", data);
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("loom_graph_dump_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  exec.DumpIntermediates(dir.string());
  Reference want = Compute(data);
  // add1 and add2 share a slot in a normal run; the dump keeps both. "relu/1" is sanitized.
  ExpectValues(NDArray::LoadNpy((dir / "add1.npy").string()), want.add1, "add1.npy");
  ExpectValues(NDArray::LoadNpy((dir / "relu_1.npy").string()), want.hidden, "relu_1.npy");
  ExpectValues(NDArray::LoadNpy((dir / "add2.npy").string()), want.add2, "add2.npy");
  ExpectValues(NDArray::LoadNpy((dir / "mul1.npy").string()), want.out, "mul1.npy");
  size_t files = 0;
  for (const auto& file : std::filesystem::directory_iterator(dir)) files += file.is_regular_file();
  EXPECT_EQ(files, 4u);
  // The outputs of the dumped run are where GetOutput reads them.
  ExpectValues(exec.GetOutput(0), want.out, "out after the dump");
  std::filesystem::remove_all(dir);
}

TEST(GraphExecutor, DumpIntermediatesKeepsEntriesWithOneNameApart) {
  // Two entries named "add1" (the second is entry 5): the second file gets the entry id.
  std::string json =
      Edit(GraphJson(), R"({"name": "add2", "shape")", R"({"name": "add1", "shape")");
  GraphExecutor exec(FromJson(json));
  NDArray data = Input(0.5f);
  exec.SetInput("data", data);
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("loom_graph_dump_names_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  exec.DumpIntermediates(dir.string());
  Reference want = Compute(data);
  ExpectValues(NDArray::LoadNpy((dir / "add1.npy").string()), want.add1, "add1.npy");
  ExpectValues(NDArray::LoadNpy((dir / "add1_5.npy").string()), want.add2, "add1_5.npy");
  std::filesystem::remove_all(dir);
}

TEST(GraphExecutor, DumpIntermediatesNeverOverwritesAFile) {
  // "add1" twice (entries 2 and 5) and then "add1_5" (entry 6): the renamed second "add1"
  // takes "add1_5", so entry 6 must go elsewhere.
  std::string json =
      Edit(GraphJson(), R"({"name": "add2", "shape")", R"({"name": "add1", "shape")");
  json = Edit(json, R"({"name": "mul1", "shape")", R"({"name": "add1_5", "shape")");
  GraphExecutor exec(FromJson(json));
  NDArray data = Input(0.5f);
  exec.SetInput("data", data);
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("loom_graph_dump_clash_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  exec.DumpIntermediates(dir.string());
  Reference want = Compute(data);
  ExpectValues(NDArray::LoadNpy((dir / "add1_5.npy").string()), want.add2, "add1_5.npy");
  ExpectValues(NDArray::LoadNpy((dir / "add1_5_6.npy").string()), want.out, "add1_5_6.npy");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace loom::runtime
