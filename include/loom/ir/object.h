// The node system's base: immutable objects with an intrusive reference count, and the
// handle type that owns them. Every IR node kind is listed once in node_table.def; the
// NodeKind enum below and all per-kind machinery are generated from that table.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>

#include "loom/support/error.h"

namespace loom {

enum class NodeKind : uint16_t {
#define LOOM_KIND_ENUM(Name, ...) Name,
#define LOOM_EXPR(Name, ...) LOOM_KIND_ENUM(Name)
#define LOOM_STMT(Name, ...) LOOM_KIND_ENUM(Name)
#define LOOM_NODE(Name, ...) LOOM_KIND_ENUM(Name)
#include "loom/ir/node_table.def"
#undef LOOM_EXPR
#undef LOOM_STMT
#undef LOOM_NODE
#undef LOOM_KIND_ENUM
  // Objects outside the IR table (modules, registries) use kOther and never reach functors.
  kOther,
};

// The table lists expressions, then statements, then other nodes: kind ranges classify.
inline constexpr int kNumExprKinds = 0
#define LOOM_EXPR(...) +1
#include "loom/ir/node_table.def"
#undef LOOM_EXPR
    ;
inline constexpr int kNumStmtKinds = 0
#define LOOM_STMT(...) +1
#include "loom/ir/node_table.def"
#undef LOOM_STMT
    ;

// Name of a node kind, e.g. "Add" (for messages and the printer's fallback form).
const char* NodeKindName(NodeKind kind);

class Object {
 public:
  explicit Object(NodeKind kind) : kind_(kind) {}
  // Copying a node (done only by mutators that rebuild one with new fields) starts a fresh
  // reference count: the copy is a new object.
  Object(const Object& other) : kind_(other.kind_) {}
  Object& operator=(const Object&) = delete;
  virtual ~Object() = default;

  NodeKind kind() const { return kind_; }

  void IncRef() const { ref_count_.fetch_add(1, std::memory_order_relaxed); }
  void DecRef() const {
    if (ref_count_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  int use_count() const { return ref_count_.load(std::memory_order_relaxed); }

 private:
  NodeKind kind_;
  mutable std::atomic<int32_t> ref_count_{0};
};

// A possibly-null owning handle. Typed handles (PrimExpr, Stmt, Var, Buffer, ...) derive
// from it and add a typed operator->.
class ObjectRef {
 public:
  ObjectRef() = default;
  explicit ObjectRef(const Object* ptr) : ptr_(ptr) {
    if (ptr_) ptr_->IncRef();
  }
  ObjectRef(const ObjectRef& o) : ptr_(o.ptr_) {
    if (ptr_) ptr_->IncRef();
  }
  ObjectRef(ObjectRef&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)) {}
  ObjectRef& operator=(const ObjectRef& o) {
    ObjectRef(o).swap(*this);
    return *this;
  }
  ObjectRef& operator=(ObjectRef&& o) noexcept {
    ObjectRef(std::move(o)).swap(*this);
    return *this;
  }
  ~ObjectRef() {
    if (ptr_) ptr_->DecRef();
  }
  void swap(ObjectRef& o) noexcept { std::swap(ptr_, o.ptr_); }

  const Object* get() const { return ptr_; }
  bool defined() const { return ptr_ != nullptr; }
  // Identity, not structure (see structural.h for that).
  bool same_as(const ObjectRef& o) const { return ptr_ == o.ptr_; }
  NodeKind kind() const { return ptr_ ? ptr_->kind() : NodeKind::kOther; }

  // Checked downcast to a node type; nullptr when null or of another kind.
  template <typename NodeT>
  const NodeT* as() const {
    if (ptr_ && NodeT::IsInstance(ptr_)) return static_cast<const NodeT*>(ptr_);
    return nullptr;
  }

 protected:
  const Object* ptr_ = nullptr;
};

struct ObjectHash {
  size_t operator()(const ObjectRef& r) const { return std::hash<const void*>()(r.get()); }
};
struct ObjectEqual {
  bool operator()(const ObjectRef& a, const ObjectRef& b) const { return a.same_as(b); }
};

// Downcast a handle to a more specific handle type; an internal error when the kind does
// not match (callers check with as<>() first when the kind is not certain).
template <typename RefT>
RefT Downcast(const ObjectRef& ref) {
  if (!ref.defined()) return RefT();
  LOOM_ICHECK(ref.as<typename RefT::ContainerType>() != nullptr)
      << "Downcast from " << NodeKindName(ref.kind()) << " to " << RefT::ContainerType::kName
      << " is invalid";
  return RefT::FromObject(ref.get());
}

}  // namespace loom
