// What the libFuzzer harnesses (model_fuzz.cc, artifact_fuzz.cc) hold every input to: Loom
// either accepts it or refuses it with a loom::Error. Anything else -- an InternalError, another
// exception, a crash, a sanitizer report -- is a finding: the input is saved and the run fails.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <typeinfo>

#include "loom/support/error.h"

namespace loom::fuzz {

template <typename Fn>
void ExpectAcceptedOrRefused(const char* stage, Fn&& fn) {
  try {
    fn();
  } catch (const Error&) {
    // A clear refusal: what every bad input should get.
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s: not a loom::Error but %s: %s\n", stage, typeid(error).name(),
                 error.what());
    std::abort();
  }
}

}  // namespace loom::fuzz
