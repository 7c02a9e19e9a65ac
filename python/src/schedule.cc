// _loom.te, part two: schedules. create_schedule, s[tensor] -> Stage, every primitive of
// te::Stage and te::Schedule with TVM's names and argument order, and tensor intrinsics for
// tensorize.
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <tuple>

#include "ir_common.h"
#include "loom/te/tensor_intrin.h"

namespace loom::python {
namespace {

using te::Schedule;
using te::Stage;

IterVar ToIterVar(nb::handle value, const std::string& what) {
  LOOM_CHECK_USER(nb::isinstance<IterVar>(value))
      << what << ": expected an IterVar (an axis of the stage: op.axis, op.reduce_axis, "
      << "leaf_iter_vars, or what split/fuse returned), got " << TypeName(value);
  return nb::cast<IterVar>(value);
}

const char* AttachTypeName(te::AttachType type) {
  switch (type) {
    case te::AttachType::kRoot:
      return "root";
    case te::AttachType::kInline:
      return "inline";
    case te::AttachType::kScope:
      return "scope";
  }
  return "root";
}

Array<te::Operation> ToOperations(nb::handle value, const std::string& what) {
  if (nb::isinstance<OperationRef>(value) || nb::isinstance<te::Tensor>(value)) {
    return {ToOperation(value, what)};
  }
  LOOM_CHECK_USER(nb::isinstance<nb::sequence>(value) && !nb::isinstance<nb::str>(value))
      << what << ": expected an operation or tensor, or a list of them, got " << TypeName(value);
  Array<te::Operation> ops;
  for (nb::handle item : value) ops.push_back(ToOperation(item, what));
  return ops;
}

std::tuple<IterVar, IterVar> Split(Stage& stage, const IterVar& parent, nb::handle factor,
                                   nb::handle nparts) {
  LOOM_CHECK_USER(factor.is_none() != nparts.is_none())
      << "split of stage '" << stage->name() << "': give exactly one of factor= and nparts= "
      << "(split(axis, factor=32) or split(axis, nparts=4))";
  if (!factor.is_none()) {
    auto [outer, inner] = stage.split(parent, ToExpr(factor, "split: factor"));
    return {outer, inner};
  }
  auto [outer, inner] = stage.split_by_nparts(parent, ToExpr(nparts, "split: nparts"));
  return {outer, inner};
}

te::TensorIntrinStmts ToIntrinStmts(nb::handle result, const std::string& what) {
  auto stmt = [&](nb::handle value) -> Stmt {
    if (value.is_none()) return Stmt();
    if (nb::isinstance<Stmt>(value)) return nb::cast<Stmt>(value);
    return Evaluate(ToExpr(value, what));
  };
  if (nb::isinstance<nb::tuple>(result) || nb::isinstance<nb::list>(result)) {
    LOOM_CHECK_USER(nb::len(result) >= 1 && nb::len(result) <= 3)
        << what << ": return a statement or (body, reduce_init, reduce_update), got "
        << nb::len(result) << " values";
    te::TensorIntrinStmts stmts;
    stmts.body = stmt(result[0]);
    if (nb::len(result) > 1) stmts.reduce_init = stmt(result[1]);
    if (nb::len(result) > 2) stmts.reduce_update = stmt(result[2]);
    return stmts;
  }
  return {stmt(result), Stmt(), Stmt()};
}

TensorIntrinRef DeclTensorIntrin(nb::handle op, nb::callable fcompute, const std::string& name,
                                 const std::map<std::string, std::string>& scopes,
                                 const std::map<std::string, int>& offset_factors) {
  std::string what = "te.decl_tensor_intrin '" + name + "'";
  std::map<std::string, te::TensorIntrinBuffer> buffers;
  for (const auto& [tensor, scope] : scopes) buffers[tensor].scope = scope;
  for (const auto& [tensor, factor] : offset_factors) buffers[tensor].offset_factor = factor;
  auto builder = [&](const Array<Buffer>& ins, const Array<Buffer>& outs) {
    nb::object result = fcompute(nb::cast(ins), nb::cast(outs));
    return ToIntrinStmts(result, what);
  };
  return {te::decl_tensor_intrin(ToOperation(op, what), builder, name, buffers)};
}

}  // namespace

void BindSchedule(nb::module_& m) {
  nb::module_ te = nb::borrow<nb::module_>(m.attr("te"));

  nb::class_<TensorIntrinRef>(te, "TensorIntrin",
                              "A computation done in one step by hardware or a micro-kernel "
                              "(te.decl_tensor_intrin), for Stage.tensorize")
      .def_prop_ro("name", [](const TensorIntrinRef& t) { return t.intrin->name; })
      .def_prop_ro("op", [](const TensorIntrinRef& t) { return OperationRef{t.intrin->op}; })
      .def("__repr__",
           [](const TensorIntrinRef& t) { return "TensorIntrin('" + t.intrin->name + "')"; });
  te.def("decl_tensor_intrin", &DeclTensorIntrin, nb::arg("op"), nb::arg("fcompute"),
         nb::arg("name") = "tensor_intrin",
         nb::arg("scopes") = std::map<std::string, std::string>{},
         nb::arg("offset_factors") = std::map<std::string, int>{},
         nb::sig("def decl_tensor_intrin(op: Operation | Tensor, fcompute: "
                 "collections.abc.Callable[[list[loom._loom.tir.Buffer], "
                 "list[loom._loom.tir.Buffer]], object], name: str = 'tensor_intrin', scopes: "
                 "dict[str, str] = {}, offset_factors: dict[str, int] = {}) -> TensorIntrin"),
         "Declares the intrinsic computing `op` (a compute over placeholders). "
         "fcompute(input_buffers, output_buffers) returns its statement, or (body, "
         "reduce_init, reduce_update) with None for a missing one. scopes / offset_factors "
         "(by tensor name) restrict the tiles it accepts.");

  nb::class_<Stage>(te, "Stage",
                    "The schedule of one operation (s[tensor]): its loops and where it is "
                    "computed. Primitives change it in place.")
      .def_prop_ro("name", [](const Stage& s) { return s->name(); })
      .def_prop_ro(
          "op", [](const Stage& s) { return OperationRef{s->op}; },
          "The operation the stage computes (cache_write / rfactor may replace it)")
      .def_prop_ro("origin_op", [](const Stage& s) { return OperationRef{s->origin_op}; })
      .def_prop_ro(
          "leaf_iter_vars", [](const Stage& s) { return s->leaf_iter_vars; },
          "The loops, outermost first")
      .def_prop_ro("all_iter_vars", [](const Stage& s) { return s->all_iter_vars; })
      .def_prop_ro(
          "attach_type", [](const Stage& s) { return AttachTypeName(s->attach_type); },
          "Where the stage is computed: root, inline or scope (at a loop of attach_stage)")
      .def_prop_ro("attach_stage",
                   [](const Stage& s) -> std::optional<Stage> {
                     if (!s->attach_stage.defined()) return std::nullopt;
                     return s->attach_stage;
                   })
      .def_prop_ro("attach_ivar",
                   [](const Stage& s) -> std::optional<IterVar> {
                     if (!s->attach_ivar.defined()) return std::nullopt;
                     return s->attach_ivar;
                   })
      .def_prop_ro("scope", [](const Stage& s) { return s->scope; })
      .def_prop_ro("is_output", [](const Stage& s) { return s->is_output; })
      .def("split", &Split, nb::arg("parent"), nb::arg("factor") = nb::none(),
           nb::arg("nparts") = nb::none(),
           nb::sig("def split(self, parent: loom._loom.tir.IterVar, factor: "
                   "loom._loom.tir.PrimExpr | int | None = None, nparts: "
                   "loom._loom.tir.PrimExpr | int | None = None) -> "
                   "tuple[loom._loom.tir.IterVar, loom._loom.tir.IterVar]"),
           "Splits a loop into (outer, inner): inner has `factor` iterations, or outer has "
           "`nparts`")
      .def(
          "tile",
          [](Stage& s, const IterVar& x, const IterVar& y, const PrimExpr& x_factor,
             const PrimExpr& y_factor) {
            auto [xo, yo, xi, yi] = s.tile(x, y, x_factor, y_factor);
            return std::make_tuple(xo, yo, xi, yi);
          },
          nb::arg("x_parent"), nb::arg("y_parent"), nb::arg("x_factor"), nb::arg("y_factor"),
          "Splits x and y and orders the loops (x.outer, y.outer, x.inner, y.inner), returned so")
      .def(
          "fuse",
          [](Stage& s, nb::args axes) {
            LOOM_CHECK_USER(axes.size() >= 1)
                << "fuse of stage '" << s->name() << "': give the axes to fuse, outermost first";
            IterVar fused = ToIterVar(axes[0], "fuse");
            for (size_t i = 1; i < axes.size(); ++i) {
              fused = s.fuse(fused, ToIterVar(axes[i], "fuse"));
            }
            return fused;
          },
          nb::sig("def fuse(self, *args: loom._loom.tir.IterVar) -> loom._loom.tir.IterVar"),
          "Fuses adjacent loops, outermost first, into one")
      .def(
          "reorder",
          [](Stage& s, nb::args axes) {
            Array<IterVar> order;
            for (nb::handle axis : axes) order.push_back(ToIterVar(axis, "reorder"));
            s.reorder(order);
          },
          nb::sig("def reorder(self, *args: loom._loom.tir.IterVar) -> None"),
          "Puts the given loops in this order, in the positions they occupied")
      .def("compute_at", &Stage::compute_at, nb::arg("parent"), nb::arg("scope"),
           "Computes this stage inside loop `scope` of stage `parent` (a consumer)")
      .def("compute_inline", &Stage::compute_inline,
           "Substitutes the stage's body into its consumers (no loops of its own)")
      .def("compute_root", &Stage::compute_root, "Computes the stage at the top level again")
      .def("vectorize", &Stage::vectorize, nb::arg("var"), "Emits the loop as vector code")
      .def("unroll", &Stage::unroll, nb::arg("var"), "Unrolls the loop")
      .def("parallel", &Stage::parallel, nb::arg("var"), "Runs the loop's iterations on threads")
      .def(
          "pragma",
          [](Stage& s, const IterVar& var, const std::string& key, const PrimExpr& value) {
            s.pragma(var, key, value);
          },
          nb::arg("var"), nb::arg("pragma_type"), nb::arg("pragma_value") = PrimExpr(1),
          nb::sig("def pragma(self, var: loom._loom.tir.IterVar, pragma_type: str, pragma_value: "
                  "loom._loom.tir.PrimExpr | int = 1) -> None"),
          "Annotates the loop with pragma `pragma_type` (= pragma_value)")
      .def("bind", &Stage::bind, nb::arg("ivar"), nb::arg("thread_ivar"),
           "Maps the loop onto a thread axis (te.thread_axis)")
      .def("set_scope", &Stage::set_scope, nb::arg("scope"),
           "Allocates the stage's buffer in storage scope `scope` (\"global\", \"shared\", "
           "\"local\", ...)")
      .def("storage_align", &Stage::storage_align, nb::arg("axis"), nb::arg("factor"),
           nb::arg("offset"),
           "Pads the stride of axis's dimension to the next value equal to offset modulo factor")
      .def("double_buffer", &Stage::double_buffer,
           "Allocates the buffer twice so the enclosing loop fills one copy while reading the "
           "other")
      .def(
          "tensorize",
          [](Stage& s, const IterVar& var, const TensorIntrinRef& intrin) {
            s.tensorize(var, intrin.intrin);
          },
          nb::arg("var"), nb::arg("tensor_intrin"),
          "Replaces loop `var` and the loops inside it by the intrinsic's statements")
      .def("__eq__",
           [](const Stage& a, nb::handle b) {
             return nb::isinstance<Stage>(b) && nb::cast<const Stage&>(b).same_as(a);
           })
      .def("__hash__", [](const Stage& s) { return std::hash<const void*>()(&*s); })
      .def("__repr__", [](const Stage& s) {
        std::string text = "Stage(" + s->name() + ", loops=[";
        for (size_t i = 0; i < s->leaf_iter_vars.size(); ++i) {
          text += (i ? ", " : "") + s->leaf_iter_vars[i]->var.name();
        }
        text += std::string("], ") + AttachTypeName(s->attach_type);
        if (s->attach_type == te::AttachType::kScope) {
          text += " at " + s->attach_stage->name() + "." + s->attach_ivar->var.name();
        }
        return text + ")";
      });

  nb::class_<Schedule>(te, "Schedule",
                       "How a set of output operations is computed: one Stage per operation")
      .def(
          "__getitem__",
          [](const Schedule& s, nb::handle key) { return s[ToOperation(key, "schedule[...]")]; },
          nb::arg("key"), nb::sig("def __getitem__(self, key: Tensor | Operation) -> Stage"),
          "The stage of a tensor's (or an operation's) operation")
      .def_prop_ro("stages", &Schedule::stages, "Producers before consumers")
      .def_prop_ro("outputs",
                   [](const Schedule& s) {
                     std::vector<OperationRef> ops;
                     for (const te::Operation& op : s.outputs()) ops.push_back({op});
                     return ops;
                   })
      .def(
          "cache_read",
          [](Schedule& s, const te::Tensor& tensor, const std::string& scope, nb::handle readers) {
            return s.cache_read(tensor, scope, ToOperations(readers, "cache_read: readers"));
          },
          nb::arg("tensor"), nb::arg("scope"), nb::arg("readers"),
          nb::sig("def cache_read(self, tensor: Tensor, scope: str, readers: Tensor | Operation "
                  "| collections.abc.Sequence[Tensor | Operation]) -> Tensor"),
          "A stage copying `tensor` into scope `scope`, read by `readers` instead")
      .def("cache_write", &Schedule::cache_write, nb::arg("tensor"), nb::arg("scope"),
           "A stage computing `tensor` into scope `scope`; the tensor's stage becomes a copy")
      .def("rfactor", &Schedule::rfactor, nb::arg("tensor"), nb::arg("axis"),
           nb::arg("factor_axis") = 0,
           "Factors the reduction over `axis` out into a tensor of partial results")
      .def("__repr__", [](const Schedule& s) {
        std::string text = "Schedule(stages=[";
        for (size_t i = 0; i < s.stages().size(); ++i) {
          text += (i ? ", " : "") + s.stages()[i]->name();
        }
        return text + "])";
      });

  te.def(
      "create_schedule",
      [](nb::handle ops) { return te::create_schedule(ToOperations(ops, "create_schedule")); },
      nb::arg("ops"),
      nb::sig("def create_schedule(ops: Operation | Tensor | collections.abc.Sequence[Operation "
              "| Tensor]) -> Schedule"),
      "A schedule computing the outputs `ops` (operations or tensors), one stage per "
      "operation they need");
}

}  // namespace loom::python
