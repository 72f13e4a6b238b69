// The read-eval-print loop of `luda`. Each line is tried first as an expression
// ("return <line>;", as Lua 5.4's own REPL does; "=expr" too), else as statements,
// continued with more lines (prompt ">>") while the chunk is incomplete. Results print
// tab-separated through tostring; errors print with their traceback and the loop goes on.
// A line that starts with ':' is a command (cli/commands.h).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/session.h"

namespace luda::cli {

struct InputLine {
  std::string text;
  // Ctrl-C was pressed while this line was read: what was typed before it (and any
  // chunk being continued) is dropped, and `text` starts a new chunk.
  bool interrupted = false;
};

// Tab completion: the candidates for the name that ends `line` (the text before the
// cursor), each the whole name, and in *start where that name begins in `line`.
using Completer = std::function<std::vector<std::string>(std::string_view line, std::size_t* start)>;

class LineReader {
 public:
  virtual ~LineReader() = default;
  // Shows `prompt` and reads one line; nullopt at end of input (Ctrl-D).
  virtual std::optional<InputLine> read(const char* prompt) = 0;
  // One whole input, all its lines, as one history entry (a terminal keeps them).
  virtual void remember(const std::string&) {}
  virtual void set_completer(Completer) {}
};

// A terminal: readline editing, history in `history_path` (read at start, appended per
// input, a multi-line input one entry; capped at kHistoryLines; empty path: no history
// file), Ctrl-C clears the line, Tab completes a name (indents at the start of a line).
std::unique_ptr<LineReader> terminal_reader(std::string history_path);
// Anything else (a pipe, a file): plain lines from stdin, prompts still written to stdout.
std::unique_ptr<LineReader> stream_reader();

inline constexpr int kHistoryLines = 1000;
// ~/.luda_history, or empty when HOME is unset.
std::string default_history_path();

// Runs until the reader reports end of input.
void run_repl(Session& session, LineReader& reader);

}  // namespace luda::cli
