// SimplifyInference: operators whose training-time behaviour inference does not need become
// plain arithmetic.
//
//   nn.batch_norm(x, gamma, beta, mean, var)  ->  x * scale + shift
//       scale = gamma / sqrt(var + epsilon),  shift = beta - mean * scale
//   nn.dropout(x)                              ->  x
//
// scale and shift are graph calls on batch_norm's parameter inputs, expand_dims'ed to
// broadcast along the channel axis, so FoldConstant makes each one constant when the
// parameters are (the usual case) and FoldScaleAxis can then push the scale into the
// convolution before it. Nothing here depends on the data's shape beyond its rank, so
// symbolic batch dimensions are fine.
#include "graph/transforms/map_functions.h"
#include "loom/graph/functor.h"
#include "loom/graph/transform.h"

namespace loom::graph {
namespace {

class InferenceSimplifier : public ExprMutator {
 public:
  Expr VisitExpr_(const CallNode* op) override {
    Expr rebuilt = ExprMutator::VisitExpr_(op);
    const auto* call = rebuilt.as<CallNode>();
    if (call == nullptr || call->op == nullptr) return rebuilt;
    if (call->op->name == "nn.dropout") return call->args[0];
    if (call->op->name == "nn.batch_norm") return ScaleAndShift(*call);
    return rebuilt;
  }

 private:
  static Expr ScaleAndShift(const CallNode& bn) {
    const Expr& data = bn.args[0];
    const Expr& gamma = bn.args[1];
    const Expr& beta = bn.args[2];
    const Expr& mean = bn.args[3];
    const Expr& var = bn.args[4];
    const std::string& name = bn.name_hint;
    auto part = [&](const std::string& suffix) { return name.empty() ? "" : name + "." + suffix; };

    int ndim = data.type().ndim();
    int64_t axis = bn.attrs.GetInt("axis");
    LOOM_ICHECK(axis >= -ndim && axis < ndim) << bn.Where() << ": axis " << axis << " of data "
                                              << data.type().str() << " passed the type relation";
    if (axis < 0) axis += ndim;

    Expr epsilon =
        MakeScalarConstant(bn.attrs.GetFloat("epsilon"), var.type().dtype(), part("epsilon"));
    Expr std_dev = MakeCall("sqrt", {MakeCall("add", {var, epsilon})});
    Expr scale = MakeCall("divide", {gamma, std_dev}, {}, part("scale"));
    Expr shift =
        MakeCall("subtract", {beta, MakeCall("multiply", {mean, scale})}, {}, part("shift"));
    // [C] -> [C, 1, ..., 1]: one trailing 1 per data dimension after the channel axis.
    int64_t trailing = ndim - 1 - axis;
    if (trailing > 0) {
      Attrs expand = {{"axis", int64_t{1}}, {"num_newaxis", trailing}};
      scale = MakeCall("expand_dims", {scale}, expand, part("scale"));
      shift = MakeCall("expand_dims", {shift}, expand, part("shift"));
    }
    return MakeCall("add", {MakeCall("multiply", {data, scale}, {}, name), shift}, {}, name);
  }
};

}  // namespace

Pass SimplifyInference() { return MutatorPass<InferenceSimplifier>("SimplifyInference"); }

}  // namespace loom::graph
