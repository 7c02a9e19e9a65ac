// Operators whose outputs have a zero extent (a tile repeat of 0, a slice selecting
// nothing, a concat of empty tensors, ...) compile, through the generic schedules, to
// kernels that run and do nothing; a neighbouring non-empty output still gets its values.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "loom/topi/elementwise.h"
#include "loom/topi/reduction.h"
#include "loom/topi/transform.h"
#include "topi_test_util.h"

namespace loom::topi {
namespace {

using target_test::RandomArray;

const DataType kF32 = DataType::Float(32);

std::vector<int64_t> ConstShapeOf(const te::Tensor& t) {
  std::vector<int64_t> shape;
  for (const PrimExpr& extent : t.shape()) {
    int64_t value = -1;
    EXPECT_TRUE(IsConstInt(extent, &value));
    shape.push_back(value);
  }
  return shape;
}

TEST(TopiEmpty, InjectiveOperatorsWithEmptyOutputsCompileAndRun) {
  te::Tensor x = te::placeholder({3, 17}, kF32, "x");
  te::Tensor none = te::placeholder({0, 17}, kF32, "none");
  tir::HostArray data = RandomArray(kF32, {3, 17}, 30);
  tir::HostArray empty(kF32, {0, 17});
  struct Case {
    std::string name;
    te::Tensor out;
    std::vector<int64_t> shape;
  };
  std::vector<Case> cases = {
      {"tile repeat 0", tile(x, {0, 2}), {0, 34}},
      {"slice selecting nothing", strided_slice(x, {2}, {2}, {1}), {3, 0}},
      {"concat of empties", concat({none, none}, 0), {0, 17}},
      {"add of an empty and a broadcast row", add(none, strided_slice(x, {0}, {1}, {0})), {0, 17}},
      {"pad cropping everything", pad(x, {-2, 0}, {-1, 0}, PadMode::kReflect), {0, 17}},
      {"transpose of an empty tensor", transpose(none), {17, 0}},
      {"flatten of an empty tensor", flatten(none, 0), {1, 0}},
      {"reshape of an empty tensor", reshape(transpose(none), {-1, 17}), {0, 17}},
  };
  for (const Case& c : cases) {
    ASSERT_EQ(ConstShapeOf(c.out), c.shape) << c.name;
    // A non-empty output beside the empty one: the kernel must still compute it.
    te::Tensor twice = add(x, x);
    std::vector<tir::HostArray> got = test::RunCompiledOutputs({x, none}, {c.out, twice}, {data, empty});
    EXPECT_EQ(got[0].NumElements(), 0) << c.name;
    test::ExpectClose(got[1], [&](int64_t i) { return 2 * data.GetFloat(i); }, 0, c.name);
  }
}

TEST(TopiEmpty, ReductionsAndSoftmaxOfEmptyTensors) {
  te::Tensor none = te::placeholder({0, 5}, kF32, "none");
  tir::HostArray empty(kF32, {0, 5});
  // Reducing the non-empty axis leaves an empty output.
  te::Tensor sums = sum(none, {1});
  ASSERT_EQ(ConstShapeOf(sums), (std::vector<int64_t>{0}));
  EXPECT_EQ(test::RunScheduled(schedule_reduce({sums}), {none}, {sums}, {empty})[0].NumElements(), 0);
  te::Tensor probabilities = softmax(none);
  EXPECT_EQ(test::RunScheduled(schedule_softmax(probabilities), {none}, {probabilities}, {empty})[0]
                .NumElements(),
            0);
  // Reducing the empty axis: every output is the reduction's identity.
  te::Tensor columns = sum(none, {0});
  tir::HostArray got = test::RunScheduled(schedule_reduce({columns}), {none}, {columns}, {empty})[0];
  test::ExpectClose(got, [](int64_t) { return 0.0; }, 0, "sum over an empty axis");
}

}  // namespace
}  // namespace loom::topi
