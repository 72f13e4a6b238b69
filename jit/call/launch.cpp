#include "jit/call/launch.h"

#include <fmt/format.h>

#include "jit/call/arg_buffer.h"
#include "runtime/device.h"
#include "runtime/driver.h"
#include "runtime/graph/recording.h"

namespace luda::jit {

namespace {

// A launch while this thread records a graph (runtime/graph/recording.h): the node's work, with the
// argument bytes as packed (every launch packs into this thread's buffer).
void record_launch(GraphRecording& r, const LoadedProgram& program, Device device, const LaunchConfig& config,
                   void** args, const LaunchName& name) {
  ArgBuffer& b = packed_buffer();
  LUDA_INTERNAL_CHECK(b.pointers() == args);
  KernelWork w;
  w.device = device;
  if (w.device != r.device())
    fail("{}: its arrays are on {}, but the graph being recorded runs on {}; a graph's work is on one device", name.who,
         w.device.str(), r.device().str());
  w.cpu = program.cpu;
  w.function = program.function;
  w.cooperative = program.cooperative;
  w.config = config;
  w.config.stream = nullptr;
  w.config.stream_device.reset();
  w.words.assign(b.words(), b.words() + b.used_words());
  for (std::size_t i = 0; i < b.count(); ++i) w.slots.push_back(b.slot_word(i));
  w.pointers = b.marks();
  w.who = std::string(name.who);
  r.kernel(std::move(w));
}

}  // namespace

void launch(const LoadedProgram& program, Device device, const LaunchConfig& config, void** args,
            const LaunchName& name) {
  LUDA_INTERNAL_CHECK(target_ordinal(device) == program.ordinal);
  if (GraphRecording* r = GraphRecording::active()) [[unlikely]] {
    record_launch(*r, program, device, config, args, name);
    return;
  }
  if (program.ordinal == kCpuDevice) {
    cpu_launch(program.cpu, config, args, name.who);
    return;
  }
  ContextScope scope(program.ordinal);  // one cuCtxGetCurrent when the context is current already
  driver::note_launch(name.label);
  if (!program.cooperative) [[likely]] {
    luda::launch(program.function, config, args, false, name.who);
    return;
  }
  try {
    luda::launch(program.function, config, args, true, name.who);
  } catch (const CudaError& e) {
    if (e.code() != CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE) throw;
    try {
      cooperative_grid_too_large(program.function, config, cuda_properties(program.ordinal));
    } catch (const Error& limit) {
      throw Error(fmt::format("{}: {}", name.who, limit.what()));
    }
  }
}

void check_launch_config(const LaunchConfig& config, int ordinal, std::string_view who) {
  try {
    if (ordinal == kCpuDevice) validate_cpu_launch(config);
    else config.validate(cuda_properties(ordinal));
  } catch (const NoDeviceError&) {
    throw;
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", who, e.what()));
  }
}

dsl::BoundsRecord* zero_bounds_record(const Buffer& record, CUstream stream) {
  if (GraphRecording* g = GraphRecording::active()) [[unlikely]] {
    // The graph's own record, on its device: the loaded program's record of the cpu target
    // is cpu's, and serves every cpu device.
    const Device on = record.device().is_cpu() && g->device().is_cpu() ? g->device() : record.device();
    g->bounds_record = Buffer::allocate(on, sizeof(dsl::BoundsRecord));
    auto* r = static_cast<dsl::BoundsRecord*>(g->bounds_record->data());
    const auto at = reinterpret_cast<std::uintptr_t>(r);
    const Access bytes = g->of(g->bounds_record, at, at + sizeof *r, true);
    g->fill(FillWork{on, at, sizeof *r}, {bytes});
    g->access(bytes);  // the launch that follows writes it
    return r;
  }
  auto* r = static_cast<dsl::BoundsRecord*>(record.data());
  zero_bytes(record.device(), r, sizeof *r, stream);
  return r;
}

void check_bounds_record(const Buffer& record, CUstream stream, std::string_view who, std::string_view chunk) {
  if (GraphRecording* g = GraphRecording::active()) [[unlikely]] {
    // On the cpu the check is a node after the launch; a CUDA graph has no host step
    // that can raise, so the check reads the record once the graph's run is waited for.
    LUDA_INTERNAL_CHECK(g->bounds_record != nullptr);
    std::shared_ptr<Buffer> own = std::move(g->bounds_record);
    const auto at = reinterpret_cast<std::uintptr_t>(own->data());
    if (!record.device().is_cpu()) {
      g->after_run([own, who = std::string(who), chunk = std::string(chunk)] {
        dsl::BoundsRecord r{};
        copy_bytes(Device::cpu(), &r, own->device(), own->data(), sizeof r, nullptr);
        if (r.hit) throw Error(dsl::record_message(who, chunk, r));
      });
      return;
    }
    g->host(fmt::format("bounds check of {}", who),
            HostWork{[at, who = std::string(who), chunk = std::string(chunk)](const Remap&) {
              const auto* r = reinterpret_cast<const dsl::BoundsRecord*>(at);
              if (r->hit) throw Error(dsl::record_message(who, chunk, *r));
            }},
            {g->of(own, at, at + sizeof(dsl::BoundsRecord), false)});
    return;
  }
  dsl::BoundsRecord r{};
  copy_bytes(Device::cpu(), &r, record.device(), record.data(), sizeof r, stream);  // waits for the kernel
  if (r.hit) throw Error(dsl::record_message(who, chunk, r));
}

long long max_cooperative_grid_blocks(const LoadedProgram& loaded, const Dim3& block, unsigned shared_mem) {
  if (loaded.ordinal == kCpuDevice) return static_cast<long long>(cpu_max_cooperative_blocks(block.count()));
  ContextScope scope(loaded.ordinal);
  return max_cooperative_blocks(loaded.function, block, shared_mem, cuda_properties(loaded.ordinal));
}

}  // namespace luda::jit
