#include "chat/interpreter.h"

#include <ctime>

#include "chat/error.h"

namespace uaii::jinja {

void RaiseType(const std::string& message) { throw JinjaError("TypeError", message); }

void RaiseUndefined(const Value& u) {
  // num.i marks why the value is undefined: 1 = a sandbox refusal (SecurityError).
  std::string type = u.num.i == 1 ? "SecurityError" : "UndefinedError";
  throw JinjaError(type, u.str.empty() ? "undefined value" : u.str);
}

const Value* CallArgs::Get(size_t i, std::string_view name) const {
  if (i < args.size()) return &args[i];
  for (const auto& [k, v] : kwargs)
    if (k == name) return &v;
  return nullptr;
}
Value CallArgs::GetOr(size_t i, std::string_view name, Value fallback) const {
  const Value* v = Get(i, name);
  return v ? *v : fallback;
}

const Value* Scope::Find(const std::string& name) const {
  for (const Scope* s = this; s; s = s->parent.get()) {
    auto it = s->vars.find(name);
    if (it != s->vars.end()) return &it->second;
  }
  return nullptr;
}

Interpreter::Interpreter(const RenderOptions& options) : opts_(options) {}

void Interpreter::CountIterations(uint64_t n) {
  iterations_ += n;
  if (iterations_ > opts_.limits.max_loop_iterations)
    throw JinjaError("LimitError", "template exceeded the loop iteration limit (" +
                                       std::to_string(opts_.limits.max_loop_iterations) + " iterations)");
}

void Interpreter::CountOutput(size_t bytes) {
  output_bytes_ += bytes;
  if (output_bytes_ > opts_.limits.max_output_bytes)
    throw JinjaError("LimitError", "template exceeded the output size limit (" +
                                       std::to_string(opts_.limits.max_output_bytes) + " bytes)");
}

namespace {

struct DepthGuard {
  DepthGuard(int& d, int max) : d(d) {
    if (++d > max) {
      --d;
      throw JinjaError("LimitError", "template exceeded the call depth limit (" + std::to_string(max) +
                                         " nested macro calls); is a macro recursing without end?");
    }
  }
  ~DepthGuard() { --d; }
  int& d;
};

Value Range(CallArgs& a) {
  std::vector<int64_t> n;
  for (const Value& v : a.args) {
    if (!v.is_integer()) RaiseType("'" + TypeName(v) + "' object cannot be interpreted as an integer");
    n.push_back(v.as_int());
  }
  int64_t start = 0, stop = 0, step = 1;
  if (n.size() == 1) stop = n[0];
  else if (n.size() == 2 || n.size() == 3) {
    start = n[0];
    stop = n[1];
    if (n.size() == 3) step = n[2];
  } else {
    RaiseType("range expected at most 3 arguments, got " + std::to_string(n.size()));
  }
  if (step == 0) throw JinjaError("ValueError", "range() arg 3 must not be zero");
  int64_t count = step > 0 ? (stop > start ? (stop - start + step - 1) / step : 0)
                           : (start > stop ? (start - stop - step - 1) / -step : 0);
  // jinja2.sandbox.MAX_RANGE
  if (count > 100000)
    throw JinjaError("OverflowError", "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
  List out;
  out.reserve(count);
  for (int64_t i = 0; i < count; ++i) out.push_back(Value::Int(start + i * step));
  return Value::MakeList(std::move(out));
}

Value DictFrom(Interpreter& in, CallArgs& a, bool ns) {
  Value d = ns ? Value::Namespace() : Value::MakeDict();
  if (!a.args.empty()) {
    const Value& src = a.args[0];
    if (src.is_dict()) {
      for (const auto& kv : src.dict->items) d.dict->Set(kv.first, kv.second);
    } else {
      for (const Value& pair : in.Iterate(src)) {
        std::vector<Value> kv = in.Iterate(pair);
        if (kv.size() != 2)
          throw JinjaError("ValueError", "dictionary update sequence element has length " + std::to_string(kv.size()) + "; 2 is required");
        d.dict->Set(kv[0], kv[1]);
      }
    }
  }
  for (auto& [k, v] : a.kwargs) d.dict->Set(Value::String(k), v);
  return d;
}

}  // namespace

ScopePtr Interpreter::MakeGlobals() {
  auto g = std::make_shared<Scope>();
  g->vars["range"] = Value::Func("range", [](Interpreter&, CallArgs& a) { return Range(a); });
  g->vars["dict"] = Value::Func("dict", [](Interpreter& in, CallArgs& a) { return DictFrom(in, a, false); });
  g->vars["namespace"] = Value::Func("namespace", [](Interpreter& in, CallArgs& a) { return DictFrom(in, a, true); });
  g->vars["raise_exception"] = Value::Func("raise_exception", [](Interpreter&, CallArgs& a) -> Value {
    throw JinjaError("TemplateError", a.args.empty() ? "" : Str(a.args[0]));
  });
  g->vars["strftime_now"] = Value::Func("strftime_now", [](Interpreter& in, CallArgs& a) {
    std::string fmt = a.args.empty() ? "" : Str(a.args[0]);
    std::time_t t = in.options().fixed_time >= 0 ? static_cast<std::time_t>(in.options().fixed_time) : std::time(nullptr);
    std::tm tm{};
    if (in.options().fixed_time >= 0) gmtime_r(&t, &tm);
    else localtime_r(&t, &tm);
    char buf[512];
    size_t n = fmt.empty() ? 0 : std::strftime(buf, sizeof buf, fmt.c_str(), &tm);
    return Value::String(std::string(buf, n));
  });
  g->vars["joiner"] = Value::Func("joiner", [](Interpreter&, CallArgs& a) {
    std::string sep = Str(a.GetOr(0, "sep", Value::String(", ")));
    auto used = std::make_shared<bool>(false);
    return Value::Func("joiner", [sep, used](Interpreter&, CallArgs&) {
      if (!*used) {
        *used = true;
        return Value::String("");
      }
      return Value::String(sep);
    });
  });
  return g;
}

std::string Interpreter::Render(const Body& body, const Value& context) {
  auto globals = MakeGlobals();
  auto scope = std::make_shared<Scope>();
  scope->parent = globals;
  if (context.is_dict())
    for (const auto& [k, v] : context.dict->items) scope->vars[Str(k)] = v;
  std::string out;
  Exec(body, scope, out);
  return out;
}

Interpreter::Flow Interpreter::Exec(const Body& body, const ScopePtr& scope, std::string& out) {
  for (const auto& s : body) {
    Flow f = ExecStmt(*s, scope, out);
    if (f != Flow::kNormal) return f;
  }
  return Flow::kNormal;
}

Interpreter::Flow Interpreter::ExecStmt(const Stmt& s, const ScopePtr& scope, std::string& out) {
  try {
    switch (s.kind) {
      case StmtKind::kData:
        CountOutput(s.text.size());
        out += s.text;
        return Flow::kNormal;
      case StmtKind::kPrint: {
        std::string text = Str(Eval(*s.expr, scope));
        CountOutput(text.size());
        out += text;
        return Flow::kNormal;
      }
      case StmtKind::kIf:
        for (size_t i = 0; i < s.conds.size(); ++i)
          if (Truthy(Eval(*s.conds[i], scope))) return Exec(s.bodies[i], scope, out);
        return Exec(s.else_body, scope, out);
      case StmtKind::kFor:
        ExecFor(s, scope, out);
        return Flow::kNormal;
      case StmtKind::kSet:
        Assign(*s.target, Eval(*s.expr, scope), scope);
        return Flow::kNormal;
      case StmtKind::kSetBlock: {
        std::string text;
        Exec(s.body, scope, text);
        Value v = Value::String(std::move(text));
        if (s.expr) v = EvalFilterExpr(*s.expr, scope, &v);
        Assign(*s.target, v, scope);
        return Flow::kNormal;
      }
      case StmtKind::kMacro:
        scope->vars[s.text] = MakeMacro(s, scope, nullptr);
        return Flow::kNormal;
      case StmtKind::kCallBlock: {
        Value caller = MakeMacro(s, scope, nullptr);
        const Expr& call = *s.expr;
        Value callee = Eval(*call.kids[0], scope);
        CallArgs args = EvalArgs(call, scope, 1);
        args.kwargs.emplace_back("caller", caller);
        std::string text = Str(Call(callee, args));
        CountOutput(text.size());
        out += text;
        return Flow::kNormal;
      }
      case StmtKind::kFilterBlock: {
        std::string text;
        Exec(s.body, scope, text);
        Value v = Value::String(std::move(text));
        std::string result = Str(EvalFilterExpr(*s.expr, scope, &v));
        CountOutput(result.size());
        out += result;
        return Flow::kNormal;
      }
      case StmtKind::kWith: {
        auto inner = std::make_shared<Scope>();
        inner->parent = scope;
        for (size_t i = 0; i < s.params.size(); ++i) inner->vars[s.params[i]] = Eval(*s.defaults[i], scope);
        return Exec(s.body, inner, out);
      }
      case StmtKind::kBreak: return Flow::kBreak;
      case StmtKind::kContinue: return Flow::kContinue;
      case StmtKind::kGeneration: return Exec(s.body, scope, out);
    }
  } catch (JinjaError& e) {
    if (e.line == 0) e.line = s.line;
    throw;
  }
  return Flow::kNormal;
}

void Interpreter::ExecFor(const Stmt& s, const ScopePtr& scope, std::string& out) {
  Value iterable = Eval(*s.expr, scope);
  RunLoop(s, scope, out, iterable, 1);
}

void Interpreter::RunLoop(const Stmt& s, const ScopePtr& scope, std::string& out, const Value& iterable, int depth) {
  std::vector<Value> items = Iterate(iterable);
  if (s.cond) {
    std::vector<Value> kept;
    for (Value& v : items) {
      CountIterations(1);
      auto tmp = std::make_shared<Scope>();
      tmp->parent = scope;
      Assign(*s.target, v, tmp);
      if (Truthy(Eval(*s.cond, tmp))) kept.push_back(std::move(v));
    }
    items = std::move(kept);
  }
  if (items.empty()) {
    auto inner = std::make_shared<Scope>();
    inner->parent = scope;
    Exec(s.else_body, inner, out);
    return;
  }
  const int64_t n = static_cast<int64_t>(items.size());
  auto last_changed = std::make_shared<std::optional<Value>>();
  auto cycle_index = std::make_shared<int64_t>(0);
  for (int64_t i = 0; i < n; ++i) {
    CountIterations(1);
    auto inner = std::make_shared<Scope>();
    inner->parent = scope;
    Assign(*s.target, items[i], inner);
    Value loop = Value::MakeDict();
    Dict& d = *loop.dict;
    auto set = [&](const char* k, Value v) { d.items.emplace_back(Value::String(k), std::move(v)); };
    set("index", Value::Int(i + 1));
    set("index0", Value::Int(i));
    set("revindex", Value::Int(n - i));
    set("revindex0", Value::Int(n - i - 1));
    set("first", Value::Bool(i == 0));
    set("last", Value::Bool(i == n - 1));
    set("length", Value::Int(n));
    set("depth", Value::Int(depth));
    set("depth0", Value::Int(depth - 1));
    set("previtem", i > 0 ? items[i - 1] : Value::Undefined("there is no previous item"));
    set("nextitem", i + 1 < n ? items[i + 1] : Value::Undefined("there is no next item"));
    set("cycle", Value::Func("cycle", [i](Interpreter&, CallArgs& a) -> Value {
          if (a.args.empty()) RaiseType("no items for cycling given");
          return a.args[i % a.args.size()];
        }));
    set("changed", Value::Func("changed", [last_changed](Interpreter&, CallArgs& a) {
          Value now = Value::Tuple(a.args);
          if (*last_changed && Equal(**last_changed, now)) return Value::Bool(false);
          *last_changed = now;
          return Value::Bool(true);
        }));
    if (s.recursive) {
      // loop(children) renders the same body one level deeper.
      const Stmt* stmt = &s;
      if (keep_alive_.empty() || keep_alive_.back() != scope) keep_alive_.push_back(scope);
      std::weak_ptr<Scope> weak = scope;
      loop.fn = std::make_shared<Function>(Function{"loop", [stmt, weak, depth](Interpreter& in, CallArgs& a) {
        ScopePtr outer = weak.lock();
        if (!outer) throw JinjaError("TemplateRuntimeError", "loop() called after its template finished");
        DepthGuard g(in.depth_, in.opts_.limits.max_call_depth);
        std::string text;
        in.RunLoop(*stmt, outer, text, a.args.empty() ? Value::MakeList() : a.args[0], depth + 1);
        return Value::String(std::move(text));
      }});
    }
    inner->vars["loop"] = loop;
    if (Exec(s.body, inner, out) == Flow::kBreak) break;
  }
}

void Interpreter::Assign(const Expr& target, const Value& v, const ScopePtr& scope) {
  if (target.kind == ExprKind::kName) {
    scope->vars[target.name] = v;
    return;
  }
  if (target.kind == ExprKind::kAttr) {
    Value ns = Eval(*target.kids[0], scope);
    if (!ns.is_dict() || !ns.is_namespace)
      throw JinjaError("TemplateRuntimeError", "cannot assign attribute on non-namespace object");
    ns.dict->Set(Value::String(target.name), v);
    return;
  }
  // Tuple unpacking.
  std::vector<Value> items = Iterate(v);
  size_t want = target.kids.size();
  if (items.size() < want)
    throw JinjaError("ValueError", "not enough values to unpack (expected " + std::to_string(want) + ", got " +
                                       std::to_string(items.size()) + ")");
  if (items.size() > want)
    throw JinjaError("ValueError", "too many values to unpack (expected " + std::to_string(want) + ")");
  for (size_t i = 0; i < want; ++i) Assign(*target.kids[i], items[i], scope);
}

Value Interpreter::MakeMacro(const Stmt& s, const ScopePtr& scope, const Value*) {
  const Stmt* stmt = &s;
  // The macro usually lives in the very scope it closes over; holding that scope
  // weakly (kept alive by the interpreter for the render) avoids a reference cycle.
  if (keep_alive_.empty() || keep_alive_.back() != scope) keep_alive_.push_back(scope);
  std::weak_ptr<Scope> weak = scope;
  std::string name = s.kind == StmtKind::kMacro ? s.text : "caller";
  return Value::Func(name, [stmt, weak, name](Interpreter& in, CallArgs& a) {
    ScopePtr defining = weak.lock();
    if (!defining) throw JinjaError("TemplateRuntimeError", "macro '" + name + "' called after its template finished");
    DepthGuard g(in.depth_, in.opts_.limits.max_call_depth);
    auto ms = std::make_shared<Scope>();
    ms->parent = defining;
    const auto& params = stmt->params;
    for (size_t i = 0; i < params.size(); ++i) {
      const Value* given = nullptr;
      if (i < a.args.size()) given = &a.args[i];
      for (const auto& [k, v] : a.kwargs)
        if (k == params[i]) given = &v;
      if (given) ms->vars[params[i]] = *given;
      else if (stmt->defaults[i]) ms->vars[params[i]] = in.Eval(*stmt->defaults[i], ms);
      else ms->vars[params[i]] = Value::Undefined("parameter '" + params[i] + "' was not provided");
    }
    List extra;
    for (size_t i = params.size(); i < a.args.size(); ++i) extra.push_back(a.args[i]);
    ms->vars["varargs"] = Value::Tuple(std::move(extra));
    Value kw = Value::MakeDict();
    for (const auto& [k, v] : a.kwargs) {
      if (k == "caller") {
        ms->vars["caller"] = v;
        continue;
      }
      bool is_param = false;
      for (const auto& p : params) is_param = is_param || p == k;
      if (!is_param) kw.dict->Set(Value::String(k), v);
    }
    ms->vars["kwargs"] = kw;
    std::string text;
    in.Exec(stmt->body, ms, text);
    return Value::String(std::move(text));
  });
}

CallArgs Interpreter::EvalArgs(const Expr& e, const ScopePtr& scope, size_t first) {
  CallArgs a;
  for (size_t i = first; i < e.kids.size(); ++i) a.args.push_back(Eval(*e.kids[i], scope));
  for (const auto& [k, v] : e.kwargs) a.kwargs.emplace_back(k, Eval(*v, scope));
  return a;
}

Value Interpreter::Call(const Value& callee, CallArgs& args) {
  if (callee.fn) return callee.fn->call(*this, args);
  if (callee.is_undefined()) RaiseUndefined(callee);
  RaiseType("'" + TypeName(callee) + "' object is not callable");
}

Value Interpreter::EvalFilterExpr(const Expr& e, const ScopePtr& scope, const Value* block_input) {
  if (e.kind != ExprKind::kFilter) return Eval(e, scope);
  Value input = e.kids[0] ? EvalFilterExpr(*e.kids[0], scope, block_input) : *block_input;
  CallArgs args = EvalArgs(e, scope, 1);
  return ApplyFilter(e.name, input, args);
}

Value Interpreter::ApplyFilter(const std::string& name, const Value& input, CallArgs& args) {
  if (!HasFilter(name)) throw JinjaError("TemplateAssertionError", "No filter named '" + name + "'.");
  return CallFilter(*this, name, input, args);
}

bool Interpreter::ApplyTest(const std::string& name, const Value& input, CallArgs& args) {
  if (!HasTest(name)) throw JinjaError("TemplateAssertionError", "No test named '" + name + "'.");
  return CallTest(*this, name, input, args);
}

std::vector<Value> Interpreter::Iterate(const Value& v) {
  switch (v.kind) {
    case Kind::kUndefined: return {};
    case Kind::kList: return *v.list;
    case Kind::kDict: {
      std::vector<Value> keys;
      for (const auto& kv : v.dict->items) keys.push_back(kv.first);
      return keys;
    }
    case Kind::kString: {
      std::vector<Value> chars;
      for (uint32_t cp : DecodeUtf8(v.str)) {
        std::string c;
        AppendUtf8(c, cp);
        chars.push_back(Value::String(std::move(c)));
      }
      return chars;
    }
    default: RaiseType("'" + TypeName(v) + "' object is not iterable");
  }
}

namespace {

std::string ObjectTypeRepr(const Value& v) {
  if (v.is_none()) return "None";
  if (v.is_dict() && v.is_namespace) return "jinja2.utils.Namespace object";
  return TypeName(v) + " object";
}

bool IsUnsafeName(const std::string& name) { return !name.empty() && name[0] == '_'; }

Value SecurityUndefined(const Value& obj, const std::string& name) {
  Value u = Value::Undefined("access to attribute '" + name + "' of '" + TypeName(obj) + "' object is unsafe.");
  u.num.i = 1;
  return u;
}

Value MissingAttr(const Value& obj, const std::string& name) {
  return Value::Undefined("'" + ObjectTypeRepr(obj) + "' has no attribute '" + name + "'");
}

Value MissingItem(const Value& obj, const Value& key) {
  if (key.is_string()) return MissingAttr(obj, key.str);
  return Value::Undefined(ObjectTypeRepr(obj) + " has no element " + Repr(key));
}

}  // namespace

Value Interpreter::GetAttr(const Value& obj, const std::string& name) {
  if (obj.is_undefined()) RaiseUndefined(obj);
  if (IsUnsafeName(name)) return SecurityUndefined(obj, name);
  if (obj.is_dict() && obj.is_namespace) {
    if (const Value* v = obj.dict->Find(std::string_view(name))) return *v;
    return MissingAttr(obj, name);
  }
  Value m = BindMethod(*this, obj, name);
  if (!m.is_undefined() || m.num.i == 1) return m;
  if (obj.is_dict())
    if (const Value* v = obj.dict->Find(std::string_view(name))) return *v;
  return MissingAttr(obj, name);
}

Value Interpreter::GetItem(const Value& obj, const Value& key) {
  if (obj.is_undefined()) RaiseUndefined(obj);
  switch (obj.kind) {
    case Kind::kDict:
      if (obj.is_namespace) break;
      if (const Value* v = obj.dict->Find(key)) return *v;
      break;
    case Kind::kList:
    case Kind::kString:
      if (key.is_integer()) {
        int64_t i = key.as_int();
        if (obj.is_list()) {
          int64_t n = static_cast<int64_t>(obj.list->size());
          if (i < 0) i += n;
          if (i >= 0 && i < n) return (*obj.list)[i];
        } else {
          std::vector<uint32_t> cps = DecodeUtf8(obj.str);
          int64_t n = static_cast<int64_t>(cps.size());
          if (i < 0) i += n;
          if (i >= 0 && i < n) return Value::String(EncodeUtf8(cps, i, i + 1));
        }
        return MissingItem(obj, key);
      }
      break;
    default: break;
  }
  if (key.is_string()) return GetAttr(obj, key.str);
  return MissingItem(obj, key);
}

Value Interpreter::Eval(const Expr& e, const ScopePtr& scope) {
  switch (e.kind) {
    case ExprKind::kLiteral: return e.value;
    case ExprKind::kName: {
      if (const Value* v = scope->Find(e.name)) return *v;
      return Value::Undefined("'" + e.name + "' is undefined");
    }
    case ExprKind::kList:
    case ExprKind::kTuple: {
      List items;
      for (const auto& k : e.kids) items.push_back(Eval(*k, scope));
      return e.kind == ExprKind::kTuple ? Value::Tuple(std::move(items)) : Value::MakeList(std::move(items));
    }
    case ExprKind::kDict: {
      Value d = Value::MakeDict();
      for (size_t i = 0; i + 1 < e.kids.size(); i += 2) {
        Value k = Eval(*e.kids[i], scope);
        if (k.is_list() && !k.is_tuple) RaiseType("unhashable type: 'list'");
        if (k.is_dict()) RaiseType("unhashable type: 'dict'");
        d.dict->Set(std::move(k), Eval(*e.kids[i + 1], scope));
      }
      return d;
    }
    case ExprKind::kAttr: return GetAttr(Eval(*e.kids[0], scope), e.name);
    case ExprKind::kSubscript: {
      Value obj = Eval(*e.kids[0], scope);
      const Expr& k = *e.kids[1];
      if (k.kind == ExprKind::kSlice) {
        if (obj.is_undefined()) RaiseUndefined(obj);
        auto part = [&](int i) { return k.kids[i] ? Eval(*k.kids[i], scope) : Value::None(); };
        return Slice(obj, part(0), part(1), part(2));
      }
      return GetItem(obj, Eval(k, scope));
    }
    case ExprKind::kSlice: RaiseType("slice outside a subscript");
    case ExprKind::kCall: {
      Value callee = Eval(*e.kids[0], scope);
      CallArgs args = EvalArgs(e, scope, 1);
      return Call(callee, args);
    }
    case ExprKind::kFilter: return EvalFilterExpr(e, scope, nullptr);
    case ExprKind::kTest: {
      Value input = Eval(*e.kids[0], scope);
      CallArgs args = EvalArgs(e, scope, 1);
      bool r = ApplyTest(e.name, input, args);
      return Value::Bool(e.negated ? !r : r);
    }
    case ExprKind::kNeg:
    case ExprKind::kPos: {
      Value v = Eval(*e.kids[0], scope);
      if (v.is_undefined()) RaiseUndefined(v);
      bool neg = e.kind == ExprKind::kNeg;
      if (v.kind == Kind::kFloat) return Value::Float(neg ? -v.num.f : v.num.f);
      if (v.is_integer()) return Value::Int(neg ? -v.as_int() : v.as_int());
      RaiseType(std::string("bad operand type for unary ") + (neg ? "-" : "+") + ": '" + TypeName(v) + "'");
    }
    case ExprKind::kNot: return Value::Bool(!Truthy(Eval(*e.kids[0], scope)));
    case ExprKind::kBinary: return EvalBinary(e, scope);
    case ExprKind::kCompare: return EvalCompare(e, scope);
    case ExprKind::kCondExpr: {
      if (Truthy(Eval(*e.kids[0], scope))) return Eval(*e.kids[1], scope);
      if (e.kids[2]) return Eval(*e.kids[2], scope);
      return Value::Undefined("the inline if-expression on line " + std::to_string(e.line) +
                              " evaluated to false and no else section was defined.");
    }
  }
  return Value::Undefined();
}

Value Interpreter::EvalBinary(const Expr& e, const ScopePtr& scope) {
  const std::string& op = e.name;
  Value a = Eval(*e.kids[0], scope);
  if (op == "and") return Truthy(a) ? Eval(*e.kids[1], scope) : a;
  if (op == "or") return Truthy(a) ? a : Eval(*e.kids[1], scope);
  Value b = Eval(*e.kids[1], scope);
  if (op == "~") {
    std::string s = Str(a) + Str(b);
    return Value::String(std::move(s));
  }
  if (a.is_undefined()) RaiseUndefined(a);
  if (b.is_undefined()) RaiseUndefined(b);
  if (op == "*") {  // guard repetition before it allocates
    const Value* seq = a.is_string() || a.is_list() ? &a : (b.is_string() || b.is_list() ? &b : nullptr);
    const Value* count = seq == &a ? &b : &a;
    if (seq && count->is_integer() && count->as_int() > 0) {
      size_t unit = seq->is_string() ? seq->str.size() : seq->list->size() * 16;
      if (unit * static_cast<uint64_t>(count->as_int()) > opts_.limits.max_output_bytes)
        throw JinjaError("LimitError", "template exceeded the output size limit (" +
                                           std::to_string(opts_.limits.max_output_bytes) + " bytes) in a repetition");
    }
  }
  return BinaryOp(op, a, b);
}

Value Interpreter::EvalCompare(const Expr& e, const ScopePtr& scope) {
  Value left = Eval(*e.kids[0], scope);
  for (size_t i = 0; i < e.ops.size(); ++i) {
    Value right = Eval(*e.kids[i + 1], scope);
    const std::string& op = e.ops[i];
    bool r;
    if (op == "==") r = Equal(left, right);
    else if (op == "!=") r = !Equal(left, right);
    else if (op == "in") r = Contains(right, left);
    else if (op == "notin") r = !Contains(right, left);
    else {
      if (left.is_undefined()) RaiseUndefined(left);
      if (right.is_undefined()) RaiseUndefined(right);
      bool swap = op == ">" || op == "<=";
      std::optional<bool> lt = swap ? Less(right, left) : Less(left, right);
      if (!lt) RaiseType("'" + op + "' not supported between instances of '" + TypeName(left) + "' and '" + TypeName(right) + "'");
      r = (op == "<" || op == ">") ? *lt : !*lt;
    }
    if (!r) return Value::Bool(false);
    left = std::move(right);
  }
  return Value::Bool(true);
}

}  // namespace uaii::jinja
