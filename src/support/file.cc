// Careful file reading and writing (loom/support/file.h).
#include "loom/support/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "loom/support/error.h"

namespace loom {

ReplacingFile::ReplacingFile(std::string path) : path_(std::move(path)) {
  std::vector<char> pattern(path_.begin(), path_.end());
  const std::string suffix = ".tmp-XXXXXX";
  pattern.insert(pattern.end(), suffix.begin(), suffix.end());
  pattern.push_back('\0');
  const int fd = mkstemp(pattern.data());  // O_CREAT | O_EXCL: never an existing file
  LOOM_CHECK_USER(fd >= 0) << "cannot write '" << path_ << "': " << std::strerror(errno)
                           << " (does its folder exist, and may it be written?)";
  close(fd);
  temp_path_ = pattern.data();
}

ReplacingFile::~ReplacingFile() {
  if (!committed_) unlink(temp_path_.c_str());
}

void ReplacingFile::Commit(bool executable) {
  LOOM_CHECK_USER(chmod(temp_path_.c_str(), executable ? 0755 : 0644) == 0 &&
                  std::rename(temp_path_.c_str(), path_.c_str()) == 0)
      << "cannot write '" << path_ << "': " << std::strerror(errno);
  committed_ = true;
}

void WriteFileReplacing(const std::string& path, std::string_view contents,
                        const std::string& what) {
  ReplacingFile file(path);
  const int fd = open(file.temp_path().c_str(), O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
  LOOM_CHECK_USER(fd >= 0) << what << ": cannot write '" << path << "': " << std::strerror(errno);
  size_t written = 0;
  while (written < contents.size()) {
    const ssize_t n = write(fd, contents.data() + written, contents.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = errno;
      close(fd);
      LOOM_THROW << what << ": writing '" << path << "' failed: " << std::strerror(error);
    }
    written += static_cast<size_t>(n);
  }
  LOOM_CHECK_USER(close(fd) == 0) << what << ": writing '" << path
                                  << "' failed: " << std::strerror(errno);
  file.Commit();
}

std::string ReadRegularFile(const std::string& path, size_t max_bytes, const std::string& what) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  LOOM_CHECK_USER(fd >= 0) << what << " '" << path
                           << "' cannot be opened: " << std::strerror(errno);
  struct stat info {};
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    close(fd);
    LOOM_THROW << what << " '" << path << "' is not a regular file";
  }
  if (static_cast<uintmax_t>(info.st_size) > max_bytes) {
    close(fd);
    LOOM_THROW << what << " '" << path << "' is " << info.st_size << " bytes, more than the "
               << max_bytes << " such a file can be";
  }
  std::string contents(static_cast<size_t>(info.st_size), '\0');
  size_t read_bytes = 0;
  while (read_bytes < contents.size()) {
    const ssize_t n = read(fd, contents.data() + read_bytes, contents.size() - read_bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the file shrank: what is there
    read_bytes += static_cast<size_t>(n);
  }
  close(fd);
  contents.resize(read_bytes);
  return contents;
}

}  // namespace loom
