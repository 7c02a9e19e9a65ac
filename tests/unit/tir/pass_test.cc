// The pass infrastructure: contexts and their scopes, opt levels, disabled passes, config
// values, instruments, Sequential, and the LOOM_DUMP_IR / LOOM_TIME_PASSES switches.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"
#include "loom/tir/transform.h"

namespace loom::tir::transform {
namespace {

// A function whose body is `for i in range(4): A[i] = A[i] + 0` style marker statements.
PrimFunc MarkerFunc(int marker) {
  Buffer a = DeclBuffer({4}, DataType::Int(32), "A");
  return PrimFunc({a->data}, {{a->data, a}}, BufferStore(a, marker, {0}), DataType::Void(), {});
}

int Marker(const IRModule& module) {
  const auto* store = module.Lookup("main")->body.as<BufferStoreNode>();
  return static_cast<int>(store->value.as<IntImmNode>()->value);
}

// A pass that appends its digit to the marker: the result shows which passes ran, in order.
Pass AppendDigit(int digit, int opt_level = 0) {
  auto rewrite = [digit](const PrimFunc& func, const IRModule&, const PassContext&) {
    const auto* store = func->body.as<BufferStoreNode>();
    int64_t marker = store->value.as<IntImmNode>()->value;
    Stmt body = BufferStore(store->buffer, IntImm(DataType::Int(32), marker * 10 + digit),
                            store->indices);
    return PrimFunc(func->params, func->buffer_map, body, func->ret_type, func->attrs);
  };
  return CreatePrimFuncPass(rewrite, opt_level, "Append" + std::to_string(digit));
}

Pass Identity() {
  return CreatePrimFuncPass(
      [](const PrimFunc& func, const IRModule&, const PassContext&) { return func; }, 0,
      "Identity");
}

IRModule Module(int marker) {
  IRModule module;
  module.Add("main", MarkerFunc(marker));
  return module;
}

TEST(PassTest, SequentialRunsInOrderAndSkipsByOptLevelAndName) {
  Pass pipeline = Sequential({AppendDigit(1), AppendDigit(2, 3), AppendDigit(3)}, "Pipeline");
  EXPECT_EQ(pipeline.info().name, "Pipeline");
  EXPECT_EQ(Marker(pipeline(Module(9))), 913) << "opt_level 3 is above the default 2";
  {
    PassContext context;
    context.opt_level = 3;
    PassContextScope scope(context);
    EXPECT_EQ(Marker(pipeline(Module(9))), 9123);
    {
      PassContext inner;
      inner.disabled_passes = {"Append1"};
      PassContextScope inner_scope(inner);
      EXPECT_EQ(Marker(pipeline(Module(9))), 93) << "the inner scope is current";
    }
    EXPECT_EQ(PassContext::Current().opt_level, 3) << "leaving a scope restores the outer one";
  }
  EXPECT_EQ(PassContext::Current().opt_level, 2);
  EXPECT_EQ(Marker(Sequential({Sequential({AppendDigit(4)}), AppendDigit(5)})(Module(0))), 45);
}

TEST(PassTest, PrimFuncOverloadAndMultiFunctionModules) {
  PrimFunc out = AppendDigit(7)(MarkerFunc(1));
  EXPECT_EQ(out->body.as<BufferStoreNode>()->value.as<IntImmNode>()->value, 17);
  IRModule module;
  module.Add("f", MarkerFunc(1));
  module.Add("g", MarkerFunc(2));
  IRModule result = AppendDigit(5)(module);
  EXPECT_EQ(result.Lookup("f")->body.as<BufferStoreNode>()->value.as<IntImmNode>()->value, 15);
  EXPECT_EQ(result.Lookup("g")->body.as<BufferStoreNode>()->value.as<IntImmNode>()->value, 25);
  EXPECT_EQ(module.Lookup("f")->body.as<BufferStoreNode>()->value.as<IntImmNode>()->value, 1)
      << "a pass never modifies the module it is given";
}

TEST(PassTest, ConfigValuesAreTyped) {
  PassContext context;
  context.config["tir.UnrollLoop.auto_max_step"] = int64_t{8};
  context.config["name"] = std::string("x");
  EXPECT_EQ(context.GetConfig<int64_t>("tir.UnrollLoop.auto_max_step", 0), 8);
  EXPECT_EQ(context.GetConfig<int64_t>("absent", 5), 5);
  EXPECT_EQ(context.GetConfig<std::string>("name", ""), "x");
  try {
    context.GetConfig<int64_t>("name", 0);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "pass config 'name' holds a string, which is not the type the pass reads; set it "
              "with the documented type");
  }
}

class RecordingInstrument : public PassInstrument {
 public:
  void RunBeforePass(const PassInfo& info) override {
    log << "before " << info.name << ";";
  }
  void RunAfterPass(const PassInfo& info, bool changed) override {
    log << "after " << info.name << (changed ? " changed;" : " unchanged;");
  }
  std::ostringstream log;
};

TEST(PassTest, InstrumentsSeeEveryLeafPass) {
  auto recorder = std::make_shared<RecordingInstrument>();
  PassContext context;
  context.instruments.push_back(recorder);
  PassContextScope scope(context);
  Sequential({AppendDigit(1), Identity(), AppendDigit(2, 3)})(Module(0));
  EXPECT_EQ(recorder->log.str(),
            "before Append1;after Append1 changed;before Identity;after Identity unchanged;");
}

TEST(PassTest, APassMayEnterItsOwnContext) {
  // Entering scopes inside a running pass must leave the running pass's context intact.
  Pass nested = CreateModulePass(
      [](const IRModule& module, const PassContext&) {
        std::vector<std::unique_ptr<PassContextScope>> scopes;
        for (int i = 0; i < 64; ++i) {
          scopes.push_back(std::make_unique<PassContextScope>(PassContext()));
        }
        return AppendDigit(6)(module);
      },
      0, "Nested");
  auto recorder = std::make_shared<RecordingInstrument>();
  PassContext context;
  context.instruments.push_back(recorder);
  PassContextScope scope(context);
  EXPECT_EQ(Marker(nested(Module(1))), 16);
  EXPECT_EQ(recorder->log.str(), "before Nested;after Nested changed;")
      << "the inner Append6 ran under the inner contexts, without the instrument";
}

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() { unsetenv(name_); }

 private:
  const char* name_;
};

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(PassTest, DumpIrWritesNumberedFilesForChangingPasses) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("loom_dump_ir_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  {
    ScopedEnv env("LOOM_DUMP_IR", dir.string());
    PassContextScope scope{PassContext()};
    Sequential({AppendDigit(1), Identity(), AppendDigit(2)})(Module(0));
  }
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"000_input.txt", "001_after_Append1.txt",
                                             "003_after_Append2.txt"}))
      << "Identity (pass 2) changed nothing and wrote nothing";
  EXPECT_EQ(ReadFile(dir / "000_input.txt"), ToScript(Module(0)));
  EXPECT_EQ(ReadFile(dir / "001_after_Append1.txt"), ToScript(Module(1)));
  EXPECT_EQ(ReadFile(dir / "003_after_Append2.txt"), ToScript(Module(12)));
  std::filesystem::remove_all(dir);
}

TEST(PassTest, TimePassesPrintsEachPass) {
  ScopedEnv env("LOOM_TIME_PASSES", "1");
  testing::internal::CaptureStderr();
  Sequential({AppendDigit(1), Identity()})(Module(0));
  std::string printed = testing::internal::GetCapturedStderr();
  EXPECT_NE(printed.find("[loom] pass Append1"), std::string::npos) << printed;
  EXPECT_NE(printed.find(" ms\n"), std::string::npos) << printed;
  EXPECT_NE(printed.find("[loom] pass Identity"), std::string::npos) << printed;
  EXPECT_NE(printed.find("(unchanged)"), std::string::npos) << printed;
}

TEST(PassTest, NothingIsPrintedOrWrittenByDefault) {
  testing::internal::CaptureStderr();
  AppendDigit(1)(Module(0));
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

}  // namespace
}  // namespace loom::tir::transform
