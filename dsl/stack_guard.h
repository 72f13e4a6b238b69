// The C stack the front end's recursive passes (the parser, inference, CUDA emission)
// still have on the calling thread. Each pass has a fixed depth limit, as Lua's parser
// has; a host may still call luda from a thread whose stack is smaller than that limit
// needs (glibc gives new threads 8 MiB, musl 128 KiB, applications choose their own), so
// each level also checks what is left and refuses to go deeper, with a located error,
// while kStackReserve bytes remain for the error's own work.
#pragma once

#include <cstddef>

namespace luda::dsl {

inline constexpr std::size_t kStackReserve = 64 * 1024;

// Bytes of the calling thread's stack below the caller's frame; a very large number when
// it cannot be told (a stack that is not the thread's own, such as a fiber's).
std::size_t stack_left();

// Whether a pass must stop nesting here: less than kStackReserve left.
inline bool stack_low() { return stack_left() < kStackReserve; }

// On a function the recursive passes call but that does not recurse itself (a rule, an
// error): its locals then stay out of the frames that repeat once per level.
#define LUDA_DSL_NOINLINE __attribute__((noinline))

// What the passes say when they stop for that reason.
inline constexpr const char* kStackLowMessage =
    "nested too deeply for this thread's stack (less than 64 KiB of it left): call luda from a thread "
    "with a larger stack, or nest less";

}  // namespace luda::dsl
