// Counting a text's occurrences in generated code or printed IR, for the tests that check
// how many of something a pass or code generator made.
#pragma once

#include <string>

namespace loom::testing {

// How many times `what` occurs in `text` (overlapping occurrences each count).
inline int Occurrences(const std::string& text, const std::string& what) {
  int count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

}  // namespace loom::testing
