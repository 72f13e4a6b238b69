// compile_kernel: the front end's facade. Find the function (parsing its chunk once per
// process, dsl/find_function.h), type it for the call's arguments, emit CUDA C++.
#include "dsl/compile.h"

#include <cstring>

#include <fmt/format.h>

#include "dsl/codegen_cuda.h"
#include "dsl/find_function.h"
#include "dsl/infer.h"

namespace luda::dsl {

CudaKernel compile_kernel(const KernelRequest& request, Environment& env) {
  FoundFunction found = find_function(request.function);
  TypedProgram program = infer_kernel(found, request.handle, request.name, request.args, request.options, env,
                                      request.link);
  CudaKernel kernel;
  bool cpu = request.options.target == Target::Cpu;
  EmitInfo emitted;
  kernel.declarations = emit_declarations(program);
  if (!program.declared.empty()) kernel.link = linked_sources(request.link, program);
  kernel.code = cpu ? emit_cuda_functions(program, request.options, &emitted)
                    : emit_cuda(program, request.options, &emitted, kernel.declarations + emit_linked(kernel.link));
  kernel.needs_fibers = emitted.needs_fibers;
  kernel.cooperative = emitted.cooperative;
  kernel.local_bytes = emitted.local_bytes;
  kernel.entry = program.kernel().c_name;
  kernel.typed = typed_listing(program);
  kernel.params = request.args;
  kernel.bounds_record = emitted.error_record;
  kernel.dynamic_shared = program.dynamic_shared;
  kernel.weak_int_uses = program.kernel().weak_int_uses;
  if (request.options.fastmath) kernel.nvrtc_options.push_back("--use_fast_math");
  if (request.options.debug) kernel.nvrtc_options.push_back("-G");  // device debug info: cuda-gdb, compute-sanitizer
  return kernel;
}

std::string record_message(std::string_view who, std::string_view chunk, const BoundsRecord& r) {
  if (r.hit == BoundsRecord::kForStep) return fmt::format("{} at {}:{}: 'for' step is zero", who, chunk, r.line);
  if (r.hit == BoundsRecord::kNoInteger) {  // Lua's words for math.tointeger's failure
    double v = 0;
    std::memcpy(&v, &r.index, sizeof v);
    return fmt::format("{} at {}:{}: index {} has no integer representation (NaN, an infinity, or a number "
                       "beyond int64, converted to an index)",
                       who, chunk, r.line, v);
  }
  if (r.hit == BoundsRecord::kShape)  // the words of the compile-time error for a constant k (dsl/infer_expr.cpp)
    return fmt::format("{} at {}:{}: a.shape[{}] is out of range: the array has {} dimension{} (a.shape[1] .. "
                       "a.shape[{}]; Lua sequences start at 1)",
                       who, chunk, r.line, r.index, r.extent, r.extent == 1 ? "" : "s", r.extent);
  return fmt::format("{} at {}:{}: index {} out of range for axis {} of size {}", who, chunk, r.line, r.index, r.axis,
                     r.extent);
}

}  // namespace luda::dsl
