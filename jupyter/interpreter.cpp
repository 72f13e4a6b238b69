#include "jupyter/interpreter.h"

#include <csignal>
#include <string>
#include <vector>

#include "cli/options.h"
#include "xeus/xhelper.hpp"
#include "xtl/xbase64.hpp"

namespace luda::kernel {
namespace {

// Jupyter's cursor positions count Unicode code points; Session's, bytes of UTF-8.
std::size_t byte_offset(const std::string& text, int code_points) {
  std::size_t i = 0;
  for (int n = 0; i < text.size() && n < code_points; ++n) {
    ++i;
    while (i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) ++i;
  }
  return i;
}

int code_points(const std::string& text, std::size_t bytes) {
  int n = 0;
  for (std::size_t i = 0; i < bytes && i < text.size(); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++n;
  return n;
}

// SIGINT unblocked for this thread while the object lives, blocked again after.
struct InterruptibleCell {
  sigset_t interrupt;
  InterruptibleCell() {
    sigemptyset(&interrupt);
    sigaddset(&interrupt, SIGINT);
    pthread_sigmask(SIG_UNBLOCK, &interrupt, nullptr);
  }
  ~InterruptibleCell() { pthread_sigmask(SIG_BLOCK, &interrupt, nullptr); }
  InterruptibleCell(const InterruptibleCell&) = delete;
  InterruptibleCell& operator=(const InterruptibleCell&) = delete;
};

}  // namespace

Interpreter::Interpreter() {
  xeus::register_interpreter(this);
  cli::Session::keep_running_on_interrupts();
}

void Interpreter::configure_impl() {
  static char name[] = "luda-kernel";
  static char* argv[] = {name, nullptr};
  cli::Options options;
  options.script = 1;  // no script: arg[0] is the interpreter
  session_.open(options, 1, argv);
  session_.prepare_repl();
  // luda.display's pictures: the cell's display data (binary types in base64, as Jupyter
  // carries them).
  session_.set_display_sink([this](const std::vector<std::pair<std::string, std::string>>& bundle) {
    publish_output();  // what the cell printed before the picture comes before it
    nl::json data = nl::json::object();
    for (const auto& [mime, bytes] : bundle)
      data[mime] = mime.rfind("text/", 0) == 0 || mime == "image/svg+xml" ? bytes : xtl::base64encode(bytes);
    display_data(std::move(data), nl::json::object(), nl::json::object());
  });
  // What a long cell prints shows while it runs, a tenth of a second late at most (while
  // Lua code runs; a kernel's own output when its launch returns).
  session_.set_output_flush([this] { publish_output(); }, std::chrono::milliseconds(100));
}

void Interpreter::publish_output() {
  if (!out_) {
    // The cells' output, from the first request on (what xeus and luda wrote while the
    // kernel started stays in its log).
    out_ = std::make_unique<Capture>(1);
    err_ = std::make_unique<Capture>(2);
    return;
  }
  std::string out = out_->take(), err = err_->take();
  if (!out.empty()) publish_stream("stdout", out);
  if (!err.empty()) publish_stream("stderr", err);
}

nl::json Interpreter::execute_request_impl(int execution_counter, const std::string& code, bool silent, bool, nl::json,
                                           bool) {
  if (!out_) publish_output();  // starts the capture
  cli::Session::CellResult r;
  {
    InterruptibleCell cell;  // SIGINT reaches this thread while the cell runs (jupyter/main.cpp)
    r = session_.run_cell(code);
  }
  publish_output();
  if (!r.ok) {
    std::vector<std::string> trace{r.error};
    if (!r.traceback.empty()) trace.push_back(r.traceback);
    if (!silent) publish_execution_error("LuaError", r.error, trace);
    nl::json reply;  // written out: xeus 2.4's create_error_reply swaps ename and evalue
    reply["status"] = "error";
    reply["ename"] = "LuaError";
    reply["evalue"] = r.error;
    reply["traceback"] = trace;
    return reply;
  }
  if (!silent && !r.values.empty()) {
    std::string text;
    for (std::size_t i = 0; i < r.values.size(); ++i) text += (i ? "\t" : "") + r.values[i].text;
    nl::json data;
    data["text/plain"] = text;
    if (r.values.size() == 1 && !r.values[0].html.empty()) data["text/html"] = r.values[0].html;
    publish_execution_result(execution_counter, std::move(data), nl::json::object());
  }
  return xeus::create_successful_reply();
}

nl::json Interpreter::complete_request_impl(const std::string& code, int cursor_pos) {
  std::size_t cursor = byte_offset(code, cursor_pos);
  std::size_t start = cursor;
  std::vector<std::string> names = session_.complete(std::string_view(code).substr(0, cursor), &start);
  publish_output();
  return xeus::create_complete_reply(nl::json(names), code_points(code, start), cursor_pos);
}

nl::json Interpreter::inspect_request_impl(const std::string& code, int cursor_pos, int) {
  std::string text = session_.help_at(code, byte_offset(code, cursor_pos));
  publish_output();
  if (text.empty()) return xeus::create_inspect_reply(false);
  nl::json data;
  data["text/plain"] = text;
  data["text/markdown"] = text;
  return xeus::create_inspect_reply(true, data);
}

nl::json Interpreter::is_complete_request_impl(const std::string& code) {
  switch (session_.check(code)) {
    case cli::Session::Load::Ok: return xeus::create_is_complete_reply("complete");
    case cli::Session::Load::Incomplete: return xeus::create_is_complete_reply("incomplete", "  ");
    case cli::Session::Load::Failed: break;
  }
  return xeus::create_is_complete_reply("invalid");
}

nl::json Interpreter::kernel_info_request_impl() {
  return xeus::create_info_reply("5.3", "luda", LUDA_VERSION, "lua", "5.4", "text/x-lua", ".lua", "lua", "lua", "",
                                 "luda " LUDA_VERSION ": GPU kernels as Lua functions (docs/notebooks.md)");
}

void Interpreter::shutdown_request_impl() {}

}  // namespace luda::kernel
