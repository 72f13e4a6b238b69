// What the dsl and codegen tests share: an Environment without a Lua VM (a map of names
// to ExternalValues, with every named function of the chunk as a device function and the
// math/cuda/luda namespaces), and compiling one named function of a Lua chunk.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dsl/compile.h"
#include "dsl/find_function.h"
#include "dsl/infer.h"
#include "dsl/types.h"

namespace luda::dsl::testing {

class TestEnvironment : public Environment {
 public:
  std::map<std::string, ExternalValue> values;

  ExternalValue lookup(FunctionHandle, const std::string& name) override {
    auto it = values.find(name);
    return it == values.end() ? ExternalValue{} : it->second;
  }

  static ExternalValue integer(std::int64_t v) {
    ExternalValue e;
    e.kind = ExternalValue::Kind::Integer;
    e.integer = v;
    return e;
  }
  static ExternalValue number(double v) {
    ExternalValue e;
    e.kind = ExternalValue::Kind::Float;
    e.number = v;
    return e;
  }
  static ExternalValue boolean(bool v) {
    ExternalValue e;
    e.kind = ExternalValue::Kind::Boolean;
    e.boolean = v;
    return e;
  }
  static ExternalValue name_space(std::string n) {
    ExternalValue e;
    e.kind = ExternalValue::Kind::Namespace;
    e.name_space = std::move(n);
    return e;
  }
  static ExternalValue typed(Scalar s, double v) {
    ExternalValue e;
    e.kind = ExternalValue::Kind::Typed;
    e.scalar = s;
    e.number = v;
    e.integer = static_cast<std::int64_t>(v);
    return e;
  }
  static ExternalValue table(std::map<std::string, ExternalValue> fields) {
    ExternalValue e;
    e.kind = ExternalValue::Kind::Table;
    e.fields = std::move(fields);
    return e;
  }
  static ExternalValue other(std::string kind, std::string describe) {
    ExternalValue e;
    e.kind = kind == "array" ? ExternalValue::Kind::Array : ExternalValue::Kind::Other;
    e.describe = std::move(describe);
    return e;
  }
};

// A chunk and the functions it defines by name.
struct TestChunk {
  std::shared_ptr<const Chunk> chunk;
  std::shared_ptr<const Ast> ast;
  TestEnvironment env;

  explicit TestChunk(std::string text, std::string name = "test.lua") {
    chunk = std::make_shared<const Chunk>(Chunk{std::move(name), std::move(text)});
    ast = parsed_chunk(*chunk);
    env.values["math"] = TestEnvironment::name_space("math");
    env.values["cuda"] = TestEnvironment::name_space("cuda");
    env.values["luda"] = TestEnvironment::name_space("luda");
    env.values["print"] = TestEnvironment::name_space("print");
    for (const FunctionExpr* f : ast->functions()) {
      if (f->name.empty()) continue;
      ExternalValue e;
      e.kind = ExternalValue::Kind::Function;
      e.function = source_of(*f);
      e.handle = f;
      env.values[f->name] = e;
    }
  }

  FunctionSource source_of(const FunctionExpr& f) const {
    FunctionSource s;
    s.chunk = chunk;
    s.line_defined = f.line_defined;
    s.last_line_defined = f.last_line_defined;
    s.nparams = f.nparams();
    return s;
  }

  const FunctionExpr& function(const std::string& name) const {
    for (const FunctionExpr* f : ast->functions())
      if (f->name == name) return *f;
    throw std::runtime_error("test chunk has no function " + name);
  }

  KernelRequest request(const std::string& name, std::vector<Type> args, KernelOptions options = {}) const {
    KernelRequest r;
    const FunctionExpr& f = function(name);
    r.function = source_of(f);
    r.handle = &f;
    r.name = name;
    r.args = std::move(args);
    r.options = options;
    return r;
  }

  CudaKernel compile(const std::string& name, std::vector<Type> args, KernelOptions options = {}) {
    return compile_kernel(request(name, std::move(args), options), env);
  }

  TypedProgram infer(const std::string& name, std::vector<Type> args, KernelOptions options = {}) {
    KernelRequest r = request(name, std::move(args), options);
    return infer_kernel(find_function(r.function), r.handle, r.name, r.args, r.options, env);
  }
};

inline Type f32() { return Type::scalar_of(Scalar::Float32); }
inline Type f64() { return Type::scalar_of(Scalar::Float64); }
inline Type i32() { return Type::scalar_of(Scalar::Int32); }
inline Type i64() { return Type::scalar_of(Scalar::Int64); }
inline Type arr(Scalar s, int ndim = 1, bool c = false) { return Type::array_of(s, ndim, c); }

}  // namespace luda::dsl::testing
