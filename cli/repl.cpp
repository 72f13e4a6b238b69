#include "cli/repl.h"

// readline's headers use FILE without including stdio.h.
#include <cstdio>

#include <readline/history.h>
#include <readline/readline.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>

namespace luda::cli {
namespace {

constexpr const char* kFirstPrompt = "> ";
constexpr const char* kMorePrompt = ">> ";

// ---- Ctrl-C at the prompt ------------------------------------------------------------
// readline catches SIGINT, restores the terminal, passes the signal on to our handler
// (which only notes it), and then calls rl_signal_event_hook, where it is safe to use
// readline: the line is cleared, a fresh first prompt shown, and the read goes on.

volatile std::sig_atomic_t g_prompt_interrupted = 0;
bool g_line_dropped = false;

// ---- Tab completion --------------------------------------------------------------------
// readline asks for the word before the cursor, its word breaks leaving `.` and `:` inside
// it (`luda.vec`, `x:su`); the completer gives whole names, whose part before readline's
// word is kept.

Completer g_completer;
std::vector<std::string> g_matches;

char* next_match(const char*, int state) {
  static std::size_t next = 0;
  if (state == 0) next = 0;
  if (next >= g_matches.size()) return nullptr;
  return strdup(g_matches[next++].c_str());
}

char** attempt_completion(const char* text, int start, int end) {
  rl_attempted_completion_over = 1;  // no file names
  g_matches.clear();
  std::string_view before(rl_line_buffer, static_cast<std::size_t>(end));
  if (before.find_first_not_of(" \t") == std::string_view::npos) {  // indent
    rl_insert_text("  ");
    return nullptr;
  }
  if (!g_completer) return nullptr;
  std::size_t from = 0;
  std::vector<std::string> names = g_completer(before, &from);
  const auto word = static_cast<std::size_t>(start);
  if (from > word) return nullptr;
  for (std::string& name : names) {
    if (word - from > name.size()) continue;
    g_matches.push_back(name.substr(word - from));  // from readline's word on
  }
  rl_completion_append_character = '\0';
  return rl_completion_matches(text, next_match);
}

void on_prompt_interrupt(int) { g_prompt_interrupted = 1; }

int on_signal_event() {
  if (!g_prompt_interrupted) return 0;
  g_prompt_interrupted = 0;
  g_line_dropped = true;
  rl_replace_line("", 0);
  rl_crlf();
  rl_set_prompt(kFirstPrompt);  // a chunk being continued is dropped as well
  rl_on_new_line();
  rl_redisplay();
  return 0;
}

class TerminalReader final : public LineReader {
 public:
  explicit TerminalReader(std::string history_path) : path_(std::move(history_path)) {
    rl_readline_name = "luda";
    rl_signal_event_hook = on_signal_event;
    rl_attempted_completion_function = attempt_completion;
    rl_completer_word_break_characters = const_cast<char*>(" \t\n\"'`<>=;+-*/%^#~|&{}()[],");
    using_history();
    history_write_timestamps = 1;  // so that a multi-line entry reads back as one
    history_multiline_entries = 1;
    stifle_history(kHistoryLines);
    if (path_.empty()) return;
    if (read_history(path_.c_str()) == 0) {
      history_truncate_file(path_.c_str(), kHistoryLines);
    } else if (write_history(path_.c_str()) != 0) {  // absent: create it for append_history
      std::fprintf(stderr, "luda: history is not saved: cannot write %s\n", path_.c_str());
      path_.clear();
    }
  }

  ~TerminalReader() override {
    rl_signal_event_hook = nullptr;
    rl_attempted_completion_function = nullptr;
    g_completer = nullptr;
    if (!path_.empty()) history_truncate_file(path_.c_str(), kHistoryLines);
  }

  std::optional<InputLine> read(const char* prompt) override {
    g_prompt_interrupted = 0;
    g_line_dropped = false;
    struct sigaction action {};
    struct sigaction previous {};
    action.sa_handler = on_prompt_interrupt;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &previous);
    char* raw = readline(prompt);
    sigaction(SIGINT, &previous, nullptr);
    if (raw == nullptr) return std::nullopt;  // Ctrl-D on an empty line
    InputLine line{raw, g_line_dropped};
    std::free(raw);
    return line;
  }

  void set_completer(Completer completer) override { g_completer = std::move(completer); }

  void remember(const std::string& text) override {
    if (text.empty()) return;
    HIST_ENTRY* last = history_length > 0 ? history_get(history_base + history_length - 1) : nullptr;
    if (last != nullptr && text == last->line) return;
    add_history(text.c_str());
    if (!path_.empty()) append_history(1, path_.c_str());
  }

 private:
  std::string path_;
};

class StreamReader final : public LineReader {
 public:
  std::optional<InputLine> read(const char* prompt) override {
    std::fputs(prompt, stdout);
    std::fflush(stdout);
    std::string text;
    if (!std::getline(std::cin, text)) {
      std::fputc('\n', stdout);  // end the prompt's line, as a terminal's Ctrl-D does
      return std::nullopt;
    }
    if (!text.empty() && text.back() == '\r') text.pop_back();
    return InputLine{std::move(text), false};
  }
};

}  // namespace

std::unique_ptr<LineReader> terminal_reader(std::string history_path) {
  return std::make_unique<TerminalReader>(std::move(history_path));
}

std::unique_ptr<LineReader> stream_reader() { return std::make_unique<StreamReader>(); }

std::string default_history_path() {
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') return {};
  return std::string(home) + "/.luda_history";
}

void run_repl(Session& session, LineReader& reader) {
  using Load = Session::Load;
  std::optional<std::string> carried;  // typed after a Ctrl-C that dropped a chunk
  session.prepare_repl();
  reader.set_completer([&session](std::string_view line, std::size_t* start) { return session.complete(line, start); });
  for (;;) {
    std::string line;
    if (carried) {
      line = std::move(*carried);
      carried.reset();
    } else {
      std::optional<InputLine> in = reader.read(kFirstPrompt);
      if (!in) break;
      line = std::move(in->text);
    }
    if (!line.empty() && line[0] == ':') {  // a command: no Lua statement starts so
      reader.remember(line);
      session.run_command(line);
      continue;
    }
    // ?name and name? (IPython's): help for a name (no Lua input starts or ends so).
    if (line.size() > 1 && (line[0] == '?' || line.back() == '?')) {
      reader.remember(line);
      session.run_command(":help " + (line[0] == '?' ? line.substr(1) : line.substr(0, line.size() - 1)));
      continue;
    }
    std::string entry = line;  // the input as typed, all its lines: one history entry
    if (!line.empty() && line[0] == '=') line = "return " + line.substr(1);  // Lua 5.1's "=expr"
    session.begin_input();

    // An expression first, so that "x" and "f(1), 2" print their values.
    if (session.load("return " + line + ";") == Load::Ok) {
      reader.remember(entry);
      session.call_and_print();
      continue;
    }
    session.discard_message();

    std::string chunk = std::move(line);
    for (;;) {
      Load status = session.load(chunk);
      if (status == Load::Ok) {
        reader.remember(entry);
        session.call_and_print();
        break;
      }
      if (status == Load::Failed) {
        reader.remember(entry);
        session.report_message();
        break;
      }
      std::optional<InputLine> more = reader.read(kMorePrompt);
      if (!more) {  // end of input inside a statement: say so, then stop
        reader.remember(entry);
        session.report_message();
        return;
      }
      session.discard_message();
      if (more->interrupted) {  // the chunk is dropped, and not remembered
        carried = std::move(more->text);
        break;
      }
      chunk += '\n';
      chunk += more->text;
      entry += '\n';
      entry += more->text;
    }
  }
}

}  // namespace luda::cli
