// CUDA C++ emission of functions and statements: each reachable function's signature
// (the kernel's `extern "C" __global__` one, a device function's `static __device__` one)
// and, for the cpu target, its per-thread and per-block entries; statements, each after
// a #line directive into the Lua chunk; Lua 5.4's numeric 'for'; and emit_cuda_functions,
// which emits the program again when a pass finds it needs what that pass did not assume.
// Expressions are emitted by codegen_expr.cpp.
#include "dsl/codegen_cuda.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "dsl/codegen_internal.h"
#include "dsl/prelude.h"
#include "dsl/stack_guard.h"

namespace luda::dsl {

namespace detail {

namespace {

std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// Whether `for (T i = start; i <= limit; i += step)` (>= counting down) ends without the
// counter overflowing: limit + step stays in T's range.
bool plain_loop_is_safe(const Constant& limit, const Constant& step, int sign, Scalar t) {
  using i128 = __int128;
  int bits = scalar_bits(t);
  bool sign_t = is_signed(t);
  auto value = [&](const Constant& c) -> i128 {
    if (sign_t) return static_cast<i128>(c.i);
    return static_cast<i128>(static_cast<std::uint64_t>(c.i));
  };
  i128 lo = sign_t ? -(i128{1} << (bits - 1)) : 0;
  i128 hi = sign_t ? (i128{1} << (bits - 1)) - 1 : (i128{1} << bits) - 1;
  i128 l = value(limit);
  // An unsigned counter adds a negative step as its wrapped value: it subtracts.
  i128 s = value(step);
  if (!sign_t && sign < 0) s -= i128{1} << bits;
  return sign > 0 ? l + s <= hi : l + s >= lo;
}

}  // namespace

void Emitter::function() {
  const FunctionExpr& f = *tf_.function;
  std::string result = c_type(tf_.result);
  if (tf_.result.kind == Type::Kind::Tuple) {
    result = tf_.c_name + "_result";
    out_ += fmt::format("struct {} {{", result);
    for (std::size_t i = 0; i < tf_.result.elements.size(); ++i)
      out_ += fmt::format(" {} v{};", c_type(tf_.result.elements[i]), i);
    out_ += " };\n";
  }
  line(f.loc.line);
  // A parameter assigned a wider value than its argument (infer.cpp, assign) takes the
  // argument under another name and is a local of its own type.
  std::string params, widened;
  for (std::size_t i = 0; i < tf_.params.size(); ++i) {
    const Variable& v = tf_.vars[i];
    if (c_type(v.type) == c_type(tf_.params[i])) {
      params += fmt::format("{}{} {}", i ? ", " : "", c_type(tf_.params[i]), v.c_name);
      continue;
    }
    params += fmt::format("{}{} {}_arg", i ? ", " : "", c_type(tf_.params[i]), v.c_name);
    widened += fmt::format("  {0} {1} = luda_cvt<{0}>({1}_arg);\n", c_type(v.type), v.c_name);
  }
  if (state_.record) params += std::string(params.empty() ? "" : ", ") + "luda_BoundsRecord* luda_bounds";
  if (tf_.is_kernel) out_ += fmt::format("extern \"C\" __global__ void {}({}) {{\n", tf_.c_name, params);
  else out_ += fmt::format("static __device__ {} {}({}) {{\n", result, tf_.c_name, params);
  out_ += widened;
  depth_ = 1;
  if (tf_.is_kernel && options_.noalias) restrict_array_params();
  block(*f.body);
  bool returns_last = !f.body->stats.empty() && f.body->stats.back()->is<ReturnStat>();
  if (!tf_.is_kernel && tf_.result.kind != Type::Kind::Void && !returns_last) {
    // Lua would return nil when control reaches the end; a device function returns zeros.
    indent();
    out_ += "return {};\n";
  }
  out_ += "}\n\n";
  if (tf_.is_kernel && options_.target == Target::Cpu) cpu_entry();
}

// The cpu target's per-thread entry (compile.h, Target). A thread that fails a bounds
// check or a 'for' step ends by throwing luda_cpu_exit (jit/compile/cpu_prelude.cpp), caught here.
void Emitter::cpu_entry() {
  std::string args, block_locals, block_args;
  for (std::size_t i = 0; i < tf_.params.size(); ++i) {
    std::string type = c_type(tf_.params[i]);
    args += fmt::format("{}*({}*)luda_args[{}]", i ? ", " : "", type, i);
    block_locals += fmt::format("  const {0} luda_a{1} = *({0}*)luda_args[{1}];\n", type, i);
    block_args += fmt::format("{}luda_a{}", i ? ", " : "", i);
  }
  if (state_.record) {
    std::size_t n = tf_.params.size();
    args += fmt::format("{}*(luda_BoundsRecord**)luda_args[{}]", n ? ", " : "", n);
    block_locals += fmt::format("  luda_BoundsRecord* const luda_a{0} = *(luda_BoundsRecord**)luda_args[{0}];\n", n);
    block_args += fmt::format("{}luda_a{}", n ? ", " : "", n);
  }
  // Only a failed check throws; without the record the call needs no handler.
  auto guarded = [&](const std::string& call) {
    return state_.record ? fmt::format("try {{ {}; }} catch (const luda_cpu_exit&) {{}}", call) : call + ";";
  };
  out_ += "#line 1 \"luda_cpu_entry\"\n";
  out_ += fmt::format("LUDA_CPU_EXPORT void {}_cpu(void* const* luda_args) {{\n  {}\n}}\n", tf_.c_name,
                      guarded(fmt::format("{}({})", tf_.c_name, args)));
  out_ += fmt::format("extern \"C\" {{ LUDA_CPU_VISIBLE int {}_cpu_needs_fibers = {}; }}\n", tf_.c_name,
                      state_.fibers ? 1 : 0);
  if (state_.grid_sync)
    out_ += fmt::format("extern \"C\" {{ LUDA_CPU_VISIBLE int {}_cpu_cooperative = 1; }}\n", tf_.c_name);
  if (state_.fibers) return;
  // A whole block in one call (runtime/cpu_abi.h): the kernel inlines into the loop.
  out_ += fmt::format("LUDA_CPU_EXPORT void {0}_cpu_block(void* const* luda_args, luda_cpu_thread* luda_t) {{\n"
                      "{1}"
                      "  *luda_cpu_current_slot() = luda_t;\n"
                      "  const luda_cpu_dim3 luda_n = luda_cpu_block_dim(luda_t);\n"
                      "  unsigned luda_linear = 0;\n"
                      "  for (unsigned luda_z = 0; luda_z < luda_n.z; ++luda_z)\n"
                      "    for (unsigned luda_y = 0; luda_y < luda_n.y; ++luda_y)\n"
                      "      for (unsigned luda_x = 0; luda_x < luda_n.x; ++luda_x, ++luda_linear) {{\n"
                      "        luda_cpu_enter(luda_t, luda_x, luda_y, luda_z, luda_linear);\n"
                      "        {2}\n"
                      "      }}\n"
                      "}}\n",
                      tf_.c_name, block_locals, guarded(fmt::format("{}({})", tf_.c_name, block_args)));
}

// With noalias (no two array arguments overlap: the launcher checked), each array
// parameter that is only indexed gets a __restrict__ data pointer, const when the kernel
// never stores into it. An array handed to any call (atomics, device functions) keeps
// its plain struct: restrict must cover every access, and those go through the struct.
// Any other array-typed local could alias a parameter, so then nothing is restricted.
void Emitter::restrict_array_params() {
  std::size_t nparams = tf_.params.size();
  for (std::size_t v = nparams; v < tf_.vars.size(); ++v)
    if (tf_.vars[v].has_type && tf_.vars[v].type.kind == Type::Kind::Array && tf_.vars[v].alloc == Builtin::Alloc::None)
      return;
  std::vector<char> stored(nparams, 0), called(nparams, 0);
  auto root_param = [&](const Expr* e) -> int {
    while (e->is<IndexExpr>() || e->is<ParenExpr>())
      e = e->is<IndexExpr>() ? e->as<IndexExpr>().object : e->as<ParenExpr>().inner;
    if (!e->is<NameExpr>()) return -1;
    int v = info(*e).var;
    return v >= 0 && static_cast<std::size_t>(v) < nparams ? v : -1;
  };
  const Ast& ast = *tf_.ast;
  for (int id = 0; id < ast.node_count(); ++id) {
    const Node& n = ast.node(id);
    if (n.is<AssignStat>()) {
      for (const Expr* t : n.as<AssignStat>().targets)
        if (int p = root_param(t); p >= 0) stored[p] = 1;
    } else if (n.is<CallExpr>() || n.is<MethodCallExpr>()) {
      // An array (or a row of one) handed over; an element value (x[i]) is only a read.
      const auto& args = n.is<CallExpr>() ? n.as<CallExpr>().args : n.as<MethodCallExpr>().args;
      for (const Expr* a : args)
        if (info(*a).type.kind == Type::Kind::Array)
          if (int p = root_param(a); p >= 0) called[p] = 1;
    }
  }
  for (std::size_t p = 0; p < nparams; ++p) {
    const Type& t = tf_.params[p];
    if (t.kind != Type::Kind::Array || called[p]) continue;
    const std::string& name = tf_.vars[p].c_name;
    std::string alias = name + "_data";
    put(fmt::format("{}{}* __restrict__ const {} = {}.data;", stored[p] ? "" : "const ", scalar_c_type(t.scalar), alias,
                    name));
    data_alias_[name] = alias;
  }
}

// A loop's body and its back-edge. In a cpu kernel whose threads may wait for one another
// (atomics or fences, and a while or repeat loop) an open loop's back-edge lets the
// block's other threads run (luda_yield), as a GPU's scheduler would, so that a
// spin-wait between threads of a block ends. (A stop request needs nothing here: the
// executor stops kernel code by a signal, runtime/cpu_guard.h.)
void Emitter::loop_body(const Block& b, bool open) {
  ++depth_;
  block(b);
  back_edge(open);
  --depth_;
}

void Emitter::back_edge(bool open) {
  if (options_.target == Target::Cpu && open && state_.yields) put("luda_yield();");
}

// Whether `e`, converted to `t`, is known to be positive: a positive constant, the
// grid's or a block's size, or a local that holds one and is never assigned again.
// Such a 'for' step needs no test against zero.
bool Emitter::positive(const Expr& e, const Type& t) const {
  const ExprInfo& ei = info(e);
  if (ei.constant) return ei.constant->kind == Constant::Kind::Float ? ei.constant->f > 0 : ei.constant->i > 0;
  if (const auto* p = e.dyn<ParenExpr>()) return positive(*p->inner, t);
  if (ei.var >= 0) return positive_locals_.count(ei.var) != 0;
  if (!ei.builtin || t.kind != Type::Kind::Scalar) return false;
  // A size stays positive in a float, or in an integer as wide as the row's type.
  const Builtin& row = *ei.builtin;
  return row.positive && (is_float(t.scalar) || scalar_bits(t.scalar) >= scalar_bits(row.scalar));
}

void Emitter::line(int n) { out_ += fmt::format("#line {} {}\n", n, quoted(tf_.ast->source().name())); }

void Emitter::block(const Block& b) {
  for (const Stat* s : b.stats) stat(*s);
}

void Emitter::body(const Block& b) {
  ++depth_;
  block(b);
  --depth_;
}

// ---------------------------------------------------------------- statements

void Emitter::stat(const Stat& s) {
  if (stack_low()) throw node_error(*tf_.ast, s, error_kind::unsupported, kStackLowMessage);
  std::size_t mark = out_.size();
  line(s.loc.line);
  std::size_t after_line = out_.size();
  stat_body(s);
  if (out_.size() == after_line) out_.resize(mark);  // nothing emitted (a constant local)
}

void Emitter::stat_body(const Stat& s) {
  switch (s.kind) {
    case NodeKind::Local: local(s.as<LocalStat>()); break;
    case NodeKind::Assign: assign(s.as<AssignStat>()); break;
    case NodeKind::CallStat: call_stat(s.as<CallStat>()); break;
    case NodeKind::Do:
      put("{");
      body(*s.as<DoStat>().body);
      put("}");
      break;
    case NodeKind::While:
      state_.open_loops = true;
      open_while(s.as<WhileStat>());
      loop_body(*s.as<WhileStat>().body, true);
      put("}");
      break;
    case NodeKind::Repeat: {
      // The condition sees the body's locals, so it is tested inside the body's block.
      const auto& r = s.as<RepeatStat>();
      state_.open_loops = true;
      put("for (;;) {");
      body(*r.body);
      close_repeat(r);
      break;
    }
    case NodeKind::If: {
      const auto& i = s.as<IfStat>();
      for (std::size_t k = 0; k < i.clauses.size(); ++k) {
        open_clause(i, k);
        body(*i.clauses[k].body);
      }
      if (i.else_body) {
        put("} else {");
        body(*i.else_body);
      }
      put("}");
      break;
    }
    case NodeKind::NumericFor: numeric_for(s.as<NumericForStat>()); break;
    case NodeKind::Return: return_stat(s.as<ReturnStat>()); break;
    case NodeKind::Break: put("break;"); break;
    default: LUDA_DSL_CHECK(!"statement rejected by inference");
  }
}

// The parts of compound statements around their bodies, out of the frames that repeat
// once per level of nesting.
void Emitter::call_stat(const CallStat& c) { put(strip(emit(*c.call)) + ";"); }

void Emitter::open_while(const WhileStat& w) { put(fmt::format("while ({}) {{", strip(emit(*w.cond)))); }

void Emitter::close_repeat(const RepeatStat& r) {
  ++depth_;
  line(r.cond->loc.line);
  put(fmt::format("if ({}) break;", strip(emit(*r.cond))));
  back_edge(true);
  --depth_;
  put("}");
}

void Emitter::open_clause(const IfStat& i, std::size_t k) {
  if (k) line(i.clauses[k].loc.line);
  std::string cond = strip(emit(*i.clauses[k].cond));
  put(k ? fmt::format("}} else if ({}) {{", cond) : fmt::format("if ({}) {{", cond));
}

// The values of a list after Lua's adjustment: a last call gives all its values
// (through a temporary holding the tuple).
std::vector<std::pair<std::string, Type>> Emitter::values(const std::vector<const Expr*>& list) {
  std::vector<std::pair<std::string, Type>> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Expr& e = *list[i];
    const ExprInfo& ei = info(e);
    bool last = i + 1 == list.size();
    if (last && ei.type.kind == Type::Kind::Tuple && !ei.first_of_tuple) {
      std::string t = temp("t");
      put(fmt::format("auto {} = {};", t, strip(emit(e))));
      for (std::size_t k = 0; k < ei.type.elements.size(); ++k)
        out.push_back({fmt::format("{}.v{}", t, k), ei.type.elements[k]});
    } else {
      out.push_back({"", Type::void_()});  // emitted by the caller, with its conversion
    }
  }
  return out;
}

std::string Emitter::value_as(const std::vector<const Expr*>& list, std::vector<std::pair<std::string, Type>>& vals,
                              std::size_t i, const Type& to) {
  if (!vals[i].first.empty()) return convert(vals[i].first, vals[i].second, to);
  return emit_as(*list[i], to);
}

void Emitter::local(const LocalStat& l) {
  const auto& vars = tf_.declared.at(l.id);
  auto vals = values(l.values);
  for (std::size_t i = 0; i < vars.size(); ++i) {
    const Variable& v = var(vars[i]);
    if (v.is_alias || !v.has_type) continue;
    if (v.alloc != Builtin::Alloc::None) {
      allocation(v);
      continue;
    }
    if (i < vals.size())
      put(fmt::format("{} {} = {};", c_type(v.type), v.c_name, strip(value_as(l.values, vals, i, v.type))));
    else put(fmt::format("{} {}{{}};", c_type(v.type), v.c_name));
    if (v.assignments == 0 && i < l.values.size() && vals[i].first.empty() && positive(*l.values[i], v.type))
      positive_locals_.insert(vars[i]);
  }
  // Values beyond the names are still evaluated (a call may have effects).
  for (std::size_t i = vars.size(); i < l.values.size(); ++i)
    if (l.values[i]->is<CallExpr>() && vals[i].first.empty()) put(strip(emit(*l.values[i])) + ";");
}

void Emitter::allocation(const Variable& v) {
  const char* elem = scalar_c_type(v.type.scalar);
  if (v.alloc == Builtin::Alloc::DynamicShared) {
    put(fmt::format(
        "luda_Array<{0}, 1> {1} = {{({0}*)luda_dynamic_shared, {{luda_dynamic_shared_bytes() / (long long)sizeof({0})}}, {{1}}}};",
        elem, v.c_name));
    return;
  }
  long long total = 1;
  std::string shape, strides;
  std::vector<long long> stride(v.shape.size(), 1);
  for (std::size_t k = v.shape.size(); k-- > 1;) stride[k - 1] = stride[k] * v.shape[k];
  for (std::size_t k = 0; k < v.shape.size(); ++k) {
    total *= v.shape[k];
    shape += fmt::format("{}{}", k ? ", " : "", v.shape[k]);
    strides += fmt::format("{}{}", k ? ", " : "", stride[k]);
  }
  if (v.alloc == Builtin::Alloc::Local)
    state_.local_bytes += static_cast<std::size_t>(total) * static_cast<std::size_t>(scalar_bits(v.type.scalar) / 8);
  put(fmt::format("{}{} {}_storage[{}];", v.alloc == Builtin::Alloc::Shared ? "__shared__ " : "", elem, v.c_name,
                  total));
  put(fmt::format("luda_Array<{}, {}> {} = {{{}_storage, {{{}}}, {{{}}}}};", elem, v.shape.size(), v.c_name, v.c_name,
                  shape, strides));
}

void Emitter::assign(const AssignStat& a) {
  auto vals = values(a.values);
  auto target_of = [&](const Expr& t) -> std::pair<std::string, Type> {
    if (t.is<NameExpr>()) {
      const Variable& v = var(info(t).var);
      return {v.c_name, v.type};
    }
    return {element(t.as<IndexExpr>()), info(t).type};
  };
  if (a.targets.size() == 1) {
    auto [target, type] = target_of(*a.targets[0]);
    put(fmt::format("{} = {};", target, strip(value_as(a.values, vals, 0, type))));
    return;
  }
  // Lua evaluates every value before assigning any: a, b = b, a swaps.
  std::vector<std::string> temps;
  for (std::size_t i = 0; i < a.targets.size(); ++i) {
    Type type = target_of(*a.targets[i]).second;
    std::string t = temp("v");
    put(fmt::format("{} {} = {};", c_type(type), t, strip(value_as(a.values, vals, i, type))));
    temps.push_back(t);
  }
  for (std::size_t i = 0; i < a.targets.size(); ++i)
    put(fmt::format("{} = {};", target_of(*a.targets[i]).first, temps[i]));
}

// for v = start, limit [, step], with Lua 5.4's meaning. A float loop runs as written
// (the counter is added to and tested each time). An integer loop is Lua's forprep:
// start, limit and step are evaluated once, in that order; a float limit is floored
// (ceiled counting down) and clipped to the counter's range (luda_for_limit); the number
// of iterations is computed before the first, so the counter never overflows (a loop up
// to math.maxinteger ends) and the compiler sees a counted loop. Only a loop whose
// constant limit and step cannot overflow keeps the plain C++ form.
void Emitter::numeric_for(const NumericForStat& f) {
  int blocks = numeric_for_open(f);
  loop_body(*f.body, false);
  put("}");
  for (int k = 0; k < blocks; ++k) {
    --depth_;
    put("}");
  }
}

// Everything before the body; returns how many blocks around the C++ `for` to close.
int Emitter::numeric_for_open(const NumericForStat& f) {
  const Variable& v = var(tf_.declared.at(f.id)[0]);
  Type t = v.type;
  std::string type = c_type(t);
  auto hoist = [&](const Expr* e, std::string_view what) -> std::string {
    if (!e) return cuda_literal(Constant::of_int(1), t.scalar);
    const ExprInfo& ei = info(*e);
    std::string text = emit_as(*e, t);
    if (ei.constant) return text;
    if (e->is<NameExpr>() && ei.var >= 0 && var(ei.var).assignments == 0) return text;
    std::string name = temp(what);
    put(fmt::format("const {} {} = {};", type, name, strip(text)));
    return name;
  };
  put("{");
  ++depth_;
  // The step's sign when it is a constant (as written: -1 counts down an unsigned loop
  // too), else 0.
  std::optional<Constant> step_value;
  int step_sign = 1;
  // A constant step of zero raises (step_zero_check) and is then treated as a run-time
  // step, whose loop runs no iteration.
  bool zero = f.step && info(*f.step).constant &&
              (info(*f.step).constant->kind == Constant::Kind::Float ? info(*f.step).constant->f == 0
                                                                     : info(*f.step).constant->i == 0);
  if (f.step && info(*f.step).constant && !zero) {
    const Constant& c = *info(*f.step).constant;
    step_sign = (c.kind == Constant::Kind::Float ? c.f < 0 : c.i < 0) ? -1 : 1;
    step_value = convert_constant(c, info(*f.step).type.scalar, t.scalar);
  } else if (f.step) {
    step_sign = 0;
  } else {
    step_value = Constant::of_int(1);
  }
  std::string counter = v.assignments > 0 ? temp("i") : v.c_name;
  const ExprInfo& li = info(*f.limit);
  if (!t.is_int() || (step_value && li.constant && !li.type.is_floating() &&
                      plain_loop_is_safe(convert_constant(*li.constant, li.type.scalar, t.scalar), *step_value,
                                         step_sign, t.scalar))) {
    std::string limit = hoist(f.limit, "limit");
    std::string step = hoist(f.step, "step");
    step_zero_check(f, step, t, zero, step_sign);
    std::string start = strip(emit_as(*f.start, t));
    std::string test = step_sign > 0   ? fmt::format("{} <= {}", counter, limit)
                       : step_sign < 0 ? fmt::format("{} >= {}", counter, limit)
                                       : fmt::format("{0} > 0 ? {1} <= {2} : {1} >= {2}", step, counter, limit);
    std::string advance = step == "1LL" || step == "1" ? "++" + counter : fmt::format("{} += {}", counter, step);
    put(fmt::format("for ({} {} = {}; {}; {}) {{", type, counter, start, test, advance));
    loop_variable(v, type, counter);
    return 1;
  }
  std::string first = temp("first");
  put(fmt::format("const {} {} = {};", type, first, strip(emit_as(*f.start, t))));
  std::string limit, runs;
  if (li.type.is_floating()) {
    std::string bound = temp("bound");
    put(fmt::format("const {} {} = {};", c_type(li.type), bound, strip(emit(*f.limit))));
    std::string step = hoist(f.step, "step");
    step_zero_check(f, step, t, zero, step_sign);
    limit = temp("limit");
    runs = temp("runs");
    put(fmt::format("{} {};", type, limit));
    std::string down = step_sign < 0 ? "1" : step_sign > 0 ? "0" : fmt::format("luda_negative({})", step);
    put(fmt::format("const bool {} = luda_for_limit({}, {}, &{});", runs, bound, down, limit));
    return counted_for_open(v, type, counter, first, limit, step, step_value, step_sign, runs, t.scalar);
  }
  limit = hoist(f.limit, "limit");
  std::string step = hoist(f.step, "step");
  step_zero_check(f, step, t, zero, step_sign);
  return counted_for_open(v, type, counter, first, limit, step, step_value, step_sign, runs, t.scalar);
}

// Lua raises "'for' step is zero" before the first iteration: so does the kernel,
// through the record, unless the step is known to be nonzero.
void Emitter::step_zero_check(const NumericForStat& f, const std::string& step, const Type& t, bool zero,
                              int step_sign) {
  if (!zero && (step_sign != 0 || positive(*f.step, t))) return;
  state_.step_checks = true;
  put(zero ? fmt::format("luda_step_zero(luda_bounds, {});", f.loc.line)
           : fmt::format("if ({} == 0) luda_step_zero(luda_bounds, {});", step, f.loc.line));
}

// Lua's forprep: the iteration count first, then a loop that runs it down. Opens `if`
// and `for`; returns 2 (the blocks to close besides the `for`).
int Emitter::counted_for_open(const Variable& v, const std::string& type, const std::string& counter,
                              const std::string& first, const std::string& limit, const std::string& step,
                              const std::optional<Constant>& step_value, int step_sign, const std::string& runs,
                              Scalar t) {
  std::string count = temp("count"), n = temp("n");
  std::string test = step_sign > 0 ? fmt::format("{} <= {}", first, limit)
                     : step_sign < 0
                         ? fmt::format("{} >= {}", first, limit)
                         : fmt::format("{0} != 0 && ({0} > 0 ? {1} <= {2} : {1} >= {2})", step, first, limit);
  put(fmt::format("if ({}{}) {{", runs.empty() ? "" : runs + " && ", test));
  ++depth_;
  if (step_sign != 0) {
    // The step's magnitude, known now: what one iteration adds (or takes away).
    std::uint64_t magnitude = static_cast<std::uint64_t>(step_value->i);
    int bits = scalar_bits(t);
    std::uint64_t mask = bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
    if (step_sign < 0) magnitude = (0 - magnitude) & mask;
    std::string distance = step_sign > 0 ? fmt::format("(unsigned long long){} - (unsigned long long){}", limit, first)
                                         : fmt::format("(unsigned long long){} - (unsigned long long){}", first, limit);
    put(magnitude == 1 ? fmt::format("const unsigned long long {} = {};", count, distance)
                       : fmt::format("const unsigned long long {} = ({}) / {}ull;", count, distance, magnitude));
  } else {
    put(fmt::format("const unsigned long long {} = {} > 0", count, step));
    put(fmt::format("    ? ((unsigned long long){0} - (unsigned long long){1}) / (unsigned long long){2}", limit, first,
                    step));
    put(fmt::format(
        "    : ((unsigned long long){0} - (unsigned long long){1}) / ((unsigned long long)(-({2} + 1)) + 1ull);", first,
        limit, step));
  }
  put(fmt::format("{} {} = {};", type, counter, first));
  put(fmt::format(
      "for (unsigned long long {0} = {1} + 1; {0} != 0; --{0}, {2} = ({3})((unsigned long long){2} + (unsigned long long){4})) {{",
      n, count, counter, type, step));
  loop_variable(v, type, counter);
  return 2;
}

// The loop variable is a fresh local in each iteration: assigning it does not change
// the loop (a copy of the counter when the body assigns it).
void Emitter::loop_variable(const Variable& v, const std::string& type, const std::string& counter) {
  if (counter == v.c_name) return;
  ++depth_;
  put(fmt::format("{} {} = {};", type, v.c_name, counter));
  --depth_;
}

void Emitter::return_stat(const ReturnStat& r) {
  if (tf_.is_kernel || r.values.empty()) {
    put("return;");
    return;
  }
  // fuse: the reductions' element values
  const std::vector<const Expr*>& list = &r == tf_.fused.stat ? tf_.fused.values : r.values;
  auto vals = values(list);
  if (tf_.result.kind != Type::Kind::Tuple) {
    put(fmt::format("return {};", strip(value_as(list, vals, 0, tf_.result))));
    return;
  }
  std::string fields;
  for (std::size_t i = 0; i < tf_.result.elements.size(); ++i)
    fields += (i ? ", " : "") + strip(value_as(list, vals, i, tf_.result.elements[i]));
  put(fmt::format("return {}_result{{{}}};", tf_.c_name, fields));
}

}  // namespace detail

std::string emit_cuda_functions(const TypedProgram& program, const KernelOptions& options, EmitInfo* info) {
  detail::EmitState state;
  state.record = options.boundscheck;
  std::string out;
  for (int pass = 0; pass < 2; ++pass) {
    for (const TypedFunction* f : reachable_functions(program))
      detail::Emitter(program, *f, options, out, state).function();
    bool record = state.record || state.step_checks;
    bool yields = options.target == Target::Cpu && program.kernel().is_kernel && state.atomics && state.open_loops;
    if (record == state.record && yields == state.yields) break;
    state = detail::EmitState{record, yields};
    state.fibers = yields;  // a thread can only let others run as a fiber
    out.clear();
  }
  if (info) *info = EmitInfo{state.fibers, state.grid_sync, state.record, state.local_bytes};
  return out;
}

std::string emit_declarations(const TypedProgram& program) {
  if (program.declared.empty()) return "";
  std::string out = "#line 1 \"luda_declared\"\n";
  for (const auto& d : program.declared) {
    const char* result = d->result.kind == Type::Kind::Void ? "void" : scalar_c_type(d->result.scalar);
    out += fmt::format("extern \"C\" __device__ {} {}(", result, d->name);
    for (std::size_t i = 0; i < d->params.size(); ++i)
      out += fmt::format("{}{}{}", i ? ", " : "", scalar_c_type(d->params[i].scalar),
                         d->params[i].kind == Type::Kind::Array ? "*" : "");
    out += ");\n";
  }
  return out;
}

std::vector<std::shared_ptr<const Chunk>> linked_sources(const std::vector<std::shared_ptr<const Chunk>>& link,
                                                         const TypedProgram& program) {
  std::vector<std::shared_ptr<const Chunk>> out;
  auto add = [&](const std::shared_ptr<const Chunk>& c) {
    for (const auto& o : out)
      if (o == c || (o->name == c->name && o->text == c->text)) return;
    out.push_back(c);
  };
  for (const auto& c : link) add(c);
  for (const auto& d : program.declared)
    for (const auto& c : d->link) add(c);
  return out;
}

std::string emit_linked(const std::vector<std::shared_ptr<const Chunk>>& sources) {
  if (sources.empty()) return "";
  std::string out;
  for (const auto& c : sources) out += fmt::format("#line 1 {}\n{}\n", detail::quoted(c->name), c->text);
  return out + "#line 1 \"luda_generated\"\n";
}

std::string emit_cuda(const TypedProgram& program, const KernelOptions& options, EmitInfo* info,
                      std::string_view before_functions) {
  EmitInfo emitted;
  std::string functions = emit_cuda_functions(program, options, &emitted);
  std::string out = emitted.cooperative ? "#include <cooperative_groups.h>\n" : "";
  out += cuda_prelude();
  out += before_functions;
  out += functions;
  if (info) *info = emitted;
  return out;
}

}  // namespace luda::dsl
