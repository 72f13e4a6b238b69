#include "jit/compile/nvrtc_diagnostics.h"

#include <algorithm>
#include <cstddef>
#include <string_view>

#include "dsl/diagnostics.h"
#include "dsl/source.h"

namespace luda::jit {
namespace {

// One diagnostic line of the log: NVRTC's `<file>(<line>): <severity>: <message>`, or a
// host compiler's (below).
struct Diagnostic {
  std::string file;
  int line = 0;
  int column = 0;  // 0 when not given
  std::string severity;
  std::string message;
};

bool all_digits(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

// The host C++ compilers' form (GCC, Clang): `<file>:<line>:<col>: <severity>: <message>`
// (the column may be missing). The file name may itself hold ':'; the first place where
// the rest parses wins.
bool parse_gcc_diagnostic(std::string_view text, Diagnostic* d) {
  for (std::size_t colon = text.find(':'); colon != std::string_view::npos; colon = text.find(':', colon + 1)) {
    std::string_view rest = text.substr(colon + 1);
    std::size_t end = rest.find(':');
    if (end == std::string_view::npos) return false;
    std::string_view line = rest.substr(0, end);
    if (!all_digits(line)) continue;
    rest.remove_prefix(end + 1);
    std::size_t col_end = rest.find(':');
    int column = 0;
    if (col_end != std::string_view::npos && all_digits(rest.substr(0, col_end))) {
      column = std::stoi(std::string(rest.substr(0, col_end)));
      rest.remove_prefix(col_end + 1);
    }
    if (rest.empty() || rest[0] != ' ') continue;
    rest.remove_prefix(1);
    std::size_t sev_end = rest.find(": ");
    if (sev_end == std::string_view::npos) continue;
    std::string_view severity = rest.substr(0, sev_end);
    if (severity != "error" && severity != "fatal error" && severity != "warning" && severity != "note") continue;
    d->file = std::string(text.substr(0, colon));
    d->line = std::stoi(std::string(line));
    d->column = column;
    d->severity = std::string(severity);
    d->message = std::string(rest.substr(sev_end + 2));
    return true;
  }
  return false;
}

bool parse_diagnostic(std::string_view text, Diagnostic* d) {
  if (parse_gcc_diagnostic(text, d)) return true;
  std::size_t open = text.find('(');
  while (open != std::string_view::npos) {
    std::size_t close = text.find("): ", open);
    if (close == std::string_view::npos) return false;
    std::string_view digits = text.substr(open + 1, close - open - 1);
    if (all_digits(digits)) {
      std::string_view rest = text.substr(close + 3);
      std::size_t colon = rest.find(": ");
      if (colon == std::string_view::npos) return false;
      d->file = std::string(text.substr(0, open));
      d->line = std::stoi(std::string(digits));
      d->severity = std::string(rest.substr(0, colon));
      d->message = std::string(rest.substr(colon + 2));
      return true;
    }
    open = text.find('(', open + 1);  // a '(' inside the file name
  }
  return false;
}

}  // namespace

CompileError at_lua_line(const CompileError& e, const dsl::Chunk& chunk, bool compiler_columns) {
  std::string_view log = e.log();
  std::string pending;  // an error reported inside a macro's definition elsewhere
  for (std::size_t start = 0; start < log.size();) {
    std::size_t end = log.find('\n', start);
    if (end == std::string_view::npos) end = log.size();
    Diagnostic d;
    if (parse_diagnostic(log.substr(start, end - start), &d)) {
      bool error = d.severity.find("error") != std::string::npos;
      if (d.file != chunk.name) {
        pending = error ? d.message : pending;
      } else if (error || (!pending.empty() && d.message.starts_with("in expansion of macro"))) {
        // GCC reports an error in a macro's body at the macro, then "note: in expansion
        // of macro" at the use: the use is where the chunk's author looks.
        dsl::Source source(chunk.name, chunk.text, chunk.hidden_prefix);
        std::string_view line = source.line_text(d.line);
        int col = static_cast<int>(line.find_first_not_of(" \t")) + 1;
        if (compiler_columns && d.column > 0) col = d.column;
        dsl::SourceError located = dsl::source_error(source, {d.line, std::max(col, 1)}, "compile error",
                                                     error ? d.message : pending);
        return CompileError(std::string(located.what()) + "\n" + e.what(), e.log(), e.options(), e.source());
      }
    }
    start = end + 1;
  }
  return e;
}

}  // namespace luda::jit
