// luda-kernel: luda's Jupyter kernel (xeus over ZeroMQ; jupyter/interpreter.h).
//   luda-kernel -f connection.json             what Jupyter starts (kernel.json's argv)
//   luda-kernel install [--user | --prefix P]  writes the kernelspec "luda"
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>

#include <zmq.hpp>

#include "jupyter/interpreter.h"
#include "xeus/xhelper.hpp"
#include "xeus/xkernel.hpp"
#include "xeus/xkernel_configuration.hpp"
#include "xeus/xserver_zmq.hpp"

namespace {

namespace fs = std::filesystem;

constexpr char kUsage[] = "usage: luda-kernel -f connection.json          (Jupyter starts it so)\n"
                          "       luda-kernel install [--user | --prefix P]  write the kernelspec 'luda'\n"
                          "  install: --user in $JUPYTER_DATA_DIR, else ~/.local/share/jupyter; --prefix P in\n"
                          "  P/share/jupyter; neither in /usr/local/share/jupyter\n";

// This program's absolute path, for the kernelspec's argv.
std::string own_path() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("luda-kernel") : p.string();
}

// A JSON string literal of s.
std::string json_string(std::string_view s) { return nl::json(std::string(s)).dump(); }

int install(int argc, char** argv) {
  fs::path data;
  if (argc == 2) {
    data = "/usr/local/share/jupyter";
  } else if (argc == 3 && std::string_view(argv[2]) == "--user") {
    const char* jd = std::getenv("JUPYTER_DATA_DIR");
    const char* home = std::getenv("HOME");
    if (jd && *jd) data = jd;
    else if (home && *home) data = fs::path(home) / ".local/share/jupyter";
    else {
      std::fputs("luda-kernel install --user: neither JUPYTER_DATA_DIR nor HOME is set; give --prefix\n", stderr);
      return 1;
    }
  } else if (argc == 4 && std::string_view(argv[2]) == "--prefix") {
    data = fs::path(argv[3]) / "share/jupyter";
  } else {
    std::fputs(kUsage, stderr);
    return 2;
  }
  fs::path dir = data / "kernels/luda";
  std::error_code ec;
  fs::create_directories(dir, ec);
  std::ofstream spec(dir / "kernel.json");
  spec << "{\n  \"argv\": [" << json_string(own_path()) << ", \"-f\", \"{connection_file}\"],\n"
       << "  \"display_name\": \"luda (Lua)\",\n  \"language\": \"lua\",\n  \"interrupt_mode\": \"signal\"\n}\n";
  spec.close();
  if (ec || !spec) {
    std::fprintf(stderr, "luda-kernel install: cannot write %s (%s)\n", (dir / "kernel.json").c_str(),
                 ec ? ec.message().c_str() : "write failed");
    return 1;
  }
  std::printf("installed the kernelspec 'luda' in %s\n", dir.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::string_view(argv[1]) == "install") return install(argc, argv);
  if (argc != 3 || std::string_view(argv[1]) != "-f") {
    std::fputs(kUsage, stderr);
    return 2;
  }
  // Jupyter interrupts with SIGINT. Between cells it stops nothing; while a cell runs, the
  // Session takes it and stops the cell. Only the thread that runs cells may receive it:
  // blocked here, before xeus starts its threads (which inherit the mask), and unblocked by
  // that thread for the time of each cell (jupyter/interpreter.cpp). A ZeroMQ thread that
  // took it would see its poll cut short and stop serving the kernel's messages.
  std::signal(SIGINT, SIG_IGN);
  sigset_t interrupt;
  sigemptyset(&interrupt);
  sigaddset(&interrupt, SIGINT);
  pthread_sigmask(SIG_BLOCK, &interrupt, nullptr);
  xeus::xconfiguration config = xeus::load_configuration(argv[2]);
  auto context = xeus::make_context<zmq::context_t>();
  auto interpreter = std::make_unique<luda::kernel::Interpreter>();
  xeus::xkernel kernel(config, xeus::get_user_name(), std::move(context), std::move(interpreter),
                       xeus::make_xserver_zmq);
  kernel.start();
  return 0;
}
