// A shared object that Python loads with ctypes to exchange tensors with luda through
// DLPack (tests/dlpack/roundtrip.py): it takes a producer's DLManagedTensor, runs a
// luda kernel on it in place, and gives it back as a DLManagedTensor of luda's.
#include <luda/luda.h>

#include <cstdio>

extern "C" {

// y = 2 * x + 1 in place on the tensor, then the same memory back; null on an error,
// printed on stderr.
void* luda_dlpack_twice_plus_one(void* tensor) {
  try {
    luda::Array a = luda::Array::from_dlpack(static_cast<DLManagedTensor*>(tensor));
    static const luda::ElementwiseKernel k("T x", "T y", "y = 2 * x + 1", "twice_plus_one");
    k({a}, {a});
    luda::synchronize(a.device());
    return a.to_dlpack();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "luda_dlpack_twice_plus_one: %s\n", e.what());
    return nullptr;
  }
}

}  // extern "C"
