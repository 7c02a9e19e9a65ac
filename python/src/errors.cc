// Loom's two kinds of failure as Python exceptions: loom::Error (the user's: a bad model, an
// invalid schedule) becomes loom.LoomError, a ValueError; loom::InternalError (a bug in
// Loom) becomes loom.InternalError, a RuntimeError. The message is Loom's, unchanged.
#include "bindings.h"
#include "loom/support/error.h"

namespace loom::python {

void BindErrors(nb::module_& m) {
  nb::exception<loom::Error>(m, "LoomError", PyExc_ValueError);
  nb::exception<loom::InternalError>(m, "InternalError", PyExc_RuntimeError);
}

}  // namespace loom::python
