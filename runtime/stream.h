// Streams and events of a device: the classes are public (luda/core.h), implemented in
// stream.cpp.
//
// On a CUDA device they are the driver's streams and events. On the cpu device every
// launch and copy runs to completion when it is submitted, on the submitting thread (the
// cpu executor's launches are synchronous), so a stream's work is in order because it is
// done in order: synchronize and query have nothing to wait for, and an event records the
// host's steady clock at the point of the stream where it is recorded, after the work
// submitted before it and before the work submitted after. elapsed_ms of two cpu events
// is the host time of the work between them.
#pragma once

#include <cuda.h>

#include <memory>

#include "luda/core.h"
#include "runtime/device.h"
