// Files the tools read and write, the careful way: an output replaces its path through a
// temporary file and a rename (a symbolic link planted at the path is replaced, never
// followed, and no reader sees half a file); an input must be a regular file of a bounded
// size (not a directory, not /dev/zero).
//
//   WriteFileReplacing("out/logits.npy", bytes, "output 'logits'");
//   ReplacingFile library("model.so");  // the linker writes library.temp_path()
//   ...; library.Commit();               // renamed over model.so
//   std::string text = ReadRegularFile(path, 1 << 20, "VTA config");
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace loom {

// A new, empty temporary file beside `path` (same folder, so the rename stays on one file
// system), removed again unless Commit renames it over `path`.
class ReplacingFile {
 public:
  // A loom::Error naming `path` when the folder does not exist or cannot be written.
  explicit ReplacingFile(std::string path);
  ~ReplacingFile();
  ReplacingFile(const ReplacingFile&) = delete;
  ReplacingFile& operator=(const ReplacingFile&) = delete;

  const std::string& temp_path() const { return temp_path_; }
  // Renames the temporary file over `path` (permissions 0644 unless `executable`: 0755).
  void Commit(bool executable = false);

 private:
  std::string path_, temp_path_;
  bool committed_ = false;
};

// Writes `contents` to `path` through a ReplacingFile; errors name `what` and the path.
void WriteFileReplacing(const std::string& path, std::string_view contents,
                        const std::string& what);

// The contents of the regular file at `path` (symbolic links followed), at most `max_bytes`
// long; a missing file, a directory, a device or a longer file is a loom::Error naming `what`.
std::string ReadRegularFile(const std::string& path, size_t max_bytes, const std::string& what);

}  // namespace loom
