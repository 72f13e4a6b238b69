// compile_kernel: the front end's facade. Find the function (parsing its chunk once per
// process, dsl/find_function.h), type it for the call's arguments, emit CUDA C++.
#include "dsl/compile.h"

#include "dsl/codegen_cuda.h"
#include "dsl/find_function.h"
#include "dsl/infer.h"

namespace luda::dsl {

CudaKernel compile_kernel(const KernelRequest& request, Environment& env) {
  FoundFunction found = find_function(request.function);
  TypedProgram program = infer_kernel(found, request.handle, request.name, request.args, request.options, env);
  CudaKernel kernel;
  bool cpu = request.options.target == Target::Cpu;
  kernel.code = cpu ? emit_cuda_functions(program, request.options, &kernel.needs_fibers)
                    : emit_cuda(program, request.options, &kernel.needs_fibers);
  kernel.entry = program.kernel().c_name;
  kernel.typed = typed_listing(program);
  kernel.params = request.args;
  kernel.bounds_record = request.options.boundscheck;
  kernel.dynamic_shared = program.dynamic_shared;
  if (request.options.fastmath) kernel.nvrtc_options.push_back("--use_fast_math");
  if (request.options.debug) kernel.nvrtc_options.push_back("-G");  // device debug info: cuda-gdb, compute-sanitizer
  return kernel;
}

}  // namespace luda::dsl
