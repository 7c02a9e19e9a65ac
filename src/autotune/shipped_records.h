// The tuning records shipped with Loom (src/autotune/records/*.jsonl), embedded at build time
// (cmake/embed_files.cmake); ShippedRecords() (record.h) parses them.
#pragma once

#include <vector>

#include "loom/support/embedded_file.h"

namespace loom::autotune {

const std::vector<EmbeddedFile>& ShippedRecordFiles();

}  // namespace loom::autotune
