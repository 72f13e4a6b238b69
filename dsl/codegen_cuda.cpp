#include "dsl/codegen_cuda.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <set>
#include <cmath>

#include <fmt/format.h>

#include "dsl/prelude.h"
#include "dsl/stack_guard.h"

namespace luda::dsl {

std::string cuda_literal(const Constant& c, Scalar type) {
  if (type == Scalar::Bool) return (c.kind == Constant::Kind::Bool ? c.b : c.i != 0) ? "true" : "false";
  Constant v = c.kind == Constant::Kind::Bool ? Constant::of_int(c.b) : c;
  if (is_float(type)) {
    double d = v.kind == Constant::Kind::Float ? v.f : static_cast<double>(v.i);
    bool f32 = type == Scalar::Float32;
    if (std::isnan(d)) return f32 ? "__int_as_float(0x7fffffff)" : "__longlong_as_double(0x7ff8000000000000LL)";
    if (std::isinf(d)) {
      if (f32) return d > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)";
      return d > 0 ? "__longlong_as_double(0x7ff0000000000000LL)" : "__longlong_as_double(0xfff0000000000000LL)";
    }
    char buf[64];
    auto r = f32 ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(d))
                 : std::to_chars(buf, buf + sizeof buf, d);
    std::string text(buf, r.ptr);
    if (text.find_first_of(".e") == std::string::npos) text += ".0";
    if (f32) text += "f";
    return d < 0 || (d == 0 && std::signbit(d)) ? "(" + text + ")" : text;
  }
  std::int64_t i = v.i;
  switch (type) {
    case Scalar::Int64:
      if (i == INT64_MIN) return "(-9223372036854775807LL - 1)";
      return i < 0 ? fmt::format("({}LL)", i) : fmt::format("{}LL", i);
    case Scalar::Int32:
      if (i == INT32_MIN) return "(-2147483647 - 1)";
      return i < 0 ? fmt::format("({})", i) : fmt::format("{}", i);
    case Scalar::UInt64: return fmt::format("{}ull", static_cast<std::uint64_t>(i));
    case Scalar::UInt32: return fmt::format("{}u", static_cast<std::uint64_t>(i));
    default: return fmt::format("(({}){})", scalar_c_type(type), i);
  }
}

namespace {

std::string c_type(const Type& t) {
  switch (t.kind) {
    case Type::Kind::Void: return "void";
    case Type::Kind::Scalar: return scalar_c_type(t.scalar);
    case Type::Kind::Array: return fmt::format("luda_Array<{}, {}>", scalar_c_type(t.scalar), t.ndim);
    case Type::Kind::Tuple: return "auto";
  }
  return "?";
}

// "(a + b)" -> "a + b" when the outer parentheses enclose the whole text.
std::string strip(std::string s) {
  if (s.size() < 2 || s.front() != '(' || s.back() != ')') return s;
  int depth = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '(') ++depth;
    else if (s[i] == ')' && --depth == 0 && i + 1 != s.size()) return s;
  }
  return s.substr(1, s.size() - 2);
}

std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// What the Emitters of one program share. What the program needs is known only once all
// of it is emitted, so emit_cuda_functions emits it again when the first pass found that
// it needs the record or yielding back-edges that the pass did not assume.
struct EmitState {
  // Assumed by a pass:
  bool record = false;  // every function takes the luda_BoundsRecord* (checks, 'for' steps)
  bool yields = false;  // cpu: open loops let the block's other threads run (fibers)
  // Found by a pass:
  bool fibers = false;       // a barrier or a warp function is called
  bool step_checks = false;  // a 'for' step is tested against zero at run time
  bool atomics = false;      // an atomic or a fence: threads may wait for one another
  bool open_loops = false;   // a while or repeat loop
  std::size_t local_bytes = 0;  // cuda.local_array storage
};

class Emitter {
 public:
  Emitter(const TypedProgram& program, const TypedFunction& tf, const KernelOptions& options, std::string& out,
          EmitState& state)
      : program_(program), tf_(tf), options_(options), out_(out), state_(state) {}

  void function() {
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
    std::string params;
    for (std::size_t i = 0; i < tf_.params.size(); ++i)
      params += fmt::format("{}{} {}", i ? ", " : "", c_type(tf_.params[i]), tf_.vars[i].c_name);
    if (state_.record) params += std::string(params.empty() ? "" : ", ") + "luda_BoundsRecord* luda_bounds";
    if (tf_.is_kernel) out_ += fmt::format("extern \"C\" __global__ void {}({}) {{\n", tf_.c_name, params);
    else out_ += fmt::format("static __device__ {} {}({}) {{\n", result, tf_.c_name, params);
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

 private:
  // The cpu target's per-thread entry (compile.h, Target). A thread that fails a bounds
  // check or a 'for' step ends by throwing luda_cpu_exit (jit/cpu_prelude.cpp), caught here.
  void cpu_entry() {
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
    if (state_.fibers) return;
    // A whole block in one call (runtime/cpu_abi.h): the kernel inlines into the loop.
    out_ += fmt::format(
        "LUDA_CPU_EXPORT void {0}_cpu_block(void* const* luda_args, luda_cpu_thread* luda_t) {{\n"
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

  // Barriers and warp functions: cuda.sync*, cuda.*_sync (shuffles and votes). Atomics and
  // fences: how threads may wait for one another (a spin-wait).
  LUDA_DSL_NOINLINE std::string builtin(const Builtin& row, const BuiltinEmitArgs& args) {
    std::string_view name = row.name;
    if (name.starts_with("cuda.sync") || name.ends_with("_sync")) state_.fibers = true;
    if (name.starts_with("cuda.atomic.") || name.starts_with("cuda.threadfence")) state_.atomics = true;
    return emit_builtin(row, args);
  }

  // A loop's body and its back-edge. In a cpu kernel whose threads may wait for one another
  // (atomics or fences, and a while or repeat loop) an open loop's back-edge lets the
  // block's other threads run (luda_yield), as a GPU's scheduler would, so that a
  // spin-wait between threads of a block ends. (A stop request needs nothing here: the
  // executor stops kernel code by a signal, runtime/cpu_guard.h.)
  void loop_body(const Block& b, bool open) {
    ++depth_;
    block(b);
    back_edge(open);
    --depth_;
  }
  void back_edge(bool open) {
    if (options_.target == Target::Cpu && open && state_.yields) put("luda_yield();");
  }

  // Whether `e`, converted to `t`, is known to be positive: a positive constant, the
  // grid's or a block's size, or a local that holds one and is never assigned again.
  // Such a 'for' step needs no test against zero.
  bool positive(const Expr& e, const Type& t) const {
    const ExprInfo& ei = info(e);
    if (ei.constant)
      return ei.constant->kind == Constant::Kind::Float ? ei.constant->f > 0 : ei.constant->i > 0;
    if (const auto* p = e.dyn<ParenExpr>()) return positive(*p->inner, t);
    if (ei.var >= 0) return positive_locals_.count(ei.var) != 0;
    if (!ei.builtin || t.kind != Type::Kind::Scalar) return false;
    std::string_view name = ei.builtin->name;
    bool wide = is_float(t.scalar) || scalar_bits(t.scalar) == 64;  // holds every grid size
    if (name == "cuda.gridsize") return wide;
    bool dims = name.starts_with("cuda.blockDim.") || name.starts_with("cuda.gridDim.");
    return dims && (is_float(t.scalar) || scalar_bits(t.scalar) >= 32);
  }

  const ExprInfo& info(const Node& n) const { return tf_.info(n); }
  const Variable& var(int i) const { return tf_.vars.at(static_cast<std::size_t>(i)); }

  void indent() { out_.append(static_cast<std::size_t>(2 * depth_), ' '); }
  void line(int n) { out_ += fmt::format("#line {} {}\n", n, quoted(tf_.ast->source().name())); }
  void put(const std::string& text) {
    indent();
    out_ += text;
    out_ += '\n';
  }
  std::string temp(std::string_view what) { return fmt::format("luda_{}{}", what, ++temps_); }

  void block(const Block& b) {
    for (const Stat* s : b.stats) stat(*s);
  }

  void body(const Block& b) {
    ++depth_;
    block(b);
    --depth_;
  }

  // ---------------------------------------------------------------- statements

  void stat(const Stat& s) {
    if (stack_low()) throw node_error(*tf_.ast, s, error_kind::unsupported, kStackLowMessage);
    std::size_t mark = out_.size();
    line(s.loc.line);
    std::size_t after_line = out_.size();
    stat_body(s);
    if (out_.size() == after_line) out_.resize(mark);  // nothing emitted (a constant local)
  }

  void stat_body(const Stat& s) {
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
  LUDA_DSL_NOINLINE void call_stat(const CallStat& c) { put(strip(emit(*c.call)) + ";"); }
  LUDA_DSL_NOINLINE void open_while(const WhileStat& w) { put(fmt::format("while ({}) {{", strip(emit(*w.cond)))); }
  LUDA_DSL_NOINLINE void close_repeat(const RepeatStat& r) {
    ++depth_;
    line(r.cond->loc.line);
    put(fmt::format("if ({}) break;", strip(emit(*r.cond))));
    back_edge(true);
    --depth_;
    put("}");
  }
  LUDA_DSL_NOINLINE void open_clause(const IfStat& i, std::size_t k) {
    if (k) line(i.clauses[k].loc.line);
    std::string cond = strip(emit(*i.clauses[k].cond));
    put(k ? fmt::format("}} else if ({}) {{", cond) : fmt::format("if ({}) {{", cond));
  }

  // The values of a list after Lua's adjustment: a last call gives all its values
  // (through a temporary holding the tuple).
  std::vector<std::pair<std::string, Type>> values(const std::vector<const Expr*>& list) {
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

  std::string value_as(const std::vector<const Expr*>& list, std::vector<std::pair<std::string, Type>>& vals,
                       std::size_t i, const Type& to) {
    if (!vals[i].first.empty()) return convert(vals[i].first, vals[i].second, to);
    return emit_as(*list[i], to);
  }

  LUDA_DSL_NOINLINE void local(const LocalStat& l) {
    const auto& vars = tf_.declared.at(l.id);
    auto vals = values(l.values);
    for (std::size_t i = 0; i < vars.size(); ++i) {
      const Variable& v = var(vars[i]);
      if (v.is_alias || !v.has_type) continue;
      if (v.alloc != Builtin::Alloc::None) {
        allocation(v);
        continue;
      }
      if (i < vals.size()) put(fmt::format("{} {} = {};", c_type(v.type), v.c_name, strip(value_as(l.values, vals, i, v.type))));
      else put(fmt::format("{} {}{{}};", c_type(v.type), v.c_name));
      if (v.assignments == 0 && i < l.values.size() && vals[i].first.empty() && positive(*l.values[i], v.type))
        positive_locals_.insert(vars[i]);
    }
    // Values beyond the names are still evaluated (a call may have effects).
    for (std::size_t i = vars.size(); i < l.values.size(); ++i)
      if (l.values[i]->is<CallExpr>() && vals[i].first.empty()) put(strip(emit(*l.values[i])) + ";");
  }

  void allocation(const Variable& v) {
    const char* elem = scalar_c_type(v.type.scalar);
    if (v.alloc == Builtin::Alloc::DynamicShared) {
      put(fmt::format("luda_Array<{0}, 1> {1} = {{({0}*)luda_dynamic_shared, {{luda_dynamic_shared_bytes() / (long long)sizeof({0})}}, {{1}}}};",
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
    if (v.alloc == Builtin::Alloc::Local) state_.local_bytes += static_cast<std::size_t>(total) * static_cast<std::size_t>(scalar_bits(v.type.scalar) / 8);
    put(fmt::format("{}{} {}_storage[{}];", v.alloc == Builtin::Alloc::Shared ? "__shared__ " : "", elem, v.c_name, total));
    put(fmt::format("luda_Array<{}, {}> {} = {{{}_storage, {{{}}}, {{{}}}}};", elem, v.shape.size(), v.c_name, v.c_name,
                    shape, strides));
  }

  LUDA_DSL_NOINLINE void assign(const AssignStat& a) {
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
    for (std::size_t i = 0; i < a.targets.size(); ++i) put(fmt::format("{} = {};", target_of(*a.targets[i]).first, temps[i]));
  }

  // for v = start, limit [, step], with Lua 5.4's meaning. A float loop runs as written
  // (the counter is added to and tested each time). An integer loop is Lua's forprep:
  // start, limit and step are evaluated once, in that order; a float limit is floored
  // (ceiled counting down) and clipped to the counter's range (luda_for_limit); the number
  // of iterations is computed before the first, so the counter never overflows (a loop up
  // to math.maxinteger ends) and the compiler sees a counted loop. Only a loop whose
  // constant limit and step cannot overflow keeps the plain C++ form.
  void numeric_for(const NumericForStat& f) {
    int blocks = numeric_for_open(f);
    loop_body(*f.body, false);
    put("}");
    for (int k = 0; k < blocks; ++k) {
      --depth_;
      put("}");
    }
  }

  // Everything before the body; returns how many blocks around the C++ `for` to close.
  LUDA_DSL_NOINLINE int numeric_for_open(const NumericForStat& f) {
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
  void step_zero_check(const NumericForStat& f, const std::string& step, const Type& t, bool zero, int step_sign) {
    if (!zero && (step_sign != 0 || positive(*f.step, t))) return;
    state_.step_checks = true;
    put(zero ? fmt::format("luda_step_zero(luda_bounds, {});", f.loc.line)
             : fmt::format("if ({} == 0) luda_step_zero(luda_bounds, {});", step, f.loc.line));
  }

  // Whether `for (T i = start; i <= limit; i += step)` (>= counting down) ends without the
  // counter overflowing: limit + step stays in T's range.
  static bool plain_loop_is_safe(const Constant& limit, const Constant& step, int sign, Scalar t) {
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

  // Lua's forprep: the iteration count first, then a loop that runs it down. Opens `if`
  // and `for`; returns 2 (the blocks to close besides the `for`).
  int counted_for_open(const Variable& v, const std::string& type, const std::string& counter,
                       const std::string& first, const std::string& limit, const std::string& step,
                       const std::optional<Constant>& step_value, int step_sign, const std::string& runs, Scalar t) {
    std::string count = temp("count"), n = temp("n");
    std::string test = step_sign > 0   ? fmt::format("{} <= {}", first, limit)
                       : step_sign < 0 ? fmt::format("{} >= {}", first, limit)
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
      put(fmt::format("    ? ((unsigned long long){0} - (unsigned long long){1}) / (unsigned long long){2}", limit, first, step));
      put(fmt::format("    : ((unsigned long long){0} - (unsigned long long){1}) / ((unsigned long long)(-({2} + 1)) + 1ull);",
                      first, limit, step));
    }
    put(fmt::format("{} {} = {};", type, counter, first));
    put(fmt::format("for (unsigned long long {0} = {1} + 1; {0} != 0; --{0}, {2} = ({3})((unsigned long long){2} + (unsigned long long){4})) {{",
                    n, count, counter, type, step));
    loop_variable(v, type, counter);
    return 2;
  }

  // The loop variable is a fresh local in each iteration: assigning it does not change
  // the loop (a copy of the counter when the body assigns it).
  void loop_variable(const Variable& v, const std::string& type, const std::string& counter) {
    if (counter == v.c_name) return;
    ++depth_;
    put(fmt::format("{} {} = {};", type, v.c_name, counter));
    --depth_;
  }

  LUDA_DSL_NOINLINE void return_stat(const ReturnStat& r) {
    if (tf_.is_kernel || r.values.empty()) {
      put("return;");
      return;
    }
    std::vector<const Expr*> list = r.values;
    if (&r == tf_.fused_return) list = {r.values.at(0)->as<CallExpr>().args.at(0)};  // fuse: the element value
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

  // ---------------------------------------------------------------- expressions

  LUDA_DSL_NOINLINE static std::string convert(const std::string& text, const Type& from, const Type& to) {
    if (to.kind != Type::Kind::Scalar || from.kind != Type::Kind::Scalar || from.scalar == to.scalar) return text;
    return scalar_conversion(strip(text), from.scalar, to.scalar);
  }

  // `e` as a value of type `to`: constants become literals of `to`.
  std::string emit_as(const Expr& e, const Type& to) {
    const ExprInfo& ei = info(e);
    if (ei.constant && to.kind == Type::Kind::Scalar)
      return cuda_literal(convert_constant(*ei.constant, ei.type.scalar, to.scalar), to.scalar);
    return convert(emit(e), ei.type, to);
  }

  // The recursion over expressions (emit, emit_as, and the functions that emit operands)
  // keeps its frames small: formatting, which does not recurse, is in LUDA_DSL_NOINLINE
  // functions (dsl/stack_guard.h).
  LUDA_DSL_NOINLINE std::string emit(const Expr& e) {
    if (stack_low()) throw node_error(*tf_.ast, e, error_kind::unsupported, kStackLowMessage);
    const ExprInfo& ei = info(e);
    if (ei.constant && ei.type.kind == Type::Kind::Scalar) return cuda_literal(*ei.constant, ei.type.scalar);
    std::string text;
    switch (e.kind) {
      case NodeKind::Name: text = var(ei.var).c_name; break;
      case NodeKind::Paren: text = emit(*e.as<ParenExpr>().inner); break;
      case NodeKind::Field: text = field(e.as<FieldExpr>()); break;
      case NodeKind::Index: text = index(e.as<IndexExpr>()); break;
      case NodeKind::Call: text = call(e.as<CallExpr>()); break;
      case NodeKind::Binary: text = binary_chain(e.as<BinaryExpr>()); break;
      case NodeKind::Unary: text = unary(e.as<UnaryExpr>()); break;
      default: LUDA_DSL_CHECK(!"expression rejected by inference");
    }
    if (ei.first_of_tuple && e.kind != NodeKind::Paren) text += ".v0";
    return text;
  }

  LUDA_DSL_NOINLINE std::string field(const FieldExpr& e) {
    const ExprInfo& ei = info(e);
    if (ei.builtin) return builtin_value(ei);
    LUDA_DSL_CHECK(e.field.text == "size");
    return "luda_size(" + emit(*e.object) + ")";
  }

  LUDA_DSL_NOINLINE std::string builtin_value(const ExprInfo& ei) { return builtin(*ei.builtin, builtin_args(*ei.builtin, ei, {})); }

  LUDA_DSL_NOINLINE std::string index(const IndexExpr& e) {
    if (info(*e.object).symbol.kind == Symbol::Kind::Shape) return shape_index(e);
    if (info(e).type.kind == Type::Kind::Array) return row_index(e);
    return element(e);
  }

  LUDA_DSL_NOINLINE std::string shape_index(const IndexExpr& e) {
    std::string array = emit(*e.object->as<FieldExpr>().object);
    const ExprInfo& key = info(*e.key);
    if (key.constant) return shape_text(array, std::to_string(key.constant->i - 1));
    // An axis known only at run time may be out of 1..ndim: luda_shape_at gives 0 there.
    return "luda_shape_at(" + array + ", " + strip(emit_as(*e.key, Type::scalar_of(Scalar::Int64))) + ")";
  }

  // A row of an N-d array used as a value.
  LUDA_DSL_NOINLINE std::string row_index(const IndexExpr& e) {
    std::string array = emit(*e.object);
    std::string key = checked(*e.key, array, 0, e.loc.line);
    return "luda_row(" + array + ", " + key + ")";
  }

  static std::string shape_text(const std::string& array, const std::string& axis) {
    return array + ".shape[" + axis + "]";
  }

  // One index, converted to 64 bits and, with boundscheck, checked against `extent`.
  std::string checked(const Expr& key, const std::string& array, int axis, int line_no, std::string extent = "") {
    return checked_text(strip(emit_as(key, Type::scalar_of(Scalar::Int64))), array, axis, line_no, std::move(extent));
  }

  LUDA_DSL_NOINLINE std::string checked_text(std::string i, const std::string& array, int axis, int line_no,
                                             std::string extent) {
    if (!options_.boundscheck) return i;
    if (extent.empty()) extent = fmt::format("{}.shape[{}]", array, axis);
    return fmt::format("luda_check({}, {}, luda_bounds, {}, {})", i, extent, line_no, axis);
  }

  // a[i][j]...: one element of the array at the bottom of the chain, addressed with all
  // the indices at once (constant strides for shared and local arrays).
  std::string element(const IndexExpr& e) {
    std::vector<const Expr*> keys;
    const Expr* base = &e;
    while (const auto* ix = base->dyn<IndexExpr>()) {
      if (info(*ix->object).type.kind != Type::Kind::Array) break;
      keys.insert(keys.begin(), ix->key);
      base = ix->object;
    }
    return element_of(*base, keys, e.loc.line);
  }

  std::string element_of(const Expr& base, const std::vector<const Expr*>& keys, int line_no) {
    std::string array = emit(base);
    std::vector<std::string> indices(keys.size());
    for (std::size_t k = 0; k < keys.size(); ++k) indices[k] = strip(emit_as(*keys[k], Type::scalar_of(Scalar::Int64)));
    return element_text(base, array, indices, line_no);
  }

  // The element at `indices` (C++ expressions, one per axis) of `array`, the text of `base`.
  LUDA_DSL_NOINLINE std::string element_text(const Expr& base, const std::string& array,
                                             const std::vector<std::string>& indices, int line_no) {
    const Type& t = info(base).type;
    const Variable* alloc = nullptr;
    if (base.is<NameExpr>() && info(base).var >= 0) {
      const Variable& v = var(info(base).var);
      if (v.alloc == Builtin::Alloc::Shared || v.alloc == Builtin::Alloc::Local) alloc = &v;
    }
    std::vector<long long> stride;
    if (alloc) {
      stride.assign(alloc->shape.size(), 1);
      for (std::size_t k = alloc->shape.size(); k-- > 1;) stride[k - 1] = stride[k] * alloc->shape[k];
    }
    std::string offset;
    for (std::size_t k = 0; k < indices.size(); ++k) {
      int axis = static_cast<int>(k);
      std::string extent = alloc ? std::to_string(alloc->shape[k]) : "";
      std::string i = checked_text(indices[k], array, axis, line_no, extent);
      std::string term;
      bool unit = alloc ? stride[k] == 1 : (t.c_contiguous && axis == t.ndim - 1);
      if (unit) term = i;
      else if (alloc) term = fmt::format("{} * {}", paren(i), stride[k]);
      else term = fmt::format("{} * {}.strides[{}]", paren(i), array, axis);
      offset += (k ? " + " : "") + term;
    }
    auto alias = data_alias_.find(array);
    if (alias != data_alias_.end()) return fmt::format("{}[{}]", alias->second, offset);
    return fmt::format("{}.data[{}]", array, offset);
  }

  // With noalias (no two array arguments overlap: the launcher checked), each array
  // parameter that is only indexed gets a __restrict__ data pointer, const when the kernel
  // never stores into it. An array handed to any call (atomics, device functions) keeps
  // its plain struct: restrict must cover every access, and those go through the struct.
  // Any other array-typed local could alias a parameter, so then nothing is restricted.
  void restrict_array_params() {
    std::size_t nparams = tf_.params.size();
    for (std::size_t v = nparams; v < tf_.vars.size(); ++v)
      if (tf_.vars[v].has_type && tf_.vars[v].type.kind == Type::Kind::Array &&
          tf_.vars[v].alloc == Builtin::Alloc::None)
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
      put(fmt::format("{}{}* __restrict__ const {} = {}.data;", stored[p] ? "" : "const ",
                      scalar_c_type(t.scalar), alias, name));
      data_alias_[name] = alias;
    }
  }

  static std::string paren(const std::string& s) {
    bool simple = std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; });
    return simple ? s : "(" + s + ")";
  }

  BuiltinEmitArgs builtin_args(const Builtin& row, const ExprInfo& ei, const std::vector<const Expr*>& args) {
    BuiltinEmitArgs b;
    const BuiltinTyping& t = ei.builtin_typing;
    b.result = t.result;
    b.operation = t.operation;
    for (std::size_t i = 0; i < args.size(); ++i) {
      const Expr& a = *args[i];
      const ExprInfo& ai = info(a);
      Type to = i < t.convert.size() ? t.convert[i] : Type::void_();
      if (ai.symbol.kind == Symbol::Kind::String) {
        b.operands.push_back("");
        b.strings.push_back(ai.symbol.text);
        b.types.push_back(Type::void_());
      } else if (a.is<TableExpr>() || ai.symbol.kind != Symbol::Kind::None) {
        b.operands.push_back("");
        b.strings.push_back("");
        b.types.push_back(Type::void_());
      } else {
        b.operands.push_back(strip(to.kind == Type::Kind::Scalar ? emit_as(a, to) : emit(a)));
        b.strings.push_back("");
        b.types.push_back(to.kind == Type::Kind::Scalar ? to : ai.type);
      }
      b.constants.push_back(a.is<TableExpr>() ? std::nullopt : ai.constant);
    }
    if (row.name.substr(0, 12) == "cuda.atomic.") {
      int ndim = info(*args[0]).type.ndim;
      std::vector<const Expr*> keys(args.begin() + 1, args.begin() + 1 + ndim);
      b.element = element_of(*args[0], keys, args[0]->loc.line);
      b.values_from = 1 + ndim;
    }
    return b;
  }

  LUDA_DSL_NOINLINE std::string call(const CallExpr& e) {
    const ExprInfo& ei = info(e);
    if (ei.builtin) {
      BuiltinEmitArgs args = builtin_args(*ei.builtin, ei, e.args);
      return builtin(*ei.builtin, args);
    }
    LUDA_DSL_CHECK(ei.callee >= 0);
    const TypedFunction& callee = *program_.functions.at(static_cast<std::size_t>(ei.callee));
    std::string args;
    for (std::size_t i = 0; i < e.args.size(); ++i) {
      if (i) args += ", ";
      args += strip(emit_as(*e.args[i], callee.params[i]));
    }
    if (state_.record) args += std::string(args.empty() ? "" : ", ") + "luda_bounds";
    return callee.c_name + "(" + args + ")";
  }

  // A left-associative chain (a + b + c ..., each operator's left operand the next one
  // down), emitted bottom-up in a loop rather than by recursion: generated code sums
  // thousands of terms. A short chain nests as any expression does. A chain longer than
  // kFlatChain must not nest as deep in the C++ either (the compilers recurse on it, and
  // NVVM takes minutes over thousands of statements, seconds over one flat expression):
  // runs of operators that C++ evaluates left to right alike are written flat
  // (`a + b - c`, in the unsigned type for wrapping integers), and where kFlatChain
  // levels still nest (helper calls: // % << ...), the value so far goes into a local of
  // a lambda. Operands evaluate in the same order; `and`/`or` still skip their right ones.
  static constexpr std::size_t kFlatChain = 16;

  LUDA_DSL_NOINLINE std::string binary_chain(const BinaryExpr& top) {
    std::vector<const BinaryExpr*> spine{&top};
    for (;;) {
      const auto* lhs = spine.back()->lhs->dyn<BinaryExpr>();
      if (!lhs || info(*lhs).constant) break;  // a constant is emitted as one literal
      spine.push_back(lhs);
    }
    if (spine.size() > kFlatChain) return long_chain(spine);
    std::string text = binary(*spine.back(), nullptr);
    for (std::size_t k = spine.size() - 1; k-- > 0;) text = binary(*spine[k], &text);
    return text;
  }

  // Which operators chain flat in C++ (same class and operand type), and how.
  struct FlatRun {
    const char* kind = nullptr;  // nullptr: not flat; else "f+", "f*", "i+", "i*", "&&", "||", "==", "&", "|", "^"
    Scalar type = Scalar::Bool;
    std::string text;
  };

  FlatRun flat_kind(const BinaryExpr& e) const {
    const Type& t = info(e).operand;
    FlatRun r;
    r.type = t.scalar;
    bool f = t.is_floating(), i = t.is_int();
    switch (e.op) {
      case BinaryOp::Add: case BinaryOp::Sub: r.kind = f ? "f+" : i ? "i+" : nullptr; break;
      case BinaryOp::Mul: r.kind = f ? "f*" : i ? "i*" : nullptr; break;
      case BinaryOp::Div: r.kind = f ? "f*" : nullptr; break;
      case BinaryOp::And: r.kind = "&&"; break;
      case BinaryOp::Or: r.kind = "||"; break;
      case BinaryOp::Eq: case BinaryOp::Ne: r.kind = t.is_bool() ? "==" : nullptr; break;
      case BinaryOp::BAnd: r.kind = "&"; break;
      case BinaryOp::BOr: r.kind = "|"; break;
      case BinaryOp::BXor: r.kind = "^"; break;
      default: break;
    }
    return r;
  }

  static const char* op_text(BinaryOp op) {
    switch (op) {
      case BinaryOp::Add: return "+";
      case BinaryOp::Sub: return "-";
      case BinaryOp::Mul: return "*";
      case BinaryOp::Div: return "/";
      case BinaryOp::And: return "&&";
      case BinaryOp::Or: return "||";
      case BinaryOp::Eq: return "==";
      case BinaryOp::Ne: return "!=";
      case BinaryOp::BAnd: return "&";
      case BinaryOp::BOr: return "|";
      default: return "^";
    }
  }

  // Integer + - * wrap: computed in the unsigned type that C++ does not promote.
  static const char* wrap_type(Scalar t) { return scalar_bits(t) == 64 ? "unsigned long long" : "unsigned"; }

  // An operand of a flat run: integers cast to the unsigned type they wrap in.
  std::string flat_operand(const FlatRun& run, const std::string& text) const {
    bool wraps = run.kind[0] == 'i';
    return wraps ? fmt::format("({}){}", wrap_type(run.type), text) : text;
  }

  std::string close_run(const FlatRun& run) const {
    bool wraps = run.kind[0] == 'i';
    bool bits = run.kind[1] == '\0' && (run.kind[0] == '&' || run.kind[0] == '|' || run.kind[0] == '^');
    if (wraps) return fmt::format("({})({})", scalar_c_type(run.type), run.text);
    if (bits) return narrow("(" + run.text + ")", Type::scalar_of(run.type));
    return "(" + run.text + ")";
  }

  LUDA_DSL_NOINLINE std::string long_chain(const std::vector<const BinaryExpr*>& spine) {
    std::string text, lambda;
    FlatRun run;
    std::size_t levels = 0;  // how deep `text` nests since the last local
    for (std::size_t k = spine.size(); k-- > 0;) {
      const BinaryExpr& e = *spine[k];
      const Type& t = info(e).operand;
      FlatRun kind = flat_kind(e);
      bool first = k + 1 == spine.size();
      bool shift = e.op == BinaryOp::Shl || e.op == BinaryOp::Shr;
      std::string rhs = emit_as(*e.rhs, shift ? Type::scalar_of(Scalar::Int64) : t);
      if (run.kind && kind.kind && std::string_view(run.kind) == kind.kind && run.type == kind.type) {
        run.text += fmt::format(" {} {}", op_text(e.op), flat_operand(run, rhs));
        continue;
      }
      if (run.kind) {
        text = close_run(run);
        run.kind = nullptr;
        ++levels;
      }
      if (levels >= kFlatChain) {
        std::string local = temp("c");
        lambda += fmt::format("const {} {} = {}; ", c_type(info(*e.lhs).type), local, strip(text));
        text = local;
        levels = 0;
      }
      std::string lhs = first ? emit_as(*e.lhs, t) : convert(text, info(*e.lhs).type, t);
      if (kind.kind) {
        run = kind;
        run.text = fmt::format("{} {} {}", flat_operand(run, lhs), op_text(e.op), flat_operand(run, rhs));
        continue;
      }
      text = binary_text(e, lhs, rhs);
      ++levels;
    }
    if (run.kind) text = close_run(run);
    if (lambda.empty()) return text;
    return fmt::format("[&]() {{ {}return {}; }}()", lambda, strip(text));
  }

  // `e` with its left operand's text given (`lhs`, of the operand's own type), or emitted
  // here (nullptr).
  std::string binary(const BinaryExpr& e, const std::string* lhs) {
    const ExprInfo& ei = info(e);
    const Type& t = ei.operand;
    bool shift = e.op == BinaryOp::Shl || e.op == BinaryOp::Shr;
    // Operands keep their parentheses; helper calls take them stripped.
    std::string a = lhs ? convert(*lhs, info(*e.lhs).type, t) : emit_as(*e.lhs, t);
    return binary_text(e, a, emit_as(*e.rhs, shift ? Type::scalar_of(Scalar::Int64) : t));
  }

  LUDA_DSL_NOINLINE std::string binary_text(const BinaryExpr& e, const std::string& a, const std::string& b) {
    const Type& t = info(e).operand;
    bool ints = t.is_int();
    // Wrap-around arithmetic is spelled with helpers where C++ would overflow (signed,
    // or promoted to int); 32- and 64-bit unsigned arithmetic already wraps.
    bool plain_ints = ints && (t.scalar == Scalar::UInt32 || t.scalar == Scalar::UInt64);
    auto wrap_op = [&](const char* helper, const char* op) {
      if (ints && !plain_ints) return fmt::format("{}({}, {})", helper, strip(a), strip(b));
      return fmt::format("({} {} {})", a, op, b);
    };
    switch (e.op) {
      case BinaryOp::Add: return wrap_op("luda_add", "+");
      case BinaryOp::Sub: return wrap_op("luda_sub", "-");
      case BinaryOp::Mul: return wrap_op("luda_mul", "*");
      case BinaryOp::Div: return fmt::format("({} / {})", a, b);
      // Integer // and % by zero give 0 on every target (the helpers test the divisor).
      case BinaryOp::IDiv: return fmt::format("luda_floordiv({}, {})", strip(a), strip(b));
      case BinaryOp::Mod: return fmt::format("luda_mod({}, {})", strip(a), strip(b));
      case BinaryOp::Pow: {
        const ExprInfo& r = info(*e.rhs);
        if (r.constant) {
          double p = r.constant->kind == Constant::Kind::Float ? r.constant->f : static_cast<double>(r.constant->i);
          if (p == 2) return fmt::format("luda_pow2({})", strip(a));
          if (p == 3) return fmt::format("luda_pow3({})", strip(a));
        }
        return fmt::format("pow{}({}, {})", t.scalar == Scalar::Float32 ? "f" : "", strip(a), strip(b));
      }
      case BinaryOp::Eq: return fmt::format("({} == {})", a, b);
      case BinaryOp::Ne: return fmt::format("({} != {})", a, b);
      case BinaryOp::Lt: return fmt::format("({} < {})", a, b);
      case BinaryOp::Le: return fmt::format("({} <= {})", a, b);
      case BinaryOp::Gt: return fmt::format("({} > {})", a, b);
      case BinaryOp::Ge: return fmt::format("({} >= {})", a, b);
      case BinaryOp::And: return fmt::format("({} && {})", a, b);
      case BinaryOp::Or: return fmt::format("({} || {})", a, b);
      case BinaryOp::BAnd: return narrow(fmt::format("({} & {})", a, b), t);
      case BinaryOp::BOr: return narrow(fmt::format("({} | {})", a, b), t);
      case BinaryOp::BXor: return narrow(fmt::format("({} ^ {})", a, b), t);
      case BinaryOp::Shl: return fmt::format("luda_shl({}, {})", strip(a), strip(b));
      case BinaryOp::Shr: return fmt::format("luda_shr({}, {})", strip(a), strip(b));
      default: LUDA_DSL_CHECK(!"operator rejected by inference");
    }
    return "";
  }

  // C++ computes 8- and 16-bit operands as int: back to the operand's type.
  static std::string narrow(const std::string& text, const Type& t) {
    if (scalar_bits(t.scalar) >= 32) return text;
    return fmt::format("({})({})", scalar_c_type(t.scalar), strip(text));
  }

  LUDA_DSL_NOINLINE std::string unary(const UnaryExpr& e) {
    const ExprInfo& ei = info(e);
    switch (e.op) {
      case UnaryOp::Len: return fmt::format("{}.shape[0]", emit(*e.operand));
      case UnaryOp::Not: return fmt::format("(!{})", emit(*e.operand));
      case UnaryOp::Neg:
        if (ei.type.is_int()) return fmt::format("luda_neg({})", strip(emit(*e.operand)));
        return fmt::format("(-{})", emit(*e.operand));
      case UnaryOp::BNot: return narrow(fmt::format("(~{})", emit(*e.operand)), ei.type);
    }
    return "";
  }

  const TypedProgram& program_;
  const TypedFunction& tf_;
  const KernelOptions& options_;
  std::string& out_;
  EmitState& state_;  // shared by the Emitters of one program (callees come first)
  std::set<int> positive_locals_;  // vars that hold a positive value (positive())
  std::map<std::string, std::string> data_alias_;  // array parameter -> its __restrict__ data pointer
  int depth_ = 0;
  int temps_ = 0;
};

}  // namespace

std::string emit_cuda_functions(const TypedProgram& program, const KernelOptions& options, EmitInfo* info) {
  EmitState state;
  state.record = options.boundscheck;
  std::string out;
  for (int pass = 0; pass < 2; ++pass) {
    for (const TypedFunction* f : reachable_functions(program)) Emitter(program, *f, options, out, state).function();
    bool record = state.record || state.step_checks;
    bool yields = options.target == Target::Cpu && program.kernel().is_kernel && state.atomics && state.open_loops;
    if (record == state.record && yields == state.yields) break;
    state = EmitState{record, yields};
    state.fibers = yields;  // a thread can only let others run as a fiber
    out.clear();
  }
  if (info) *info = EmitInfo{state.fibers, state.record, state.local_bytes};
  return out;
}

std::string emit_cuda(const TypedProgram& program, const KernelOptions& options, EmitInfo* info) {
  std::string out(cuda_prelude());
  out += emit_cuda_functions(program, options, info);
  return out;
}

}  // namespace luda::dsl
