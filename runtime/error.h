// Errors: the hierarchy is the public one (luda/core.h: luda::Error and its kinds, and
// InternalError apart); here, how the library raises them. The Lua bindings turn an Error
// into a Lua error with its message.
#pragma once

#include <fmt/format.h>

#include <string>
#include <utility>

#include "luda/core.h"

namespace luda {

template <class... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

#define LUDA_INTERNAL_CHECK(cond)                                                               \
  do {                                                                                          \
    if (!(cond))                                                                                \
      throw ::luda::InternalError(                                                              \
          ::fmt::format("internal error: {}:{}: check failed: {}", __FILE__, __LINE__, #cond)); \
  } while (0)

}  // namespace luda
