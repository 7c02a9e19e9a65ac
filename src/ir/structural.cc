#include "loom/ir/structural.h"

#include <cmath>
#include <cstring>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace loom {

namespace {

template <typename T>
struct IsArray : std::false_type {};
template <typename T>
struct IsArray<std::vector<T>> : std::true_type {};

size_t HashCombine(size_t seed, size_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

class EqualChecker {
 public:
  EqualChecker(bool map_free_vars, std::string* where)
      : map_free_vars_(map_free_vars), where_(where) {}

  bool Equal(const ObjectRef& a, const ObjectRef& b, FieldRole role) {
    // Identical subtrees are equal unless a definition was already mapped onto another
    // variable, in which case a shared subtree may use it differently on the two sides.
    if (a.same_as(b) && lhs_to_rhs_.empty()) {
      if (a.defined() && a.kind() == NodeKind::Var) MapVars(a.get(), b.get());
      return true;
    }
    if (!a.defined() && !b.defined()) return true;
    if (!a.defined() || !b.defined()) return Fail("one side is undefined");
    if (a.kind() != b.kind()) {
      return Fail(std::string(NodeKindName(a.kind())) + " vs " + NodeKindName(b.kind()));
    }
    if (a.kind() == NodeKind::Var) return EqualVars(Downcast<Var>(a), Downcast<Var>(b), role);
    if (a.kind() == NodeKind::kOther) {
      return a.same_as(b) || Fail("objects outside the IR differ");
    }
    if (const auto* ea = a.as<ExprNode>()) {
      if (ea->dtype != b.as<ExprNode>()->dtype) return Fail("dtype differs");
    }
    return DispatchNode(*a.get(), [&](const auto& lhs) {
      using NodeT = std::decay_t<decltype(lhs)>;
      const auto& rhs = static_cast<const NodeT&>(*b.get());
      bool equal = true;
      // Definitions first: a Reduce's sources use the axes it defines after them.
      for (bool definitions : {true, false}) {
        ForEachFieldPair(lhs, rhs, [&](const char* name, const auto& x, const auto& y,
                                       FieldRole field_role) {
          if (!equal || (field_role == FieldRole::kDef) != definitions) return;
          equal = EqualField(x, y, field_role);
          if (!equal && where_) path_.push_back(name);
        });
      }
      return equal;
    });
  }

  std::string Where() const {
    std::string out;
    for (auto it = path_.rbegin(); it != path_.rend(); ++it) {
      if (!out.empty() && (*it)[0] != '[') out += ".";
      out += *it;
    }
    if (out.empty() || reason_.empty()) return out + reason_;
    return out + ": " + reason_;
  }

 private:
  template <typename T>
  bool EqualField(const T& x, const T& y, FieldRole role) {
    if constexpr (std::is_base_of_v<ObjectRef, T>) {
      return Equal(x, y, role);
    } else if constexpr (IsArray<T>::value) {
      if (x.size() != y.size()) return Fail("array sizes differ");
      for (size_t i = 0; i < x.size(); ++i) {
        if (!EqualField(x[i], y[i], role)) {
          if (where_) path_.push_back("[" + std::to_string(i) + "]");
          return false;
        }
      }
      return true;
    } else if constexpr (std::is_same_v<T, std::pair<Var, Buffer>>) {
      return EqualField(x.first, y.first, role) && EqualField(x.second, y.second, role);
    } else if constexpr (std::is_same_v<T, Annotations>) {
      if (x.size() != y.size()) return Fail("annotation counts differ");
      for (auto ix = x.begin(), iy = y.begin(); ix != x.end(); ++ix, ++iy) {
        if (ix->first != iy->first) return Fail("annotation keys differ");
        if (!Equal(ix->second, iy->second, role)) return false;
      }
      return true;
    } else if constexpr (std::is_same_v<T, double>) {
      return (x == y || (std::isnan(x) && std::isnan(y))) || Fail("values differ");
    } else {
      if (role == FieldRole::kName) return true;
      return x == y || Fail("values differ");
    }
  }

  bool EqualVars(const Var& a, const Var& b, FieldRole role) {
    auto it = lhs_to_rhs_.find(a.get());
    if (it != lhs_to_rhs_.end()) return it->second == b.get() || Fail("variables differ");
    if (rhs_to_lhs_.count(b.get())) return Fail("variables differ");
    if (role == FieldRole::kDef || map_free_vars_) {
      if (a.dtype() != b.dtype() || a->is_size_var != b->is_size_var) {
        return Fail("variable types differ");
      }
      MapVars(a.get(), b.get());
      return true;
    }
    return a.same_as(b) || Fail("free variables differ");
  }

  void MapVars(const Object* a, const Object* b) {
    lhs_to_rhs_.emplace(a, b);
    rhs_to_lhs_.emplace(b, a);
  }

  bool Fail(std::string reason) {
    if (reason_.empty()) reason_ = std::move(reason);
    return false;
  }

  bool map_free_vars_;
  std::string* where_;
  std::unordered_map<const Object*, const Object*> lhs_to_rhs_, rhs_to_lhs_;
  std::vector<std::string> path_;
  std::string reason_;
};

class Hasher {
 public:
  explicit Hasher(bool map_free_vars) : map_free_vars_(map_free_vars) {}

  size_t Hash(const ObjectRef& ref, FieldRole role) {
    if (!ref.defined()) return 0x5bd1e995;
    size_t h = static_cast<size_t>(ref.kind()) * 0x100000001b3ULL;
    if (ref.kind() == NodeKind::Var) return HashCombine(h, HashVar(Downcast<Var>(ref), role));
    if (ref.kind() == NodeKind::kOther) return HashCombine(h, ObjectHash()(ref));
    if (const auto* e = ref.as<ExprNode>()) h = HashCombine(h, std::hash<DataType>()(e->dtype));
    // Definitions first, in the order equality maps them.
    DispatchNode(*ref.get(), [&](const auto& node) {
      for (bool definitions : {true, false}) {
        ForEachField(node, [&](const char*, const auto& field, FieldRole field_role) {
          if ((field_role == FieldRole::kDef) != definitions) return;
          h = HashCombine(h, HashField(field, field_role));
        });
      }
    });
    return h;
  }

 private:
  template <typename T>
  size_t HashField(const T& x, FieldRole role) {
    if constexpr (std::is_base_of_v<ObjectRef, T>) {
      return Hash(x, role);
    } else if constexpr (IsArray<T>::value) {
      size_t h = x.size();
      for (const auto& element : x) h = HashCombine(h, HashField(element, role));
      return h;
    } else if constexpr (std::is_same_v<T, std::pair<Var, Buffer>>) {
      return HashCombine(HashField(x.first, role), HashField(x.second, role));
    } else if constexpr (std::is_same_v<T, Annotations>) {
      size_t h = x.size();
      for (const auto& [key, value] : x) {
        h = HashCombine(h, std::hash<std::string>()(key));
        h = HashCombine(h, Hash(value, role));
      }
      return h;
    } else if constexpr (std::is_same_v<T, double>) {
      if (std::isnan(x)) return 0x7ff8;
      double v = x == 0.0 ? 0.0 : x;  // +0 and -0 compare equal
      uint64_t bits;
      std::memcpy(&bits, &v, sizeof(bits));
      return std::hash<uint64_t>()(bits);
    } else if constexpr (std::is_enum_v<T>) {
      return static_cast<size_t>(x);
    } else if constexpr (std::is_same_v<T, DataType>) {
      return std::hash<DataType>()(x);
    } else {
      if (role == FieldRole::kName) return 0;
      return std::hash<T>()(x);
    }
  }

  size_t HashVar(const Var& var, FieldRole role) {
    size_t h = HashCombine(std::hash<DataType>()(var.dtype()), var->is_size_var);
    auto it = var_index_.find(var.get());
    if (it == var_index_.end() && (role == FieldRole::kDef || map_free_vars_)) {
      it = var_index_.emplace(var.get(), var_index_.size()).first;
    }
    if (it != var_index_.end()) return HashCombine(h, it->second);
    return HashCombine(h, ObjectHash()(var));
  }

  bool map_free_vars_;
  std::unordered_map<const Object*, size_t> var_index_;
};

}  // namespace

bool StructuralEqual(const ObjectRef& lhs, const ObjectRef& rhs, bool map_free_vars) {
  return EqualChecker(map_free_vars, nullptr).Equal(lhs, rhs, FieldRole::kUse);
}

bool StructuralEqualExplain(const ObjectRef& lhs, const ObjectRef& rhs, std::string* where,
                            bool map_free_vars) {
  EqualChecker checker(map_free_vars, where);
  bool equal = checker.Equal(lhs, rhs, FieldRole::kUse);
  if (!equal && where) *where = checker.Where();
  return equal;
}

size_t StructuralHash(const ObjectRef& node, bool map_free_vars) {
  return Hasher(map_free_vars).Hash(node, FieldRole::kUse);
}

}  // namespace loom
