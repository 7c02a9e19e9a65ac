// The AOT executor with the micro runtime: models compiled for the c target, exported as C
// (ExportAot), built by the host's C compiler with a driver that only includes the generated
// header, and run; their outputs must equal the graph executor's on the same C kernels, and
// agree with the llvm target's.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compile_test_models.h"
#include "loom/graph/aot.h"

namespace loom::graph {
namespace {

using namespace test::models;  // NOLINT: the models of compile_test_models.h
using test::ErrorOf;

// A C program over the generated header only: reads the inputs (concatenated) from
// argv[1], runs the model, writes the outputs (concatenated) to argv[2], and prints the
// scratch peak. Fields are named after the inputs ("output0", ... for the outputs).
std::string Driver(const Function& main, const std::vector<runtime::NDArray>& inputs,
                   const std::vector<runtime::NDArray>& outputs, const std::string& name) {
  std::string upper = name;  // the header's macros are upper-case
  for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  std::ostringstream c;
  c << "#include <stdio.h>\n#include \"" << name << ".h\"\n"
    << "static uint8_t LOOM_CRT_ALIGNED workspace[" << upper << "_WORKSPACE_SIZE];\n";
  std::vector<std::string> fields;
  for (const Var& param : main->params) fields.push_back(param->name_hint);
  for (size_t i = 0; i < inputs.size(); ++i) {
    c << "static uint8_t LOOM_CRT_ALIGNED in" << i << "[" << inputs[i].NumBytes() << "];\n";
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    c << "static uint8_t LOOM_CRT_ALIGNED out" << i << "[" << outputs[i].NumBytes() << "];\n";
  }
  c << "int main(int argc, char** argv) {\n  (void)argc;\n"
    << "  FILE* in = fopen(argv[1], \"rb\");\n  FILE* out = fopen(argv[2], \"wb\");\n"
    << "  " << name << "_inputs inputs;\n  " << name << "_outputs outputs;\n";
  for (size_t i = 0; i < main->params.size(); ++i) {
    c << "  if (fread(in" << i << ", 1, sizeof(in" << i << "), in) != sizeof(in" << i
      << ")) return 3;\n  inputs." << fields[i] << " = (const void*)in" << i << ";\n";
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    c << "  outputs.output" << i << " = (void*)out" << i << ";\n";
  }
  c << "  if (" << name << "_run(&inputs, &outputs, workspace) != 0) {\n"
    << "    printf(\"error: %s\\n\", LoomCrtGetLastError());\n    return 2;\n  }\n";
  for (size_t i = 0; i < outputs.size(); ++i) {
    c << "  fwrite(out" << i << ", 1, sizeof(out" << i << "), out);\n";
  }
  c << "  fclose(out);\n  printf(\"scratch peak %lu\\n\", (unsigned long)LoomCrtScratchPeak());\n"
    << "  return 0;\n}\n";
  return c.str();
}

std::string ReadText(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

struct TempFolder {
  TempFolder() {
    char pattern[] = "/tmp/loom_aot_test_XXXXXX";
    path = mkdtemp(pattern);
  }
  ~TempFolder() { std::filesystem::remove_all(path); }
  std::string path;
};

// Compiles `main` for the c target, exports it with ExportAot, builds it with a driver and
// runs it on random inputs; returns the outputs, and checks them against the graph executor.
AotSummary ExpectAotMatchesGraphExecutor(const Function& main, int opt_level) {
  std::vector<runtime::NDArray> inputs;
  for (const Var& param : main->params) {
    inputs.push_back(test::RandomArray(param.type().ConstShape().value(), kF32, 100));
  }
  CompiledModel compiled = Compile(IRModule::FromFunction(main), {.opt_level = opt_level, .target = "c"});
  TempFolder folder;
  AotSummary summary = ExportAot(compiled, folder.path, {.name = "net"});
  std::vector<runtime::NDArray> want = RunModel(MakeGraphModel(compiled), inputs);
  std::string driver = folder.path + "/driver.c";
  std::ofstream(driver) << Driver(main, inputs, want, "net");

  // Warnings are errors: the generated C must be clean C99.
  std::string program = folder.path + "/program", log = folder.path + "/log.txt";
  std::string build = "cc -std=c99 -O1 -Wall -Wextra -Werror -I" + folder.path + " " +
                      folder.path + "/net.c " + folder.path + "/loom_crt.c " + driver + " -o " +
                      program + " -lm > " + log + " 2>&1";
  EXPECT_EQ(std::system(build.c_str()), 0) << "building the AOT sources failed:\n"
                                           << ReadText(log);
  std::string input_file = folder.path + "/inputs.bin", output_file = folder.path + "/outputs.bin";
  {
    std::ofstream in(input_file, std::ios::binary);
    for (const runtime::NDArray& input : inputs) {
      in.write(static_cast<const char*>(input->data), static_cast<std::streamsize>(input.NumBytes()));
    }
  }
  std::string run = program + " " + input_file + " " + output_file + " > " + log + " 2>&1";
  EXPECT_EQ(std::system(run.c_str()), 0) << ReadText(log);
  int64_t peak = -1;
  std::sscanf(ReadText(log).c_str(), "scratch peak %ld", &peak);
  EXPECT_GE(peak, 0);
  EXPECT_LE(peak, summary.scratch_bytes) << "the kernels used more scratch than declared";

  std::ifstream out(output_file, std::ios::binary);
  for (size_t i = 0; i < want.size(); ++i) {
    runtime::NDArray got = runtime::NDArray::Empty(want[i].Shape(), want[i].dtype());
    out.read(static_cast<char*>(got->data), static_cast<std::streamsize>(got.NumBytes()));
    EXPECT_TRUE(out.good()) << "output " << i << " is missing";
    // Same C kernels, same order: the same bits.
    test::ExpectClose(got, test::Values(want[i]), 0.0, "output " + std::to_string(i));
  }
  return summary;
}

TEST(Aot, SmallCnnWithTwoOutputsRunsLikeTheGraphExecutor) {
  AotSummary summary = ExpectAotMatchesGraphExecutor(SmallCnn(), 3);
  EXPECT_GT(summary.weight_bytes, 0);
  EXPECT_EQ(summary.workspace_bytes, std::max<int64_t>(summary.slot_bytes + summary.scratch_bytes, 64));
}

TEST(Aot, ResidualNetAtEveryLevel) {
  for (int level : {0, 2, 3}) ExpectAotMatchesGraphExecutor(ResidualNet(), level);
}

TEST(Aot, TwoInputsAndDataMovement) { ExpectAotMatchesGraphExecutor(Shuffles(), 3); }

TEST(Aot, KernelWithTwoOutputsOneAlsoAModelOutput) {
  ExpectAotMatchesGraphExecutor(SplitModel(), 3);
}

// Inputs named like C keywords and with characters C names lack become valid fields.
TEST(Aot, InputNamesBecomeCIdentifiers) {
  Var a = MakeVar("int", TensorType({4}, kF32));
  Var b = MakeVar("x/y", TensorType({4}, kF32));
  CompiledModel compiled = Compile(
      IRModule::FromFunction(MakeFunction({a, b}, MakeCall("add", {a, b}))), {.target = "c"});
  TempFolder folder;
  ExportAot(compiled, folder.path, {.name = "net"});
  std::string header = ReadText(folder.path + "/net.h");
  EXPECT_NE(header.find("const float* int_;"), std::string::npos) << header;
  EXPECT_NE(header.find("const float* x_y;"), std::string::npos) << header;
}

// A constant output, an input passed through, and an input that is also an operand.
TEST(Aot, ConstantAndInputOutputs) {
  Var x = MakeVar("x", TensorType({4}, kF32));
  Constant c = Weight({4}, "c", 41);
  ExpectAotMatchesGraphExecutor(
      MakeFunction({x}, MakeTuple({c, MakeCall("exp", {c}, {}, "exp_c"), x,
                                   MakeCall("exp", {x})})),
      2);
}

TEST(Aot, MemoryBeyondTheTargetsIsAnErrorWithTheFigures) {
  CompiledModel compiled = Compile(IRModule::FromFunction(SmallCnn()),
                                   {.opt_level = 3, .target = "c -ram-bytes=1024"});
  TempFolder folder;
  std::string error = ErrorOf([&] { ExportAot(compiled, folder.path, {.name = "net"}); });
  EXPECT_NE(error.find("needs a workspace of"), std::string::npos) << error;
  EXPECT_NE(error.find("1 KiB (1024 bytes) of RAM"), std::string::npos) << error;

  compiled = Compile(IRModule::FromFunction(SmallCnn()),
                     {.opt_level = 3, .target = "c -flash-bytes=100"});
  error = ErrorOf([&] { ExportAot(compiled, folder.path, {.name = "net"}); });
  EXPECT_NE(error.find("of weights, but target"), std::string::npos) << error;
  EXPECT_NE(error.find("100 B (100 bytes) of flash"), std::string::npos) << error;
}

TEST(Aot, OtherTargetsAndBadNamesAreErrors) {
  CompiledModel llvm = Compile(IRModule::FromFunction(Mlp()), {.opt_level = 3, .target = "llvm"});
  TempFolder folder;
  std::string error = ErrorOf([&] { ExportAot(llvm, folder.path, {.name = "net"}); });
  EXPECT_NE(error.find("whose kernels are not C"), std::string::npos) << error;

  CompiledModel c = Compile(IRModule::FromFunction(Mlp()), {.opt_level = 3, .target = "c"});
  error = ErrorOf([&] { ExportAot(c, folder.path, {.name = "3net"}); });
  EXPECT_NE(error.find("'3net' is not a C identifier"), std::string::npos) << error;
  error = ErrorOf([&] { ExportAot(c, folder.path, {.name = "loom_crt"}); });
  EXPECT_NE(error.find("'loom_crt' is the micro runtime's"), std::string::npos) << error;
}

}  // namespace
}  // namespace loom::graph
