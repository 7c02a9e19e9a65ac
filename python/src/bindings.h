// The nanobind extension loom._loom (python/loom/ wraps it): one Bind* per file, each adding
// its submodule or classes. Conversions every part shares are declared here.
#pragma once

#include <nanobind/nanobind.h>

#include "loom/runtime/ndarray.h"

namespace loom::python {

namespace nb = nanobind;

void BindErrors(nb::module_& m);    // errors.cc: LoomError, InternalError
void BindNd(nb::module_& m);        // nd.cc: _loom.nd, NDArray with DLPack both ways
void BindModel(nb::module_& m);     // model.cc: _loom.runtime, compiled and loaded models
void BindIr(nb::module_& m);        // ir.cc: _loom.tir, expressions and their operators
void BindArith(nb::module_& m);     // arith.cc: _loom.arith, the Analyzer
void BindTe(nb::module_& m);        // te.cc: _loom.te, tensors, compute, schedules
void BindSchedule(nb::module_& m);  // schedule.cc: _loom.te's Stage, Schedule, tensorize
void BindBuild(nb::module_& m);     // build.cc: lower and build, built modules' functions

// `value` as an NDArray sharing its memory: a loom.nd.NDArray, any object with __dlpack__
// (NumPy, PyTorch, ...) or a DLPack capsule. Anything else is a loom::Error naming `what`
// (the argument) and its Python type. Needs the GIL.
runtime::NDArray ToNDArray(nb::handle value, const std::string& what);

}  // namespace loom::python
