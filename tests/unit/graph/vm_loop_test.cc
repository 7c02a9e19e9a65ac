// The virtual machine's loops: backward jumps, the instructions a run-time loop needs
// (set_size, write_size, copy, store_row, check, move with a shape) and the checks over every
// path through a program with loops. The programs are written by hand around a compiled
// model's kernel, as the compiler writes an ONNX Loop's.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "compile_test_models.h"
#include "graph_test_util.h"
#include "loom/graph/compile.h"
#include "loom/runtime/vm.h"

namespace loom::graph {
namespace {

using nlohmann::json;
using test::ErrorOf;
using test::Values;

const DataType kF32 = DataType::Float(32);
const DataType kI64 = DataType::Int(64);

// y = exp(x) over x [1, n, 4], compiled for the VM: one kernel, the program rewritten below.
const CompiledModel& ExpModel() {
  static const CompiledModel compiled = [] {
    loom::Var n = SizeVar("n", kI64);
    Var x =
        MakeVar("x", TensorType(std::vector<PrimExpr>{IntImm(kI64, 1), n, IntImm(kI64, 4)}, kF32));
    return Compile(IRModule::FromFunction(MakeFunction({x}, MakeCall("exp", {x}))), {});
  }();
  return compiled;
}

// {"var": index}: a size variable in a size expression.
json VarRef(int index) { return {{"var", index}}; }
// {"op": op, "args": [a, b]}
json SizeOp(const char* op, json a, json b) { return {{"op", op}, {"args", {a, b}}}; }

// The instructions of the loop program, by number, for the tests that change one.
enum : size_t {
  kSetI = 0,       // set_size i = 0
  kAllocCur = 1,   // alloc cur [1, n, 4]
  kCopyCur = 2,    // copy cur <- x
  kAllocRows = 3,  // alloc rows [4, 1, n, 4]
  kHead = 4,       // if i < 3 else kAfter
  kCheck = 5,      // check i < 10
  kAllocT = 6,     // alloc t [1, n, 4]
  kInvoke = 7,     // invoke exp [cur, t]
  kStoreRow = 8,   // store_row rows[i] <- t
  kReleaseCur = 9,
  kMoveCur = 10,  // move cur <- t
  kNextI = 11,    // set_size i = i + 1
  kBack = 12,     // goto kHead
  kAfter = 13,    // release cur
  kMoveOut = 14,  // move y <- rows at [3, 1, n, 4]
  kAllocCount = 15,
  kWriteCount = 16,  // write_size count = i
  kEnd = 17
};

// The registers of the loop program.
struct LoopRegisters {
  int x, y, cur, t, rows, count;
};

// ExpModel's input and output registers, then four more.
LoopRegisters Registers() {
  const json program = json::parse(ExpModel().graph_json);
  const int registers = program["registers"].get<int>();
  return {program["inputs"][0]["register"].get<int>(),
          program["outputs"][0]["register"].get<int>(),
          registers,
          registers + 1,
          registers + 2,
          registers + 3};
}

// ExpModel's program with its kernel in a loop of three iterations, each applying exp to the
// last one's result (a state carried in `cur`) and storing it as a row of a buffer of four
// rows, whose first three become output 0; output 1 is the iteration count.
json LoopProgram() {
  json program = json::parse(ExpModel().graph_json);
  size_t invokes = 0;
  for (const json& insn : program["instructions"]) invokes += insn["op"] == "invoke";
  EXPECT_EQ(invokes, 1u);
  EXPECT_EQ(program["size_vars"], json({"n"}));
  const LoopRegisters r = Registers();
  const int i = 1;  // the iteration number
  program["size_vars"].push_back("i");
  program["registers"] = r.count + 1;
  const json n = VarRef(0), row = {1, n, 4};
  program["instructions"] = {
      {{"op", "set_size"}, {"var", i}, {"value", 0}},
      {{"op", "alloc"}, {"dst", r.cur}, {"dtype", "float32"}, {"shape", row}},
      {{"op", "copy"}, {"dst", r.cur}, {"src", r.x}},
      {{"op", "alloc"}, {"dst", r.rows}, {"dtype", "float32"}, {"shape", {4, 1, n, 4}}},
      {{"op", "if"}, {"cond", SizeOp("lt", VarRef(i), 3)}, {"else", kAfter}},
      {{"op", "check"},
       {"cond", SizeOp("lt", VarRef(i), 10)},
       {"message", "loop: more than 10 rounds"}},
      {{"op", "alloc"}, {"dst", r.t}, {"dtype", "float32"}, {"shape", row}},
      {{"op", "invoke"}, {"kernel", 0}, {"args", {r.cur, r.t}}},
      {{"op", "store_row"}, {"dst", r.rows}, {"src", r.t}, {"row", VarRef(i)}},
      {{"op", "release"}, {"register", r.cur}},
      {{"op", "move"}, {"dst", r.cur}, {"src", r.t}},
      {{"op", "set_size"}, {"var", i}, {"value", SizeOp("add", VarRef(i), 1)}},
      {{"op", "goto"}, {"target", kHead}},
      {{"op", "release"}, {"register", r.cur}},
      {{"op", "move"}, {"dst", r.y}, {"src", r.rows}, {"shape", {3, 1, n, 4}}},
      {{"op", "alloc"}, {"dst", r.count}, {"dtype", "int64"}, {"shape", json::array()}},
      {{"op", "write_size"}, {"dst", r.count}, {"value", VarRef(i)}},
  };
  EXPECT_EQ(program["instructions"].size(), kEnd);
  program["outputs"][0]["shape"] = {3, 1, n, 4};
  program["outputs"].push_back(
      {{"name", "count"}, {"register", r.count}, {"dtype", "int64"}, {"shape", json::array()}});
  return program;
}

std::shared_ptr<const runtime::VmModel> Parse(const json& program) {
  return runtime::MakeVmModel(ExpModel().kernels, program.dump(), nullptr, 0, nullptr);
}

// The error parsing `program` gives.
std::string Refused(const json& program) {
  return ErrorOf([&] { Parse(program); });
}

// x [1, n, 4] of values in [-1, 0.5] (exp three times over stays small).
runtime::NDArray Input(int64_t n) {
  std::vector<double> values;
  for (int64_t k = 0; k < n * 4; ++k) values.push_back(-1 + 1.5 * static_cast<double>(k % 7) / 6);
  return test::ArrayOf({1, n, 4}, kF32, values);
}

// The error running `program` on x [1, 2, 4] gives.
std::string RunError(const json& program) {
  return ErrorOf([&] {
    runtime::VirtualMachine vm(Parse(program));
    vm.SetInput(0, Input(2));
    vm.Run();
  });
}

TEST(VirtualMachineLoop, ALoopRunsItsBodyAndStacksEachIterationsResult) {
  runtime::VirtualMachine vm(Parse(LoopProgram()));
  size_t pool = 0;
  for (int64_t n : {2, 5, 5, 5}) {
    runtime::NDArray x = Input(n);
    vm.SetInput(0, x);
    vm.Run();
    std::vector<double> want;
    std::vector<double> row = Values(x);
    for (int k = 0; k < 3; ++k) {
      for (double& v : row) v = std::exp(v);
      want.insert(want.end(), row.begin(), row.end());
    }
    runtime::NDArray rows = vm.GetOutput(0);
    EXPECT_EQ(rows.Shape(), (std::vector<int64_t>{3, 1, n, 4}));
    test::ExpectClose(rows, want, 1e-4, "n = " + std::to_string(n));
    EXPECT_EQ(Values(vm.GetOutput(1)), std::vector<double>{3});
    EXPECT_EQ(vm.SizeValues(), (std::map<std::string, int64_t>{{"i", 3}, {"n", n}}));
    // Each iteration's tensors go back to the pool: another run takes the same buffers.
    if (n == 5) {
      if (pool != 0) {
        EXPECT_EQ(vm.PoolBytes(), pool);
      }
      pool = vm.PoolBytes();
    }
  }
}

// A loop whose condition fails at once runs no iteration; a check stops one past its limit.
TEST(VirtualMachineLoop, ZeroIterationsAndAFailingCheck) {
  json none = LoopProgram();
  none["instructions"][kHead]["cond"] = SizeOp("lt", VarRef(1), 0);
  none["instructions"][kMoveOut]["shape"][0] = 0;
  runtime::VirtualMachine vm(Parse(none));
  vm.SetInput(0, Input(2));
  vm.Run();
  EXPECT_EQ(vm.GetOutput(0).Shape(), (std::vector<int64_t>{0, 1, 2, 4}));
  EXPECT_EQ(Values(vm.GetOutput(1)), std::vector<double>{0});

  json limited = LoopProgram();
  limited["instructions"][kCheck]["cond"] = SizeOp("lt", VarRef(1), 2);
  limited["instructions"][kCheck]["message"] = "loop 'l' does not end within 2 iterations";
  EXPECT_EQ(RunError(limited), "VirtualMachine: loop 'l' does not end within 2 iterations");
}

TEST(VirtualMachineLoop, WriteSizeWritesOneIntegerOrBoolElement) {
  json program = LoopProgram();
  program["instructions"][kAllocCount]["shape"] = json::array({2});
  EXPECT_EQ(RunError(program),
            "VirtualMachine: instruction 16 (write_size) writes a size into int64[2], which must "
            "be one integer or bool element");
  program["instructions"][kAllocCount]["shape"] = json::array();
  program["instructions"][kAllocCount]["dtype"] = "float32";
  EXPECT_EQ(RunError(program),
            "VirtualMachine: instruction 16 (write_size) writes a size into float32[], which "
            "must be one integer or bool element");
  program["instructions"][kAllocCount]["dtype"] = "int8";
  program["instructions"][kWriteCount]["value"] = SizeOp("mul", VarRef(1), 100);
  EXPECT_EQ(RunError(program),
            "VirtualMachine: instruction 16 (write_size) writes the size 300 into int8[], whose "
            "dtype cannot hold it");
  program["instructions"][kAllocCount]["dtype"] = "uint8";
  program["instructions"][kWriteCount]["value"] = SizeOp("sub", VarRef(1), 4);
  EXPECT_EQ(RunError(program),
            "VirtualMachine: instruction 16 (write_size) writes the size -1 into uint8[], whose "
            "dtype cannot hold it");

  // A bool takes 1 for any non-zero size, and load_size reads it back.
  program["size_vars"].push_back("flag");
  program["instructions"][kAllocCount]["dtype"] = "bool";
  program["instructions"][kWriteCount]["value"] = VarRef(1);
  program["instructions"].push_back(
      {{"op", "load_size"}, {"var", 2}, {"src", Registers().count}, {"name", "flag"}});
  program["outputs"][1]["dtype"] = "bool";
  runtime::VirtualMachine vm(Parse(program));
  vm.SetInput(0, Input(2));
  vm.Run();
  EXPECT_EQ(Values(vm.GetOutput(1)), std::vector<double>{1});
  EXPECT_EQ(vm.SizeValues().at("flag"), 1);
}

TEST(VirtualMachineLoop, CopyStoreRowAndMoveCheckTheirShapes) {
  json program = LoopProgram();
  json copy = program;
  copy["instructions"][kAllocCur]["shape"][2] = 3;
  EXPECT_EQ(RunError(copy),
            "VirtualMachine: instruction 2 (copy) copies float32[1, 2, 4] into float32[1, 2, 3]: "
            "the dtype and the element count must be the same");
  copy["instructions"][kAllocCur]["shape"][2] = 4;
  copy["instructions"][kAllocCur]["dtype"] = "int32";
  EXPECT_EQ(RunError(copy),
            "VirtualMachine: instruction 2 (copy) copies float32[1, 2, 4] into int32[1, 2, 4]: "
            "the dtype and the element count must be the same");

  json rows = program;
  rows["instructions"][kAllocRows]["shape"][0] = 2;
  EXPECT_EQ(RunError(rows),
            "VirtualMachine: instruction 8 (store_row) stores float32[1, 2, 4] as row 2 of "
            "float32[2, 1, 2, 4], which has 2 rows");
  rows["instructions"][kAllocRows]["shape"] = {4, 1, VarRef(0), 3};
  EXPECT_EQ(RunError(rows),
            "VirtualMachine: instruction 8 (store_row) stores float32[1, 2, 4] as row 0 of "
            "float32[4, 1, 2, 3]: a row must have its dtype and 6 elements");

  json view = program;
  view["instructions"][kMoveOut]["shape"][0] = 5;
  EXPECT_EQ(RunError(view),
            "VirtualMachine: instruction 14 (move) views float32[4, 1, 2, 4] at the shape "
            "[5, 1, 2, 4], which needs more bytes than its 128");

  // An input's tensor (or a weight's) is not the program's to write.
  json input = program;
  input["instructions"][kAllocCur] = {
      {"op", "move"}, {"dst", Registers().cur}, {"src", Registers().x}};
  EXPECT_EQ(RunError(input),
            "VirtualMachine: instruction 2 (copy) writes into register " +
                std::to_string(Registers().cur) +
                ", which holds a weight or an input, not a tensor allocated by the program");
}

TEST(VirtualMachineLoop, NewInstructionsAreCheckedLikeTheOthers) {
  json program = LoopProgram();
  EXPECT_EQ(Refused(program), "no error");
  json bad = program;
  bad["instructions"][kSetI]["var"] = 0;
  EXPECT_EQ(Refused(bad),
            "VM program: instructions[0] sets size variable 'n', which an input's dimension gives");
  bad = program;
  bad["instructions"][kCopyCur]["dst"] = Registers().x;
  EXPECT_EQ(Refused(bad), "VM program: instructions[2] writes register " +
                              std::to_string(Registers().x) + ", input 'x'");
  bad = program;
  bad["instructions"][kCheck].erase("message");
  EXPECT_NE(Refused(bad).find("instructions[5]"), std::string::npos) << Refused(bad);
  bad = program;
  bad["instructions"][kHead]["else"] = 99;
  EXPECT_EQ(Refused(bad),
            "VM program: instructions[4].else = 99 must be an instruction (0 to 17, 17 the end)");
}

// The checks hold on every path, around the loop too.
TEST(VirtualMachineLoop, EveryPathThroughALoopIsChecked) {
  const json program = LoopProgram();
  const LoopRegisters r = Registers();
  // `cur` written at the end of each iteration only: the first iteration reads it unwritten.
  json unwritten = program;
  unwritten["instructions"][kAllocCur] = {{"op", "set_size"}, {"var", 1}, {"value", 0}};
  unwritten["instructions"][kCopyCur] = {{"op", "set_size"}, {"var", 1}, {"value", 0}};
  EXPECT_EQ(Refused(unwritten), "VM program: instructions[7] reads register " +
                                    std::to_string(r.cur) +
                                    " (a kernel argument) before any instruction writes it");
  // `count` written after the loop, and in its body before.
  json later = program;
  later["instructions"][kCheck] = {{"op", "write_size"}, {"dst", r.count}, {"value", VarRef(1)}};
  EXPECT_EQ(Refused(later), "VM program: instructions[5] reads register " +
                                std::to_string(r.count) +
                                " (the tensor written) before any instruction writes it");
  // The iteration number bound by the body's end only, not before the loop.
  json unbound = program;
  unbound["size_vars"].push_back("j");
  unbound["instructions"][kSetI]["var"] = 2;
  EXPECT_EQ(Refused(unbound),
            "VM program: instructions[4] (its condition) uses size variable 'i' before any input "
            "or load_size gives its value on every path to it");
  // A size set after the loop, used in it.
  json after = program;
  after["size_vars"].push_back("j");
  after["instructions"][kStoreRow]["row"] = VarRef(2);
  after["instructions"][kAllocCount] = {{"op", "set_size"}, {"var", 2}, {"value", 0}};
  after["instructions"].push_back(
      {{"op", "alloc"}, {"dst", r.count}, {"dtype", "int64"}, {"shape", json::array()}});
  std::swap(after["instructions"][kWriteCount], after["instructions"][kEnd]);
  EXPECT_EQ(Refused(after),
            "VM program: instructions[8] (its row) uses size variable 'j' before any input or "
            "load_size gives its value on every path to it");
  // Released in the body and not written again: the next iteration reads it unwritten.
  json released = program;
  released["instructions"][kMoveCur] = {{"op", "release"}, {"register", r.t}};
  EXPECT_EQ(Refused(released), "VM program: instructions[7] reads register " +
                                   std::to_string(r.cur) +
                                   " (a kernel argument) before any instruction writes it");
  // The loop never left: what follows its backward goto is on no path, the end neither.
  json endless = program;
  endless["instructions"][kHead]["else"] = kBack;
  EXPECT_EQ(Refused(endless),
            "VM program: instructions[13] is on no path from the first instruction: no jump or "
            "instruction before it leads there");
  json forever = program;
  forever["instructions"].push_back({{"op", "goto"}, {"target", kHead}});
  EXPECT_EQ(Refused(forever),
            "VM program: no path from the first instruction reaches the end (instruction 18): "
            "the program would never stop");
  // The outputs must hold a tensor at the end whichever way the program gets there.
  json output = program;
  output["instructions"][kHead]["else"] = kAllocCount;
  EXPECT_EQ(Refused(output),
            "VM program: instructions[13] is on no path from the first "
            "instruction: no jump or instruction before it leads there");
  output["instructions"][kAfter] = {{"op", "if"}, {"cond", 1}, {"else", kAllocCount}};
  output["instructions"][kHead]["else"] = kAfter;
  EXPECT_EQ(Refused(output), "VM program: outputs[0] is register " + std::to_string(r.y) +
                                 ", which holds no tensor when the program ends");
}

}  // namespace
}  // namespace loom::graph
