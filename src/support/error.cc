#include "loom/support/error.h"

namespace loom {

namespace {
std::string FormatInternal(const char* file, int line, const std::string& condition,
                           const std::string& detail) {
  std::ostringstream os;
  os << "internal error (this is a bug in Loom, please report it): check `" << condition
     << "` failed at " << file << ":" << line;
  if (!detail.empty()) os << ": " << detail;
  return os.str();
}
}  // namespace

InternalError::InternalError(const char* file, int line, const std::string& condition,
                             const std::string& detail)
    : std::logic_error(FormatInternal(file, line, condition, detail)) {}

}  // namespace loom
