// The extension's entry point: every part of the API registered in its submodule.
#include <nanobind/nanobind.h>

#include "bindings.h"
#include "loom/support/version.h"

NB_MODULE(_loom, m) {
  namespace python = loom::python;
  m.doc() = "Loom's C++ API (the loom package wraps it; import loom instead)";
  m.attr("__version__") = loom::kLoomVersion;
  python::BindErrors(m);
  python::BindNd(m);
  python::BindModel(m);
  python::BindIr(m);
  python::BindArith(m);
  python::BindTe(m);
  python::BindSchedule(m);
  python::BindBuild(m);
}
