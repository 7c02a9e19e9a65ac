// Storage with several copies side by side, shared by the passes that privatize an
// allocation per virtual thread (InjectVirtualThread) or rotate between two halves of it
// (InjectDoubleBuffer). Internal to the transforms.
//
// Layout: a flat (one-extent) allocation of S elements becomes one of copies * S, and copy c
// of a flat buffer element j is element c * S + j, so flattened IR stays flat. An allocation
// with several extents gains a leading dimension of `copies`, and an access a leading index.
#pragma once

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "loom/ir/node.h"

namespace loom::tir::transform::detail {

class BufferCopies {
 public:
  // `purpose` completes error messages: "cannot give allocation 'B' 2 copies <purpose>".
  BufferCopies(const AllocateNode* allocation, int64_t copies, std::string purpose);

  const Var& data() const { return data_; }
  // The allocation's extents with the leading dimension of copies in front.
  Array<PrimExpr> Extents() const;
  // A view of `buffer` (one over this allocation) wide enough to reach every copy. Every
  // view of one buffer is the same object, so printed names stay stable.
  Buffer WithCopies(const Buffer& buffer);
  // The indices, into WithCopies(buffer), of the element at `indices` of copy `copy`.
  Array<PrimExpr> CopyIndices(const Buffer& buffer, const PrimExpr& copy,
                              const Array<PrimExpr>& indices) const;
  // Why a raw use of the data variable cannot be redirected, for a user error.
  std::string HandleUseError(const PrimExpr& use) const;

 private:
  // The stride between copies in elements of `buffer`'s type.
  PrimExpr CopyStride(const Buffer& buffer) const;
  // Whether copies of `buffer`'s elements are addressed by offsetting its one index.
  bool IsFlat(const Buffer& buffer) const;

  Var data_;
  DataType dtype_;
  Array<PrimExpr> extents_;
  int64_t copies_;
  std::string purpose_;
  std::unordered_map<const Object*, Buffer> views_;
};

// `stmt` with every access to the allocations of `choices` sent to the copy that each
// choice's index selects. A raw use of such an allocation's data variable (a handle passed
// to a call) is a user error: only element accesses can be redirected.
Stmt SelectCopies(const Stmt& stmt,
                  const std::vector<std::pair<BufferCopies*, PrimExpr>>& choices);

}  // namespace loom::tir::transform::detail
