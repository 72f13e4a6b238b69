#include "jit/call/arg_buffer.h"

#include <algorithm>

namespace luda::jit {

void ArgBuffer::grow(std::size_t words) {
  std::vector<std::uint64_t> bigger(std::max<std::size_t>(2 * words_.size(), words + 32));
  std::copy(words_.begin(), words_.begin() + static_cast<std::ptrdiff_t>(used_), bigger.begin());
  for (void*& p : pointers_) p = bigger.data() + (static_cast<std::uint64_t*>(p) - words_.data());
  words_ = std::move(bigger);
}

void put_scalar(ArgBuffer& out, const Scalar& value) {
  unsigned char bytes[16] = {};  // a complex128 takes 16
  value.store(bytes);
  out.put(bytes, itemsize(value.dtype));
}

ArgBuffer& packed_buffer() {
  thread_local ArgBuffer buffer;
  return buffer;
}

ArgBuffer& launch_buffer() {
  ArgBuffer& buffer = packed_buffer();
  buffer.clear();
  return buffer;
}

}  // namespace luda::jit
