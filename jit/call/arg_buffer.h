// The pack step of every call: the argument buffer that the kernel kinds, cuda.jit kernels
// and raw kernels all lay their arguments out in, and whose pointers a launch hands the
// driver (or the cpu executor). One per thread, reused: once grown to a kernel's size,
// packing allocates nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "runtime/dtype.h"

namespace luda::jit {

// Argument storage reused from launch to launch. Every slot is 8-byte aligned, one of 16
// bytes or more 16-byte aligned (a complex128 scalar, a struct holding one: the ABI's
// largest alignment), and the bytes of its last word past what was put are zero.
class ArgBuffer {
 public:
  void clear() {
    used_ = 0;
    pointers_.clear();
    marks_.clear();
  }
  // Appends `n` bytes; returns the slot's offset. Inline: every launch packs through here.
  // The words are written in place, with no vector resize (which fills, and showed in
  // profiles of the launch path) once the storage has grown.
  std::size_t put(const void* bytes, std::size_t n) {
    std::size_t at = used_, words = (n + 7) / 8;
    if (n >= 16 && (at & 1)) [[unlikely]]
      ++at;  // 16-byte aligned (the storage is)
    if (at + words > words_.size()) [[unlikely]]
      grow(at + words);
    std::uint64_t* to = words_.data() + at;
    if (n == 8) {  // a pointer or a 64-bit scalar: one move
      std::memcpy(to, bytes, 8);
    } else {
      if (words) to[words - 1] = 0;  // the last word's padding bytes are zero
      std::memcpy(to, bytes, n);
    }
    used_ = at + words;
    pointers_.push_back(to);
    return at * 8;
  }
  // Marks the word at byte offset `at` of what was put as an array's data pointer, which a
  // graph's replay moves with its array (runtime/graph/recorded_graph.h). Every put of a data pointer is
  // marked; other pointers (a kernel's scratch, its bounds record) stay where they are.
  void mark_pointer(std::size_t at) { marks_.push_back(at / 8); }
  // The marked words, the words put so far, and slot i's first word (a graph's recording).
  const std::vector<std::size_t>& marks() const { return marks_; }
  const std::uint64_t* words() const { return words_.data(); }
  std::size_t used_words() const { return used_; }
  std::size_t slot_word(std::size_t i) const {
    return static_cast<std::size_t>(static_cast<const std::uint64_t*>(pointers_.at(i)) - words_.data());
  }
  // The void* array cuLaunchKernel takes; valid until the next clear/put.
  void** pointers() { return pointers_.data(); }
  std::size_t count() const { return pointers_.size(); }
  // The bytes of slot i (tests).
  const unsigned char* slot(std::size_t i) const { return static_cast<const unsigned char*>(pointers_.at(i)); }

 private:
  void grow(std::size_t words);  // new storage, the slots so far pointed into it
  std::vector<std::uint64_t>
      words_;  // storage (16-byte aligned, as operator new gives it); the first used_ words are the slots
  std::size_t used_ = 0;
  std::vector<void*> pointers_;     // each slot's first word, in words_
  std::vector<std::size_t> marks_;  // words that hold data pointers
};

// Appends a scalar's bytes (itemsize of its dtype).
void put_scalar(ArgBuffer& out, const Scalar& value);

// This thread's buffer, cleared: what a launch packs into. Nothing in a launch starts
// another launch on its thread before the driver has read the arguments.
ArgBuffer& launch_buffer();
// The same buffer as packed, not cleared (what a graph's recording copies at the launch).
ArgBuffer& packed_buffer();

}  // namespace luda::jit
