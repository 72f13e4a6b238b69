#include "dsl/stack_guard.h"

#include <pthread.h>

#include <cstdint>
#include <limits>

namespace luda::dsl {

namespace {

// The calling thread's stack, [low, high), found once per thread (pthread_getattr_np
// reads /proc/self/maps for the main thread).
struct ThreadStack {
  std::uintptr_t low = 0, high = 0;
  bool known = false;
  ThreadStack() {
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
    void* addr = nullptr;
    std::size_t size = 0;
    if (pthread_attr_getstack(&attr, &addr, &size) == 0 && addr && size) {
      low = reinterpret_cast<std::uintptr_t>(addr);
      high = low + size;
      known = true;
    }
    pthread_attr_destroy(&attr);
  }
};

}  // namespace

std::size_t stack_left() {
  static thread_local const ThreadStack stack;
  auto here = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
  if (!stack.known || here <= stack.low || here >= stack.high) return std::numeric_limits<std::size_t>::max();
  return here - stack.low;
}

}  // namespace luda::dsl
