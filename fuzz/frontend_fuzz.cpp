// libFuzzer target for the kernel language's front end: chunk text -> parse -> type ->
// emit, for the cuda and the cpu target, with argument types of the input's choosing.
//
// An input is a chunk of Lua whose first line may name the kernel's argument types as a
// signature in Numba's notation (`-- void(float32[:], int64)`); without one (or with one
// that does not parse, or of another length) the types are drawn from a hash of that
// line. The first four functions of the chunk are each compiled as a kernel and as a
// device function (the kinds' path, its array parameters as scalars); every named
// function is visible to the others as a device function, and a few globals stand for
// upvalues of each kind. A SourceError (a user's mistake) is a normal outcome; anything
// else escaping (an internal error, std::out_of_range from a side table, ...), a crash,
// a hang or a sanitizer report is a finding.
//
// A first line `--elementwise IN|OUT` or `--reduction IN|OUT|MAP|REDUCE|POST|IDENTITY`
// takes the kinds' string path instead: parameter strings, then the element function
// built from the rest of the input (the body) or from the expressions, typed with each
// placeholder bound to a dtype drawn from the hash of that line.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dsl/compile.h"
#include "dsl/device_function.h"
#include "dsl/diagnostics.h"
#include "dsl/find_function.h"
#include "dsl/kind_source.h"
#include "dsl/parser.h"
#include "dsl/types.h"

namespace {

using namespace luda::dsl;

// Globals and upvalues as the Lua side would give them: each kind of ExternalValue once,
// the builtin namespaces, and every named function of the chunk.
class FuzzEnvironment : public Environment {
 public:
  std::map<std::string, ExternalValue> values;

  ExternalValue lookup(FunctionHandle, const std::string& name) override {
    auto it = values.find(name);
    return it == values.end() ? ExternalValue{} : it->second;
  }
};

ExternalValue value_of(ExternalValue::Kind kind) {
  ExternalValue v;
  v.kind = kind;
  return v;
}

void add_globals(FuzzEnvironment& env) {
  using K = ExternalValue::Kind;
  for (const char* ns : {"math", "cuda", "luda"}) {
    ExternalValue v = value_of(K::Namespace);
    v.name_space = ns;
    env.values[ns] = v;
  }
  ExternalValue n = value_of(K::Integer);
  n.integer = 16;
  env.values["N"] = n;
  ExternalValue big = value_of(K::Integer);
  big.integer = INT64_MIN;
  env.values["MIN"] = big;
  ExternalValue x = value_of(K::Float);
  x.number = 0.5;
  env.values["X"] = x;
  ExternalValue b = value_of(K::Boolean);
  b.boolean = true;
  env.values["B"] = b;
  ExternalValue typed = value_of(K::Typed);
  typed.scalar = Scalar::Float32;
  typed.number = 2.5;
  env.values["F32"] = typed;
  ExternalValue table = value_of(K::Table);
  table.fields["TILE"] = n;
  table.fields["1"] = x;
  table.fields["sub"] = value_of(K::Table);
  table.fields["sub"].fields["k"] = n;
  env.values["cfg"] = table;
  ExternalValue array = value_of(K::Array);
  array.describe = "an ndarray";
  env.values["arr"] = array;
  ExternalValue other = value_of(K::Other);
  other.describe = "a string";
  env.values["str"] = other;
}

std::uint64_t hash_of(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// `n` argument types from a hash: scalars and arrays of every dtype, 0 to 3 dimensions,
// some C-contiguous.
std::vector<Type> hashed_types(std::uint64_t h, std::size_t n) {
  std::vector<Type> types(n);
  for (Type& t : types) {
    auto scalar = static_cast<Scalar>(h % 11);
    h /= 11;
    if (h % 2) t = Type::array_of(scalar, static_cast<int>((h / 2) % 4), (h / 8) % 2 != 0);
    else t = Type::scalar_of(scalar);
    h = h / 16 + (h % 16) * 0x9e3779b97f4a7c15ull;
  }
  return types;
}

// The types for function number `index` of the chunk (`nparams` parameters): the first
// line's signature when it has that many, else drawn from the first line's hash.
std::vector<Type> argument_types(const std::string& text, std::size_t index, std::size_t nparams) {
  std::string_view line(text);
  line = line.substr(0, line.find('\n'));
  if (line.substr(0, 3) == "-- ") {
    try {
      std::vector<Type> types = parse_signature(line.substr(3)).params;
      if (types.size() == nparams) return types;
    } catch (const SourceError&) {
    }
  }
  return hashed_types(hash_of(line) + 0x9e3779b97f4a7c15ull * (index + 1), nparams);
}

// Runs one compile; a user error is a fine outcome.
template <class F>
void expect_user_errors_only(F&& compile) {
  try {
    compile();
  } catch (const SourceError&) {
  } catch (const std::exception& e) {
    // Not a user's mistake: an internal error or a bug that a library threw for us.
    std::fprintf(stderr, "frontend_fuzz: not a SourceError: %s\n", e.what());
    __builtin_trap();
  }
}

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  for (std::size_t at = 0;;) {
    std::size_t bar = text.find(sep, at);
    parts.push_back(text.substr(at, bar == std::string_view::npos ? std::string_view::npos : bar - at));
    if (bar == std::string_view::npos) return parts;
    at = bar + 1;
  }
}

// The dtypes of a kind's parameters: a placeholder's from the hash, the same for each use.
std::vector<Scalar> bind(const std::vector<KindParam>& in, const std::vector<KindParam>& out, std::uint64_t h) {
  std::vector<Scalar> types;
  for (const auto* list : {&in, &out})
    for (const KindParam& p : *list)
      types.push_back(p.dtype ? *p.dtype : static_cast<Scalar>((h >> (4 * (p.placeholder[0] % 16))) % 11));
  return types;
}

void compile_kind_function(const FunctionSource& function, std::vector<Type> params, FuzzEnvironment& env) {
  DeviceFunctionRequest request;
  request.function = function;
  request.name = "k";
  request.params = std::move(params);
  request.options.target = Target::Cpu;
  compile_device_function(request, env);
}

// `--elementwise IN|OUT` then the body, or `--reduction IN|OUT|MAP|REDUCE|POST|IDENTITY`.
void fuzz_kind(std::string_view first_line, std::string_view rest, FuzzEnvironment& env) {
  bool reduction = first_line.substr(0, 12) == "--reduction ";
  std::vector<std::string_view> parts = split(first_line.substr(reduction ? 12 : 14), '|');
  if (parts.size() < (reduction ? 6u : 2u)) return;
  std::vector<KindParam> in = parse_kind_params(parts[0], "in_params", "fuzz", "k", reduction);
  std::vector<KindParam> out = parse_kind_params(parts[1], "out_params", "fuzz", "k", reduction, &in);
  if (out.empty()) return;
  std::vector<Scalar> types = bind(in, out, hash_of(first_line));
  if (!reduction) {
    ElementwiseFunction ef = elementwise_function(in, out, types, rest, "k");
    std::vector<Type> params;
    for (std::size_t k = 0; k < in.size(); ++k)
      params.push_back(in[k].raw ? Type::array_of(types[k], 1) : Type::scalar_of(types[k]));
    for (std::size_t k = 0; k < out.size(); ++k)
      if (ef.out_read[k]) params.push_back(Type::scalar_of(types[in.size() + k]));
    params.push_back(Type::scalar_of(Scalar::Int64));
    params.push_back(Type::scalar_of(Scalar::Int64));
    compile_kind_function(ef.function, params, env);
    return;
  }
  std::vector<bool> scalar_in(in.size());
  for (std::size_t k = 0; k < in.size(); ++k) scalar_in[k] = (hash_of(parts[0]) >> k) & 1;
  Scalar rt = types[in.size()];
  ReductionFunctions r = reduction_functions(in, out, types, rt, scalar_in, parts[2], parts[3], parts[4], parts[5],
                                             "k");
  std::vector<Type> map_params;
  for (std::size_t k = 0; k < in.size(); ++k) map_params.push_back(Type::scalar_of(types[k]));
  map_params.push_back(Type::scalar_of(Scalar::Int64));
  compile_kind_function(r.map, map_params, env);
  compile_kind_function(r.reduce, {Type::scalar_of(rt), Type::scalar_of(rt)}, env);
  compile_kind_function(r.identity, {}, env);
  std::vector<Type> post_params = {Type::scalar_of(rt)};
  for (int k : r.post_inputs) post_params.push_back(Type::scalar_of(types[static_cast<std::size_t>(k)]));
  compile_kind_function(r.post, post_params, env);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  std::string_view first_line = std::string_view(text).substr(0, text.find('\n'));
  if (first_line.substr(0, 14) == "--elementwise " || first_line.substr(0, 12) == "--reduction ") {
    FuzzEnvironment env;
    add_globals(env);
    std::string_view rest = std::string_view(text).substr(std::min(text.size(), first_line.size() + 1));
    expect_user_errors_only([&] { fuzz_kind(first_line, rest, env); });
    return 0;
  }
  auto chunk = std::make_shared<const Chunk>(Chunk{"fuzz.lua", text});
  std::shared_ptr<const Ast> ast;
  try {
    ast = parsed_chunk(*chunk);
  } catch (const SourceError&) {
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "frontend_fuzz: not a SourceError: %s\n", e.what());
    __builtin_trap();
  }
  FuzzEnvironment env;
  add_globals(env);
  for (const FunctionExpr* f : ast->functions()) {
    if (f->name.empty()) continue;
    ExternalValue v = value_of(ExternalValue::Kind::Function);
    v.function = FunctionSource{chunk, f->line_defined, f->last_line_defined, f->nparams(), {}};
    v.handle = f;
    env.values[f->name] = v;
  }
  std::size_t index = 0;
  for (const FunctionExpr* f : ast->functions()) {
    if (++index > 4) break;
    std::vector<Type> types = argument_types(text, index, static_cast<std::size_t>(f->nparams()));
    for (int variant = 0; variant < 4; ++variant) {
      KernelRequest request;
      request.function = FunctionSource{chunk, f->line_defined, f->last_line_defined, f->nparams(), {}};
      request.handle = f;
      request.name = f->name;
      request.args = types;
      request.options.target = variant % 2 ? Target::Cpu : Target::Cuda;
      request.options.boundscheck = variant >= 2;
      request.options.noalias = variant == 1;
      expect_user_errors_only([&] { compile_kernel(request, env); });
    }
    DeviceFunctionRequest request;
    request.function = FunctionSource{chunk, f->line_defined, f->last_line_defined, f->nparams(), {}};
    request.handle = f;
    request.name = f->name;
    for (const Type& t : types) {
      Type scalar = Type::scalar_of(t.scalar, t.kind == Type::Kind::Scalar && t.scalar == Scalar::Float64);
      request.params.push_back(t.kind == Type::Kind::Array && t.ndim == 1 ? t : scalar);
    }
    request.options.target = Target::Cpu;
    expect_user_errors_only([&] { compile_device_function(request, env); });
    // fuse: a function ending in `return luda.sum(e, axis)` is also its element value.
    expect_user_errors_only([&] {
      if (!analyze_fuse(request.function).reduction) return;
      request.fuse_reduction_as_value = true;
      compile_device_function(request, env);
    });
  }
  return 0;
}
