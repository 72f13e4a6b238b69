/* The C ABI between luda's cpu executor (runtime/cpu_executor.h) and a kernel compiled
 * by the host C++ compiler for the `cpu` target (jit/). Plain C, so that this one text
 * is both included here and embedded verbatim in the cpu prelude of generated sources:
 * there is one definition of each struct.
 *
 * A kernel shared object exports (extern "C"):
 *   void luda_cpu_bind(const luda_cpu_runtime* rt);    once, after dlopen
 *   luda_cpu_thread** luda_cpu_current_slot(void);      its thread_local "current thread"
 *   void <entry>_cpu(void* const* args);                one CUDA thread of the kernel:
 *                                                       args[i] points at argument i as
 *                                                       the GPU ABI lays it out
 *   int <entry>_cpu_needs_fibers;                       1 when it calls barriers or warp
 *                                                       functions (threads must interleave)
 *   int <entry>_cpu_cooperative;                        optional, 1 when it calls the grid
 *                                                       barrier (grid_sync): every block of
 *                                                       the grid must be resident at once
 *   void <entry>_cpu_block(void* const* args, luda_cpu_thread* t);
 *                                                       optional, for needs_fibers 0: every
 *                                                       thread of one block in order (x
 *                                                       fastest). t holds the block's fields;
 *                                                       the entry sets the current slot to t
 *                                                       and writes t->threadIdx and t->lane
 *                                                       before each thread. One call per block
 *                                                       lets the compiler inline the body into
 *                                                       the loop: a per-thread call costs more
 *                                                       than a small kernel's whole body.
 * The executor sets *luda_cpu_current_slot() before it runs or resumes each CUDA thread.
 * Static __shared__ arrays are `static thread_local` in the cpu prelude: every CUDA thread
 * of a block runs on one OS thread, so they are per block, as on the GPU.
 */
#ifndef LUDA_CPU_ABI_H
#define LUDA_CPU_ABI_H

#ifdef __cplusplus
extern "C" {
#endif

#define LUDA_CPU_ABI_VERSION 3

typedef struct luda_cpu_dim3 {
  unsigned int x, y, z;
} luda_cpu_dim3;

/* One CUDA thread as the kernel sees it. */
typedef struct luda_cpu_thread {
  luda_cpu_dim3 threadIdx, blockIdx, blockDim, gridDim;
  void* dynamic_shared; /* the block's dynamic shared memory */
  unsigned long long dynamic_shared_bytes;
  void* block;       /* the executor's block state, for the calls below */
  unsigned int lane; /* linear thread index % 32 */
} luda_cpu_thread;

/* What the executor does for a kernel: barriers and warp exchanges suspend the calling
 * CUDA thread (a fiber) until the threads they name have arrived. */
typedef struct luda_cpu_runtime {
  int abi_version;
  void (*syncthreads)(luda_cpu_thread* t);
  void (*syncwarp)(luda_cpu_thread* t, unsigned int mask);
  /* mode: 0 idx (lane = arg), 1 up (lane - arg), 2 down (lane + arg), 3 xor (lane ^ arg);
   * width: as CUDA's (a power of two <= 32). Returns the source lane's value, or the
   * caller's own when the source lies outside its segment (CUDA's rule). */
  unsigned long long (*shfl)(luda_cpu_thread* t, unsigned int mask, unsigned long long value, int mode, int arg,
                             int width);
  unsigned int (*ballot)(luda_cpu_thread* t, unsigned int mask, int predicate);
  void (*print)(const char* text, unsigned long long length); /* one piece per call */
  /* Ends the kernel with an error instead of ending the process: exit, abort, a failed
   * assert, an exception thrown out of the kernel. `message` follows the kernel's name
   * ("failed an assertion: x > 0 (k.cu:3)"). Never returns. */
  void (*fail)(luda_cpu_thread* t, const char* message);
  /* A back-edge of an open loop in a kernel whose threads may wait for one another (it
   * runs as fibers): lets the block's other threads run, then returns; ends the kernel
   * with "was interrupted" when a stop is requested. */
  void (*yield)(luda_cpu_thread* t);
  /* cooperative_groups::this_grid().sync() in a cooperative kernel: waits until every
   * thread of every block of the grid has arrived (threads that returned do not count);
   * ends the kernel with "was interrupted" when a stop is requested. */
  void (*grid_sync)(luda_cpu_thread* t);
} luda_cpu_runtime;

#ifdef __cplusplus
}
#endif

#endif /* LUDA_CPU_ABI_H */
