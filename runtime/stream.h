// Streams and events of a CUDA device. Both are shared handles: copies refer to one
// driver object, destroyed with the last copy.
#pragma once

#include <cuda.h>

#include <memory>

namespace luda {

class Event;

// A default-constructed Stream refers to nothing: handle() is null, and nothing else may
// be called on it; assign one of the factories' results to it.
class Stream {
 public:
  // The device's legacy default stream (handle 0); what work uses when no stream is given.
  static Stream default_stream(int ordinal);
  // A new non-blocking stream on the device. Throws NoDeviceError without one.
  static Stream create(int ordinal);

  CUstream handle() const;
  int device() const;
  void synchronize() const;
  bool query() const;                 // true when all work has finished
  void wait(const Event& e) const;    // later work waits for e

 private:
  struct State;
  std::shared_ptr<State> state_;
};

class Event {
 public:
  static Event create(int ordinal, bool timing = true);

  CUevent handle() const;
  int device() const;
  void record(const Stream& s) const;
  void synchronize() const;
  bool query() const;
  // Milliseconds from this event to `end`; both recorded, both with timing. Waits for
  // `end` to complete first.
  float elapsed_ms(const Event& end) const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace luda
