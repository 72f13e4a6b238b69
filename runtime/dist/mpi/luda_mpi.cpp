// libluda_mpi.so: luda's MPI plugin (runtime/dist/mpi_plugin.h), the one piece of luda linked
// to MPI. Built by CMake only where find_package(MPI) finds a C MPI; runtime/dist/world.cpp
// loads it with dlopen. Each entry point is a thin wrapper over MPI's nonblocking calls
// on a duplicate of MPI_COMM_WORLD that returns errors instead of aborting.
// MPI's C interface only: without these, OpenMPI's and MPICH's mpi.h bring their C++
// bindings into a C++ file, and with them a dependency on libmpi_cxx.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <dlfcn.h>
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <new>

#include "runtime/dist/mpi_plugin.h"

struct luda_mpi_request {
  MPI_Request request;
};

namespace {

MPI_Comm g_comm = MPI_COMM_NULL;
bool g_initialized_here = false;

// OpenMPI opens its components (transports, collective algorithms) with dlopen. Debian's
// components link libmpi themselves, but builds whose components do not expect libmpi's
// symbols to be global, which a plugin opened with RTLD_LOCAL leaves local. Opening the
// loaded library again with RTLD_GLOBAL makes them so (mpi4py does the same).
void promote_mpi_symbols() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&MPI_Init_thread), &info) && info.dli_fname)
    dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
}

int start(luda_mpi_request** out, int (*begin)(MPI_Request*, const void*), const void* args) {
  *out = nullptr;
  if (g_comm == MPI_COMM_NULL) return LUDA_MPI_ERR_NOT_INITIALIZED;
  auto* r = new (std::nothrow) luda_mpi_request{MPI_REQUEST_NULL};
  if (!r) return LUDA_MPI_ERR_NO_MEMORY;
  int rc = begin(&r->request, args);
  if (rc != MPI_SUCCESS) {
    delete r;
    return rc;
  }
  *out = r;
  return 0;
}

// The MPI type of a luda dtype code, or MPI_DATATYPE_NULL.
MPI_Datatype mpi_type(int dtype) {
  switch (dtype) {
    case LUDA_MPI_BOOL: return MPI_C_BOOL;
    case LUDA_MPI_INT8: return MPI_INT8_T;
    case LUDA_MPI_INT16: return MPI_INT16_T;
    case LUDA_MPI_INT32: return MPI_INT32_T;
    case LUDA_MPI_INT64: return MPI_INT64_T;
    case LUDA_MPI_UINT8: return MPI_UINT8_T;
    case LUDA_MPI_UINT16: return MPI_UINT16_T;
    case LUDA_MPI_UINT32: return MPI_UINT32_T;
    case LUDA_MPI_UINT64: return MPI_UINT64_T;
    case LUDA_MPI_FLOAT32: return MPI_FLOAT;
    case LUDA_MPI_FLOAT64: return MPI_DOUBLE;
    case LUDA_MPI_COMPLEX64: return MPI_C_FLOAT_COMPLEX;
    case LUDA_MPI_COMPLEX128: return MPI_C_DOUBLE_COMPLEX;
    default: return MPI_DATATYPE_NULL;
  }
}

// The MPI operation for `op` on `dtype`, or MPI_OP_NULL where it has none.
MPI_Op mpi_op(int dtype, int op) {
  if (dtype == LUDA_MPI_BOOL) {
    switch (op) {
      case LUDA_MPI_SUM:
      case LUDA_MPI_MAX: return MPI_LOR;
      case LUDA_MPI_PROD:
      case LUDA_MPI_MIN: return MPI_LAND;
      default: return MPI_OP_NULL;
    }
  }
  bool complex = dtype == LUDA_MPI_COMPLEX64 || dtype == LUDA_MPI_COMPLEX128;
  switch (op) {
    case LUDA_MPI_SUM: return MPI_SUM;
    case LUDA_MPI_PROD: return MPI_PROD;
    case LUDA_MPI_MAX: return complex ? MPI_OP_NULL : MPI_MAX;
    case LUDA_MPI_MIN: return complex ? MPI_OP_NULL : MPI_MIN;
    default: return MPI_OP_NULL;
  }
}

int plugin_init(luda_mpi_info* info) {
  std::memset(info, 0, sizeof *info);
  promote_mpi_symbols();
  int initialized = 0, rc = MPI_Initialized(&initialized);
  if (rc != MPI_SUCCESS) return rc;
  int provided = MPI_THREAD_SINGLE;
  if (!initialized) {
    rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
    if (rc != MPI_SUCCESS) return rc;
    g_initialized_here = true;
  } else if ((rc = MPI_Query_thread(&provided)) != MPI_SUCCESS) {
    return rc;
  }
  info->initialized_here = g_initialized_here ? 1 : 0;
  info->thread_level = provided;
  if (provided < MPI_THREAD_SERIALIZED) return LUDA_MPI_ERR_THREADS;
  if (g_comm == MPI_COMM_NULL) {
    if ((rc = MPI_Comm_dup(MPI_COMM_WORLD, &g_comm)) != MPI_SUCCESS) return rc;
    if ((rc = MPI_Comm_set_errhandler(g_comm, MPI_ERRORS_RETURN)) != MPI_SUCCESS) return rc;
  }
  if ((rc = MPI_Comm_rank(g_comm, &info->rank)) != MPI_SUCCESS) return rc;
  if ((rc = MPI_Comm_size(g_comm, &info->size)) != MPI_SUCCESS) return rc;
  int* tag_ub = nullptr;
  int found = 0;
  if ((rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &found)) != MPI_SUCCESS) return rc;
  info->tag_ub = found && tag_ub ? *tag_ub : 32767;
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  if (MPI_Get_library_version(version, &length) == MPI_SUCCESS) {
    version[length < MPI_MAX_LIBRARY_VERSION_STRING ? length : MPI_MAX_LIBRARY_VERSION_STRING - 1] = '\0';
    std::size_t line = std::strcspn(version, "\n");
    std::size_t n = line < sizeof info->library - 1 ? line : sizeof info->library - 1;
    std::memcpy(info->library, version, n);
    info->library[n] = '\0';
  }
  return 0;
}

int plugin_ibarrier(luda_mpi_request** out) {
  return start(
      out, [](MPI_Request* r, const void*) { return MPI_Ibarrier(g_comm, r); }, nullptr);
}

int plugin_ibcast(void* data, int bytes, int root, luda_mpi_request** out) {
  struct Args {
    void* data;
    int bytes, root;
  } a{data, bytes, root};
  return start(
      out,
      [](MPI_Request* r, const void* p) {
        auto* a = static_cast<const Args*>(p);
        return MPI_Ibcast(a->data, a->bytes, MPI_BYTE, a->root, g_comm, r);
      },
      &a);
}

int plugin_iallreduce(const void* send, void* recv, int count, int dtype, int op, luda_mpi_request** out) {
  *out = nullptr;
  MPI_Datatype type = mpi_type(dtype);
  if (type == MPI_DATATYPE_NULL) return LUDA_MPI_ERR_DTYPE;
  MPI_Op mop = mpi_op(dtype, op);
  if (mop == MPI_OP_NULL) return LUDA_MPI_ERR_OP;
  struct Args {
    const void* send;
    void* recv;
    int count;
    MPI_Datatype type;
    MPI_Op op;
  } a{send, recv, count, type, mop};
  return start(
      out,
      [](MPI_Request* r, const void* p) {
        auto* a = static_cast<const Args*>(p);
        return MPI_Iallreduce(a->send, a->recv, a->count, a->type, a->op, g_comm, r);
      },
      &a);
}

int plugin_iallgather(const void* send, int bytes, void* recv, luda_mpi_request** out) {
  struct Args {
    const void* send;
    int bytes;
    void* recv;
  } a{send, bytes, recv};
  return start(
      out,
      [](MPI_Request* r, const void* p) {
        auto* a = static_cast<const Args*>(p);
        return MPI_Iallgather(a->send, a->bytes, MPI_BYTE, a->recv, a->bytes, MPI_BYTE, g_comm, r);
      },
      &a);
}

int plugin_isend(const void* data, int bytes, int dest, int tag, luda_mpi_request** out) {
  struct Args {
    const void* data;
    int bytes, dest, tag;
  } a{data, bytes, dest, tag};
  return start(
      out,
      [](MPI_Request* r, const void* p) {
        auto* a = static_cast<const Args*>(p);
        return MPI_Isend(a->data, a->bytes, MPI_BYTE, a->dest, a->tag, g_comm, r);
      },
      &a);
}

int plugin_irecv(void* data, int bytes, int source, int tag, luda_mpi_request** out) {
  struct Args {
    void* data;
    int bytes, source, tag;
  } a{data, bytes, source, tag};
  return start(
      out,
      [](MPI_Request* r, const void* p) {
        auto* a = static_cast<const Args*>(p);
        return MPI_Irecv(a->data, a->bytes, MPI_BYTE, a->source, a->tag, g_comm, r);
      },
      &a);
}

int plugin_test(luda_mpi_request* request, int* done) {
  *done = 0;
  MPI_Status status;
  int flag = 0;
  int rc = MPI_Test(&request->request, &flag, &status);
  if (rc == MPI_ERR_IN_STATUS) rc = status.MPI_ERROR;
  if (rc != MPI_SUCCESS && !flag) {
    // A failed request is complete as far as the caller is concerned.
    *done = 1;
    delete request;
    return rc;
  }
  if (flag) {
    *done = 1;
    delete request;
  }
  return rc;
}

int plugin_finalize() {
  if (!g_initialized_here) return 0;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return 0;
  return MPI_Finalize();
}

void plugin_error_string(int code, char* buffer, std::size_t size) {
  if (size == 0) return;
  const char* own = nullptr;
  switch (code) {
    case LUDA_MPI_ERR_NOT_INITIALIZED: own = "luda's MPI plugin was used before init"; break;
    case LUDA_MPI_ERR_DTYPE: own = "no MPI type for this dtype"; break;
    case LUDA_MPI_ERR_OP: own = "the reduction is not defined for this dtype"; break;
    case LUDA_MPI_ERR_NO_MEMORY: own = "out of memory for an MPI request"; break;
    case LUDA_MPI_ERR_THREADS:
      own = "MPI was initialized with a thread level below MPI_THREAD_SERIALIZED, which luda needs";
      break;
    default: break;
  }
  if (own) {
    std::snprintf(buffer, size, "%s", own);
    return;
  }
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) {
    std::snprintf(buffer, size, "MPI error %d", code);
    return;
  }
  text[length < MPI_MAX_ERROR_STRING ? length : MPI_MAX_ERROR_STRING - 1] = '\0';
  std::snprintf(buffer, size, "%s", text);
}

int plugin_cancel(luda_mpi_request* request) { return MPI_Cancel(&request->request); }

const luda_mpi_plugin kPlugin = {
    LUDA_MPI_PLUGIN_VERSION, sizeof(luda_mpi_plugin), plugin_init,   plugin_ibarrier, plugin_ibcast,
    plugin_iallreduce,       plugin_iallgather,       plugin_isend,  plugin_irecv,    plugin_test,
    plugin_finalize,         plugin_error_string,     plugin_cancel,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const luda_mpi_plugin* luda_mpi_plugin_table() { return &kPlugin; }
