// typed_listing: what inspect("types") shows. Each function the kernel reaches, its
// signature, then its source lines, each followed by the types of what that line declares
// (locals, loop variables), assigns and returns:
//
//   -- device hypot_1a2b3c4d(x: float32, y: float32) -> float32
//      3 | local function hypot(x, y)
//      4 |   local ax, ay = math.abs(x), math.abs(y)   -- ax: float32, ay: float32
#include <map>

#include <fmt/format.h>

#include "dsl/infer_internal.h"

namespace luda::dsl {
namespace {

std::string type_text(const Type& t) { return t.str() + (t.weak ? " (weak)" : ""); }

class Listing {
 public:
  explicit Listing(const TypedFunction& tf) : tf_(tf) {}

  std::string run() {
    block(*tf_.function->body);
    const Source& src = tf_.ast->source();
    std::string params;
    for (std::size_t i = 0; i < tf_.params.size(); ++i)
      params += fmt::format("{}{}: {}", i ? ", " : "", tf_.vars[i].name, type_text(tf_.params[i]));
    std::string out = fmt::format("-- {} {}({})", tf_.is_kernel ? "kernel" : "device", tf_.c_name, params);
    if (!tf_.is_kernel) out += " -> " + tf_.result.str();
    out += "\n";
    int first = tf_.function->loc.line, last = tf_.function->end.line;
    for (int line = first; line <= last; ++line) {
      std::string text(src.line_text(line));
      std::string row = fmt::format("{:5} | {}", line, text);
      auto it = notes_.find(line);
      if (it != notes_.end()) {
        if (row.size() < 56) row.append(56 - row.size(), ' ');
        row += "  -- " + it->second;
      }
      out += row + "\n";
    }
    return out;
  }

 private:
  void note(int line, const std::string& text) {
    std::string& n = notes_[line];
    n += (n.empty() ? "" : "; ") + text;
  }

  std::string var_text(int index) {
    const Variable& v = tf_.vars.at(static_cast<std::size_t>(index));
    if (v.is_alias && v.symbol.kind != Symbol::Kind::None) {
      ExprInfo alias;
      alias.symbol = v.symbol;
      return fmt::format("{}: {}", v.name, detail::describe(alias));
    }
    if (!v.has_type) return fmt::format("{}: unused", v.name);
    std::string s = fmt::format("{}: {}", v.name, type_text(v.type));
    if (v.is_alias && v.constant) s += " = " + detail::constant_text(*v.constant, v.type.scalar) + " (constant)";
    if (v.alloc == Builtin::Alloc::Shared) s += " (shared)";
    if (v.alloc == Builtin::Alloc::Local) s += " (local memory)";
    if (v.alloc == Builtin::Alloc::DynamicShared) s += " (dynamic shared)";
    return s;
  }

  void block(const Block& b) {
    for (const Stat* s : b.stats) stat(*s);
  }

  void stat(const Stat& s) {
    int line = s.loc.line;
    switch (s.kind) {
      case NodeKind::Local: {
        std::string text;
        for (int v : tf_.declared.at(s.id)) text += (text.empty() ? "" : ", ") + var_text(v);
        note(line, text);
        break;
      }
      case NodeKind::Assign: {
        std::string text;
        for (const Expr* t : s.as<AssignStat>().targets) {
          const ExprInfo& i = tf_.info(*t);
          Type type = i.var >= 0 ? tf_.vars[static_cast<std::size_t>(i.var)].type : i.type;
          text += (text.empty() ? "" : ", ") + type.str();
        }
        note(line, "assigns " + text);
        break;
      }
      case NodeKind::NumericFor:
        note(line, var_text(tf_.declared.at(s.id)[0]));
        block(*s.as<NumericForStat>().body);
        break;
      case NodeKind::Return:
        if (!s.as<ReturnStat>().values.empty() && !tf_.is_kernel) note(line, "returns " + tf_.result.str());
        break;
      case NodeKind::Do: block(*s.as<DoStat>().body); break;
      case NodeKind::While: block(*s.as<WhileStat>().body); break;
      case NodeKind::Repeat: block(*s.as<RepeatStat>().body); break;
      case NodeKind::If:
        for (const auto& c : s.as<IfStat>().clauses) block(*c.body);
        if (s.as<IfStat>().else_body) block(*s.as<IfStat>().else_body);
        break;
      default: break;
    }
  }

  const TypedFunction& tf_;
  std::map<int, std::string> notes_;
};

}  // namespace

std::string typed_listing(const TypedProgram& program) {
  std::string out;
  for (const TypedFunction* f : reachable_functions(program)) {
    if (!out.empty()) out += "\n";
    out += Listing(*f).run();
  }
  return out;
}

}  // namespace luda::dsl
