// The command line of `luda`, read the way lua.c reads its own: options first, then a
// script and the script's arguments.
//   luda [options] [script [args]]
#pragma once

#include <string>
#include <vector>

namespace luda::cli {

// -e and -l run in the order given on the command line, before the script.
struct Action {
  enum class Kind { Execute, Require };
  Kind kind = Kind::Execute;
  std::string text;  // the code of -e; "mod" or "name=mod" for -l
};

struct Options {
  std::vector<Action> actions;
  bool interactive = false;  // -i: a REPL after the script
  bool version = false;      // -v (also implied by -i)
  bool ignore_env = false;   // -E: LUA_PATH and LUA_CPATH are ignored
  bool warnings = false;     // -W: Lua warnings on
  bool help = false;         // -h, --help
  // argv index of the script (argv[script] may be "-", stdin); 0 when there is none.
  int script = 0;
  bool script_from_stdin = false;  // the script is "-" (and not after "--")
  // Non-empty when the command line is wrong: "unrecognized option '-x'",
  // "'-e' needs argument". The caller prints it with usage_text() and fails.
  std::string error;
};

Options parse_options(int argc, char** argv);

// The usage lines, ending in a newline.
std::string usage_text();

}  // namespace luda::cli
