// luda's MPI plugin: the table of plain C entry points that libluda_mpi.so gives
// luda.dist (runtime/dist/). The plugin (runtime/dist/mpi/luda_mpi.cpp) is the only code
// of luda that links MPI; runtime/dist/world.cpp loads it with dlopen when a process runs
// under mpirun, so that libluda, the `luda` command and luda.so need no MPI library to
// load and run.
//
// The plugin exports one function, LUDA_MPI_PLUGIN_ENTRY, returning the table. A table
// whose `version` is not LUDA_MPI_PLUGIN_VERSION, or whose `size` is smaller than this
// header's struct, is refused (a plugin built from another luda).
//
// Every operation but `test` and `error_string` returns 0 on success, else a code that
// `error_string` describes: MPI's own error codes (the plugin's communicator returns
// errors rather than aborting), or the plugin's negative LUDA_MPI_ERR_* codes. Operations
// start nonblocking MPI calls on a duplicate of MPI_COMM_WORLD (so that a host's own MPI
// traffic never matches luda's) and give back a request; `test` polls one. Counts are
// MPI's `int`: the caller splits larger transfers.
//
// The caller serializes every call (runtime/dist/requests.h's one mutex): `init` asks for
// MPI_THREAD_SERIALIZED.
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LUDA_MPI_PLUGIN_VERSION 1u
#define LUDA_MPI_PLUGIN_ENTRY "luda_mpi_plugin_table"
#define LUDA_MPI_PLUGIN_FILE "libluda_mpi.so"

// Element types of iallreduce: luda's DType codes (ORDER DTYPE; runtime/dist/host_transfers.cpp checks them).
enum luda_mpi_dtype {
  LUDA_MPI_BOOL = 0,
  LUDA_MPI_INT8 = 1,
  LUDA_MPI_INT16 = 2,
  LUDA_MPI_INT32 = 3,
  LUDA_MPI_INT64 = 4,
  LUDA_MPI_UINT8 = 5,
  LUDA_MPI_UINT16 = 6,
  LUDA_MPI_UINT32 = 7,
  LUDA_MPI_UINT64 = 8,
  LUDA_MPI_FLOAT32 = 9,
  LUDA_MPI_FLOAT64 = 10,
  // 11 and 12, float16 and bfloat16, have no MPI type: luda.dist reduces them as float32.
  LUDA_MPI_COMPLEX64 = 13,
  LUDA_MPI_COMPLEX128 = 14,
};

// Reductions. On bool, sum and max are logical or, prod and min logical and; complex
// types take sum and prod only.
enum luda_mpi_op {
  LUDA_MPI_SUM = 0,
  LUDA_MPI_PROD = 1,
  LUDA_MPI_MAX = 2,
  LUDA_MPI_MIN = 3,
};

// The plugin's own error codes (MPI's are positive).
enum luda_mpi_error {
  LUDA_MPI_ERR_NOT_INITIALIZED = -1,  // an operation before init
  LUDA_MPI_ERR_DTYPE = -2,            // iallreduce: no MPI type for the dtype code
  LUDA_MPI_ERR_OP = -3,               // iallreduce: the op is not defined for the dtype
  LUDA_MPI_ERR_NO_MEMORY = -4,        // a request could not be allocated
  LUDA_MPI_ERR_THREADS = -5,          // MPI gives less than MPI_THREAD_SERIALIZED
};

// What init reports.
struct luda_mpi_info {
  int rank;              // in MPI_COMM_WORLD
  int size;              // of MPI_COMM_WORLD
  int tag_ub;            // the largest tag send and receive take (MPI_TAG_UB; at least 32767)
  int initialized_here;  // 1 when init called MPI_Init_thread, 0 when the host had already
  int thread_level;      // MPI_Query_thread's answer, as MPI's constant
  char library[256];     // MPI_Get_library_version's first line ("Open MPI v4.1.4, ...")
};

// A started operation. `test` frees it when it reports completion; one that never
// completes is never freed (MPI may still write into its buffers).
typedef struct luda_mpi_request luda_mpi_request;

struct luda_mpi_plugin {
  uint32_t version;  // LUDA_MPI_PLUGIN_VERSION
  uint32_t size;     // sizeof(struct luda_mpi_plugin) of the plugin's build

  // MPI_Init_thread unless MPI is already initialized, then the communicator's
  // duplicate and what `info` holds.
  int (*init)(struct luda_mpi_info* info);
  int (*ibarrier)(luda_mpi_request** request);
  // `bytes` bytes of root's `data` into every other rank's `data`.
  int (*ibcast)(void* data, int bytes, int root, luda_mpi_request** request);
  // `count` elements of `dtype` (enum luda_mpi_dtype) combined by `op` (enum luda_mpi_op)
  // into every rank's `recv`; `send` and `recv` do not overlap.
  int (*iallreduce)(const void* send, void* recv, int count, int dtype, int op, luda_mpi_request** request);
  // Each rank's `bytes` bytes of `send`, in rank order, into every rank's `recv` (size * bytes).
  int (*iallgather)(const void* send, int bytes, void* recv, luda_mpi_request** request);
  int (*isend)(const void* data, int bytes, int dest, int tag, luda_mpi_request** request);
  // Exactly `bytes` bytes from `source` with `tag`; a longer message is an error (MPI's
  // truncation), reported by test.
  int (*irecv)(void* data, int bytes, int source, int tag, luda_mpi_request** request);
  // *done = 1 and the request freed when it has completed (its error, if any, returned);
  // *done = 0 while it runs.
  int (*test)(luda_mpi_request* request, int* done);
  // MPI_Finalize, when init called MPI_Init_thread and MPI is not finalized yet.
  int (*finalize)(void);
  // The text of an error code, into `buffer` (NUL-terminated, cut to `size`).
  void (*error_string)(int code, char* buffer, size_t size);
  // MPI_Cancel: a receive that no message has matched yet completes, cancelled, at a
  // later test (one already matched completes as usual).
  int (*cancel)(luda_mpi_request* request);
};

typedef const struct luda_mpi_plugin* (*luda_mpi_plugin_entry)(void);

#ifdef __cplusplus
}
#endif
