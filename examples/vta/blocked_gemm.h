// The blocked matrix multiply of the VTA tutorial ("Matrix Multiply Blocking", ../shared/seeds):
// a 1 x (16 * in_blocks) vector by a (16 * in_blocks) x (16 * out_blocks) int8 matrix, with
// the shift by 8 and the clip to [0, 127] on the accumulator as ALU stages, in tiles of
// out_tile x in_tile blocks; optionally the output tiles split between two virtual threads. The
// algorithm and schedule of vta_blocked_gemm (blocked_gemm.cc), which the tests also run.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "loom/ir/expr_ops.h"
#include "loom/te/operation.h"
#include "loom/te/schedule.h"
#include "loom/vta/compiler/environment.h"

namespace loom::vta::example {

inline const DataType kI8 = DataType::Int(8);
inline const DataType kI32 = DataType::Int(32);

struct BlockedGemm {
  Environment env{VTAConfig::Default()};
  int m, n, o_block, i_block;
  te::Tensor data, weight, data_buf, weight_buf, gemm, shr, low, high, res;
  IterVar ic, ic_tns;

  BlockedGemm(int out_blocks, int in_blocks, int out_tile, int in_tile)
      : m(out_blocks), n(in_blocks), o_block(out_tile), i_block(in_tile) {
    data = te::placeholder({1, n, 1, 16}, kI8, "data");
    weight = te::placeholder({m, n, 16, 16}, kI8, "weight");
    data_buf = te::compute(
        {1, n, 1, 16}, [&](const Array<Var>& i) { return data(i); }, "data_buf");
    weight_buf = te::compute(
        {m, n, 16, 16}, [&](const Array<Var>& i) { return weight(i); }, "weight_buf");
    ic = te::reduce_axis(Range(0, n), "ic");
    ic_tns = te::reduce_axis(Range(0, 16), "ic_tns");
    gemm = te::compute(
        {1, m, 1, 16},
        [&](Var bo, Var co, Var bi, Var ci) {
          return te::sum(cast(kI32, data_buf(bo, ic->var, bi, ic_tns->var)) *
                             cast(kI32, weight_buf(co, ic->var, ci, ic_tns->var)),
                         {ic, ic_tns});
        },
        "gemm");
    shr = te::compute(
        {1, m, 1, 16},
        [&](const Array<Var>& i) {
          return call_intrin(kI32, "shift_right", {gemm(i), IntImm(kI32, 8)});
        },
        "shr");
    low = te::compute(
        {1, m, 1, 16}, [&](const Array<Var>& i) { return max(shr(i), 0); }, "low");
    high = te::compute(
        {1, m, 1, 16}, [&](const Array<Var>& i) { return min(low(i), 127); }, "high");
    res = te::compute(
        {1, m, 1, 16}, [&](const Array<Var>& i) { return cast(kI8, high(i)); }, "res");
  }

  // res computed on the CPU from data's and weight's values: the sum, shifted right by 8 and
  // clipped to [0, 127].
  std::vector<int8_t> Reference(const int8_t* data, const int8_t* weight) const {
    std::vector<int8_t> res(static_cast<size_t>(m) * 16);
    for (int co = 0; co < m; ++co) {
      for (int ci = 0; ci < 16; ++ci) {
        int32_t sum = 0;
        for (int k = 0; k < n * 16; ++k) {
          sum += data[k] * weight[((co * n + k / 16) * 16 + ci) * 16 + k % 16];
        }
        res[co * 16 + ci] = static_cast<int8_t>(std::clamp(sum >> 8, 0, 127));
      }
    }
    return res;
  }

  te::Schedule Scheduled(const std::string& thread_tag) const {
    te::Schedule s = te::create_schedule({res.op()});
    te::Stage r = s[res];
    auto [oc_out, oc_inn] = r.split(r->leaf_iter_vars[1], o_block);
    if (!thread_tag.empty()) {
      auto [tx, tiles] = r.split_by_nparts(oc_out, 2);
      r.reorder({tx, tiles});
      r.bind(tx, te::thread_axis(thread_tag));
      oc_out = tiles;
    }
    for (const te::Tensor& t : {gemm, shr, low, high}) {
      s[t].set_scope(Environment::kAccScope);
      s[t].compute_at(r, oc_out);
    }
    te::Stage g = s[gemm];
    auto [ic_out, ic_inn] = g.split(ic, i_block);
    const Array<IterVar> axis = g->root_iter_vars;
    g.reorder({ic_out, axis[0], axis[1], ic_inn, axis[2], axis[3], ic_tns});
    s[data_buf].set_scope(Environment::kInpScope);
    s[weight_buf].set_scope(Environment::kWgtScope);
    s[data_buf].compute_at(g, ic_out);
    s[weight_buf].compute_at(g, ic_out);
    s[data_buf].pragma(s[data_buf]->leaf_iter_vars[0], Environment::kDmaCopy);
    s[weight_buf].pragma(s[weight_buf]->leaf_iter_vars[0], Environment::kDmaCopy);
    for (const te::Tensor& t : {shr, low, high}) {
      s[t].pragma(s[t]->leaf_iter_vars[0], Environment::kAlu);
    }
    r.pragma(oc_inn, Environment::kDmaCopy);
    g.tensorize(axis[2], env.gemm());
    return s;
  }
};

}  // namespace loom::vta::example
