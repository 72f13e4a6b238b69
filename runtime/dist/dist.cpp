#include "runtime/dist/dist.h"

#include <cstdlib>
#include <mutex>

#include "runtime/dist/communicator.h"
#include "runtime/dist/nccl.h"
#include "runtime/dist/requests.h"
#include "runtime/dist/world.h"
#include "runtime/error.h"

namespace luda::dist {

using detail::g_mutex;
using detail::g_nccl;
using detail::World;
using detail::world;

std::optional<Op> parse_op(std::string_view name) {
  if (name == "sum") return Op::Sum;
  if (name == "prod") return Op::Prod;
  if (name == "max") return Op::Max;
  if (name == "min") return Op::Min;
  return std::nullopt;
}

std::string_view op_name(Op op) {
  switch (op) {
    case Op::Sum: return "sum";
    case Op::Prod: return "prod";
    case Op::Max: return "max";
    case Op::Min: return "min";
  }
  return "?";
}

double timeout_seconds(const CallOptions& options) {
  if (options.timeout) {
    if (!(*options.timeout > 0))
      fail("luda.dist: timeout must be a positive number of seconds, got {:g}", *options.timeout);
    return *options.timeout;
  }
  const char* v = std::getenv("LUDA_DIST_TIMEOUT");
  if (!v || !*v) return 60;
  char* end = nullptr;
  double seconds = std::strtod(v, &end);
  if (end == v || *end != '\0' || !(seconds > 0))
    fail("LUDA_DIST_TIMEOUT='{}' is not a positive number of seconds; set it to one (the default is 60) or unset it",
         v);
  return seconds;
}

Info info() {
  const World& w = world();
  Info out;
  out.rank = w.info.rank;
  out.size = w.info.size;
  if (w.plugin) out.mpi = w.info.library;
  std::string why;
  if (std::optional<std::string> v = nccl::version(&why)) out.nccl = *v;
  std::lock_guard lock(g_mutex);
  if (g_nccl.comm) out.nccl_device = Device::cuda(g_nccl.comm->ordinal());
  out.host_reason = !g_nccl.off.empty() ? g_nccl.off : out.nccl.empty() ? why : "";
  return out;
}

int rank() { return world().info.rank; }
int size() { return world().info.size; }

}  // namespace luda::dist
