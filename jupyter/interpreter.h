// luda's Jupyter kernel: xeus's interpreter over the `luda` command's Session (cli/), which
// holds the Lua state and does the work: cells run as REPL inputs do (top-level locals
// outlive them, `_`), completion and help come from the same code as the REPL's Tab and
// help(). This file only translates between Jupyter's messages and Session's calls.
#pragma once

#include <memory>

#include "cli/session.h"
#include "jupyter/capture.h"
#include "xeus/xinterpreter.hpp"

namespace luda::kernel {

class Interpreter final : public xeus::xinterpreter {
 public:
  Interpreter();

 private:
  void configure_impl() override;
  nl::json execute_request_impl(int execution_counter, const std::string& code, bool silent, bool store_history,
                                nl::json user_expressions, bool allow_stdin) override;
  nl::json complete_request_impl(const std::string& code, int cursor_pos) override;
  nl::json inspect_request_impl(const std::string& code, int cursor_pos, int detail_level) override;
  nl::json is_complete_request_impl(const std::string& code) override;
  nl::json kernel_info_request_impl() override;
  void shutdown_request_impl() override;

  // Publishes what the cell wrote to stdout and stderr.
  void publish_output();

  cli::Session session_;
  std::unique_ptr<Capture> out_, err_;
};

}  // namespace luda::kernel
