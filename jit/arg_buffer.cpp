#include "jit/arg_buffer.h"

#include <algorithm>

namespace luda::jit {

void ArgBuffer::grow(std::size_t words) { words_.resize(std::max<std::size_t>(2 * words_.size(), words + 32)); }

void** ArgBuffer::pointers() {
  if (pointers_.size() != offsets_.size()) pointers_.resize(offsets_.size());
  for (std::size_t i = 0; i < offsets_.size(); ++i) pointers_[i] = words_.data() + offsets_[i];
  return pointers_.data();
}

const unsigned char* ArgBuffer::slot(std::size_t i) const {
  return reinterpret_cast<const unsigned char*>(words_.data() + offsets_.at(i));
}

void put_scalar(ArgBuffer& out, const Scalar& value) {
  unsigned char bytes[8] = {};
  value.store(bytes);
  out.put(bytes, itemsize(value.dtype));
}

ArgBuffer& launch_buffer() {
  thread_local ArgBuffer buffer;
  buffer.clear();
  return buffer;
}

}  // namespace luda::jit
