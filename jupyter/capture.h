// What a cell writes to the process's stdout and stderr (print, io.write, a cpu kernel's
// printf, luda's notes), taken while the cell runs: file descriptors 1 and 2 go to pipes
// that a thread each empties into memory, so that a cell writing much never blocks; the
// interpreter publishes the text as the cell's "stdout" and "stderr" streams.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace luda::kernel {

class Capture {
 public:
  // Redirects fd (1 or 2) from now on.
  explicit Capture(int fd);
  ~Capture();
  Capture(const Capture&) = delete;
  Capture& operator=(const Capture&) = delete;

  // Everything written to the fd until now (C stdio flushed first), taken out.
  std::string take();

 private:
  void drain();

  int fd_;
  int saved_ = -1;  // the fd's file before the redirection, put back at the end
  int read_end_ = -1;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::string text_;
  std::thread thread_;
};

}  // namespace luda::kernel
