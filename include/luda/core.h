// luda's vocabulary, shared by the public API (luda/luda.h) and the library's own layers:
// errors, element types, devices, launch dimensions, streams and events. C++17, and no
// CUDA or Lua header: a CUDA stream or event is named by the driver's handle type, which
// is declared here as <cuda.h> declares it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

// <cuda.h>'s handle types, declared identically so that either header may come first.
typedef struct CUstream_st* CUstream;
typedef struct CUevent_st* CUevent;

namespace luda {

// ---- errors ----------------------------------------------------------------------------
//
// Every mistake a host or a script can make reaches it as a luda::Error whose what() says
// what and where and how to fix it. Subclasses carry what a host may act on as fields.
// luda's own broken invariants are InternalError, apart from Error: a user never sees
// "internal error" for a mistake of theirs.

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A mistake located in a source text: a Lua syntax error in a chunk, or a kernel-language
// error (type, name, unsupported construct) in a kernel's Lua source. what() reads
//   gauss.lua:12:18: type error: cannot apply '+' to bool and float32
//       return (x > 0) + y
//              ~~~~~~~~^~~
// and the fields hold its parts.
class SourceError : public Error {
 public:
  SourceError(std::string full_text, std::string file, int line, int column, std::string kind, std::string message)
      : Error(std::move(full_text)),
        file_(std::move(file)),
        line_(line),
        column_(column),
        kind_(std::move(kind)),
        message_(std::move(message)) {}

  // The chunk as messages show it: "gauss.lua", "[string \"...\"]", or a host's name.
  const std::string& file() const { return file_; }
  int line() const { return line_; }                       // 1-based; 0 when unknown
  int column() const { return column_; }                   // 1-based; 0 when unknown
  const std::string& kind() const { return kind_; }        // "syntax error", "type error", ...
  const std::string& message() const { return message_; }  // without the location
  // The first line of what(): "file:line:column: kind: message" ("file: kind: message"
  // when the line is unknown).
  std::string headline() const {
    std::string at = line_ > 0 ? ":" + std::to_string(line_) + ":" + std::to_string(column_) : "";
    return file_ + at + ": " + kind_ + ": " + message_;
  }

 private:
  std::string file_;
  int line_;
  int column_;
  std::string kind_;
  std::string message_;
};

// An error raised while a script ran (Lua's error(), or a luda call the script made that
// failed), at a line of a chunk. what() is the message as Lua gives it, with Lua's
// traceback after it when there is one; `cause` is the luda error behind it when a luda
// call failed (std::rethrow_exception(e.cause()) to catch it by its type: CudaError, ...).
class ScriptError : public Error {
 public:
  ScriptError(std::string full_text, std::string file, int line, std::string message, std::string traceback,
              std::exception_ptr cause = nullptr)
      : Error(std::move(full_text)),
        file_(std::move(file)),
        line_(line),
        message_(std::move(message)),
        traceback_(std::move(traceback)),
        cause_(std::move(cause)) {}

  const std::string& file() const { return file_; }            // "" when Lua gave no position
  int line() const { return line_; }                           // 0 when unknown
  const std::string& message() const { return message_; }      // without "file:line: "
  const std::string& traceback() const { return traceback_; }  // Lua's "stack traceback:\n..."
  const std::exception_ptr& cause() const { return cause_; }

 private:
  std::string file_;
  int line_;
  std::string message_;
  std::string traceback_;
  std::exception_ptr cause_;
};

// No such device: no usable CUDA device (no driver, no GPU, or an ordinal past the count):
// "no CUDA device: <reason>"; or a cpu device past LUDA_CPU_DEVICES:
// "no cpu device cpu:5: LUDA_CPU_DEVICES gives 2 (cpu:0, cpu:1); start the process with
// LUDA_CPU_DEVICES=6".
class NoDeviceError : public Error {
 public:
  using Error::Error;
};

// A failed CUDA driver call; code() is the driver's CUresult.
// "cuMemAllocAsync: CUDA_ERROR_OUT_OF_MEMORY: out of memory (asked for 8.0 GiB, 2.1 GiB free)"
class CudaError : public Error {
 public:
  CudaError(int code, std::string message) : Error(std::move(message)), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

// A failed compile of CUDA C++ (NVRTC) or of a cpu kernel (the host compiler): what() says
// where, log() is the compiler's whole output, source() the numbered source it was given.
class CompileError : public Error {
 public:
  CompileError(std::string message, std::string log, std::vector<std::string> options, std::string source)
      : Error(std::move(message)), log_(std::move(log)), options_(std::move(options)), source_(std::move(source)) {}
  const std::string& log() const { return log_; }
  const std::vector<std::string>& options() const { return options_; }
  const std::string& source() const { return source_; }

 private:
  std::string log_;
  std::vector<std::string> options_;
  std::string source_;
};

// Work stopped by request_interrupt(); the message says what was stopped.
class Interrupted : public Error {
 public:
  using Error::Error;
};

// A broken invariant inside luda: a bug to report, never the caller's mistake.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// Asks every running cpu kernel and every host wait for a GPU to stop; each raises
// Interrupted. When nothing runs, the request waits for the next launch or wait to meet it;
// clear_interrupt() withdraws one that nothing met. Both are async-signal-safe: a host's
// SIGINT handler may call them.
void request_interrupt() noexcept;
void clear_interrupt() noexcept;

// ---- element types -----------------------------------------------------------------------

// ORDER DTYPE: the library's tables follow this order.
enum class DType : std::uint8_t {
  Bool,
  Int8,
  Int16,
  Int32,
  Int64,
  UInt8,
  UInt16,
  UInt32,
  UInt64,
  Float32,
  Float64,
  Float16,
  BFloat16,
  Complex64,
  Complex128,
};
inline constexpr int kNumDTypes = 15;

// Bytes of one element. Inline: every launch asks it of every operand.
constexpr std::size_t itemsize(DType t) {
  constexpr unsigned char kSizes[kNumDTypes] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 4, 8, 2, 2, 8, 16};  // ORDER DTYPE
  return kSizes[static_cast<int>(t)];
}
std::string_view dtype_name(DType t);  // "float32"
// "float32" -> DType::Float32; Error for anything else:
// "unknown dtype 'flaot32' (expected one of bool, int8, ...)".
DType dtype_from_name(std::string_view name);

// The dtype of a C++ element type: dtype_of<float>() is DType::Float32.
template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, bool>) return DType::Bool;
  else if constexpr (std::is_same_v<T, float>) return DType::Float32;
  else if constexpr (std::is_same_v<T, double>) return DType::Float64;
  else {
    static_assert(std::is_integral_v<T> && sizeof(T) <= 8, "luda arrays hold bool, integers, float and double");
    constexpr int base = std::is_signed_v<T> ? 1 : 5;  // Int8 or UInt8, ORDER DTYPE
    constexpr int step = sizeof(T) == 1 ? 0 : sizeof(T) == 2 ? 1 : sizeof(T) == 4 ? 2 : 3;
    return static_cast<DType>(base + step);
  }
}

// ---- devices -------------------------------------------------------------------------------

// A device: cuda:N, a GPU; or cpu:N, host memory and the cpu executor. Every cpu device
// shares both: cpu devices are separate placements of arrays (cpu:0, ..., cpu:K-1 with
// LUDA_CPU_DEVICES=K, so that work spread over devices runs on a machine without GPUs),
// and code compiled for the cpu runs on each of them.
struct Device {
  enum class Kind : unsigned char { Cpu, Cuda };
  Kind kind = Kind::Cpu;
  int index = 0;  // CUDA ordinal, or the cpu device's number

  static Device cpu(int index = 0) { return {Kind::Cpu, index}; }
  static Device cuda(int ordinal) { return {Kind::Cuda, ordinal}; }
  bool is_cpu() const { return kind == Kind::Cpu; }
  bool is_cuda() const { return kind == Kind::Cuda; }
  std::string str() const;  // "cpu" (cpu:0), "cpu:1", "cuda:0"
  // "cpu" (= cpu:0), "cpu:N", "cuda" (= cuda:0), "cuda:N"; Error on anything else. Does
  // not check that the device exists.
  static Device parse(std::string_view text);
  bool operator==(const Device& o) const { return kind == o.kind && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
};

// Number of CUDA devices; 0 when the driver is missing or has none. Never throws.
int cuda_device_count();
// Number of cpu devices: $LUDA_CPU_DEVICES (read once per process; 1 to 1024) when set,
// else 1 (cpu alone). Error when the variable is malformed:
// "LUDA_CPU_DEVICES=two: expected a whole number of cpu devices from 1 to 1024: set
// LUDA_CPU_DEVICES=2 for cpu:0 and cpu:1, or unset it for the one cpu device".
int cpu_device_count();
// $LUDA_DEVICE when set ("cpu", "cpu:N", "cuda", "cuda:N"), else cuda:0 when a CUDA device
// is usable, else cpu. Throws when $LUDA_DEVICE or $LUDA_CPU_DEVICES is unusable.
Device default_device();
// The device new arrays and kernels use on this thread: set by use_device, else
// default_device().
Device current_device();
void use_device(Device d);  // NoDeviceError for a device that is not there
// Waits for all work on the device; nothing to wait for on cpu.
void synchronize(Device d);
// Called once per process, with the reason, the first time default_device() falls back
// to cpu because no CUDA device is usable. Unless the host installs its own, or none
// (nullptr), at any time, the Lua module installs one that writes a note on stderr.
using CpuFallbackNotice = void (*)(const std::string& reason);
void set_cpu_fallback_notice(CpuFallbackNotice notice);

// ---- launch dimensions -----------------------------------------------------------------------

// A grid or block, as CUDA's dim3: {x}, {x, y, 1, 2} or {x, y, z, 3}. `ndim` says how many
// dimensions were given, for messages.
struct Dim3 {
  long long x = 1, y = 1, z = 1;  // signed so that 0 and negatives can be reported
  int ndim = 1;
  long long count() const { return x * y * z; }
  std::string str() const;  // "(10,)" / "(10, 4)" / "(2, 2, 2)" for the dims given
};

// ---- streams and events -------------------------------------------------------------------
//
// Both are shared handles: copies refer to one object, destroyed with the last copy. On a
// CUDA device they are the driver's streams and events. On the cpu device every launch and
// copy runs to completion when it is submitted, so a stream's work is in order because it
// is done in order: synchronize and query have nothing to wait for, and an event records
// the host's steady clock at its point of the stream.

class Event;

// A default-constructed Stream refers to nothing: assign one of the factories' results.
class Stream {
 public:
  // The device's default stream: CUDA's legacy default stream (handle 0), or the cpu's one.
  static Stream default_stream(Device device);
  // A new stream (NoDeviceError without the device). On a CUDA device non-blocking by
  // default; `non_blocking = false` makes one that CUDA orders after the legacy default
  // stream's earlier work and before its later work, with no event.
  static Stream create(Device device, bool non_blocking = true);
  // A stream the host made (cuStreamCreate, cudaStreamCreate, or a framework's stream) on a
  // CUDA device, so that luda's work on it is ordered with the host's. luda never destroys
  // it: the host keeps it alive while luda may use it.
  static Stream wrap(CUstream handle, Device device);

  CUstream handle() const;  // null for the legacy default stream and for cpu streams
  Device device() const;
  void synchronize() const;  // waits for its work
  bool query() const;        // true when all its work has finished
  // Later work on this stream waits for e, of any device.
  void wait(const Event& e) const;
  explicit operator bool() const { return state_ != nullptr; }

 private:
  struct State;
  std::shared_ptr<State> state_;
};

class Event {
 public:
  static Event create(Device device, bool timing = true);

  CUevent handle() const;  // null for cpu events
  Device device() const;
  // Records the point of s reached by the work submitted to it so far; s must be on the
  // event's device.
  void record(const Stream& s) const;
  void synchronize() const;  // waits for the recorded work; an event never recorded is complete
  bool query() const;
  // Milliseconds from this event to `end`: both recorded, both with timing, both of one
  // device. Waits for `end`.
  float elapsed_ms(const Event& end) const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace luda
