// The micro runtime's sources (include/loom/crt/loom_crt.h, src/crt/loom_crt.c), embedded at
// build time (cmake/embed_files.cmake) so that the AOT export can write them beside a model.
#pragma once

#include <vector>

#include "loom/support/embedded_file.h"

namespace loom::graph {

const std::vector<EmbeddedFile>& CrtSources();

}  // namespace loom::graph
