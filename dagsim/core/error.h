#pragma once
// Two kinds of error (STYLE.md): a user's mistake becomes UserError (one clear line, exit code 2);
// a broken internal invariant is a bug and aborts with file:line.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace dash {

/// A mistake in the user's input: bad sizes, unknown GPU, malformed or deadlocking schedule.
struct UserError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <typename... Args>
[[noreturn]] void user_error(fmt::format_string<Args...> format, Args&&... args) {
  throw UserError(fmt::format(format, std::forward<Args>(args)...));
}

[[noreturn]] inline void internal_error(char const* file, int line, char const* what) {
  std::fprintf(stderr, "dash: internal error at %s:%d: %s\n", file, line, what);
  std::abort();
}

}  // namespace dash

/// Internal invariant: a failure is our bug, never the user's.
#define DASH_ASSERT(cond) \
  ((cond) ? static_cast<void>(0) : ::dash::internal_error(__FILE__, __LINE__, #cond))
