// A file's text compiled into a library (cmake/embed_files.cmake writes the function that
// returns a layer's embedded files).
#pragma once

#include <string>

namespace loom {

struct EmbeddedFile {
  std::string name;  // the file's name, without its folder
  std::string text;
};

}  // namespace loom
