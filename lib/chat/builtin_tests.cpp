// jinja2's built-in tests (`x is defined`, `x is divisibleby 3`, ...).
#include <cmath>

#include "chat/error.h"
#include "chat/interpreter.h"
#include "chat/text.h"

namespace uaii::jinja {
namespace {

using TestFn = bool (*)(Interpreter&, const Value&, CallArgs&);

const Value& Arg0(const CallArgs& a, const char* test) {
  if (a.args.empty()) RaiseType(std::string(test) + "() missing 1 required positional argument");
  return a.args[0];
}

bool Compare(const Value& a, const Value& b, const char* op) {
  if (a.is_undefined()) RaiseUndefined(a);
  std::string o = op;
  bool swap = o == ">" || o == "<=";
  std::optional<bool> lt = swap ? Less(b, a) : Less(a, b);
  if (!lt) RaiseType("'" + o + "' not supported between instances of '" + TypeName(a) + "' and '" + TypeName(b) + "'");
  return (o == "<" || o == ">") ? *lt : !*lt;
}

int64_t IntOperand(const Value& v, const char* test) {
  if (v.is_undefined()) RaiseUndefined(v);
  if (!v.is_number()) RaiseType("unsupported operand type(s) for %: '" + TypeName(v) + "' and 'int'");
  return v.kind == Kind::kFloat ? static_cast<int64_t>(std::floor(v.num.f)) : v.as_int();
}

const std::pair<const char*, TestFn> kTests[] = {
    {"defined", [](Interpreter&, const Value& v, CallArgs&) { return !v.is_undefined(); }},
    {"undefined", [](Interpreter&, const Value& v, CallArgs&) { return v.is_undefined(); }},
    {"none", [](Interpreter&, const Value& v, CallArgs&) { return v.is_none(); }},
    {"boolean", [](Interpreter&, const Value& v, CallArgs&) { return v.kind == Kind::kBool; }},
    {"true", [](Interpreter&, const Value& v, CallArgs&) { return v.kind == Kind::kBool && v.num.b; }},
    {"false", [](Interpreter&, const Value& v, CallArgs&) { return v.kind == Kind::kBool && !v.num.b; }},
    {"integer", [](Interpreter&, const Value& v, CallArgs&) { return v.kind == Kind::kInt; }},
    {"float", [](Interpreter&, const Value& v, CallArgs&) { return v.kind == Kind::kFloat; }},
    {"number", [](Interpreter&, const Value& v, CallArgs&) { return v.is_number(); }},
    {"string", [](Interpreter&, const Value& v, CallArgs&) { return v.is_string(); }},
    {"mapping", [](Interpreter&, const Value& v, CallArgs&) { return v.is_dict() && !v.is_namespace; }},
    {"iterable", [](Interpreter&, const Value& v, CallArgs&) {
       return v.is_list() || (v.is_dict() && !v.is_namespace) || v.is_string() || v.is_undefined();
     }},
    {"sequence", [](Interpreter&, const Value& v, CallArgs&) {
       return v.is_list() || (v.is_dict() && !v.is_namespace) || v.is_string() || v.is_undefined();
     }},
    {"callable", [](Interpreter&, const Value& v, CallArgs&) { return v.fn != nullptr; }},
    {"escaped", [](Interpreter&, const Value& v, CallArgs&) { return v.is_safe; }},
    {"sameas", [](Interpreter&, const Value& v, CallArgs& a) {
       const Value& o = Arg0(a, "sameas");
       if (v.kind != o.kind) return false;
       if (v.is_list()) return v.list == o.list;
       if (v.is_dict()) return v.dict == o.dict;
       if (v.fn) return v.fn == o.fn;
       return Equal(v, o);
     }},
    {"odd", [](Interpreter&, const Value& v, CallArgs&) {
       int64_t x = IntOperand(v, "odd");
       return ((x % 2) + 2) % 2 == 1;
     }},
    {"even", [](Interpreter&, const Value& v, CallArgs&) { return ((IntOperand(v, "even") % 2) + 2) % 2 == 0; }},
    {"divisibleby", [](Interpreter&, const Value& v, CallArgs& a) {
       int64_t d = IntOperand(Arg0(a, "divisibleby"), "divisibleby");
       if (d == 0) throw JinjaError("ZeroDivisionError", "integer division or modulo by zero");
       return IntOperand(v, "divisibleby") % d == 0;
     }},
    {"lower", [](Interpreter&, const Value& v, CallArgs&) { return PyIsLower(Str(v)); }},
    {"upper", [](Interpreter&, const Value& v, CallArgs&) { return PyIsUpper(Str(v)); }},
    {"in", [](Interpreter&, const Value& v, CallArgs& a) { return Contains(Arg0(a, "in"), v); }},
    {"eq", [](Interpreter&, const Value& v, CallArgs& a) { return Equal(v, Arg0(a, "eq")); }},
    {"equalto", [](Interpreter&, const Value& v, CallArgs& a) { return Equal(v, Arg0(a, "equalto")); }},
    {"==", [](Interpreter&, const Value& v, CallArgs& a) { return Equal(v, Arg0(a, "==")); }},
    {"ne", [](Interpreter&, const Value& v, CallArgs& a) { return !Equal(v, Arg0(a, "ne")); }},
    {"!=", [](Interpreter&, const Value& v, CallArgs& a) { return !Equal(v, Arg0(a, "!=")); }},
    {"gt", [](Interpreter&, const Value& v, CallArgs& a) { return Compare(v, Arg0(a, "gt"), ">"); }},
    {"greaterthan", [](Interpreter&, const Value& v, CallArgs& a) { return Compare(v, Arg0(a, "greaterthan"), ">"); }},
    {">", [](Interpreter&, const Value& v, CallArgs& a) { return Compare(v, Arg0(a, ">"), ">"); }},
    {"ge", [](Interpreter&, const Value& v, CallArgs& a) { return Compare(v, Arg0(a, "ge"), ">="); }},
    {">=", [](Interpreter&, const Value& v, CallArgs& a) { return Compare(v, Arg0(a, ">="), ">="); }},
    {"lt", [](Interpreter&, const Value& v, CallArgs& a) { return Compare(v, Arg0(a, "lt"), "<"); }},
    {"lessthan", [](Interpreter&, const Value& v, CallArgs& a) { return Compare(v, Arg0(a, "lessthan"), "<"); }},
    {"<", [](Interpreter&, const Value& v, CallArgs& a) { return Compare(v, Arg0(a, "<"), "<"); }},
    {"le", [](Interpreter&, const Value& v, CallArgs& a) { return Compare(v, Arg0(a, "le"), "<="); }},
    {"<=", [](Interpreter&, const Value& v, CallArgs& a) { return Compare(v, Arg0(a, "<="), "<="); }},
    {"filter", [](Interpreter&, const Value& v, CallArgs&) { return v.is_string() && HasFilter(v.str); }},
    {"test", [](Interpreter&, const Value& v, CallArgs&) { return v.is_string() && HasTest(v.str); }},
};

TestFn Find(const std::string& name) {
  for (const auto& [n, f] : kTests)
    if (name == n) return f;
  return nullptr;
}

}  // namespace

bool HasTest(const std::string& name) { return Find(name) != nullptr; }

bool CallTest(Interpreter& in, const std::string& name, const Value& input, CallArgs& args) {
  return Find(name)(in, input, args);
}

}  // namespace uaii::jinja
