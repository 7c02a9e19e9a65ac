// Two kinds of failure, kept apart on purpose:
//  * loom::Error          - the user did something wrong (bad model, invalid schedule, ...).
//                           The message names the offending node or call, says what was
//                           expected and what to do.
//  * loom::InternalError  - an invariant of Loom itself broke (LOOM_ICHECK). The message
//                           says it is a bug, with file and line.
// Library code never aborts; both are exceptions the caller (or the CLI) can catch.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace loom {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

class InternalError : public std::logic_error {
 public:
  InternalError(const char* file, int line, const std::string& condition,
                const std::string& detail);
};

namespace detail {

// Accumulates a message with operator<< and throws when the full expression ends. Throwing
// from a destructor is what lets `LOOM_ICHECK(c) << "why"` read naturally; the destructor
// is noexcept(false) and only ever runs at the end of that one statement.
template <typename ErrorT>
class ErrorThrower {
 public:
  ErrorThrower(const char* file, int line, const char* condition)
      : file_(file), line_(line), condition_(condition) {}
  ErrorThrower(const ErrorThrower&) = delete;
  ErrorThrower& operator=(const ErrorThrower&) = delete;
  template <typename T>
  ErrorThrower& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }
  [[noreturn]] ~ErrorThrower() noexcept(false);

 private:
  const char* file_;
  int line_;
  const char* condition_;
  std::ostringstream stream_;
};

template <>
[[noreturn]] inline ErrorThrower<InternalError>::~ErrorThrower() noexcept(false) {
  throw InternalError(file_, line_, condition_, stream_.str());
}
template <>
[[noreturn]] inline ErrorThrower<Error>::~ErrorThrower() noexcept(false) {
  throw Error(stream_.str());
}

}  // namespace detail
}  // namespace loom

// Internal invariant: failure is a bug in Loom.
#define LOOM_ICHECK(cond) \
  if (cond) {             \
  } else                  \
    ::loom::detail::ErrorThrower<::loom::InternalError>(__FILE__, __LINE__, #cond)

// User error: `LOOM_THROW << "Split of stage 'C': factor must be positive, got " << f;`
#define LOOM_THROW ::loom::detail::ErrorThrower<::loom::Error>(__FILE__, __LINE__, "")

// User-facing precondition: throws loom::Error with the streamed message when cond is false.
#define LOOM_CHECK_USER(cond) \
  if (cond) {                 \
  } else                      \
    LOOM_THROW
