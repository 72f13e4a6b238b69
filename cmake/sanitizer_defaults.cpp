// Linked into every target of a sanitizer build (LUDA_SANITIZE): the options the
// sanitizers start with, so that the tests and the `luda` binary run the same under
// ctest and by hand. $ASAN_OPTIONS and $UBSAN_OPTIONS still override them. Weak, so that
// a target with options of its own (fuzz/runtime_fuzz.cpp) keeps them.
//
// intercept_tls_get_addr=0: LeakSanitizer's tracer misreads the dynamic TLS of a
// dlopened object under glibc >= 2.25 (google/sanitizers#1322) and crashes at exit once
// a cpu kernel (a dlopened object with a thread_local) has run. That TLS holds no heap
// pointer, so no leak goes unseen without it.
extern "C" __attribute__((weak)) const char* __asan_default_options() { return "intercept_tls_get_addr=0"; }

// A report says where it came from.
extern "C" __attribute__((weak)) const char* __ubsan_default_options() { return "print_stacktrace=1"; }
