#include "dsl/ast.h"

#include <fmt/format.h>

namespace luda::dsl {

std::string_view node_kind_name(NodeKind k) {
  // ORDER NODE KIND
  static constexpr std::string_view kNames[] = {
      "Nil",      "True",   "False", "Integer",    "Float",      "String",       "Vararg",
      "Function", "Table",  "Name",  "Index",      "Field",      "Call",         "MethodCall",
      "Binary",   "Unary",  "Paren", "Local",      "Assign",     "CallStat",     "Do",
      "While",    "Repeat", "If",    "NumericFor", "GenericFor", "FunctionStat", "LocalFunction",
      "Return",   "Break",  "Goto",  "Label",      "Block",
  };
  return kNames[static_cast<int>(k)];
}

std::string_view binary_op_text(BinaryOp op) {
  // ORDER BINARY OP
  static constexpr std::string_view kText[] = {
      "+",  "-", "*",  "/",   "//", "%", "^", "..", "==", "~=", "<",
      "<=", ">", ">=", "and", "or", "&", "|", "~",  "<<", ">>",
  };
  return kText[static_cast<int>(op)];
}

std::string_view unary_op_text(UnaryOp op) {
  // ORDER UNARY OP
  static constexpr std::string_view kText[] = {"-", "not", "#", "~"};
  return kText[static_cast<int>(op)];
}

namespace {

// The S-expression printer behind dump(). Forms:
//   literals      nil true false ... 42 0x1p4 "a\n"      names   x
//   (function (a b ...) BLOCK)   (table 1 (= k v) ([] k v))
//   (index o k)  (. o name)  (call f a b)  (: o m a b)  (+ a b)  (- a)  (not a)  (paren e)
//   (local (a b<const>) (1 2))  (= (t1 t2) (v1 v2))  (do BLOCK)  (while c BLOCK)
//   (repeat BLOCK c)  (if c BLOCK elseif c BLOCK else BLOCK)  (for i a b [step] BLOCK)
//   (forin (k v) (e1 e2) BLOCK)  (function-stat a.b:m FUNCTION)  (local-function f FUNCTION)
//   (return a b)  (break)  (goto l)  (label l)  (block S1 S2)
// A call used as a statement prints as the call.
class Dumper {
 public:
  std::string out;

  void node(const Node& n) {
    switch (n.kind) {
      case NodeKind::Nil: out += "nil"; break;
      case NodeKind::True: out += "true"; break;
      case NodeKind::False: out += "false"; break;
      case NodeKind::Vararg: out += "..."; break;
      case NodeKind::Integer: out += n.as<IntegerExpr>().text; break;
      case NodeKind::Float: out += n.as<FloatExpr>().text; break;
      case NodeKind::String: quoted(n.as<StringExpr>().value); break;
      case NodeKind::Function: function(n.as<FunctionExpr>()); break;
      case NodeKind::Table: {
        out += "(table";
        for (const auto& f : n.as<TableExpr>().fields) {
          out += ' ';
          switch (f.kind) {
            case TableExpr::Field::Kind::Positional: node(*f.value); break;
            case TableExpr::Field::Kind::Named:
              out += "(= " + f.name.text + ' ';
              node(*f.value);
              out += ')';
              break;
            case TableExpr::Field::Kind::Computed: list("[]", {f.key, f.value}); break;
          }
        }
        out += ')';
        break;
      }
      case NodeKind::Name: out += n.as<NameExpr>().name; break;
      case NodeKind::Index: list("index", {n.as<IndexExpr>().object, n.as<IndexExpr>().key}); break;
      case NodeKind::Field:
        out += "(. ";
        node(*n.as<FieldExpr>().object);
        out += ' ' + n.as<FieldExpr>().field.text + ')';
        break;
      case NodeKind::Call: {
        const auto& c = n.as<CallExpr>();
        out += "(call ";
        node(*c.callee);
        each(c.args);
        out += ')';
        break;
      }
      case NodeKind::MethodCall: {
        const auto& c = n.as<MethodCallExpr>();
        out += "(: ";
        node(*c.object);
        out += ' ' + c.method.text;
        each(c.args);
        out += ')';
        break;
      }
      case NodeKind::Binary: {
        const auto& b = n.as<BinaryExpr>();
        list(binary_op_text(b.op), {b.lhs, b.rhs});
        break;
      }
      case NodeKind::Unary: list(unary_op_text(n.as<UnaryExpr>().op), {n.as<UnaryExpr>().operand}); break;
      case NodeKind::Paren: list("paren", {n.as<ParenExpr>().inner}); break;
      case NodeKind::Local: {
        const auto& s = n.as<LocalStat>();
        out += "(local (";
        for (std::size_t i = 0; i < s.vars.size(); ++i) {
          if (i) out += ' ';
          out += s.vars[i].name.text;
          if (s.vars[i].attrib == LocalStat::Attrib::Const) out += "<const>";
          if (s.vars[i].attrib == LocalStat::Attrib::Close) out += "<close>";
        }
        out += ") (";
        each(s.values, false);
        out += "))";
        break;
      }
      case NodeKind::Assign: {
        const auto& s = n.as<AssignStat>();
        out += "(= (";
        each(s.targets, false);
        out += ") (";
        each(s.values, false);
        out += "))";
        break;
      }
      case NodeKind::CallStat: node(*n.as<CallStat>().call); break;
      case NodeKind::Do: list("do", {n.as<DoStat>().body}); break;
      case NodeKind::While: list("while", {n.as<WhileStat>().cond, n.as<WhileStat>().body}); break;
      case NodeKind::Repeat: list("repeat", {n.as<RepeatStat>().body, n.as<RepeatStat>().cond}); break;
      case NodeKind::If: {
        const auto& s = n.as<IfStat>();
        out += "(if";
        for (std::size_t i = 0; i < s.clauses.size(); ++i) {
          out += i ? " elseif " : " ";
          node(*s.clauses[i].cond);
          out += ' ';
          node(*s.clauses[i].body);
        }
        if (s.else_body) {
          out += " else ";
          node(*s.else_body);
        }
        out += ')';
        break;
      }
      case NodeKind::NumericFor: {
        const auto& s = n.as<NumericForStat>();
        out += "(for " + s.var.text + ' ';
        node(*s.start);
        out += ' ';
        node(*s.limit);
        if (s.step) {
          out += ' ';
          node(*s.step);
        }
        out += ' ';
        node(*s.body);
        out += ')';
        break;
      }
      case NodeKind::GenericFor: {
        const auto& s = n.as<GenericForStat>();
        out += "(forin (";
        for (std::size_t i = 0; i < s.vars.size(); ++i) out += (i ? " " : "") + s.vars[i].text;
        out += ") (";
        each(s.exprs, false);
        out += ") ";
        node(*s.body);
        out += ')';
        break;
      }
      case NodeKind::FunctionStat:
        out += "(function-stat " + n.as<FunctionStat>().function->name + ' ';
        node(*n.as<FunctionStat>().function);
        out += ')';
        break;
      case NodeKind::LocalFunction:
        out += "(local-function " + n.as<LocalFunctionStat>().name.text + ' ';
        node(*n.as<LocalFunctionStat>().function);
        out += ')';
        break;
      case NodeKind::Return: {
        out += "(return";
        each(n.as<ReturnStat>().values);
        out += ')';
        break;
      }
      case NodeKind::Break: out += "(break)"; break;
      case NodeKind::Goto: out += "(goto " + n.as<GotoStat>().label.text + ')'; break;
      case NodeKind::Label: out += "(label " + n.as<LabelStat>().label.text + ')'; break;
      case NodeKind::Block: {
        out += "(block";
        for (const Stat* s : n.as<Block>().stats) {
          out += ' ';
          node(*s);
        }
        out += ')';
        break;
      }
    }
  }

 private:
  void list(std::string_view head, std::initializer_list<const Node*> items) {
    out += '(';
    out += head;
    for (const Node* item : items) {
      out += ' ';
      node(*item);
    }
    out += ')';
  }
  void each(const std::vector<const Expr*>& items, bool leading_space = true) {
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (leading_space || i) out += ' ';
      node(*items[i]);
    }
  }
  void function(const FunctionExpr& f) {
    out += "(function (";
    for (std::size_t i = 0; i < f.params.size(); ++i) out += (i ? " " : "") + f.params[i].text;
    if (f.is_vararg) out += f.params.empty() ? "..." : " ...";
    out += ") ";
    node(*f.body);
    out += ')';
  }
  void quoted(const std::string& s) {
    out += '"';
    for (unsigned char c : s) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        case '\r': out += "\\r"; break;
        default:
          if (c < 32 || c >= 127) out += fmt::format("\\x{:02x}", c);
          else out += static_cast<char>(c);
      }
    }
    out += '"';
  }
};

}  // namespace

void push_children(const Expr& e, std::vector<const Expr*>& out) {
  switch (e.kind) {
    case NodeKind::Index:
      out.push_back(e.as<IndexExpr>().object);
      out.push_back(e.as<IndexExpr>().key);
      break;
    case NodeKind::Field: out.push_back(e.as<FieldExpr>().object); break;
    case NodeKind::Call:
      out.push_back(e.as<CallExpr>().callee);
      out.insert(out.end(), e.as<CallExpr>().args.begin(), e.as<CallExpr>().args.end());
      break;
    case NodeKind::MethodCall:
      out.push_back(e.as<MethodCallExpr>().object);
      out.insert(out.end(), e.as<MethodCallExpr>().args.begin(), e.as<MethodCallExpr>().args.end());
      break;
    case NodeKind::Binary:
      out.push_back(e.as<BinaryExpr>().lhs);
      out.push_back(e.as<BinaryExpr>().rhs);
      break;
    case NodeKind::Unary: out.push_back(e.as<UnaryExpr>().operand); break;
    case NodeKind::Paren: out.push_back(e.as<ParenExpr>().inner); break;
    case NodeKind::Table:
      for (const auto& f : e.as<TableExpr>().fields) {
        if (f.key) out.push_back(f.key);
        out.push_back(f.value);
      }
      break;
    default: break;
  }
}

std::string dump(const Node& node) {
  Dumper d;
  d.node(node);
  return std::move(d.out);
}

SourceError node_error(const Ast& ast, const Node& node, std::string_view kind, std::string_view message) {
  const auto* binary = node.dyn<BinaryExpr>();
  Location caret = binary ? binary->op_loc : node.loc;
  return source_error(ast.source(), caret, kind, message, node.span());
}

}  // namespace luda::dsl
