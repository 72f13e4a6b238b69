// The one diagnostics reporter of dsl/. Every user mistake found in a chunk (syntax, type,
// unsupported construct, unknown name, ...) becomes a SourceError whose what() reads
//
//   gauss.lua:12:18: type error: cannot apply '+' to bool and float32
//       return (x > 0) + y
//              ~~~~~~~~^~~
//
// i.e. `chunk:line:col: kind: message`, then the source line (leading blanks removed,
// tabs shown as one space, indented 4 spaces), then a caret under the column with an
// optional `~` underline over a range. An error without a known location (line 0) is the
// first line alone: `chunk: kind: message`.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "dsl/source.h"
#include "luda/core.h"

namespace luda::dsl {

// An inclusive range of characters: `end` is the last character underlined. A range that
// leaves the caret's line is cut at that line's ends.
struct Span {
  Location begin;
  Location end;
};

// What each kind is called in messages (free text is allowed; these are the usual ones).
namespace error_kind {
inline constexpr std::string_view syntax = "syntax error";
inline constexpr std::string_view type = "type error";
inline constexpr std::string_view unsupported = "unsupported";
inline constexpr std::string_view name = "name error";
inline constexpr std::string_view signature = "signature error";
inline constexpr std::string_view source = "source error";  // a function not found in its chunk
}  // namespace error_kind

// A user error located in a chunk: the public luda::SourceError (luda/core.h), whose
// file() is the chunk's name as messages show it. jit/ and stdlib/ show what() unchanged.
using SourceError = luda::SourceError;

// THE reporter: builds the error for `message` at `at` in `source`, with the source line,
// a caret under `at.col` and, when given, `~` under `range`. Throw what it returns.
SourceError source_error(const Source& source, Location at, std::string_view kind, std::string_view message,
                         std::optional<Span> range = std::nullopt);

// The same when there is no Source to show (a chunk name only, e.g. a failed lookup).
SourceError source_error(std::string_view chunk, Location at, std::string_view kind, std::string_view message);

// Formats the two extra lines (source line and caret line, each ending in '\n' except the
// last) for `at`; "" when the line is blank or out of range. Exposed for jit/, which
// points NVRTC diagnostics (mapped through #line) back at the Lua source the same way.
std::string caret_lines(const Source& source, Location at, std::optional<Span> range = std::nullopt);

// A broken invariant inside dsl/ (never a user's mistake): std::logic_error, text starting
// "internal error:".
[[noreturn]] void internal_error(std::string_view what, const char* file, int line);
#define LUDA_DSL_CHECK(cond)                                             \
  do {                                                                   \
    if (!(cond)) ::luda::dsl::internal_error(#cond, __FILE__, __LINE__); \
  } while (0)

}  // namespace luda::dsl
