// One Lua state with `luda` loaded, and the ways the `luda` command runs code in it: -e
// strings, -l libraries, a script with its arguments, and the REPL's load/call/print.
//
// Lua is C here: a Lua error longjmps. So every Lua call that can raise runs under
// lua_pcall in a C function that holds no C++ object (it reads plain structs that the
// C++ caller owns, outside the protected call); the C++ side only sees status codes and
// copies of messages. Errors are written to stderr as lua.c writes them: "luda: msg" for
// the command line and the script, the bare message (with its traceback) in the REPL.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/options.h"

struct lua_State;

namespace luda::cli {

class Session {
 public:
  Session();  // a fresh state; ok() is false when Lua could not allocate it
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  bool ok() const { return L_ != nullptr; }

  // While code runs, Ctrl-C (SIGINT) stops it with "interrupted!", and a second one kills
  // the process; after this call (a kernel's), every one only stops the code.
  static void keep_running_on_interrupts();

  // Opens Lua's standard libraries and `luda` (package.loaded.luda and the global
  // `luda`) and builds the global `arg` as lua.c does. False after reporting a failure.
  bool open(const Options& options, int argc, char** argv);

  // -e: runs `code` as the chunk "(command line N)" for the Nth -e. False after reporting
  // an error. Every chunk a session loads keeps its text, for kernels defined in it
  // (stdlib/chunk_texts.h), under a name of its own.
  bool execute(const std::string& code);
  // -l: "mod" requires mod into the global mod; "name=mod" into the global name.
  bool require_library(const std::string& spec);
  // Runs argv[options.script] (stdin when script_from_stdin) with the arguments after it
  // as `...`. False after reporting an error.
  bool run_script(const Options& options, char** argv);
  // Runs stdin as a script with no arguments (`luda < file`).
  bool run_stdin();

  // ---- REPL steps --------------------------------------------------------------------
  enum class Load { Ok, Incomplete, Failed };
  // A new input: the chunks loaded until the next one are named "stdin[N]" for the Nth.
  void begin_input();
  // Compiles `code` as the current input's chunk. Ok leaves the chunk for call_and_print; Incomplete
  // (the source ends inside a statement) and Failed leave the message, which
  // discard_message or report_message then removes.
  Load load(std::string_view code);
  void discard_message();
  void report_message();
  // Calls the loaded chunk and prints its results tab-separated with tostring (arrays
  // print NumPy-style through their __tostring); an error is reported with its traceback.
  // The state is ready for the next line either way.
  void call_and_print();
  // Runs a REPL command line (":time expr", cli/commands.h); an error is reported and the
  // state is ready for the next line.
  void run_command(std::string_view line);
  // Before the first input: the global `help` (cli/commands.h), unless one is defined.
  void prepare_repl();
  // ---- a notebook's cells (jupyter/: the Jupyter kernel's interpreter) --------------------
  struct Shown {
    std::string text;  // as the REPL prints it
    std::string html;  // an array's HTML table; empty for other values
  };
  struct CellResult {
    bool ok = true;
    std::string error;          // the message, at its place ("cell[3]:2: boom")
    std::string traceback;      // Lua's "stack traceback:" lines
    std::vector<Shown> values;  // what the cell's expression gave
  };
  // Runs a cell as the chunk "cell[N]" (the Nth): an expression gives its values; else
  // statements, whose last line, where it is an expression alone, gives its values after
  // the lines before it ran. Top-level locals outlive the cell, as in the REPL. Output goes
  // to the process's stdout and stderr. A cell that starts with ':' or '?' holds REPL
  // commands, one a line (":time expr", "?name"), as IPython's magics.
  CellResult run_cell(std::string_view code);
  // Where luda.display's pictures go (a notebook's cell output) from now on: `sink`
  // receives each as its MIME types' bytes ("image/png", "text/plain"); none: to files.
  using DisplaySink = std::function<void(const std::vector<std::pair<std::string, std::string>>& bundle)>;
  void set_display_sink(DisplaySink sink);
  // Called about every `period` while a cell's Lua code runs (from a count hook, so not
  // inside a long kernel launch): a notebook publishes what the cell printed so far.
  void set_output_flush(std::function<void()> flush, std::chrono::milliseconds period);
  // Whether `code` is a whole input (Ok), one that goes on (Incomplete) or a syntax error.
  Load check(std::string_view code);
  // The API reference's entry for the name around `cursor` in `code`; empty when none.
  std::string help_at(std::string_view code, std::size_t cursor);

  // Tab completion of the name that ends `line` (the text before the cursor): the
  // candidates, each the whole name (`luda.vectorize`), and in *start the offset in `line`
  // where that name begins. None where the name's base is unknown.
  std::vector<std::string> complete(std::string_view line, std::size_t* start);

 private:
  // Calls the function below `nargs` arguments on the stack with the traceback handler;
  // SIGINT meanwhile stops the Lua code with "interrupted!" instead of the process.
  int call(int nargs, int nresults);
  // Writes the message on top (if status is an error) with `prefix`, and pops it.
  bool report(int status, const char* prefix);
  bool push_commands_table();
  // Runs a command line (cli/commands.h's run): LUA_OK, an error status with the message
  // on top, or -1 where the commands could not be loaded (reported). `raises`: the
  // command's own failures are errors, else messages on stderr.
  int call_command(std::string_view line, bool raises);
  // A cell of commands (run_cell): each line's command in turn; the first error ends it.
  void run_command_cell(std::string_view code, CellResult* r);
  // Calls the chunk on top (no arguments, every result kept) as a REPL input or a cell:
  // its top-level locals become globals when it returns or raises.
  int call_keeping_locals();

  DisplaySink display_sink_;
  std::function<void()> output_flush_;
  std::chrono::milliseconds flush_period_{0};
  lua_State* L_ = nullptr;
  int executed_ = 0;  // -e chunks run
  int inputs_ = 0;    // REPL inputs begun
  std::string input_name_;
};

}  // namespace luda::cli
