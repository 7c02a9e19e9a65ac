// Data-movement operators compiled with schedule_injective and compared exactly with
// references written here, mostly as index maps (output index -> source tensor and index), over
// shapes with size-1 dimensions, sizes that are no multiple of the 16 vector lanes, and
// negative axes; plus the user errors for misuse.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "loom/topi/transform.h"
#include "topi_test_util.h"

namespace loom::topi {
namespace {

using target_test::RandomArray;
using test::ErrorOf;
using test::RunCompiled;
using test::RunCompiledOutputs;

using Index = std::vector<int64_t>;
// Where an output element comes from: the source array's position in the list, and its index.
using Source = std::pair<size_t, Index>;

const DataType kF32 = DataType::Float(32);

Array<PrimExpr> Shape(const Index& shape) {
  Array<PrimExpr> extents;
  for (int64_t extent : shape) extents.push_back(int(extent));
  return extents;
}

int64_t Flat(const Index& index, const Index& shape) {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + index[d];
  return flat;
}

double Element(const tir::HostArray& array, int64_t i) {
  return array.dtype().is_float() ? array.GetFloat(i) : double(array.GetInt(i));
}

// Expects `got` to have `shape` and to hold, at every index, the element of `sources` that
// `source` names.
void ExpectMoved(const tir::HostArray& got, const Index& shape,
                 const std::vector<tir::HostArray>& sources,
                 const std::function<Source(const Index&)>& source, const std::string& label) {
  ASSERT_EQ(got.shape(), shape) << label;
  int failures = 0;
  for (int64_t flat = 0; flat < got.NumElements() && failures < 5; ++flat) {
    Index index(shape.size());
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1, rest = flat; d >= 0; --d) {
      index[d] = rest % shape[d];
      rest /= shape[d];
    }
    auto [which, at] = source(index);
    const tir::HostArray& from = sources.at(which);
    double want = Element(from, Flat(at, from.shape()));
    if (Element(got, flat) != want) {
      ++failures;
      ADD_FAILURE() << label << " element " << flat << ": got " << Element(got, flat)
                    << ", want " << want;
    }
  }
}

void ExpectMoved(const tir::HostArray& got, const Index& shape, const tir::HostArray& data,
                 const std::function<Index(const Index&)>& source, const std::string& label) {
  ExpectMoved(got, shape, {data}, [&](const Index& i) { return Source{0, source(i)}; }, label);
}

// Operators that keep the row-major order of the elements (reshape and its relatives).
void ExpectSameOrder(const te::Tensor& x, const te::Tensor& out, const Index& in_shape,
                     const Index& out_shape, const std::string& label) {
  tir::HostArray data = RandomArray(kF32, in_shape, 1);
  tir::HostArray got = RunCompiled({x}, out, {data});
  ExpectMoved(got, out_shape, data,
              [&](const Index& i) {
                int64_t flat = Flat(i, out_shape);
                Index at(in_shape.size());
                for (int64_t d = static_cast<int64_t>(in_shape.size()) - 1; d >= 0; --d) {
                  at[d] = flat % in_shape[d];
                  flat /= in_shape[d];
                }
                return at;
              },
              label);
}

// Index values in [-extent, extent), the range ONNX allows (negative ones count from the end).
tir::HostArray RandomIndices(DataType t, const Index& shape, int64_t extent, unsigned seed) {
  tir::HostArray array(t, shape);
  std::mt19937 rng(seed);
  for (int64_t i = 0; i < array.NumElements(); ++i) {
    array.SetInt(i, std::uniform_int_distribution<int64_t>(-extent, extent - 1)(rng));
  }
  return array;
}

int64_t Wrap(int64_t index, int64_t extent) { return index < 0 ? index + extent : index; }

TEST(TopiTransform, ReshapeFlattenSqueezeUnsqueezeKeepTheOrder) {
  te::Tensor x = te::placeholder(Shape({2, 3, 17}), kF32, "x");
  ExpectSameOrder(x, reshape(x, {0, -1}), {2, 3, 17}, {2, 51}, "reshape {0, -1}");
  ExpectSameOrder(x, reshape(x, {17, 1, 6}), {2, 3, 17}, {17, 1, 6}, "reshape {17, 1, 6}");
  ExpectSameOrder(x, reshape(x, {1, 0, -1}), {2, 3, 17}, {1, 3, 34}, "reshape {1, 0, -1}");
  ExpectSameOrder(x, reshape(x, {-1}), {2, 3, 17}, {102}, "reshape {-1}");
  te::Tensor y = te::placeholder(Shape({2, 3, 1, 17}), kF32, "y");
  ExpectSameOrder(y, flatten(y), {2, 3, 1, 17}, {2, 51}, "flatten");
  ExpectSameOrder(y, flatten(y, 0), {2, 3, 1, 17}, {1, 102}, "flatten 0");
  ExpectSameOrder(y, flatten(y, -1), {2, 3, 1, 17}, {6, 17}, "flatten -1");
  ExpectSameOrder(y, flatten(y, 4), {2, 3, 1, 17}, {102, 1}, "flatten 4");
  te::Tensor z = te::placeholder(Shape({1, 5, 1, 19}), kF32, "z");
  ExpectSameOrder(z, squeeze(z), {1, 5, 1, 19}, {5, 19}, "squeeze");
  ExpectSameOrder(z, squeeze(z, {-2}), {1, 5, 1, 19}, {1, 5, 19}, "squeeze {-2}");
  te::Tensor w = te::placeholder(Shape({5, 19}), kF32, "w");
  ExpectSameOrder(w, unsqueeze(w, {0, -1}), {5, 19}, {1, 5, 19, 1}, "unsqueeze {0, -1}");
  ExpectSameOrder(w, unsqueeze(w, {3, 1}), {5, 19}, {5, 1, 19, 1}, "unsqueeze {3, 1}");
}

TEST(TopiTransform, TransposeMovesAxes) {
  struct Case {
    Index shape, perm, out_shape;
  };
  // The last case has enough elements to run in parallel.
  for (const Case& c : {Case{{2, 3, 1, 17}, {}, {17, 1, 3, 2}},
                        Case{{2, 3, 1, 17}, {0, -1, 1, 2}, {2, 17, 3, 1}},
                        Case{{64, 700}, {1, 0}, {700, 64}}}) {
    te::Tensor x = te::placeholder(Shape(c.shape), kF32, "x");
    tir::HostArray data = RandomArray(kF32, c.shape, 2);
    Index perm = c.perm;
    if (perm.empty()) {
      for (int64_t d = static_cast<int64_t>(c.shape.size()) - 1; d >= 0; --d) perm.push_back(d);
    }
    ExpectMoved(RunCompiled({x}, transpose(x, c.perm), {data}), c.out_shape, data,
                [&](const Index& i) {
                  Index at(i.size());
                  for (size_t d = 0; d < i.size(); ++d) {
                    at[perm[d] < 0 ? perm[d] + i.size() : perm[d]] = i[d];
                  }
                  return at;
                },
                "transpose " + std::to_string(c.shape.size()) + "-d");
  }
}

TEST(TopiTransform, ExpandAndBroadcastTo) {
  // Right-aligned, size-1 dimensions read element 0.
  auto broadcast_source = [](const Index& in_shape) {
    return [in_shape](const Index& i) {
      Index at(in_shape.size());
      for (size_t d = 0; d < in_shape.size(); ++d) {
        at[d] = in_shape[d] == 1 ? 0 : i[i.size() - in_shape.size() + d];
      }
      return at;
    };
  };
  te::Tensor x = te::placeholder(Shape({3, 1}), kF32, "x");
  tir::HostArray data_x = RandomArray(kF32, {3, 1}, 3);
  ExpectMoved(RunCompiled({x}, expand(x, Shape({2, 1, 17})), {data_x}), {2, 3, 17}, data_x,
              broadcast_source({3, 1}), "expand");
  te::Tensor y = te::placeholder(Shape({1, 17}), kF32, "y");
  tir::HostArray data_y = RandomArray(kF32, {1, 17}, 4);
  ExpectMoved(RunCompiled({y}, broadcast_to(y, Shape({4, 17})), {data_y}), {4, 17}, data_y,
              broadcast_source({1, 17}), "broadcast_to");
}

TEST(TopiTransform, ConcatJoinsAlongTheAxis) {
  te::Tensor a = te::placeholder(Shape({2, 3, 5}), kF32, "a");
  te::Tensor b = te::placeholder(Shape({2, 4, 5}), kF32, "b");
  te::Tensor c = te::placeholder(Shape({2, 1, 5}), kF32, "c");
  std::vector<tir::HostArray> data = {RandomArray(kF32, {2, 3, 5}, 5),
                                      RandomArray(kF32, {2, 4, 5}, 6),
                                      RandomArray(kF32, {2, 1, 5}, 7)};
  ExpectMoved(RunCompiled({a, b, c}, concat({a, b, c}, -2), data), {2, 8, 5}, data,
              [](const Index& i) {
                Index at = i;
                size_t which = i[1] < 3 ? 0 : i[1] < 7 ? 1 : 2;
                at[1] -= which == 0 ? 0 : which == 1 ? 3 : 7;
                return Source{which, at};
              },
              "concat axis -2");
  te::Tensor p = te::placeholder(Shape({1, 19}), kF32, "p");
  te::Tensor q = te::placeholder(Shape({20, 19}), kF32, "q");
  std::vector<tir::HostArray> pq = {RandomArray(kF32, {1, 19}, 8), RandomArray(kF32, {20, 19}, 9)};
  ExpectMoved(RunCompiled({p, q}, concat({p, q}, 0), pq), {21, 19}, pq,
              [](const Index& i) {
                return i[0] == 0 ? Source{0, i} : Source{1, {i[0] - 1, i[1]}};
              },
              "concat axis 0");
}

TEST(TopiTransform, SplitCutsConsecutivePieces) {
  te::Tensor x = te::placeholder(Shape({2, 35, 3}), kF32, "x");
  tir::HostArray data = RandomArray(kF32, {2, 35, 3}, 10);
  Array<te::Tensor> pieces = split(x, -2, {16, 1, 18});
  ASSERT_EQ(pieces.size(), 3u);
  std::vector<tir::HostArray> got =
      RunCompiledOutputs({x}, std::vector<te::Tensor>(pieces.begin(), pieces.end()), {data});
  int64_t offset = 0;
  for (size_t k = 0; k < pieces.size(); ++k) {
    int64_t size = k == 0 ? 16 : k == 1 ? 1 : 18;
    ExpectMoved(got[k], {2, size, 3}, data,
                [&](const Index& i) { return Index{i[0], i[1] + offset, i[2]}; },
                "split piece " + std::to_string(k));
    offset += size;
  }
}

// ONNX Split without sizes: ceil(extent / n) per piece, the last one smaller (7 in 3 is
// 3, 3, 1; 4 in 3 is 2, 2, 0), along a negative axis too.
TEST(TopiTransform, SplitByCountCutsEqualPieces) {
  struct Case {
    Index shape;
    int64_t axis, count;
    Index sizes;
  };
  for (const Case& c : {Case{{2, 7, 3}, -2, 3, {3, 3, 1}}, Case{{2, 7, 3}, 1, 7, {1, 1, 1, 1, 1, 1, 1}},
                        Case{{4, 5}, 0, 3, {2, 2, 0}}, Case{{33, 2}, -2, 2, {17, 16}},
                        Case{{1, 2}, 0, 1, {1}}}) {
    te::Tensor x = te::placeholder(Shape(c.shape), kF32, "x");
    tir::HostArray data = RandomArray(kF32, c.shape, 13);
    Array<te::Tensor> pieces = split_by_count(x, c.axis, c.count);
    ASSERT_EQ(pieces.size(), c.sizes.size());
    std::vector<tir::HostArray> got =
        RunCompiledOutputs({x}, std::vector<te::Tensor>(pieces.begin(), pieces.end()), {data});
    size_t a = c.axis < 0 ? c.axis + c.shape.size() : c.axis;
    int64_t offset = 0;
    for (size_t k = 0; k < pieces.size(); ++k) {
      Index shape = c.shape;
      shape[a] = c.sizes[k];
      ExpectMoved(got[k], shape, data,
                  [&](const Index& i) {
                    Index at = i;
                    at[a] += offset;
                    return at;
                  },
                  "split_by_count " + std::to_string(c.count) + " piece " + std::to_string(k));
      offset += c.sizes[k];
    }
  }
}

TEST(TopiTransform, StridedSliceClampsLikeOnnxSlice) {
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  te::Tensor x = te::placeholder(Shape({20, 7, 33}), kF32, "x");
  tir::HostArray data = RandomArray(kF32, {20, 7, 33}, 11);
  // Axis 0: -3 is 17, INT64_MAX clamps to 20. Axis 1: 1 to 6 by 2. Axis 2: 0, 5, ..., 30.
  ExpectMoved(RunCompiled({x}, strided_slice(x, {-3, 1, 0}, {kMax, -1, 33}, {}, {1, 2, 5}),
                          {data}),
              {3, 3, 7}, data,
              [](const Index& i) { return Index{17 + i[0], 1 + 2 * i[1], 5 * i[2]}; },
              "forward");
  // Axis 2 backward from 32 by 3 to the beginning; axis 0 reversed whole (start 100 clamps
  // to 19, end -100 to "before the first").
  ExpectMoved(RunCompiled({x}, strided_slice(x, {-1, 100}, {kMin, -100}, {-1, 0}, {-3, -1}),
                          {data}),
              {20, 7, 11}, data,
              [](const Index& i) { return Index{19 - i[0], i[1], 32 - 3 * i[2]}; }, "backward");
  // Steps too large for the index type take one element.
  ExpectMoved(RunCompiled({x}, strided_slice(x, {2, -2}, {kMax, kMin}, {1, 2}, {kMax, kMin}),
                          {data}),
              {20, 1, 1}, data, [](const Index& i) { return Index{i[0], 2, 31}; }, "huge steps");
}

TEST(TopiTransform, TileRepeats) {
  te::Tensor x = te::placeholder(Shape({3, 1, 17}), kF32, "x");
  tir::HostArray data = RandomArray(kF32, {3, 1, 17}, 12);
  ExpectMoved(RunCompiled({x}, tile(x, {2, 5, 1}), {data}), {6, 5, 17}, data,
              [](const Index& i) { return Index{i[0] % 3, 0, i[2]}; }, "tile");
}

// Compiles pad(x, begin, end, mode, fill) for random x and compares it with ONNX's
// reference: slice off the negative pads, then pad with the positive ones.
void ExpectPadded(const Index& shape, const Index& begin, const Index& end, PadMode mode,
                  DataType dtype, double fill, const std::string& label) {
  te::Tensor x = te::placeholder(Shape(shape), dtype, "x");
  tir::HostArray data = RandomArray(dtype, shape, 21);
  Index out_shape;
  for (size_t d = 0; d < shape.size(); ++d) out_shape.push_back(shape[d] + begin[d] + end[d]);
  tir::HostArray got = RunCompiled({x}, pad(x, begin, end, mode, fill), {data});
  ASSERT_EQ(got.shape(), out_shape) << label;
  test::ExpectClose(
      got,
      [&](int64_t flat) {
        Index at(shape.size());
        bool inside = true;
        for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
          int64_t crop_begin = std::max<int64_t>(-begin[d], 0);
          int64_t n = shape[d] - crop_begin - std::max<int64_t>(-end[d], 0);
          int64_t s = flat % out_shape[d] - std::max<int64_t>(begin[d], 0);
          flat /= out_shape[d];
          inside = inside && s >= 0 && s < n;
          if (mode == PadMode::kReflect) s = s < 0 ? -s : s >= n ? 2 * (n - 1) - s : s;
          at[d] = std::clamp<int64_t>(s, 0, n - 1) + crop_begin;
        }
        return mode == PadMode::kConstant && !inside ? fill : Element(data, Flat(at, shape));
      },
      0, label + ", mode " + std::to_string(static_cast<int>(mode)));
}

// Negative pads crop (then the positive pads of the other side extend the cropped view),
// in every mode.
TEST(TopiTransform, PadWithNegativePadsCrops) {
  struct Case {
    Index shape, begin, end;
    PadMode mode;
  };
  for (const Case& c : {Case{{3, 1, 17}, {-1, 0, -2}, {0, 2, -3}, PadMode::kConstant},
                        Case{{4, 20}, {-1, 3}, {2, -5}, PadMode::kConstant},
                        Case{{5, 17}, {-1, 2}, {3, -4}, PadMode::kReflect},
                        Case{{3, 1, 17}, {2, 0, -16}, {-2, 1, 2}, PadMode::kEdge},
                        Case{{2, 3}, {0, -3}, {0, 2}, PadMode::kConstant},  // all padding
                        Case{{2, 6}, {-1, -2}, {-1, -4}, PadMode::kReflect}}) {  // to empty
    ExpectPadded(c.shape, c.begin, c.end, c.mode, kF32, 2.5, "pad with crops");
  }
}

TEST(TopiTransform, GatherWrapsNegativeIndices) {
  te::Tensor data = te::placeholder(Shape({5, 1, 19}), kF32, "data");
  tir::HostArray values = RandomArray(kF32, {5, 1, 19}, 13);
  te::Tensor rows = te::placeholder(Shape({2, 3}), DataType::Int(64), "rows");
  tir::HostArray row_values = RandomIndices(DataType::Int(64), {2, 3}, 5, 14);
  ExpectMoved(RunCompiled({data, rows}, gather(data, rows, 0), {values, row_values}),
              {2, 3, 1, 19}, values,
              [&](const Index& i) {
                return Index{Wrap(row_values.GetInt(i[0] * 3 + i[1]), 5), i[2], i[3]};
              },
              "gather axis 0, int64");
  te::Tensor cols = te::placeholder(Shape({4}), DataType::Int(32), "cols");
  tir::HostArray col_values = RandomIndices(DataType::Int(32), {4}, 19, 15);
  ExpectMoved(RunCompiled({data, cols}, gather(data, cols, -1), {values, col_values}),
              {5, 1, 4}, values,
              [&](const Index& i) { return Index{i[0], i[1], Wrap(col_values.GetInt(i[2]), 19)}; },
              "gather axis -1, int32");
}

TEST(TopiTransform, GatherElementsAndTake) {
  te::Tensor data = te::placeholder(Shape({4, 6, 17}), kF32, "data");
  tir::HostArray values = RandomArray(kF32, {4, 6, 17}, 16);
  te::Tensor indices = te::placeholder(Shape({4, 3, 17}), DataType::Int(32), "indices");
  tir::HostArray index_values = RandomIndices(DataType::Int(32), {4, 3, 17}, 6, 17);
  ExpectMoved(RunCompiled({data, indices}, gather_elements(data, indices, 1),
                          {values, index_values}),
              {4, 3, 17}, values,
              [&](const Index& i) {
                return Index{i[0], Wrap(index_values.GetInt(Flat(i, {4, 3, 17})), 6), i[2]};
              },
              "gather_elements axis 1");
  te::Tensor last = te::placeholder(Shape({2, 6, 5}), DataType::Int(64), "last");
  tir::HostArray last_values = RandomIndices(DataType::Int(64), {2, 6, 5}, 17, 18);
  ExpectMoved(RunCompiled({data, last}, gather_elements(data, last, -1), {values, last_values}),
              {2, 6, 5}, values,
              [&](const Index& i) {
                return Index{i[0], i[1], Wrap(last_values.GetInt(Flat(i, {2, 6, 5})), 17)};
              },
              "gather_elements axis -1");
  te::Tensor flat = te::placeholder(Shape({5, 4}), DataType::Int(64), "flat");
  tir::HostArray flat_values = RandomIndices(DataType::Int(64), {5, 4}, 4 * 6 * 17, 19);
  ExpectMoved(RunCompiled({data, flat}, take(data, flat), {values, flat_values}), {5, 4}, values,
              [&](const Index& i) {
                int64_t position = Wrap(flat_values.GetInt(Flat(i, {5, 4})), 4 * 6 * 17);
                return Index{position / (6 * 17), position / 17 % 6, position % 17};
              },
              "take");
}

// int64 positions read a producer inlined into the gather: the concatenation's select on its
// axis compares them with constants of the data's index type (once a type error at build).
TEST(TopiTransform, GatherElementsOfAnInlinedConcatenation) {
  te::Tensor p = te::placeholder(Shape({1, 3}), kF32, "p");
  te::Tensor q = te::placeholder(Shape({2, 3}), kF32, "q");
  te::Tensor at = te::placeholder(Shape({3, 3}), DataType::Int(64), "at");
  std::vector<tir::HostArray> pq = {RandomArray(kF32, {1, 3}, 20), RandomArray(kF32, {2, 3}, 21)};
  tir::HostArray at_values = RandomIndices(DataType::Int(64), {3, 3}, 3, 22);
  tir::HostArray got =
      RunCompiled({p, q, at}, gather_elements(concat({p, q}, 0), at, 0), {pq[0], pq[1], at_values});
  ExpectMoved(
      got, {3, 3}, pq,
      [&](const Index& i) {
        int64_t row = Wrap(at_values.GetInt(Flat(i, {3, 3})), 3);
        return row == 0 ? Source{0, {0, i[1]}} : Source{1, {row - 1, i[1]}};
      },
      "gather_elements of a concatenation");
}

TEST(TopiTransform, PadConstantReflectEdge) {
  struct Case {
    Index shape, begin, end;
    PadMode mode;
    DataType dtype;
  };
  const DataType i32 = DataType::Int(32);
  for (const Case& c : {Case{{3, 1, 17}, {1, 0, 2}, {2, 3, 5}, PadMode::kConstant, kF32},
                        Case{{3, 1, 17}, {1, 0, 2}, {2, 3, 5}, PadMode::kConstant, i32},
                        Case{{5, 17}, {4, 3}, {2, 16}, PadMode::kReflect, kF32},
                        Case{{3, 1, 17}, {0, 2, 1}, {1, 2, 20}, PadMode::kEdge, kF32}}) {
    ExpectPadded(c.shape, c.begin, c.end, c.mode, c.dtype, c.dtype.is_float() ? 1.5 : -7,
                 "pad " + c.dtype.str());
  }
}

TEST(TopiTransform, DepthToSpaceAndSpaceToDepth) {
  // ONNX's definitions: DCR reshapes to (N, b, b, C', H, W) and transposes by
  // (0, 3, 4, 1, 5, 2); CRD reshapes to (N, C', b, b, H, W) and transposes by
  // (0, 1, 4, 2, 5, 3); SpaceToDepth reshapes to (N, C, H', b, W', b) and transposes by
  // (0, 3, 5, 1, 2, 4).
  const int64_t b = 3;
  te::Tensor x = te::placeholder(Shape({2, 18, 3, 5}), kF32, "x");
  tir::HostArray data = RandomArray(kF32, {2, 18, 3, 5}, 21);
  for (DepthToSpaceMode mode : {DepthToSpaceMode::kDCR, DepthToSpaceMode::kCRD}) {
    bool dcr = mode == DepthToSpaceMode::kDCR;
    ExpectMoved(RunCompiled({x}, depth_to_space(x, b, mode), {data}), {2, 2, 9, 15}, data,
                [&](const Index& i) {
                  int64_t c = i[1], bh = i[2] % b, bw = i[3] % b;
                  int64_t channel =
                      dcr ? Flat({bh, bw, c}, {b, b, 2}) : Flat({c, bh, bw}, {2, b, b});
                  return Index{i[0], channel, i[2] / b, i[3] / b};
                },
                dcr ? "depth_to_space DCR" : "depth_to_space CRD");
  }
  te::Tensor y = te::placeholder(Shape({2, 3, 6, 10}), kF32, "y");
  tir::HostArray image = RandomArray(kF32, {2, 3, 6, 10}, 22);
  ExpectMoved(RunCompiled({y}, space_to_depth(y, 2), {image}), {2, 12, 3, 5}, image,
              [](const Index& i) {
                int64_t bh = i[1] / 6, bw = i[1] / 3 % 2, c = i[1] % 3;
                return Index{i[0], c, i[2] * 2 + bh, i[3] * 2 + bw};
              },
              "space_to_depth");
  // DCR depth_to_space undoes space_to_depth, through one inlined chain.
  ExpectMoved(RunCompiled({y}, depth_to_space(space_to_depth(y, 2), 2), {image}), {2, 3, 6, 10},
              image, [](const Index& i) { return i; }, "space_to_depth round trip");
}

TEST(TopiTransform, LayoutTransformToBlockedChannelsAndBack) {
  te::Tensor x = te::placeholder(Shape({2, 32, 3, 5}), kF32, "x");
  tir::HostArray data = RandomArray(kF32, {2, 32, 3, 5}, 23);
  te::Tensor blocked = layout_transform(x, "NCHW", "NCHW16c");
  ExpectMoved(RunCompiled({x}, blocked, {data}), {2, 2, 3, 5, 16}, data,
              [](const Index& i) { return Index{i[0], i[1] * 16 + i[4], i[2], i[3]}; },
              "NCHW to NCHW16c");
  te::Tensor xc = te::placeholder(Shape({1, 3, 2, 7, 8}), kF32, "xc");
  tir::HostArray data_c = RandomArray(kF32, {1, 3, 2, 7, 8}, 24);
  ExpectMoved(RunCompiled({xc}, layout_transform(xc, "NCHW8c", "NCHW"), {data_c}), {1, 24, 2, 7},
              data_c, [](const Index& i) { return Index{i[0], i[1] / 8, i[2], i[3], i[1] % 8}; },
              "NCHW8c to NCHW");
  ExpectMoved(RunCompiled({x}, layout_transform(blocked, "NCHW16c", "NCHW"), {data}),
              {2, 32, 3, 5}, data, [](const Index& i) { return i; }, "round trip");
}

TEST(TopiTransform, SymbolicDimensionsPassThrough) {
  // A dynamic batch: operators that need no constant size keep n symbolic.
  Var n = SizeVar("n");
  te::Tensor x = te::placeholder({n, 3, 17}, kF32, "x");
  te::Tensor y = te::placeholder({n, 2, 17}, kF32, "y");
  te::Tensor out = flatten(transpose(concat({x, y}, 1), {0, 2, 1}), 1);
  ASSERT_TRUE(out.shape()[0].same_as(n));
  te::Schedule s = schedule_injective({out});
  runtime::Module module = build(te::lower(s, {x, y, out}, "op"), Target::Parse("llvm"));
  const int64_t batch = 3;
  tir::HostArray in_x = RandomArray(kF32, {batch, 3, 17}, 25);
  tir::HostArray in_y = RandomArray(kF32, {batch, 2, 17}, 26);
  tir::HostArray got(kF32, {batch, 85});
  target_test::CallWithArrays(module, "op", {in_x, in_y, got});
  ExpectMoved(got, {batch, 85}, {in_x, in_y},
              [](const Index& i) {
                int64_t column = i[1] / 5, channel = i[1] % 5;
                return channel < 3 ? Source{0, {i[0], channel, column}}
                                   : Source{1, {i[0], channel - 3, column}};
              },
              "concat, transpose, flatten");
}

bool Mentions(const std::string& error, const std::string& text) {
  return error.find(text) != std::string::npos;
}

TEST(TopiTransform, MisuseIsAUserError) {
  te::Tensor x = te::placeholder(Shape({2, 3, 17}), kF32, "x");
  te::Tensor y = te::placeholder(Shape({2, 4, 16}), kF32, "y");
  te::Tensor i = te::placeholder(Shape({3}), DataType::Float(32), "i");
  EXPECT_PRED2(Mentions, ErrorOf([&] { transpose(x, {0, 3, 1}); }),
               "transpose of 'x': axis 3 is out of range for rank 3 (expected -3 to 2)");
  EXPECT_PRED2(Mentions, ErrorOf([&] { transpose(x, {0, 1, -2}); }),
               "transpose of 'x': perm (0, 1, -2) is not a permutation of the axes");
  EXPECT_PRED2(Mentions, ErrorOf([&] { transpose(x, {1, 0}); }),
               "has 2 entries for a tensor of rank 3");
  EXPECT_PRED2(Mentions, ErrorOf([&] { reshape(x, {5, -1}); }),
               "reshape of 'x': cannot infer the -1 of (5, -1): (2, 3, 17) has 102 elements, "
               "no multiple of 5");
  EXPECT_PRED2(Mentions, ErrorOf([&] { reshape(x, {2, 50}); }),
               "target shape (2, 50) has 100 elements but (2, 3, 17) has 102");
  EXPECT_PRED2(Mentions, ErrorOf([&] { reshape(x, {-1, -1}); }), "has more than one -1");
  EXPECT_PRED2(Mentions, ErrorOf([&] { squeeze(x, {1}); }),
               "squeeze of 'x': dimension 1 of (2, 3, 17) is 3, not 1");
  EXPECT_PRED2(Mentions, ErrorOf([&] { unsqueeze(x, {4}); }), "axis 4 is out of range for rank 4");
  EXPECT_PRED2(Mentions, ErrorOf([&] { flatten(x, 4); }), "flatten of 'x': axis 4 is out of range");
  EXPECT_PRED2(Mentions, ErrorOf([&] { concat({x, y}, 1); }),
               "concat along axis 1: 'y' has shape (2, 4, 16) but 'x' has (2, 3, 17)");
  EXPECT_PRED2(Mentions, ErrorOf([&] { split(x, 2, {10, 8}); }),
               "split of 'x': sizes (10, 8) sum to 18 but dimension 2 of (2, 3, 17) is 17");
  EXPECT_PRED2(Mentions, ErrorOf([&] { strided_slice(x, {0}, {1}, {0}, {0}); }), "step 0");
  EXPECT_PRED2(Mentions, ErrorOf([&] { broadcast_to(x, Shape({1, 17})); }),
               "broadcast_to of 'x': (2, 3, 17) does not broadcast to (1, 17)");
  EXPECT_PRED2(Mentions, ErrorOf([&] { gather(x, i, 0); }),
               "gather of 'x': indices 'i' are float32; index tensors are int32 or int64");
  EXPECT_PRED2(Mentions, ErrorOf([&] { tile(x, {1, -1, 1}); }),
               "tile of 'x': repeats (1, -1, 1) must not be negative");
  EXPECT_PRED2(Mentions, ErrorOf([&] { split_by_count(x, 2, 0); }),
               "split_by_count of 'x': num_outputs 0 must be at least 1");
  EXPECT_PRED2(Mentions, ErrorOf([&] { split_by_count(x, -1, 7); }),
               "split_by_count of 'x': dimension 2 of (2, 3, 17) does not divide into 7 parts "
               "of 3 (the last one smaller)");
  EXPECT_PRED2(Mentions, ErrorOf([&] { split_by_count(x, 3, 2); }),
               "split_by_count of 'x': axis 3 is out of range for rank 3");
  EXPECT_PRED2(Mentions, ErrorOf([&] { pad(x, {0, -2, 0}, {0, -2, 0}); }),
               "pad (constant) of 'x': pads (0, -2, 0) and (0, -2, 0) crop 4 elements from "
               "dimension 1 of (2, 3, 17), more than it has");
  EXPECT_PRED2(Mentions, ErrorOf([&] { pad(x, {0, -1, 0}, {0, 2, 0}, PadMode::kReflect); }),
               "pads of dimension 1 (-1, 2) must be smaller than its size 2 to reflect");
  EXPECT_PRED2(Mentions, ErrorOf([&] { pad(x, {0, -3, 0}, {0, 1, 0}, PadMode::kEdge); }),
               "pad (edge) of 'x': dimension 1 is empty, with no edge to repeat");
  EXPECT_PRED2(Mentions, ErrorOf([&] { pad(x, {0, 3, 0}, {0, 0, 0}, PadMode::kReflect); }),
               "pad (reflect) of 'x': pads of dimension 1 (3, 0) must be smaller than its size 3");
  EXPECT_PRED2(Mentions, ErrorOf([&] { pad(x, {0, 0}, {0, 0}); }), "need one entry per dimension");
  te::Tensor image = te::placeholder(Shape({1, 20, 4, 6}), kF32, "image");
  EXPECT_PRED2(Mentions, ErrorOf([&] { depth_to_space(image, 3); }),
               "depth_to_space of 'image': 20 channels are not a multiple of blocksize^2 = 9");
  EXPECT_PRED2(Mentions, ErrorOf([&] { space_to_depth(image, 4); }),
               "height 4 and width 6 must be multiples of blocksize 4");
  EXPECT_PRED2(Mentions, ErrorOf([&] { layout_transform(image, "NCHW", "NCHW16c"); }),
               "channels 20 must be a constant multiple of 16");
  EXPECT_PRED2(Mentions, ErrorOf([&] { layout_transform(image, "NCHW", "NHWC"); }),
               "layout 'NHWC' is not supported; expected NCHW or NCHW<k>c");
}

}  // namespace
}  // namespace loom::topi
