#include "chat/parser.h"

#include <cerrno>
#include <cstdlib>
#include <initializer_list>

#include "chat/error.h"
#include "chat/lexer.h"

namespace uaii::jinja {
namespace {

// Deeper nesting than this (parentheses, `not`, inline ifs, blocks) is refused so
// that parsing and rendering never run out of stack; real templates nest < 20 deep.
constexpr int kMaxNesting = 256;

class Parser {
 public:
  explicit Parser(std::vector<Token> toks) : t_(std::move(toks)) {}

  Body ParseAll() {
    Body body = ParseBody({});
    if (Cur().type != Tok::kEof) Fail("unexpected token");
    return body;
  }

 private:
  struct Nest {
    explicit Nest(Parser& p) : p(p) {
      if (++p.nesting_ > kMaxNesting) p.Fail("template nested too deeply (more than " + std::to_string(kMaxNesting) + " levels)");
    }
    ~Nest() { --p.nesting_; }
    Parser& p;
  };

  // ---- token helpers ----
  const Token& Cur() const { return t_[p_]; }
  const Token& Peek(size_t k = 1) const { return t_[std::min(p_ + k, t_.size() - 1)]; }
  void Next() {
    if (p_ + 1 < t_.size()) ++p_;
  }
  bool IsOp(const char* op) const { return Cur().type == Tok::kOp && Cur().text == op; }
  bool IsName(const char* n) const { return Cur().type == Tok::kName && Cur().text == n; }
  bool SkipOp(const char* op) {
    if (!IsOp(op)) return false;
    Next();
    return true;
  }
  bool SkipName(const char* n) {
    if (!IsName(n)) return false;
    Next();
    return true;
  }
  [[noreturn]] void Fail(const std::string& msg) const { throw JinjaError("TemplateSyntaxError", msg, Cur().line); }
  static std::string Describe(const Token& t) {
    switch (t.type) {
      case Tok::kEof: return "end of template";
      case Tok::kBlockEnd: return "end of statement block";
      case Tok::kVarEnd: return "end of print statement";
      case Tok::kName: return t.text;
      case Tok::kOp: return t.text;
      case Tok::kString: return "string";
      case Tok::kInt: return "integer";
      case Tok::kFloat: return "float";
      default: return "token";
    }
  }
  void ExpectOp(const char* op) {
    if (!SkipOp(op)) Fail(std::string("expected token '") + op + "', got '" + Describe(Cur()) + "'");
  }
  void ExpectName(const char* n) {
    if (!SkipName(n)) Fail(std::string("expected token '") + n + "', got '" + Describe(Cur()) + "'");
  }
  std::string ExpectIdent() {
    if (Cur().type != Tok::kName) Fail("expected token 'name', got '" + Describe(Cur()) + "'");
    std::string n = Cur().text;
    Next();
    return n;
  }
  void ExpectBlockEnd() {
    if (Cur().type != Tok::kBlockEnd) Fail("expected token 'end of statement block', got '" + Describe(Cur()) + "'");
    Next();
  }
  ExprPtr Make(ExprKind k) {
    auto e = std::make_unique<Expr>();
    e->kind = k;
    e->line = Cur().line;
    return e;
  }

  // ---- statements ----
  // Parses until `{% <one of ends> ...`, leaving the cursor on that name token.
  Body ParseBody(std::initializer_list<const char*> ends) {
    Body body;
    while (true) {
      const Token& tok = Cur();
      if (tok.type == Tok::kEof) {
        if (ends.size() == 0) return body;
        std::string want;
        for (const char* e : ends) want += (want.empty() ? "'" : " or '") + std::string(e) + "'";
        Fail("Unexpected end of template. Jinja was looking for the following tags: " + want +
             ". The innermost block that needs to be closed is '" + block_stack_.back() + "'.");
      }
      if (tok.type == Tok::kData) {
        auto s = std::make_unique<Stmt>();
        s->kind = StmtKind::kData;
        s->text = tok.text;
        s->line = tok.line;
        body.push_back(std::move(s));
        Next();
      } else if (tok.type == Tok::kVarBegin) {
        Next();
        auto s = std::make_unique<Stmt>();
        s->kind = StmtKind::kPrint;
        s->line = tok.line;
        s->expr = ParseTuple(false, {});
        if (Cur().type != Tok::kVarEnd) Fail("expected token 'end of print statement', got '" + Describe(Cur()) + "'");
        Next();
        body.push_back(std::move(s));
      } else if (tok.type == Tok::kBlockBegin) {
        Next();
        if (Cur().type == Tok::kName)
          for (const char* e : ends)
            if (Cur().text == e) return body;
        body.push_back(ParseStatement());
      } else {
        Fail("unexpected token '" + Describe(tok) + "'");
      }
    }
  }

  StmtPtr NewStmt(StmtKind k) {
    auto s = std::make_unique<Stmt>();
    s->kind = k;
    s->line = Cur().line;
    return s;
  }

  StmtPtr ParseStatement() {
    Nest nest(*this);
    if (Cur().type != Tok::kName) Fail("tag name expected");
    std::string tag = Cur().text;
    block_stack_.push_back(tag);
    StmtPtr s;
    if (tag == "if") s = ParseIf();
    else if (tag == "for") s = ParseFor();
    else if (tag == "set") s = ParseSet();
    else if (tag == "macro") s = ParseMacro();
    else if (tag == "call") s = ParseCallBlock();
    else if (tag == "filter") s = ParseFilterBlock();
    else if (tag == "with") s = ParseWith();
    else if (tag == "generation") s = ParseSimpleBlock(StmtKind::kGeneration, "endgeneration");
    else if (tag == "block" || tag == "autoescape") s = ParseNamedBlock(tag);
    else if (tag == "print") {
      s = NewStmt(StmtKind::kPrint);
      Next();
      s->expr = ParseTuple(false, {});
      ExpectBlockEnd();
    } else if (tag == "break" || tag == "continue") {
      if (loop_depth_ == 0) Fail("Encountered unknown tag '" + tag + "'.");
      s = NewStmt(tag == "break" ? StmtKind::kBreak : StmtKind::kContinue);
      Next();
      ExpectBlockEnd();
    } else {
      Fail("Encountered unknown tag '" + tag + "'.");
    }
    block_stack_.pop_back();
    return s;
  }

  StmtPtr ParseIf() {
    auto s = NewStmt(StmtKind::kIf);
    Next();
    s->conds.push_back(ParseTuple(false, {}));
    ExpectBlockEnd();
    while (true) {
      s->bodies.push_back(ParseBody({"elif", "else", "endif"}));
      if (SkipName("elif")) {
        s->conds.push_back(ParseTuple(false, {}));
        ExpectBlockEnd();
        continue;
      }
      if (SkipName("else")) {
        ExpectBlockEnd();
        s->else_body = ParseBody({"endif"});
      }
      ExpectName("endif");
      ExpectBlockEnd();
      return s;
    }
  }

  StmtPtr ParseFor() {
    auto s = NewStmt(StmtKind::kFor);
    Next();
    s->target = ParseAssignTarget(false, {"in"});
    ExpectName("in");
    s->expr = ParseTuple(true, {"recursive"});
    if (SkipName("if")) s->cond = ParseExpression(true);
    if (SkipName("recursive")) s->recursive = true;
    ExpectBlockEnd();
    ++loop_depth_;
    s->body = ParseBody({"endfor", "else"});
    --loop_depth_;
    if (SkipName("else")) {
      ExpectBlockEnd();
      s->else_body = ParseBody({"endfor"});
    }
    ExpectName("endfor");
    ExpectBlockEnd();
    return s;
  }

  StmtPtr ParseSet() {
    auto s = NewStmt(StmtKind::kSet);
    Next();
    s->target = ParseAssignTarget(true, {});
    if (SkipOp("=")) {
      s->expr = ParseTuple(false, {});
      ExpectBlockEnd();
      return s;
    }
    s->kind = StmtKind::kSetBlock;
    s->expr = ParseFilterChain();
    ExpectBlockEnd();
    s->body = ParseBody({"endset"});
    Next();
    ExpectBlockEnd();
    return s;
  }

  // Optional `| f(args) | g` chain, as a kFilter tree over a null operand.
  ExprPtr ParseFilterChain() {
    ExprPtr node;
    while (SkipOp("|")) node = ParseFilter(std::move(node));
    return node;
  }

  void ParseSignature(Stmt& s) {
    ExpectOp("(");
    while (!IsOp(")")) {
      if (!s.params.empty()) ExpectOp(",");
      s.params.push_back(ExpectIdent());
      if (SkipOp("=")) s.defaults.push_back(ParseExpression(true));
      else if (!s.defaults.empty() && s.defaults.back()) Fail("non-default argument follows default argument");
      else s.defaults.push_back(nullptr);
    }
    ExpectOp(")");
  }

  StmtPtr ParseMacro() {
    auto s = NewStmt(StmtKind::kMacro);
    Next();
    s->text = ExpectIdent();
    ParseSignature(*s);
    ExpectBlockEnd();
    int saved = loop_depth_;
    loop_depth_ = 0;
    s->body = ParseBody({"endmacro"});
    loop_depth_ = saved;
    Next();
    if (Cur().type == Tok::kName) Next();  // {% endmacro name %}
    ExpectBlockEnd();
    return s;
  }

  StmtPtr ParseCallBlock() {
    auto s = NewStmt(StmtKind::kCallBlock);
    Next();
    if (IsOp("(")) ParseSignature(*s);
    s->expr = ParseExpression(true);
    if (s->expr->kind != ExprKind::kCall) Fail("expected call");
    ExpectBlockEnd();
    s->body = ParseBody({"endcall"});
    Next();
    ExpectBlockEnd();
    return s;
  }

  StmtPtr ParseFilterBlock() {
    auto s = NewStmt(StmtKind::kFilterBlock);
    Next();
    s->expr = ParseFilter(nullptr);
    while (SkipOp("|")) s->expr = ParseFilter(std::move(s->expr));
    ExpectBlockEnd();
    s->body = ParseBody({"endfilter"});
    Next();
    ExpectBlockEnd();
    return s;
  }

  StmtPtr ParseWith() {
    auto s = NewStmt(StmtKind::kWith);
    Next();
    while (Cur().type != Tok::kBlockEnd) {
      if (!s->params.empty()) ExpectOp(",");
      s->params.push_back(ExpectIdent());
      ExpectOp("=");
      s->defaults.push_back(ParseExpression(true));
    }
    ExpectBlockEnd();
    s->body = ParseBody({"endwith"});
    Next();
    ExpectBlockEnd();
    return s;
  }

  StmtPtr ParseSimpleBlock(StmtKind kind, const char* end) {
    auto s = NewStmt(kind);
    Next();
    ExpectBlockEnd();
    s->body = ParseBody({end});
    Next();
    ExpectBlockEnd();
    return s;
  }

  // {% block name %} and {% autoescape x %} render their body in place.
  StmtPtr ParseNamedBlock(const std::string& tag) {
    auto s = NewStmt(StmtKind::kGeneration);
    Next();
    if (tag == "block") ExpectIdent();
    else ParseExpression(true);
    ExpectBlockEnd();
    std::string end = "end" + tag;
    s->body = ParseBody({end == "endblock" ? "endblock" : "endautoescape"});
    Next();
    if (Cur().type == Tok::kName) Next();
    ExpectBlockEnd();
    return s;
  }

  // name | name, name | (name, name) | ns.attr (set only)
  ExprPtr ParseAssignTarget(bool allow_ns, std::initializer_list<const char*> extra_end) {
    if (allow_ns && Cur().type == Tok::kName && Peek().type == Tok::kOp && Peek().text == ".") {
      auto e = Make(ExprKind::kAttr);
      auto ns = Make(ExprKind::kName);
      ns->name = ExpectIdent();
      Next();
      e->name = ExpectIdent();
      e->kids.push_back(std::move(ns));
      return e;
    }
    auto tuple = Make(ExprKind::kTuple);
    bool parens = SkipOp("(");
    bool had_comma = false;
    while (true) {
      auto n = Make(ExprKind::kName);
      n->name = ExpectIdent();
      tuple->kids.push_back(std::move(n));
      if (!SkipOp(",")) break;
      had_comma = true;
      if (Cur().type != Tok::kName) break;
      bool end = false;
      for (const char* x : extra_end) end = end || IsName(x);
      if (end) break;
    }
    if (parens) ExpectOp(")");
    if (!had_comma && !parens) return std::move(tuple->kids[0]);
    return tuple;
  }

  // ---- expressions ----
  bool AtTupleEnd(std::initializer_list<const char*> extra_end) const {
    const Token& t = Cur();
    if (t.type == Tok::kVarEnd || t.type == Tok::kBlockEnd || t.type == Tok::kEof) return true;
    if (t.type == Tok::kOp && t.text == ")") return true;
    for (const char* x : extra_end)
      if (t.type == Tok::kName && t.text == x) return true;
    return false;
  }

  // Comma-separated expressions form a tuple (`a, b`); `no_condexpr` drops the
  // inline-if level (the iterable of a for loop).
  ExprPtr ParseTuple(bool no_condexpr, std::initializer_list<const char*> extra_end, bool explicit_parens = false) {
    auto tuple = Make(ExprKind::kTuple);
    bool is_tuple = false;
    while (true) {
      if (!tuple->kids.empty()) ExpectOp(",");
      if (AtTupleEnd(extra_end)) break;
      tuple->kids.push_back(no_condexpr ? ParseOr() : ParseExpression(true));
      if (IsOp(",")) is_tuple = true;
      else break;
    }
    if (!is_tuple) {
      if (!tuple->kids.empty()) return std::move(tuple->kids[0]);
      if (!explicit_parens) Fail("Expected an expression, got '" + Describe(Cur()) + "'");
    }
    return tuple;
  }

  ExprPtr ParseExpression(bool with_condexpr) { return with_condexpr ? ParseCondExpr() : ParseOr(); }

  ExprPtr ParseCondExpr() {
    Nest nest(*this);
    ExprPtr e = ParseOr();
    while (SkipName("if")) {
      auto c = Make(ExprKind::kCondExpr);
      c->kids.push_back(ParseOr());
      c->kids.push_back(std::move(e));
      c->kids.push_back(SkipName("else") ? ParseCondExpr() : nullptr);
      e = std::move(c);
    }
    return e;
  }

  ExprPtr Binary(std::string op, ExprPtr a, ExprPtr b) {
    auto e = Make(ExprKind::kBinary);
    e->name = std::move(op);
    e->kids.push_back(std::move(a));
    e->kids.push_back(std::move(b));
    return e;
  }

  ExprPtr ParseOr() {
    ExprPtr e = ParseAnd();
    while (SkipName("or")) e = Binary("or", std::move(e), ParseAnd());
    return e;
  }
  ExprPtr ParseAnd() {
    ExprPtr e = ParseNot();
    while (SkipName("and")) e = Binary("and", std::move(e), ParseNot());
    return e;
  }
  ExprPtr ParseNot() {
    Nest nest(*this);
    if (IsName("not")) {
      auto e = Make(ExprKind::kNot);
      Next();
      e->kids.push_back(ParseNot());
      return e;
    }
    return ParseCompare();
  }
  ExprPtr ParseCompare() {
    ExprPtr first = ParseMath1();
    ExprPtr cmp;
    while (true) {
      std::string op;
      if (Cur().type == Tok::kOp &&
          (Cur().text == "==" || Cur().text == "!=" || Cur().text == "<" || Cur().text == "<=" || Cur().text == ">" || Cur().text == ">=")) {
        op = Cur().text;
        Next();
      } else if (IsName("in")) {
        op = "in";
        Next();
      } else if (IsName("not") && Peek().type == Tok::kName && Peek().text == "in") {
        op = "notin";
        Next();
        Next();
      } else {
        break;
      }
      if (!cmp) {
        cmp = Make(ExprKind::kCompare);
        cmp->kids.push_back(std::move(first));
      }
      cmp->ops.push_back(op);
      cmp->kids.push_back(ParseMath1());
    }
    return cmp ? std::move(cmp) : std::move(first);
  }
  ExprPtr ParseMath1() {
    ExprPtr e = ParseConcat();
    while (IsOp("+") || IsOp("-")) {
      std::string op = Cur().text;
      Next();
      e = Binary(op, std::move(e), ParseConcat());
    }
    return e;
  }
  ExprPtr ParseConcat() {
    ExprPtr e = ParseMath2();
    while (SkipOp("~")) e = Binary("~", std::move(e), ParseMath2());
    return e;
  }
  ExprPtr ParseMath2() {
    ExprPtr e = ParsePow();
    while (IsOp("*") || IsOp("/") || IsOp("//") || IsOp("%")) {
      std::string op = Cur().text;
      Next();
      e = Binary(op, std::move(e), ParsePow());
    }
    return e;
  }
  ExprPtr ParsePow() {
    ExprPtr e = ParseUnary(true);
    while (SkipOp("**")) e = Binary("**", std::move(e), ParseUnary(true));
    return e;
  }
  ExprPtr ParseUnary(bool with_filter) {
    Nest nest(*this);
    ExprPtr e;
    if (IsOp("-") || IsOp("+")) {
      e = Make(IsOp("-") ? ExprKind::kNeg : ExprKind::kPos);
      Next();
      e->kids.push_back(ParseUnary(false));
    } else {
      e = ParsePrimary();
    }
    e = ParsePostfix(std::move(e));
    if (with_filter) e = ParseFilterExpr(std::move(e));
    return e;
  }

  ExprPtr ParsePrimary() {
    const Token& t = Cur();
    if (t.type == Tok::kName) {
      auto e = Make(ExprKind::kLiteral);
      if (t.text == "true" || t.text == "True") e->value = Value::Bool(true);
      else if (t.text == "false" || t.text == "False") e->value = Value::Bool(false);
      else if (t.text == "none" || t.text == "None") e->value = Value::None();
      else {
        e->kind = ExprKind::kName;
        e->name = t.text;
      }
      Next();
      return e;
    }
    if (t.type == Tok::kString) {
      auto e = Make(ExprKind::kLiteral);
      std::string s;
      while (Cur().type == Tok::kString) {  // adjacent literals concatenate
        s += Cur().text;
        Next();
      }
      e->value = Value::String(std::move(s));
      return e;
    }
    if (t.type == Tok::kInt || t.type == Tok::kFloat) {
      auto e = Make(ExprKind::kLiteral);
      errno = 0;
      if (t.type == Tok::kInt) {
        long long v = std::strtoll(t.text.c_str(), nullptr, 10);
        if (errno == ERANGE) Fail("integer literal out of range: " + t.text);
        e->value = Value::Int(v);
      } else {
        e->value = Value::Float(std::strtod(t.text.c_str(), nullptr));
      }
      Next();
      return e;
    }
    if (SkipOp("(")) {
      ExprPtr e = ParseTuple(false, {}, true);
      ExpectOp(")");
      return e;
    }
    if (SkipOp("[")) {
      auto e = Make(ExprKind::kList);
      while (!IsOp("]")) {
        if (!e->kids.empty()) ExpectOp(",");
        if (IsOp("]")) break;
        e->kids.push_back(ParseExpression(true));
      }
      ExpectOp("]");
      return e;
    }
    if (SkipOp("{")) {
      auto e = Make(ExprKind::kDict);
      while (!IsOp("}")) {
        if (!e->kids.empty()) ExpectOp(",");
        if (IsOp("}")) break;
        e->kids.push_back(ParseExpression(true));
        ExpectOp(":");
        e->kids.push_back(ParseExpression(true));
      }
      ExpectOp("}");
      return e;
    }
    Fail("unexpected '" + Describe(t) + "'");
  }

  ExprPtr ParsePostfix(ExprPtr e) {
    while (true) {
      if (IsOp(".")) {
        Next();
        if (Cur().type == Tok::kName) {
          auto a = Make(ExprKind::kAttr);
          a->name = Cur().text;
          Next();
          a->kids.push_back(std::move(e));
          e = std::move(a);
        } else if (Cur().type == Tok::kInt) {
          auto s = Make(ExprKind::kSubscript);
          auto idx = Make(ExprKind::kLiteral);
          idx->value = Value::Int(std::strtoll(Cur().text.c_str(), nullptr, 10));
          Next();
          s->kids.push_back(std::move(e));
          s->kids.push_back(std::move(idx));
          e = std::move(s);
        } else {
          Fail("expected name or number");
        }
      } else if (IsOp("[")) {
        Next();
        auto s = Make(ExprKind::kSubscript);
        s->kids.push_back(std::move(e));
        s->kids.push_back(ParseSubscriptArg());
        ExpectOp("]");
        e = std::move(s);
      } else if (IsOp("(")) {
        auto c = Make(ExprKind::kCall);
        c->kids.push_back(std::move(e));
        ParseCallArgs(*c);
        e = std::move(c);
      } else {
        return e;
      }
    }
  }

  ExprPtr ParseSubscriptArg() {
    ExprPtr parts[3];
    int n = 0;
    bool is_slice = false;
    if (!IsOp(":")) parts[0] = ParseExpression(true);
    while (IsOp(":") && n < 2) {
      Next();
      is_slice = true;
      ++n;
      if (!IsOp("]") && !IsOp(":") && !IsOp(",")) parts[n] = ParseExpression(true);
    }
    if (!is_slice) return std::move(parts[0]);
    auto s = Make(ExprKind::kSlice);
    for (auto& p : parts) s->kids.push_back(std::move(p));
    return s;
  }

  void ParseCallArgs(Expr& c) {
    ExpectOp("(");
    while (!IsOp(")")) {
      if (Cur().type == Tok::kName && Peek().type == Tok::kOp && Peek().text == "=") {
        std::string key = Cur().text;
        Next();
        Next();
        c.kwargs.emplace_back(key, ParseExpression(true));
      } else {
        if (!c.kwargs.empty()) Fail("invalid syntax for function call expression");
        c.kids.push_back(ParseExpression(true));
      }
      if (!SkipOp(",")) break;
    }
    ExpectOp(")");
  }

  ExprPtr ParseFilter(ExprPtr operand) {
    auto f = Make(ExprKind::kFilter);
    f->name = ExpectIdent();
    while (IsOp(".") && Peek().type == Tok::kName) {  // dotted filter names
      Next();
      f->name += "." + ExpectIdent();
    }
    f->kids.push_back(std::move(operand));
    if (IsOp("(")) ParseCallArgs(*f);
    return f;
  }

  ExprPtr ParseFilterExpr(ExprPtr e) {
    while (true) {
      if (SkipOp("|")) {
        e = ParseFilter(std::move(e));
      } else if (IsName("is")) {
        Next();
        auto t = Make(ExprKind::kTest);
        t->negated = SkipName("not");
        t->name = ExpectIdent();
        while (IsOp(".") && Peek().type == Tok::kName) {
          Next();
          t->name += "." + ExpectIdent();
        }
        t->kids.push_back(std::move(e));
        const Token& c = Cur();
        bool arg_start = c.type == Tok::kName || c.type == Tok::kString || c.type == Tok::kInt || c.type == Tok::kFloat ||
                         (c.type == Tok::kOp && (c.text == "(" || c.text == "[" || c.text == "{"));
        if (IsOp("(")) {
          ParseCallArgs(*t);
        } else if (arg_start && !IsName("else") && !IsName("or") && !IsName("and")) {
          if (IsName("is")) Fail("You cannot chain multiple tests with is");
          t->kids.push_back(ParsePostfix(ParsePrimary()));
        }
        e = std::move(t);
      } else {
        return e;
      }
    }
  }

  std::vector<Token> t_;
  size_t p_ = 0;
  int loop_depth_ = 0;
  int nesting_ = 0;
  std::vector<std::string> block_stack_{"template"};
};

}  // namespace

Body ParseTemplate(const std::string& source) { return Parser(Tokenize(source)).ParseAll(); }

}  // namespace uaii::jinja
