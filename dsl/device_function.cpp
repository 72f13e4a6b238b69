// compile_device_function: a kernel kind's element function. The function is typed as the
// root of a program (infer_device_function) exactly as a kernel types a Lua function it
// calls, and emitted by the same codegen; only the names differ: every function of the
// result carries a hash of the emitted text, so that the device functions of several
// kinds (a reduction's map, reduce, post and identity, each reaching the same helper) can
// share one translation unit without two different definitions of one name.
#include "dsl/device_function.h"

#include <fmt/format.h>

#include "dsl/codegen_cuda.h"
#include "dsl/find_function.h"
#include "dsl/infer.h"
#include "dsl/kind_source.h"
#include "dsl/prelude.h"

namespace luda::dsl {

namespace {

// NumPy's default for a Lua number's result: int64 / float64.
Type strong(Type t) {
  t.weak = false;
  for (Type& e : t.elements) e.weak = false;
  return t;
}

bool uses_arrays(const TypedProgram& program) {
  for (const auto& f : program.functions) {
    for (const Type& p : f->params)
      if (p.kind == Type::Kind::Array) return true;
    for (const Variable& v : f->vars)
      if (v.alloc != Builtin::Alloc::None) return true;
  }
  return false;
}

}  // namespace

DeviceFunction compile_device_function(const DeviceFunctionRequest& request, Environment& env) {
  FoundFunction found = find_function(request.function);
  FusedReturn fused;
  if (request.fuse_reduction_as_value) {
    // The final return's reductions (dsl/kind_source.h analyze_fuse has checked them).
    for (const CallExpr* call : fuse_reduction_calls(*found.ast, *found.function))
      fused.values.push_back(call->args.at(0));
    if (fused.values.empty())
      throw source_error(found.ast->source(), found.function->loc, error_kind::type,
                         "a fused reduction must end with return luda.sum(e) (or max, min, prod, with an "
                         "optional axis)");
    fused.stat = &found.function->body->stats.back()->as<ReturnStat>();
  }
  for (const Type& t : request.params) LUDA_DSL_CHECK(t.kind == Type::Kind::Scalar || t.kind == Type::Kind::Array);
  KernelOptions options = request.options;
  options.noalias = false;  // a kernel's property: array parameters of a device function stay plain
  TypedProgram program = infer_device_function(found, request.handle, request.name.empty() ? "fn" : request.name,
                                               request.params, options, env,
                                               request.fuse_reduction_as_value ? &fused : nullptr,
                                               request.function.outputs);
  // Bounds checks need an array to index (a raw parameter or a local allocation); without
  // one the functions take no luda_BoundsRecord*.
  options.boundscheck = options.boundscheck && uses_arrays(program);
  program.uses_bounds = options.boundscheck;

  // Names: a first emission gives the content, whose hash every name then carries.
  std::string first = emit_cuda_functions(program, options);
  std::string suffix(1, '_');  // appended, not "_" + ...: GCC 12's -Wrestrict false positive
  suffix += short_hash(first);
  for (auto& f : program.functions) f->c_name += suffix;

  DeviceFunction out;
  EmitInfo emitted;
  out.code = emit_cuda_functions(program, options, &emitted);
  out.needs_fibers = emitted.needs_fibers;
  out.c_name = program.functions.back()->c_name;
  out.result = strong(program.functions.back()->result);
  out.uses_bounds = emitted.error_record;
  out.typed = typed_listing(program);
  out.weak_int_uses = program.functions.back()->weak_int_uses;
  if (options.fastmath) out.nvrtc_options.push_back("--use_fast_math");
  if (options.debug) out.nvrtc_options.push_back("-G");
  return out;
}

std::string device_prelude() { return std::string(cuda_prelude()); }

}  // namespace luda::dsl
