// `luda`: runs Lua scripts with the `luda` module loaded, and a REPL.
//   luda script.lua [args]     luda -e 'code'     luda -i     luda     luda -
// The order of work is lua.c's: -v banner, -e/-l in order, the script, then the REPL
// (with -i, or with no script and stdin a terminal); else stdin runs as a script. The
// exit status is 1 when any of them fails.
#include <unistd.h>

#include <cstdio>
#include <exception>

#include "cli/banner.h"
#include "cli/options.h"
#include "cli/repl.h"
#include "cli/session.h"
#include "runtime/dist/dist.h"

namespace luda::cli {
namespace {

int run(int argc, char** argv) {
  Options options = parse_options(argc, argv);
  if (!options.error.empty()) {
    std::fprintf(stderr, "luda: %s\n%s", options.error.c_str(), usage_text().c_str());
    return 1;
  }
  if (options.help) {
    std::fputs(usage_text().c_str(), stdout);
    return 0;
  }
  bool stdin_is_terminal = isatty(STDIN_FILENO) != 0;
  bool repl_by_default = options.script == 0 && options.actions.empty() && !options.version;

  if (options.version || (repl_by_default && stdin_is_terminal)) {
    std::puts(banner().c_str());
    std::fflush(stdout);
  }
  Session session;
  if (!session.ok()) {
    std::fputs("luda: cannot create a Lua state: not enough memory\n", stderr);
    return 1;
  }
  if (!session.open(options, argc, argv)) return 1;
  for (const Action& action : options.actions) {
    bool ok = action.kind == Action::Kind::Execute ? session.execute(action.text)
                                                   : session.require_library(action.text);
    if (!ok) return 1;
  }
  if (options.script > 0 && !session.run_script(options, argv)) return 1;

  if (options.interactive || (repl_by_default && stdin_is_terminal)) {
    auto reader = stdin_is_terminal ? terminal_reader(default_history_path()) : stream_reader();
    run_repl(session, *reader);
  } else if (repl_by_default) {
    if (!session.run_stdin()) return 1;
  }
  return 0;
}

}  // namespace
}  // namespace luda::cli

int main(int argc, char** argv) {
  int status = 1;
  try {
    status = luda::cli::run(argc, argv);
  } catch (const std::exception& e) {  // luda's own bug or memory exhaustion: never abort
    std::fflush(stdout);
    std::fprintf(stderr, "luda: %s\n", e.what());
  }
  // Under mpirun, a rank that fails ends without MPI_Finalize, so that mpirun stops the
  // job at once instead of this rank waiting there for ranks that may wait for it.
  if (status != 0) luda::dist::exiting_with_error();
  return status;
}
