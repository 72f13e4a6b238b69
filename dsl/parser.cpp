#include "dsl/parser.h"

#include <fmt/format.h>

#include "dsl/diagnostics.h"
#include "dsl/lexer.h"
#include "dsl/stack_guard.h"

namespace luda::dsl {

namespace {

// ORDER BINARY OP: left and right priorities (lparser.c `priority`). Right associative
// operators ('..', '^') have a right priority lower than their left one.
struct Priority {
  int left, right;
};
constexpr Priority kPriority[] = {
    {10, 10}, {10, 10},                                      // + -
    {11, 11}, {11, 11}, {11, 11}, {11, 11},                  // * / // %
    {14, 13},                                                // ^ (right associative)
    {9, 8},                                                  // .. (right associative)
    {3, 3},   {3, 3},   {3, 3},   {3, 3},   {3, 3}, {3, 3},  // == ~= < <= > >=
    {2, 2},   {1, 1},                                        // and or
    {6, 6},   {4, 4},   {5, 5},   {7, 7},   {7, 7},          // & | ~ << >>
};
constexpr int kUnaryPriority = 12;
// Nesting deeper than this is refused with an error rather than risking the C++ stack
// (Lua's own limit, LUAI_MAXCCALLS, is 200).
constexpr int kMaxDepth = 200;

bool binary_op(int type, BinaryOp& op) {
  switch (type) {
    case '+': op = BinaryOp::Add; return true;
    case '-': op = BinaryOp::Sub; return true;
    case '*': op = BinaryOp::Mul; return true;
    case '/': op = BinaryOp::Div; return true;
    case tok::IDiv: op = BinaryOp::IDiv; return true;
    case '%': op = BinaryOp::Mod; return true;
    case '^': op = BinaryOp::Pow; return true;
    case tok::Concat: op = BinaryOp::Concat; return true;
    case tok::Eq: op = BinaryOp::Eq; return true;
    case tok::Ne: op = BinaryOp::Ne; return true;
    case '<': op = BinaryOp::Lt; return true;
    case tok::Le: op = BinaryOp::Le; return true;
    case '>': op = BinaryOp::Gt; return true;
    case tok::Ge: op = BinaryOp::Ge; return true;
    case tok::And: op = BinaryOp::And; return true;
    case tok::Or: op = BinaryOp::Or; return true;
    case '&': op = BinaryOp::BAnd; return true;
    case '|': op = BinaryOp::BOr; return true;
    case '~': op = BinaryOp::BXor; return true;
    case tok::Shl: op = BinaryOp::Shl; return true;
    case tok::Shr: op = BinaryOp::Shr; return true;
    default: return false;
  }
}

class Parser {
 public:
  explicit Parser(std::shared_ptr<const Source> source)
      : ast_(std::make_unique<Ast>(std::move(source))), lex_(ast_->source()) {
    lex_.next(cur_);
  }

  std::unique_ptr<Ast> run();
  std::unique_ptr<Ast> run_function_text();

 private:
  // -- compile-time checks' state: one FunctionState per function being parsed, one
  // BlockState per open block (lparser.c's FuncState / BlockCnt, names only).
  struct LocalVar {
    std::string_view name;
    LocalStat::Attrib attrib;
  };
  struct LabelInfo {
    std::string_view name;
    Location loc;
    std::size_t nactvar;  // locals active at the label
  };
  struct PendingGoto {
    std::string_view name;
    Location loc;
    std::size_t nactvar;
  };
  struct BlockState {
    bool is_loop;
    std::size_t nactvar;      // locals active when the block opened
    std::size_t first_label;  // into labels_
    std::size_t first_goto;   // into gotos_
  };
  struct FunctionState {
    bool is_vararg;
    std::size_t first_block;  // into blocks_
    std::size_t first_goto;   // into gotos_
  };

  // -- tokens
  void advance() {
    prev_end_ = cur_.end;
    if (has_ahead_) {
      std::swap(cur_, ahead_);
      has_ahead_ = false;
    } else {
      lex_.next(cur_);
    }
  }
  const Token& lookahead() {
    if (!has_ahead_) {
      lex_.next(ahead_);
      has_ahead_ = true;
    }
    return ahead_;
  }
  bool test_next(int type) {
    if (cur_.type != type) return false;
    advance();
    return true;
  }
  void check(int type) {
    if (cur_.type != type) error_expected(type);
  }
  void check_next(int type) {
    check(type);
    advance();
  }
  // Closes `who` (opened at `where`) with `what`, naming the opener when it is far away.
  void check_match(int what, int who, Location where) {
    if (test_next(what)) return;
    if (where.line == cur_.loc.line) error_expected(what);
    error_near(fmt::format("{} expected (to close {} at line {})", token_text(what), token_text(who), where.line));
  }
  Name check_name() {
    check(tok::Name);
    Name n{std::string(cur_.raw), cur_.loc};
    advance();
    return n;
  }

  // -- errors
  [[noreturn]] void error_near(std::string_view message) {
    throw source_error(ast_->source(), cur_.loc, error_kind::syntax,
                       fmt::format("{} near {}", message, near_text(cur_)), Span{cur_.loc, cur_.end});
  }
  [[noreturn]] void error_expected(int type) { error_near(fmt::format("{} expected", token_text(type))); }
  [[noreturn]] void error_at(Location at, std::string_view message) {
    throw source_error(ast_->source(), at, error_kind::syntax, message);
  }
  void enter_level() {
    if (++depth_ > kMaxDepth) error_near(fmt::format("chunk nested too deeply (more than {} levels)", kMaxDepth));
    if (stack_low()) error_near(kStackLowMessage);
  }

  template <class T>
  T* make(Location loc) {
    return ast_->make<T>(loc);
  }
  template <class T>
  T* finish(T* node) {
    node->end = prev_end_;
    return node;
  }

  // -- scopes
  void open_block(bool is_loop) { blocks_.push_back({is_loop, actvar_.size(), labels_.size(), gotos_.size()}); }
  void close_block();
  void open_function(bool is_vararg) { functions_.push_back({is_vararg, blocks_.size(), gotos_.size()}); }
  void close_function();
  void add_local(std::string_view name, LocalStat::Attrib attrib = LocalStat::Attrib::None) {
    actvar_.push_back({name, attrib});
  }
  void check_assignable(const Expr* target, Location eq);
  void check_not_const(std::string_view name, Location at);
  void create_label(const Name& name, bool last);
  void resolve_gotos(const LabelInfo& label);

  // -- grammar
  static bool block_follow(int type, bool with_until) {
    switch (type) {
      case tok::Else:
      case tok::Elseif:
      case tok::End:
      case tok::Eof: return true;
      case tok::Until: return with_until;
      default: return false;
    }
  }
  Block* block(bool is_loop = false);
  void statlist(Block* b);
  Stat* statement();
  Stat* ifstat();
  Stat* whilestat();
  Stat* dostat();
  Stat* forstat();
  Stat* repeatstat();
  Stat* funcstat();
  Stat* localfunc(Location local_loc, Location function_loc);
  Stat* localstat(Location local_loc);
  Stat* labelstat();
  Stat* retstat();
  Stat* breakstat();
  Stat* gotostat();
  Stat* exprstat();
  FunctionExpr* body(Location function_loc, int line_defined, bool is_method, Location self_loc);
  const Expr* expr(int limit = 0);
  const Expr* simpleexp();
  const Expr* primaryexp();
  const Expr* suffixedexp();
  const Expr* constructor();
  void funcargs(std::vector<const Expr*>& args, Location& open);
  std::vector<const Expr*> explist();

  std::unique_ptr<Ast> ast_;
  Lexer lex_;
  Token cur_, ahead_;
  bool has_ahead_ = false;
  Location prev_end_{1, 0};
  int depth_ = 0;
  std::vector<LocalVar> actvar_;
  std::vector<LabelInfo> labels_;
  std::vector<PendingGoto> gotos_;
  std::vector<BlockState> blocks_;
  std::vector<FunctionState> functions_;
};

// ---------------------------------------------------------------- scopes and labels

void Parser::close_block() {
  BlockState b = blocks_.back();
  blocks_.pop_back();
  labels_.resize(b.first_label);
  actvar_.resize(b.nactvar);
  // Gotos still pending leave the block: they may jump to a later label of an enclosing
  // block, but not into the scope of this block's locals (lparser.c movegotosout).
  for (std::size_t i = b.first_goto; i < gotos_.size(); ++i)
    if (gotos_[i].nactvar > b.nactvar) gotos_[i].nactvar = b.nactvar;
}

void Parser::close_function() {
  // The function's outermost block is closed by now: its pending gotos found no label.
  std::size_t first = functions_.back().first_goto;
  functions_.pop_back();
  if (gotos_.size() > first) {
    const PendingGoto& g = gotos_[first];
    error_at(g.loc, fmt::format("no visible label '{}' for goto", g.name));
  }
}

void Parser::create_label(const Name& name, bool last) {
  // Labels are visible in the whole function body below their block (lparser.c findlabel).
  std::size_t first = blocks_[functions_.back().first_block].first_label;
  for (std::size_t i = first; i < labels_.size(); ++i)
    if (labels_[i].name == name.text)
      error_at(name.loc, fmt::format("label '{}' already defined on line {}", name.text, labels_[i].loc.line));
  // A label that ends its block counts as after the block's locals: a goto may jump there.
  std::size_t nactvar = last ? blocks_.back().nactvar : actvar_.size();
  labels_.push_back({name.text, name.loc, nactvar});
  resolve_gotos(labels_.back());
}

void Parser::resolve_gotos(const LabelInfo& label) {
  // Pending gotos of the current block (and of closed blocks inside it) jump forward here.
  std::size_t first = blocks_.back().first_goto;
  for (std::size_t i = first; i < gotos_.size();) {
    if (gotos_[i].name != label.name) {
      ++i;
      continue;
    }
    if (gotos_[i].nactvar < label.nactvar) {
      error_at(gotos_[i].loc, fmt::format("<goto {}> at line {} jumps into the scope of local '{}'", label.name,
                                          gotos_[i].loc.line, actvar_[gotos_[i].nactvar].name));
    }
    gotos_.erase(gotos_.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

void Parser::check_assignable(const Expr* target, Location eq) {
  if (target->is<CallExpr>() || target->is<MethodCallExpr>()) error_at(eq, "cannot assign to a function call");
  if (target->is<ParenExpr>()) error_at(eq, "cannot assign to a parenthesized expression");
  if (const auto* n = target->dyn<NameExpr>()) check_not_const(n->name, n->loc);
}

void Parser::check_not_const(std::string_view name, Location at) {
  // The innermost local of that name decides, in this function or an enclosing one.
  for (auto it = actvar_.rbegin(); it != actvar_.rend(); ++it) {
    if (it->name != name) continue;
    if (it->attrib != LocalStat::Attrib::None)
      error_at(at, fmt::format("attempt to assign to const variable '{}'", name));
    return;
  }
}

// ---------------------------------------------------------------- statements

std::unique_ptr<Ast> Parser::run() {
  // mainfunc -> block EOF   (the main chunk is a vararg function)
  auto* main = make<FunctionExpr>(cur_.loc);
  main->is_vararg = true;
  main->loc = {1, 1};
  open_function(true);
  main->body = block();
  check(tok::Eof);
  close_function();
  main->end = prev_end_;
  ast_->set_main(main);
  return std::move(ast_);
}

std::unique_ptr<Ast> Parser::run_function_text() {
  // functext -> [RETURN] FUNCTION body [';'] EOF
  //           | LOCAL FUNCTION NAME body [';'] EOF
  //           | FUNCTION funcname body [';'] EOF
  auto* main = make<FunctionExpr>(cur_.loc);
  main->is_vararg = true;
  main->loc = {1, 1};
  open_function(true);
  auto* b = make<Block>(cur_.loc);
  open_block(false);
  bool has_return = cur_.type == tok::Return;
  bool anonymous = has_return || (cur_.type == tok::Function && lookahead().type == '(');
  if (anonymous) {
    auto* r = make<ReturnStat>(cur_.loc);
    test_next(tok::Return);
    if (cur_.type != tok::Function)
      error_near("function expected (the source text must be one function, as in 'function(x, out) ... end')");
    b->stats.push_back(r);
    r->values.push_back(simpleexp());
    finish(r);
  } else if (cur_.type == tok::Function || (cur_.type == tok::Local && lookahead().type == tok::Function)) {
    b->stats.push_back(statement());
  } else {
    error_near("function expected (the source text must be one function, as in 'function(x, out) ... end')");
  }
  while (test_next(';')) {
  }
  if (cur_.type != tok::Eof)
    error_near("<eof> expected (the source text must be one function, and nothing may follow its 'end')");
  b->end = prev_end_;
  close_block();
  close_function();
  main->body = b;
  main->end = prev_end_;
  ast_->set_main(main);
  return std::move(ast_);
}

Block* Parser::block(bool is_loop) {
  // block -> statlist
  auto* b = make<Block>(cur_.loc);
  open_block(is_loop);
  statlist(b);
  close_block();
  b->end = b->stats.empty() ? b->loc : prev_end_;
  return b;
}

void Parser::statlist(Block* b) {
  // statlist -> { stat [';'] }
  while (!block_follow(cur_.type, true)) {
    if (cur_.type == tok::Return) {
      b->stats.push_back(retstat());
      return;  // 'return' must be the last statement
    }
    if (Stat* s = statement()) b->stats.push_back(s);
  }
}

Stat* Parser::statement() {
  // stat -> ';' | ifstat | whilestat | DO block END | forstat | repeatstat | funcstat
  //       | localstat | localfunc | label | retstat | breakstat | gotostat | exprstat
  enter_level();
  Stat* s = nullptr;
  switch (cur_.type) {
    case ';': advance(); break;  // empty statement
    case tok::If: s = ifstat(); break;
    case tok::While: s = whilestat(); break;
    case tok::Do: s = dostat(); break;
    case tok::For: s = forstat(); break;
    case tok::Repeat: s = repeatstat(); break;
    case tok::Function: s = funcstat(); break;
    case tok::Local: {
      Location local_loc = cur_.loc;
      advance();
      if (cur_.type == tok::Function) {
        Location function_loc = cur_.loc;
        advance();
        s = localfunc(local_loc, function_loc);
      } else {
        s = localstat(local_loc);
      }
      break;
    }
    case tok::DbColon: s = labelstat(); break;
    case tok::Return: s = retstat(); break;
    case tok::Break: s = breakstat(); break;
    case tok::Goto: s = gotostat(); break;
    default: s = exprstat(); break;
  }
  --depth_;
  return s;
}

Stat* Parser::ifstat() {
  // ifstat -> IF cond THEN block {ELSEIF cond THEN block} [ELSE block] END
  auto* s = make<IfStat>(cur_.loc);
  Location if_loc = cur_.loc;
  do {  // test_then_block
    Location clause_loc = cur_.loc;
    advance();  // IF or ELSEIF
    const Expr* cond = expr();
    check_next(tok::Then);
    s->clauses.push_back({cond, block(), clause_loc});
  } while (cur_.type == tok::Elseif);
  if (test_next(tok::Else)) s->else_body = block();
  check_match(tok::End, tok::If, if_loc);
  return finish(s);
}

Stat* Parser::whilestat() {
  // whilestat -> WHILE cond DO block END
  auto* s = make<WhileStat>(cur_.loc);
  advance();
  s->cond = expr();
  check_next(tok::Do);
  s->body = block(true);
  check_match(tok::End, tok::While, s->loc);
  return finish(s);
}

Stat* Parser::dostat() {
  // dostat -> DO block END
  auto* s = make<DoStat>(cur_.loc);
  advance();
  s->body = block();
  check_match(tok::End, tok::Do, s->loc);
  return finish(s);
}

Stat* Parser::forstat() {
  // forstat -> FOR (fornum | forlist) END
  // fornum -> NAME = exp, exp [, exp] forbody
  // forlist -> NAME {, NAME} IN explist forbody
  // forbody -> DO block
  Location for_loc = cur_.loc;
  advance();
  Name first = check_name();
  if (cur_.type == '=') {
    auto* s = make<NumericForStat>(for_loc);
    advance();
    s->var = std::move(first);
    s->start = expr();
    check_next(',');
    s->limit = expr();
    if (test_next(',')) s->step = expr();
    check_next(tok::Do);
    open_block(true);  // the loop variable's scope
    add_local(s->var.text);
    s->body = block(true);
    close_block();
    check_match(tok::End, tok::For, for_loc);
    return finish(s);
  }
  if (cur_.type != ',' && cur_.type != tok::In) error_near("'=' or 'in' expected");
  auto* s = make<GenericForStat>(for_loc);
  s->vars.push_back(std::move(first));
  while (test_next(',')) s->vars.push_back(check_name());
  check_next(tok::In);
  s->exprs = explist();
  check_next(tok::Do);
  open_block(true);
  for (const Name& v : s->vars) add_local(v.text);
  s->body = block(true);
  close_block();
  check_match(tok::End, tok::For, for_loc);
  return finish(s);
}

Stat* Parser::repeatstat() {
  // repeatstat -> REPEAT block UNTIL cond   (cond sees the block's locals)
  auto* s = make<RepeatStat>(cur_.loc);
  advance();
  auto* b = make<Block>(cur_.loc);
  open_block(true);
  statlist(b);
  b->end = b->stats.empty() ? b->loc : prev_end_;
  check_match(tok::Until, tok::Repeat, s->loc);
  s->body = b;
  s->cond = expr();
  close_block();
  return finish(s);
}

Stat* Parser::funcstat() {
  // funcstat -> FUNCTION funcname body
  // funcname -> NAME {'.' NAME} [':' NAME]
  auto* s = make<FunctionStat>(cur_.loc);
  Location function_loc = cur_.loc;
  int line = cur_.loc.line;  // debug.getinfo's linedefined: the keyword's line
  advance();
  s->path.push_back(check_name());
  std::string name = s->path.back().text;
  while (test_next('.')) {
    s->path.push_back(check_name());
    name += "." + s->path.back().text;
  }
  Location self_loc;
  if (test_next(':')) {
    s->is_method = true;
    s->path.push_back(check_name());
    self_loc = s->path.back().loc;
    name += ":" + s->path.back().text;
  }
  if (s->path.size() == 1) check_not_const(s->path[0].text, s->path[0].loc);
  FunctionExpr* f = body(function_loc, line, s->is_method, self_loc);
  f->name = std::move(name);
  s->function = f;
  return finish(s);
}

Stat* Parser::localfunc(Location local_loc, Location function_loc) {
  // localfunc -> LOCAL FUNCTION NAME body   (the name is visible inside the body)
  auto* s = make<LocalFunctionStat>(local_loc);
  s->name = check_name();
  add_local(s->name.text);
  FunctionExpr* f = body(function_loc, cur_.loc.line, false, {});
  f->name = s->name.text;
  s->function = f;
  return finish(s);
}

Stat* Parser::localstat(Location local_loc) {
  // localstat -> LOCAL attnamelist ['=' explist]
  // attnamelist -> NAME attrib {',' NAME attrib}
  // attrib -> ['<' NAME '>']
  auto* s = make<LocalStat>(local_loc);
  bool has_close = false;
  do {
    LocalStat::Var v{check_name(), LocalStat::Attrib::None};
    if (test_next('<')) {
      Name attr = check_name();
      check_next('>');
      if (attr.text == "const") {
        v.attrib = LocalStat::Attrib::Const;
      } else if (attr.text == "close") {
        if (has_close) error_at(attr.loc, "multiple to-be-closed variables in local list");
        has_close = true;
        v.attrib = LocalStat::Attrib::Close;
      } else {
        error_at(attr.loc, fmt::format("unknown attribute '{}'", attr.text));
      }
    }
    s->vars.push_back(std::move(v));
  } while (test_next(','));
  if (test_next('=')) s->values = explist();
  for (const auto& v : s->vars) add_local(v.name.text, v.attrib);  // in scope after the statement
  return finish(s);
}

Stat* Parser::labelstat() {
  // label -> '::' NAME '::'
  auto* s = make<LabelStat>(cur_.loc);
  advance();
  s->label = check_name();
  check_next(tok::DbColon);
  // Skip empty statements so that a label before `end` counts as the block's last.
  while (cur_.type == ';') advance();
  create_label(s->label, block_follow(cur_.type, false));
  return finish(s);
}

Stat* Parser::retstat() {
  // retstat -> RETURN [explist] [';']
  auto* s = make<ReturnStat>(cur_.loc);
  advance();
  if (!block_follow(cur_.type, true) && cur_.type != ';') s->values = explist();
  finish(s);
  test_next(';');
  return s;
}

Stat* Parser::breakstat() {
  // breakstat -> BREAK
  auto* s = make<BreakStat>(cur_.loc);
  advance();
  bool in_loop = false;
  for (std::size_t i = blocks_.size(); i-- > functions_.back().first_block;) {
    if (blocks_[i].is_loop) {
      in_loop = true;
      break;
    }
  }
  if (!in_loop) error_at(s->loc, "break outside a loop");
  return finish(s);
}

Stat* Parser::gotostat() {
  // gotostat -> GOTO NAME
  auto* s = make<GotoStat>(cur_.loc);
  advance();
  std::string_view raw = cur_.raw;
  s->label = check_name();
  // A backward jump to a visible label is resolved now; a forward one waits for its label.
  std::size_t first = blocks_[functions_.back().first_block].first_label;
  bool found = false;
  for (std::size_t i = first; i < labels_.size(); ++i) found = found || labels_[i].name == raw;
  if (!found) gotos_.push_back({raw, s->loc, actvar_.size()});
  return finish(s);
}

Stat* Parser::exprstat() {
  // exprstat -> func | assignment
  // assignment -> suffixedexp {',' suffixedexp} '=' explist
  Location start = cur_.loc;
  const Expr* first = suffixedexp();
  if (cur_.type == '=' || cur_.type == ',') {
    auto* s = make<AssignStat>(start);
    s->targets.push_back(first);
    while (test_next(',')) s->targets.push_back(suffixedexp());
    s->eq = cur_.loc;
    check_next('=');
    for (const Expr* t : s->targets) check_assignable(t, s->eq);
    s->values = explist();
    return finish(s);
  }
  if (!first->is<CallExpr>() && !first->is<MethodCallExpr>()) error_expected('=');
  auto* s = make<CallStat>(start);
  s->call = first;
  return finish(s);
}

// ---------------------------------------------------------------- expressions

FunctionExpr* Parser::body(Location function_loc, int line_defined, bool is_method, Location self_loc) {
  // body -> '(' parlist ')' block END
  // parlist -> [ {NAME ','} (NAME | '...') ]
  auto* f = make<FunctionExpr>(function_loc);
  ast_->add_function(f);
  f->line_defined = line_defined;
  f->is_method = is_method;
  if (is_method) f->params.push_back({"self", self_loc});
  check_next('(');
  if (cur_.type != ')') {
    do {
      if (cur_.type == tok::Name) {
        f->params.push_back(check_name());
      } else if (cur_.type == tok::Dots) {
        advance();
        f->is_vararg = true;
      } else {
        error_expected(tok::Name);
      }
    } while (!f->is_vararg && test_next(','));
  }
  check_next(')');
  open_function(f->is_vararg);
  open_block(false);
  for (const Name& p : f->params) add_local(p.text);
  auto* b = make<Block>(cur_.loc);
  statlist(b);
  b->end = b->stats.empty() ? b->loc : prev_end_;
  f->body = b;
  close_block();
  close_function();
  f->last_line_defined = cur_.loc.line;
  check_match(tok::End, tok::Function, function_loc);
  return finish(f);
}

std::vector<const Expr*> Parser::explist() {
  // explist -> expr {',' expr}
  std::vector<const Expr*> list;
  list.push_back(expr());
  while (test_next(',')) list.push_back(expr());
  return list;
}

const Expr* Parser::expr(int limit) {
  // subexpr -> (simpleexp | unop subexpr) { binop subexpr }
  // where 'binop' is any binary operator with a priority higher than 'limit'
  enter_level();
  const Expr* left = nullptr;
  UnaryOp uop{};
  bool is_unary = true;
  switch (cur_.type) {
    case tok::Not: uop = UnaryOp::Not; break;
    case '-': uop = UnaryOp::Neg; break;
    case '~': uop = UnaryOp::BNot; break;
    case '#': uop = UnaryOp::Len; break;
    default: is_unary = false;
  }
  if (is_unary) {
    auto* u = make<UnaryExpr>(cur_.loc);
    u->op = uop;
    advance();
    u->operand = expr(kUnaryPriority);
    left = finish(u);
  } else {
    left = simpleexp();
  }
  BinaryOp op{};
  while (binary_op(cur_.type, op) && kPriority[static_cast<int>(op)].left > limit) {
    auto* b = make<BinaryExpr>(left->loc);
    b->op = op;
    b->op_loc = cur_.loc;
    b->lhs = left;
    advance();
    b->rhs = expr(kPriority[static_cast<int>(op)].right);
    left = finish(b);
  }
  --depth_;
  return left;
}

const Expr* Parser::simpleexp() {
  // simpleexp -> FLT | INT | STRING | NIL | TRUE | FALSE | ... | constructor
  //            | FUNCTION body | suffixedexp
  switch (cur_.type) {
    case tok::Float: {
      auto* e = make<FloatExpr>(cur_.loc);
      e->value = cur_.number;
      e->text = std::string(cur_.raw);
      advance();
      return finish(e);
    }
    case tok::Integer: {
      auto* e = make<IntegerExpr>(cur_.loc);
      e->value = cur_.integer;
      e->text = std::string(cur_.raw);
      advance();
      return finish(e);
    }
    case tok::String: {
      auto* e = make<StringExpr>(cur_.loc);
      e->value = std::move(cur_.string);
      e->is_long = cur_.long_string;
      advance();
      return finish(e);
    }
    case tok::Nil: {
      auto* e = make<NilExpr>(cur_.loc);
      advance();
      return finish(e);
    }
    case tok::True: {
      auto* e = make<TrueExpr>(cur_.loc);
      advance();
      return finish(e);
    }
    case tok::False: {
      auto* e = make<FalseExpr>(cur_.loc);
      advance();
      return finish(e);
    }
    case tok::Dots: {
      if (!functions_.back().is_vararg) error_near("cannot use '...' outside a vararg function");
      auto* e = make<VarargExpr>(cur_.loc);
      advance();
      return finish(e);
    }
    case '{': return constructor();
    case tok::Function: {
      Location function_loc = cur_.loc;
      advance();
      return body(function_loc, cur_.loc.line, false, {});
    }
    default: return suffixedexp();
  }
}

const Expr* Parser::primaryexp() {
  // primaryexp -> NAME | '(' expr ')'
  switch (cur_.type) {
    case tok::Name: {
      auto* e = make<NameExpr>(cur_.loc);
      e->name = std::string(cur_.raw);
      advance();
      return finish(e);
    }
    case '(': {
      auto* e = make<ParenExpr>(cur_.loc);
      advance();
      e->inner = expr();
      check_match(')', '(', e->loc);
      return finish(e);
    }
    default: error_near("unexpected symbol");
  }
}

const Expr* Parser::suffixedexp() {
  // suffixedexp -> primaryexp { '.' NAME | '[' exp ']' | ':' NAME funcargs | funcargs }
  const Expr* e = primaryexp();
  for (;;) {
    switch (cur_.type) {
      case '.': {
        auto* f = make<FieldExpr>(e->loc);
        advance();
        f->object = e;
        f->field = check_name();
        e = finish(f);
        break;
      }
      case '[': {
        auto* i = make<IndexExpr>(e->loc);
        i->bracket = cur_.loc;
        advance();
        i->object = e;
        i->key = expr();
        check_next(']');
        e = finish(i);
        break;
      }
      case ':': {
        auto* m = make<MethodCallExpr>(e->loc);
        advance();
        m->object = e;
        m->method = check_name();
        funcargs(m->args, m->open);
        e = finish(m);
        break;
      }
      case '(':
      case tok::String:
      case '{': {
        auto* c = make<CallExpr>(e->loc);
        c->callee = e;
        funcargs(c->args, c->open);
        e = finish(c);
        break;
      }
      default: return e;
    }
  }
}

void Parser::funcargs(std::vector<const Expr*>& args, Location& open) {
  // funcargs -> '(' [ explist ] ')' | constructor | STRING
  open = cur_.loc;
  switch (cur_.type) {
    case '(': {
      advance();
      if (cur_.type != ')') args = explist();
      check_match(')', '(', open);
      return;
    }
    case '{': args.push_back(constructor()); return;
    case tok::String: args.push_back(simpleexp()); return;
    default: error_near("function arguments expected");
  }
}

const Expr* Parser::constructor() {
  // constructor -> '{' [ field { sep field } [sep] ] '}'
  // sep -> ',' | ';'
  // field -> NAME '=' exp | '[' exp ']' '=' exp | exp
  auto* t = make<TableExpr>(cur_.loc);
  check_next('{');
  while (cur_.type != '}') {
    TableExpr::Field field;
    field.loc = cur_.loc;
    if (cur_.type == tok::Name && lookahead().type == '=') {
      field.kind = TableExpr::Field::Kind::Named;
      field.name = check_name();
      check_next('=');
      field.value = expr();
    } else if (cur_.type == '[') {
      field.kind = TableExpr::Field::Kind::Computed;
      advance();
      field.key = expr();
      check_next(']');
      check_next('=');
      field.value = expr();
    } else {
      field.value = expr();
    }
    t->fields.push_back(std::move(field));
    if (!test_next(',') && !test_next(';')) break;
  }
  check_match('}', '{', t->loc);
  return finish(t);
}

}  // namespace

std::unique_ptr<Ast> parse_chunk(std::shared_ptr<const Source> source) { return Parser(std::move(source)).run(); }

std::unique_ptr<Ast> parse_function_text(std::shared_ptr<const Source> source) {
  return Parser(std::move(source)).run_function_text();
}

}  // namespace luda::dsl
