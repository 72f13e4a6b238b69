#include "cli/options.h"

#include <string_view>

namespace luda::cli {

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a.empty() || a[0] != '-') {  // the script: everything after it is its arguments
      o.script = i;
      return o;
    }
    if (a == "-") {  // stdin as the script
      o.script = i;
      o.script_from_stdin = true;
      return o;
    }
    if (a == "--") {  // end of options; the next argument, if any, is the script
      if (i + 1 < argc) o.script = i + 1;
      return o;
    }
    if (a == "-h" || a == "--help") {
      o.help = true;
      continue;
    }
    switch (a[1]) {
      case 'i':
      case 'v':
      case 'E':
      case 'W':
        if (a.size() != 2) break;  // extra characters: unrecognized
        if (a[1] == 'i') o.interactive = o.version = true;
        if (a[1] == 'v') o.version = true;
        if (a[1] == 'E') o.ignore_env = true;
        if (a[1] == 'W') o.warnings = true;
        continue;
      case 'e':
      case 'l': {
        Action act{a[1] == 'e' ? Action::Kind::Execute : Action::Kind::Require, {}};
        if (a.size() > 2) {
          act.text = a.substr(2);  // -e'code' written as one argument
        } else if (i + 1 < argc && argv[i + 1][0] != '-') {
          act.text = argv[++i];
        } else {
          o.error = "'" + std::string(a) + "' needs argument";
          return o;
        }
        o.actions.push_back(std::move(act));
        continue;
      }
      default: break;
    }
    o.error = "unrecognized option '" + std::string(a) + "'";
    return o;
  }
  return o;
}

std::string usage_text() {
  return "usage: luda [options] [script [args]]\n"
         "Available options are:\n"
         "  -e stat   execute string 'stat'\n"
         "  -i        enter interactive mode after executing 'script'\n"
         "  -l mod    require library 'mod' into global 'mod'\n"
         "  -l g=mod  require library 'mod' into global 'g'\n"
         "  -v        show version information\n"
         "  -E        ignore environment variables (LUA_PATH, LUA_CPATH)\n"
         "  -W        turn warnings on\n"
         "  -h        show this help\n"
         "  --        stop handling options\n"
         "  -         stop handling options and execute stdin\n"
         "With no script and no -e, luda starts a REPL when stdin is a terminal and runs\n"
         "stdin as a script otherwise. The module 'luda' is loaded and global.\n";
}

}  // namespace luda::cli
