// The syntax tree of a Lua 5.4 chunk, as the parser (dsl/parser.h) builds it. It is the
// input of the later passes (inference, CUDA emission), which never change it: they keep
// side tables indexed by node id (`std::vector<Type> type_of(ast.node_count())`).
//
// Representation
// - Every node (expression, statement, block) derives from Node: a kind, a dense id
//   (0 .. Ast::node_count()-1, unique within its Ast), `loc` (its first character) and
//   `end` (its last character, inclusive), both 1-based line/col into ast.source().
// - Nodes are owned by their Ast (one vector, index = id) and never move: child links are
//   plain `const Expr*` / `Stat*` pointers, valid as long as the Ast lives.
// - Dispatch on `kind` (switch) and downcast with `as<T>()` (checked) or `dyn<T>()`
//   (nullptr when the kind differs); each node struct names its kind in `kKind`.
// - Lua semantics kept visible: `a.b` is Field (not Index with a string key, so a kernel
//   reads `a.shape` / `cuda.threadIdx.x` directly; `a["b"]` stays Index), parentheses are
//   a Paren node (they cut multiple results to one, and give carets their extent), method
//   functions (`function a:m()`) carry the implicit `self` as their first parameter.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dsl/diagnostics.h"
#include "dsl/source.h"

namespace luda::dsl {

// ORDER NODE KIND: node_kind_name() in ast.cpp follows this order.
enum class NodeKind : std::uint8_t {
  // expressions
  Nil,
  True,
  False,
  Integer,
  Float,
  String,
  Vararg,
  Function,
  Table,
  Name,
  Index,
  Field,
  Call,
  MethodCall,
  Binary,
  Unary,
  Paren,
  // statements
  Local,
  Assign,
  CallStat,
  Do,
  While,
  Repeat,
  If,
  NumericFor,
  GenericFor,
  FunctionStat,
  LocalFunction,
  Return,
  Break,
  Goto,
  Label,
  // a statement list
  Block,
};
std::string_view node_kind_name(NodeKind k);  // "Binary", "NumericFor", ...

struct Node {
  NodeKind kind;
  int id = -1;
  Location loc;  // first character
  Location end;  // last character (inclusive)

  explicit Node(NodeKind k) : kind(k) {}
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  virtual ~Node() = default;

  Span span() const { return {loc, end}; }
  template <class T>
  bool is() const {
    return kind == T::kKind;
  }
  template <class T>
  const T& as() const {
    LUDA_DSL_CHECK(kind == T::kKind);
    return static_cast<const T&>(*this);
  }
  template <class T>
  T& as() {
    LUDA_DSL_CHECK(kind == T::kKind);
    return static_cast<T&>(*this);
  }
  template <class T>
  const T* dyn() const {
    return kind == T::kKind ? static_cast<const T*>(this) : nullptr;
  }
};

struct Expr : Node {
  using Node::Node;
};
struct Stat : Node {
  using Node::Node;
};

// A name as written, with its place (parameters, locals, labels, fields, methods).
struct Name {
  std::string text;
  Location loc;
};

struct Block : Node {
  static constexpr NodeKind kKind = NodeKind::Block;
  Block() : Node(kKind) {}
  std::vector<Stat*> stats;  // a Return, if any, is last
};

// ---------------------------------------------------------------- expressions

struct NilExpr : Expr {
  static constexpr NodeKind kKind = NodeKind::Nil;
  NilExpr() : Expr(kKind) {}
};
struct TrueExpr : Expr {
  static constexpr NodeKind kKind = NodeKind::True;
  TrueExpr() : Expr(kKind) {}
};
struct FalseExpr : Expr {
  static constexpr NodeKind kKind = NodeKind::False;
  FalseExpr() : Expr(kKind) {}
};
struct VarargExpr : Expr {
  static constexpr NodeKind kKind = NodeKind::Vararg;
  VarargExpr() : Expr(kKind) {}
};

// An integer numeral that fits int64 (decimal), or any hex integer numeral (wraps around
// modulo 2^64, as in Lua). A decimal integer numeral that overflows is a FloatExpr.
struct IntegerExpr : Expr {
  static constexpr NodeKind kKind = NodeKind::Integer;
  IntegerExpr() : Expr(kKind) {}
  std::int64_t value = 0;
  std::string text;  // as written: "0xFF", "42"
};

struct FloatExpr : Expr {
  static constexpr NodeKind kKind = NodeKind::Float;
  FloatExpr() : Expr(kKind) {}
  double value = 0;
  std::string text;  // as written: "0.5", "1e10", "0x1p-3", "9223372036854775808"
};

struct StringExpr : Expr {
  static constexpr NodeKind kKind = NodeKind::String;
  StringExpr() : Expr(kKind) {}
  std::string value;     // escapes decoded; may hold any bytes
  bool is_long = false;  // written [[...]] / [==[...]==]
};

struct FunctionExpr : Expr {
  static constexpr NodeKind kKind = NodeKind::Function;
  FunctionExpr() : Expr(kKind) {}
  std::vector<Name> params;  // fixed parameters; a method's `self` first (at the name's loc)
  bool is_vararg = false;
  bool is_method = false;
  Block* body = nullptr;
  // As debug.getinfo(f, "S") reports them (lparser.c's rules): a function statement's
  // line_defined is the `function` keyword's line; a function expression's and a local
  // function's is the line of the token after `function` / after the name (the `(`);
  // last_line_defined is the line of the closing `end`. The main chunk: 0 and 0.
  int line_defined = 0;
  int last_line_defined = 0;
  // "f" (local function f / function f), "a.b.c:m", "" when anonymous. For display.
  // (`loc` is the `function` keyword's, in every form.)
  std::string name;
  int nparams() const { return static_cast<int>(params.size()); }
};

struct TableExpr : Expr {
  static constexpr NodeKind kKind = NodeKind::Table;
  TableExpr() : Expr(kKind) {}
  struct Field {
    enum class Kind : std::uint8_t { Positional, Named, Computed };  // `v`, `n = v`, `[k] = v`
    Kind kind = Kind::Positional;
    Name name;                  // Named
    const Expr* key = nullptr;  // Computed
    const Expr* value = nullptr;
    Location loc;
  };
  std::vector<Field> fields;
};

struct NameExpr : Expr {
  static constexpr NodeKind kKind = NodeKind::Name;
  NameExpr() : Expr(kKind) {}
  std::string name;
};

// obj[key]
struct IndexExpr : Expr {
  static constexpr NodeKind kKind = NodeKind::Index;
  IndexExpr() : Expr(kKind) {}
  const Expr* object = nullptr;
  const Expr* key = nullptr;
  Location bracket;  // the '['
};

// obj.name
struct FieldExpr : Expr {
  static constexpr NodeKind kKind = NodeKind::Field;
  FieldExpr() : Expr(kKind) {}
  const Expr* object = nullptr;
  Name field;
};

// f(args), f"str", f{table}: in the last two, args is the one String / Table.
struct CallExpr : Expr {
  static constexpr NodeKind kKind = NodeKind::Call;
  CallExpr() : Expr(kKind) {}
  const Expr* callee = nullptr;
  std::vector<const Expr*> args;
  Location open;  // the '(' (or the string / '{'): where a call's carets point
};

// obj:method(args)
struct MethodCallExpr : Expr {
  static constexpr NodeKind kKind = NodeKind::MethodCall;
  MethodCallExpr() : Expr(kKind) {}
  const Expr* object = nullptr;
  Name method;
  std::vector<const Expr*> args;
  Location open;
};

// ORDER BINARY OP: binary_op_text() and the parser's priority table follow this order.
enum class BinaryOp : std::uint8_t {
  Add,
  Sub,
  Mul,
  Div,
  IDiv,
  Mod,
  Pow,
  Concat,
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  And,
  Or,
  BAnd,
  BOr,
  BXor,
  Shl,
  Shr,
};
std::string_view binary_op_text(BinaryOp op);  // "+", "//", "~=", "and", "~", ...

struct BinaryExpr : Expr {
  static constexpr NodeKind kKind = NodeKind::Binary;
  BinaryExpr() : Expr(kKind) {}
  BinaryOp op = BinaryOp::Add;
  Location op_loc;  // the operator's first character: where carets point
  const Expr* lhs = nullptr;
  const Expr* rhs = nullptr;
};

enum class UnaryOp : std::uint8_t { Neg, Not, Len, BNot };  // ORDER UNARY OP
std::string_view unary_op_text(UnaryOp op);                 // "-", "not", "#", "~"

struct UnaryExpr : Expr {
  static constexpr NodeKind kKind = NodeKind::Unary;
  UnaryExpr() : Expr(kKind) {}
  UnaryOp op = UnaryOp::Neg;  // loc is the operator's
  const Expr* operand = nullptr;
};

struct ParenExpr : Expr {
  static constexpr NodeKind kKind = NodeKind::Paren;
  ParenExpr() : Expr(kKind) {}
  const Expr* inner = nullptr;
};

// ---------------------------------------------------------------- statements

// local a <const>, b <close>, c = exprs
struct LocalStat : Stat {
  static constexpr NodeKind kKind = NodeKind::Local;
  LocalStat() : Stat(kKind) {}
  enum class Attrib : std::uint8_t { None, Const, Close };
  struct Var {
    Name name;
    Attrib attrib = Attrib::None;
  };
  std::vector<Var> vars;
  std::vector<const Expr*> values;  // may be empty
};

// targets = values (each target a Name, Index or Field)
struct AssignStat : Stat {
  static constexpr NodeKind kKind = NodeKind::Assign;
  AssignStat() : Stat(kKind) {}
  std::vector<const Expr*> targets;
  std::vector<const Expr*> values;
  Location eq;  // the '='
};

// a call used as a statement (Call or MethodCall)
struct CallStat : Stat {
  static constexpr NodeKind kKind = NodeKind::CallStat;
  CallStat() : Stat(kKind) {}
  const Expr* call = nullptr;
};

struct DoStat : Stat {
  static constexpr NodeKind kKind = NodeKind::Do;
  DoStat() : Stat(kKind) {}
  Block* body = nullptr;
};

struct WhileStat : Stat {
  static constexpr NodeKind kKind = NodeKind::While;
  WhileStat() : Stat(kKind) {}
  const Expr* cond = nullptr;
  Block* body = nullptr;
};

// repeat body until cond (cond sees the body's locals)
struct RepeatStat : Stat {
  static constexpr NodeKind kKind = NodeKind::Repeat;
  RepeatStat() : Stat(kKind) {}
  Block* body = nullptr;
  const Expr* cond = nullptr;
};

struct IfStat : Stat {
  static constexpr NodeKind kKind = NodeKind::If;
  IfStat() : Stat(kKind) {}
  struct Clause {
    const Expr* cond = nullptr;
    Block* body = nullptr;
    Location loc;  // the `if` / `elseif`
  };
  std::vector<Clause> clauses;  // if, then each elseif
  Block* else_body = nullptr;   // nullptr: no else
};

// for var = start, limit [, step] do body end
struct NumericForStat : Stat {
  static constexpr NodeKind kKind = NodeKind::NumericFor;
  NumericForStat() : Stat(kKind) {}
  Name var;
  const Expr* start = nullptr;
  const Expr* limit = nullptr;
  const Expr* step = nullptr;  // nullptr: 1
  Block* body = nullptr;
};

// for names in exprs do body end
struct GenericForStat : Stat {
  static constexpr NodeKind kKind = NodeKind::GenericFor;
  GenericForStat() : Stat(kKind) {}
  std::vector<Name> vars;
  std::vector<const Expr*> exprs;
  Block* body = nullptr;
};

// function a.b.c:m(params) body end  -- path = {a, b, c, m}, is_method = true
struct FunctionStat : Stat {
  static constexpr NodeKind kKind = NodeKind::FunctionStat;
  FunctionStat() : Stat(kKind) {}
  std::vector<Name> path;
  bool is_method = false;
  const FunctionExpr* function = nullptr;
};

// local function name(params) body end
struct LocalFunctionStat : Stat {
  static constexpr NodeKind kKind = NodeKind::LocalFunction;
  LocalFunctionStat() : Stat(kKind) {}
  Name name;
  const FunctionExpr* function = nullptr;
};

struct ReturnStat : Stat {
  static constexpr NodeKind kKind = NodeKind::Return;
  ReturnStat() : Stat(kKind) {}
  std::vector<const Expr*> values;
};

struct BreakStat : Stat {
  static constexpr NodeKind kKind = NodeKind::Break;
  BreakStat() : Stat(kKind) {}
};

struct GotoStat : Stat {
  static constexpr NodeKind kKind = NodeKind::Goto;
  GotoStat() : Stat(kKind) {}
  Name label;
};

struct LabelStat : Stat {
  static constexpr NodeKind kKind = NodeKind::Label;
  LabelStat() : Stat(kKind) {}
  Name label;
};

// ---------------------------------------------------------------- the tree

// A parsed chunk: owns every node. The main chunk is a vararg FunctionExpr (line 0).
class Ast {
 public:
  explicit Ast(std::shared_ptr<const Source> source) : source_(std::move(source)) {}
  Ast(const Ast&) = delete;
  Ast& operator=(const Ast&) = delete;

  const Source& source() const { return *source_; }
  const std::shared_ptr<const Source>& source_ptr() const { return source_; }
  const FunctionExpr& main() const { return *main_; }
  int node_count() const { return static_cast<int>(nodes_.size()); }
  const Node& node(int id) const { return *nodes_.at(static_cast<std::size_t>(id)); }
  // Every function expression in the order its `function` keyword appears (main excluded).
  const std::vector<const FunctionExpr*>& functions() const { return functions_; }

  // For the parser (and tests building trees): a new node with the next id.
  template <class T>
  T* make(Location loc) {
    auto node = std::make_unique<T>();
    node->id = node_count();
    node->loc = loc;
    node->end = loc;
    T* raw = node.get();
    nodes_.push_back(std::move(node));
    return raw;
  }
  void set_main(FunctionExpr* main) { main_ = main; }
  void add_function(const FunctionExpr* f) { functions_.push_back(f); }

 private:
  std::shared_ptr<const Source> source_;
  std::vector<std::unique_ptr<Node>> nodes_;
  FunctionExpr* main_ = nullptr;
  std::vector<const FunctionExpr*> functions_;
};

// Appends `e`'s direct sub-expressions to `out` (objects, callees, operands, keys,
// arguments, table fields): for passes that walk expressions with a work list rather than
// by recursion, as chains thousands of operators long require.
void push_children(const Expr& e, std::vector<const Expr*>& out);

// A compact S-expression of a subtree, for tests and debugging:
//   (+ 1 (* 2 3))   (call (. math sqrt) x)   (local (a b) (1 2))   (if (< x 0) (block ...))
// Exact forms are documented in ast.cpp; stable enough to assert on in tests.
std::string dump(const Node& node);

// Error at a node: the reporter with the node's source, the caret at the node's start (a
// Binary's at its operator), `~` under the whole node. Convenience for later passes.
SourceError node_error(const Ast& ast, const Node& node, std::string_view kind, std::string_view message);

}  // namespace luda::dsl
