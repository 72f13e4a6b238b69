#include "jupyter/capture.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include <cstdio>
#include <stdexcept>

namespace luda::kernel {
namespace {

// Written after a cell's output: take() waits until the thread has read up to it, so
// that nothing written before take() is left in the pipe.
constexpr char kMark[] = "\x01luda-capture-mark\x01";

}  // namespace

Capture::Capture(int fd) : fd_(fd) {
  int ends[2];
  if (pipe2(ends, O_CLOEXEC) != 0) throw std::runtime_error("luda-kernel: cannot make a pipe for the cells' output");
  std::fflush(fd == 1 ? stdout : stderr);
  saved_ = dup(fd);
  dup2(ends[1], fd);
  close(ends[1]);
  read_end_ = ends[0];
  thread_ = std::thread([this] { drain(); });
}

Capture::~Capture() {
  std::fflush(fd_ == 1 ? stdout : stderr);
  dup2(saved_, fd_);  // the last write end closes: the thread reads the end of the pipe
  close(saved_);
  thread_.join();
  close(read_end_);
}

void Capture::drain() {
  // Jupyter's interrupt (SIGINT) is for the thread running the cell, not this one; and a
  // read that a signal cuts short is read again, else the pipe would stop being emptied.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  char buffer[65536];
  for (;;) {
    ssize_t n = read(read_end_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    std::lock_guard lock(mutex_);
    text_.append(buffer, static_cast<std::size_t>(n));
    changed_.notify_all();
  }
}

std::string Capture::take() {
  std::fflush(fd_ == 1 ? stdout : stderr);
  while (write(fd_, kMark, sizeof kMark - 1) < 0 && errno == EINTR) {
  }
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return text_.find(kMark) != std::string::npos; });
  std::size_t at = text_.find(kMark);
  std::string out = text_.substr(0, at);
  text_.erase(0, at + sizeof kMark - 1);
  return out;
}

}  // namespace luda::kernel
