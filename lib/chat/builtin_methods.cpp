// Python methods of str, list and dict that templates call (message.content.strip(),
// tools.items(), ...). In the immutable sandbox (HF's), mutators come back as an
// Undefined that raises jinja2's SecurityError when called.
#include <algorithm>
#include <set>

#include "chat/error.h"
#include "chat/interpreter.h"
#include "chat/text.h"

namespace uaii::jinja {
namespace {

using Method = Value (*)(Interpreter&, const Value& self, CallArgs& a);

std::string ArgStr(const CallArgs& a, size_t i, const char* name, const char* method) {
  const Value* v = a.Get(i, name);
  if (!v) RaiseType(std::string(method) + "() missing required argument '" + name + "'");
  if (!v->is_string()) RaiseType(std::string(method) + "() argument must be str, not " + TypeName(*v));
  return v->str;
}

std::optional<std::string> OptChars(const CallArgs& a, const char* method) {
  const Value* v = a.Get(0, "chars");
  if (!v || v->is_none()) return std::nullopt;
  if (!v->is_string()) RaiseType(std::string(method) + " arg must be None or str");
  return v->str;
}

bool MatchAffix(const Value& self, const Value& arg, bool prefix) {
  auto one = [&](const Value& x) {
    if (!x.is_string())
      RaiseType(std::string(prefix ? "startswith" : "endswith") + " first arg must be str or a tuple of str, not " + TypeName(x));
    const std::string& s = self.str;
    if (x.str.size() > s.size()) return false;
    return prefix ? s.compare(0, x.str.size(), x.str) == 0 : s.compare(s.size() - x.str.size(), x.str.size(), x.str) == 0;
  };
  if (arg.is_list() && arg.is_tuple) {
    for (const Value& x : *arg.list)
      if (one(x)) return true;
    return false;
  }
  return one(arg);
}

Value StrList(std::vector<std::string> parts) {
  List out;
  for (auto& p : parts) out.push_back(Value::String(std::move(p)));
  return Value::MakeList(std::move(out));
}

// ---- str ----
const std::pair<const char*, Method> kStrMethods[] = {
    {"strip", [](Interpreter&, const Value& s, CallArgs& a) { return Value::String(PyStrip(s.str, OptChars(a, "strip"), true, true)); }},
    {"lstrip", [](Interpreter&, const Value& s, CallArgs& a) { return Value::String(PyStrip(s.str, OptChars(a, "lstrip"), true, false)); }},
    {"rstrip", [](Interpreter&, const Value& s, CallArgs& a) { return Value::String(PyStrip(s.str, OptChars(a, "rstrip"), false, true)); }},
    {"startswith", [](Interpreter&, const Value& s, CallArgs& a) {
       if (a.args.empty()) RaiseType("startswith() takes at least 1 argument (0 given)");
       return Value::Bool(MatchAffix(s, a.args[0], true));
     }},
    {"endswith", [](Interpreter&, const Value& s, CallArgs& a) {
       if (a.args.empty()) RaiseType("endswith() takes at least 1 argument (0 given)");
       return Value::Bool(MatchAffix(s, a.args[0], false));
     }},
    {"split", [](Interpreter&, const Value& s, CallArgs& a) {
       Value sep = a.GetOr(0, "sep", Value::None());
       int64_t maxsplit = a.GetOr(1, "maxsplit", Value::Int(-1)).as_int();
       if (sep.is_none()) return StrList(PySplitWhitespace(s.str, maxsplit));
       if (!sep.is_string()) RaiseType("must be str or None, not " + TypeName(sep));
       if (sep.str.empty()) throw JinjaError("ValueError", "empty separator");
       return StrList(PySplit(s.str, sep.str, maxsplit));
     }},
    {"rsplit", [](Interpreter&, const Value& s, CallArgs& a) {
       Value sep = a.GetOr(0, "sep", Value::None());
       int64_t maxsplit = a.GetOr(1, "maxsplit", Value::Int(-1)).as_int();
       if (!sep.is_string() || sep.str.empty() || maxsplit < 0) {
         if (sep.is_none()) return StrList(PySplitWhitespace(s.str, -1));
         return StrList(PySplit(s.str, sep.str, -1));
       }
       return StrList(PyRSplit(s.str, sep.str, maxsplit));
     }},
    {"splitlines", [](Interpreter&, const Value& s, CallArgs&) {
       std::vector<std::string> lines;
       std::string cur;
       for (size_t i = 0; i < s.str.size(); ++i) {
         char c = s.str[i];
         if (c == '\n' || c == '\r') {
           lines.push_back(cur);
           cur.clear();
           if (c == '\r' && i + 1 < s.str.size() && s.str[i + 1] == '\n') ++i;
         } else {
           cur += c;
         }
       }
       if (!cur.empty()) lines.push_back(cur);
       return StrList(lines);
     }},
    {"replace", [](Interpreter&, const Value& s, CallArgs& a) {
       return Value::String(PyReplace(s.str, ArgStr(a, 0, "old", "replace"), ArgStr(a, 1, "new", "replace"),
                                      a.GetOr(2, "count", Value::Int(-1)).as_int()));
     }},
    {"upper", [](Interpreter&, const Value& s, CallArgs&) { return Value::String(PyUpper(s.str)); }},
    {"lower", [](Interpreter&, const Value& s, CallArgs&) { return Value::String(PyLower(s.str)); }},
    {"title", [](Interpreter&, const Value& s, CallArgs&) { return Value::String(PyTitle(s.str)); }},
    {"capitalize", [](Interpreter&, const Value& s, CallArgs&) { return Value::String(PyCapitalize(s.str)); }},
    {"find", [](Interpreter&, const Value& s, CallArgs& a) { return Value::Int(PyFind(s.str, ArgStr(a, 0, "sub", "find"), false)); }},
    {"rfind", [](Interpreter&, const Value& s, CallArgs& a) { return Value::Int(PyFind(s.str, ArgStr(a, 0, "sub", "rfind"), true)); }},
    {"index", [](Interpreter&, const Value& s, CallArgs& a) {
       int64_t i = PyFind(s.str, ArgStr(a, 0, "sub", "index"), false);
       if (i < 0) throw JinjaError("ValueError", "substring not found");
       return Value::Int(i);
     }},
    {"count", [](Interpreter&, const Value& s, CallArgs& a) { return Value::Int(PyCount(s.str, ArgStr(a, 0, "sub", "count"))); }},
    {"format", [](Interpreter&, const Value& s, CallArgs& a) { return Value::String(PyFormat(s.str, a)); }},
    {"join", [](Interpreter& in, const Value& s, CallArgs& a) {
       if (a.args.empty()) RaiseType("str.join() takes exactly one argument (0 given)");
       std::string out;
       size_t i = 0;
       for (const Value& v : in.Iterate(a.args[0])) {
         if (!v.is_string()) RaiseType("sequence item " + std::to_string(i) + ": expected str instance, " + TypeName(v) + " found");
         if (i++) out += s.str;
         out += v.str;
       }
       return Value::String(std::move(out));
     }},
    {"isdigit", [](Interpreter&, const Value& s, CallArgs&) {
       return Value::Bool(!s.str.empty() && std::all_of(s.str.begin(), s.str.end(), [](char c) { return c >= '0' && c <= '9'; }));
     }},
    {"isalpha", [](Interpreter&, const Value& s, CallArgs&) {
       return Value::Bool(!s.str.empty() && std::all_of(s.str.begin(), s.str.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }));
     }},
    {"isalnum", [](Interpreter&, const Value& s, CallArgs&) {
       return Value::Bool(!s.str.empty() && std::all_of(s.str.begin(), s.str.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }));
     }},
    {"isspace", [](Interpreter&, const Value& s, CallArgs&) {
       auto cps = DecodeUtf8(s.str);
       return Value::Bool(!cps.empty() && std::all_of(cps.begin(), cps.end(), IsPySpace));
     }},
    {"isupper", [](Interpreter&, const Value& s, CallArgs&) { return Value::Bool(PyIsUpper(s.str)); }},
    {"islower", [](Interpreter&, const Value& s, CallArgs&) { return Value::Bool(PyIsLower(s.str)); }},
    {"removeprefix", [](Interpreter&, const Value& s, CallArgs& a) {
       std::string p = ArgStr(a, 0, "prefix", "removeprefix");
       return Value::String(s.str.compare(0, p.size(), p) == 0 ? s.str.substr(p.size()) : s.str);
     }},
    {"removesuffix", [](Interpreter&, const Value& s, CallArgs& a) {
       std::string p = ArgStr(a, 0, "suffix", "removesuffix");
       bool ends = !p.empty() && p.size() <= s.str.size() && s.str.compare(s.str.size() - p.size(), p.size(), p) == 0;
       return Value::String(ends ? s.str.substr(0, s.str.size() - p.size()) : s.str);
     }},
    {"partition", [](Interpreter&, const Value& s, CallArgs& a) {
       std::string sep = ArgStr(a, 0, "sep", "partition");
       size_t k = s.str.find(sep);
       if (k == std::string::npos) return Value::Tuple({s, Value::String(""), Value::String("")});
       return Value::Tuple({Value::String(s.str.substr(0, k)), Value::String(sep), Value::String(s.str.substr(k + sep.size()))});
     }},
    {"zfill", [](Interpreter&, const Value& s, CallArgs& a) {
       size_t width = static_cast<size_t>(std::max<int64_t>(0, a.GetOr(0, "width", Value::Int(0)).as_int()));
       size_t len = CodePointLength(s.str);
       if (len >= width) return s;
       std::string body = s.str, sign;
       if (!body.empty() && (body[0] == '-' || body[0] == '+')) {
         sign = body.substr(0, 1);
         body = body.substr(1);
       }
       return Value::String(sign + std::string(width - len, '0') + body);
     }},
};

// ---- list ----
Value ListIndex(const Value& self, int64_t i, const char* what) {
  int64_t n = static_cast<int64_t>(self.list->size());
  if (i < 0) i += n;
  if (i < 0 || i >= n) throw JinjaError("IndexError", std::string(what) + " index out of range");
  return Value::Int(i);
}

const std::pair<const char*, Method> kListMethods[] = {
    {"append", [](Interpreter&, const Value& s, CallArgs& a) {
       if (a.args.size() != 1) RaiseType("list.append() takes exactly one argument");
       s.list->push_back(a.args[0]);
       return Value::None();
     }},
    {"extend", [](Interpreter& in, const Value& s, CallArgs& a) {
       if (a.args.size() != 1) RaiseType("list.extend() takes exactly one argument");
       for (Value& v : in.Iterate(a.args[0])) s.list->push_back(std::move(v));
       return Value::None();
     }},
    {"insert", [](Interpreter&, const Value& s, CallArgs& a) {
       if (a.args.size() != 2) RaiseType("insert expected 2 arguments");
       int64_t n = static_cast<int64_t>(s.list->size()), i = a.args[0].as_int();
       if (i < 0) i = std::max<int64_t>(0, i + n);
       i = std::min(i, n);
       s.list->insert(s.list->begin() + i, a.args[1]);
       return Value::None();
     }},
    {"pop", [](Interpreter&, const Value& s, CallArgs& a) {
       if (s.list->empty()) throw JinjaError("IndexError", "pop from empty list");
       int64_t i = ListIndex(s, a.GetOr(0, "index", Value::Int(-1)).as_int(), "pop").as_int();
       Value v = (*s.list)[i];
       s.list->erase(s.list->begin() + i);
       return v;
     }},
    {"remove", [](Interpreter&, const Value& s, CallArgs& a) {
       for (auto it = s.list->begin(); it != s.list->end(); ++it)
         if (!a.args.empty() && Equal(*it, a.args[0])) {
           s.list->erase(it);
           return Value::None();
         }
       throw JinjaError("ValueError", "list.remove(x): x not in list");
     }},
    {"clear", [](Interpreter&, const Value& s, CallArgs&) {
       s.list->clear();
       return Value::None();
     }},
    {"reverse", [](Interpreter&, const Value& s, CallArgs&) {
       std::reverse(s.list->begin(), s.list->end());
       return Value::None();
     }},
    {"sort", [](Interpreter&, const Value& s, CallArgs& a) {
       bool rev = Truthy(a.GetOr(99, "reverse", Value::Bool(false)));
       std::stable_sort(s.list->begin(), s.list->end(), [&](const Value& x, const Value& y) {
         std::optional<bool> lt = rev ? Less(y, x) : Less(x, y);
         if (!lt) RaiseType("'<' not supported between instances of '" + TypeName(x) + "' and '" + TypeName(y) + "'");
         return *lt;
       });
       return Value::None();
     }},
    {"index", [](Interpreter&, const Value& s, CallArgs& a) {
       for (size_t i = 0; i < s.list->size(); ++i)
         if (!a.args.empty() && Equal((*s.list)[i], a.args[0])) return Value::Int(static_cast<int64_t>(i));
       throw JinjaError("ValueError", (a.args.empty() ? std::string("?") : Repr(a.args[0])) + " is not in list");
     }},
    {"count", [](Interpreter&, const Value& s, CallArgs& a) {
       int64_t n = 0;
       for (const Value& v : *s.list) n += !a.args.empty() && Equal(v, a.args[0]);
       return Value::Int(n);
     }},
    {"copy", [](Interpreter&, const Value& s, CallArgs&) { return Value::MakeList(*s.list); }},
};
const std::set<std::string> kListMutators = {"append", "extend", "insert", "pop", "remove", "clear", "reverse", "sort"};
const std::set<std::string> kTupleMethods = {"index", "count"};

// ---- dict ----
const std::pair<const char*, Method> kDictMethods[] = {
    {"get", [](Interpreter&, const Value& s, CallArgs& a) {
       if (a.args.empty()) RaiseType("get expected at least 1 argument, got 0");
       const Value* v = s.dict->Find(a.args[0]);
       return v ? *v : a.GetOr(1, "default", Value::None());
     }},
    {"items", [](Interpreter&, const Value& s, CallArgs&) {
       List out;
       for (const auto& [k, v] : s.dict->items) out.push_back(Value::Tuple({k, v}));
       return Value::MakeList(std::move(out));
     }},
    {"keys", [](Interpreter&, const Value& s, CallArgs&) {
       List out;
       for (const auto& kv : s.dict->items) out.push_back(kv.first);
       return Value::MakeList(std::move(out));
     }},
    {"values", [](Interpreter&, const Value& s, CallArgs&) {
       List out;
       for (const auto& kv : s.dict->items) out.push_back(kv.second);
       return Value::MakeList(std::move(out));
     }},
    {"copy", [](Interpreter&, const Value& s, CallArgs&) {
       Value d = Value::MakeDict();
       *d.dict = *s.dict;
       return d;
     }},
    {"pop", [](Interpreter&, const Value& s, CallArgs& a) {
       if (a.args.empty()) RaiseType("pop expected at least 1 argument, got 0");
       if (const Value* v = s.dict->Find(a.args[0])) {
         Value out = *v;
         s.dict->Erase(a.args[0]);
         return out;
       }
       if (a.args.size() > 1) return a.args[1];
       throw JinjaError("KeyError", Repr(a.args[0]));
     }},
    {"popitem", [](Interpreter&, const Value& s, CallArgs&) {
       if (s.dict->items.empty()) throw JinjaError("KeyError", "'popitem(): dictionary is empty'");
       auto kv = s.dict->items.back();
       s.dict->items.pop_back();
       return Value::Tuple({kv.first, kv.second});
     }},
    {"setdefault", [](Interpreter&, const Value& s, CallArgs& a) {
       if (a.args.empty()) RaiseType("setdefault expected at least 1 argument, got 0");
       if (const Value* v = s.dict->Find(a.args[0])) return *v;
       Value def = a.args.size() > 1 ? a.args[1] : Value::None();
       s.dict->Set(a.args[0], def);
       return def;
     }},
    {"update", [](Interpreter& in, const Value& s, CallArgs& a) {
       if (!a.args.empty()) {
         if (a.args[0].is_dict()) {
           for (const auto& kv : a.args[0].dict->items) s.dict->Set(kv.first, kv.second);
         } else {
           for (const Value& pair : in.Iterate(a.args[0])) {
             auto kv = in.Iterate(pair);
             if (kv.size() != 2) throw JinjaError("ValueError", "dictionary update sequence element has length " + std::to_string(kv.size()) + "; 2 is required");
             s.dict->Set(kv[0], kv[1]);
           }
         }
       }
       for (auto& [k, v] : a.kwargs) s.dict->Set(Value::String(k), v);
       return Value::None();
     }},
    {"clear", [](Interpreter&, const Value& s, CallArgs&) {
       s.dict->items.clear();
       return Value::None();
     }},
};
const std::set<std::string> kDictMutators = {"pop", "popitem", "setdefault", "update", "clear"};

template <size_t N>
Method Lookup(const std::pair<const char*, Method> (&table)[N], const std::string& name) {
  for (const auto& [n, m] : table)
    if (name == n) return m;
  return nullptr;
}

}  // namespace

Value BindMethod(Interpreter& in, const Value& self, const std::string& name) {
  Method m = nullptr;
  bool mutator = false;
  if (self.is_string()) {
    m = Lookup(kStrMethods, name);
  } else if (self.is_list()) {
    if (!self.is_tuple || kTupleMethods.count(name)) m = Lookup(kListMethods, name);
    mutator = kListMutators.count(name) > 0;
  } else if (self.is_dict() && !self.is_namespace) {
    m = Lookup(kDictMethods, name);
    mutator = kDictMutators.count(name) > 0;
  }
  if (!m) return Value::Undefined();
  if (mutator && in.options().immutable) {
    Value u = Value::Undefined("access to attribute '" + name + "' of '" + TypeName(self) + "' object is unsafe.");
    u.num.i = 1;
    return u;
  }
  Value bound_self = self;
  return Value::Func(name, [m, bound_self](Interpreter& in, CallArgs& a) { return m(in, bound_self, a); });
}

}  // namespace uaii::jinja
