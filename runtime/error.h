// Errors. Every mistake a user can make reaches them as a luda::Error whose message
// says what and where and how to fix it; the Lua bindings turn it into a Lua error.
// luda's own bugs are InternalError, so a user never sees "internal error" for theirs.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace luda {

// A user-facing error: bad input, no device, compile failure. The message is shown as is.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A broken invariant inside luda.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

template <class... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

#define LUDA_INTERNAL_CHECK(cond)                                                     \
  do {                                                                                 \
    if (!(cond))                                                                       \
      throw ::luda::InternalError(::fmt::format("internal error: {}:{}: check failed: {}", \
                                                __FILE__, __LINE__, #cond));           \
  } while (0)

}  // namespace luda
