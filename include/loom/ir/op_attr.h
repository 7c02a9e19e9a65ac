// Attributes of the built-in operators, keyed by name, for what each back end attaches to
// them: its lowering rule per intrinsic ("codegen.c" for the C source target, ...). One
// entry per operator per back end, registered from the back end's own files, so a new back
// end adds its rules without touching the IR or another back end.
//
//   using CEmitter = std::function<std::string(CodeGenC&, const CallNode*)>;
//   LOOM_REGISTER_OP_ATTR("codegen.c", "fabs", CEmitter(EmitLibmCall("fabs")));
//   const CEmitter* emit = OpAttr<CEmitter>::Find("codegen.c", call->op);
#pragma once

#include <any>
#include <string>

#include "loom/ir/node.h"

namespace loom {

namespace detail {
void RegisterOpAttr(const std::string& key, const std::string& op, std::any value);
const std::any* FindOpAttr(const std::string& key, const std::string& op);
}  // namespace detail

template <typename T>
struct OpAttr {
  // The value `key` holds for `op`; nullptr when the operator has none. The value must have
  // been registered as a T (an internal error otherwise).
  static const T* Find(const std::string& key, const Op& op) {
    const std::any* value = detail::FindOpAttr(key, op.name());
    if (value == nullptr) return nullptr;
    const T* typed = std::any_cast<T>(value);
    LOOM_ICHECK(typed != nullptr) << "op attribute " << key << " of " << op.name()
                                  << " has another type";
    return typed;
  }
};

#define LOOM_OP_ATTR_VAR_I(line) loom_op_attr_##line
#define LOOM_OP_ATTR_VAR(line) LOOM_OP_ATTR_VAR_I(line)
// Registers `value` as attribute `key` of the built-in operator `op` (which must exist).
#define LOOM_REGISTER_OP_ATTR(key, op, value)                                             \
  [[maybe_unused]] static const bool LOOM_OP_ATTR_VAR(__LINE__) =                         \
      (::loom::detail::RegisterOpAttr(key, ::loom::Op::Get(op).name(), std::any(value)), \
       true)

}  // namespace loom
