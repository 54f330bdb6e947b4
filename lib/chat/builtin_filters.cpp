// jinja2's built-in filters, plus Hugging Face's `tojson` override
// (json.dumps(x, ensure_ascii=False, indent, separators, sort_keys): no HTML escaping).
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "chat/error.h"
#include "chat/interpreter.h"
#include "chat/json.h"
#include "chat/text.h"

namespace uaii::jinja {
namespace {

using FilterFn = Value (*)(Interpreter&, const Value&, CallArgs&);

Value Len(const Value& v) {
  switch (v.kind) {
    case Kind::kUndefined: return Value::Int(0);
    case Kind::kString: return Value::Int(static_cast<int64_t>(CodePointLength(v.str)));
    case Kind::kList: return Value::Int(static_cast<int64_t>(v.list->size()));
    case Kind::kDict:
      if (!v.is_namespace) return Value::Int(static_cast<int64_t>(v.dict->items.size()));
      break;
    default: break;
  }
  RaiseType("object of type '" + TypeName(v) + "' has no len()");
}

// jinja2's make_attrgetter: "a.b.0" walks attributes / items; missing -> default.
Value AttrPath(Interpreter& in, const Value& item, const Value& attribute) {
  if (!attribute.is_string()) return in.GetItem(item, attribute);
  Value cur = item;
  size_t pos = 0;
  const std::string& path = attribute.str;
  while (true) {
    size_t dot = path.find('.', pos);
    std::string part = path.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
    bool digits = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    // Python's int(part); an index beyond int64 is missing like any index out of range
    // (INT64_MAX stands for it; std::stoll threw: fuzz_jinja).
    int64_t index = INT64_MAX;
    if (digits) std::from_chars(part.data(), part.data() + part.size(), index);
    cur = in.GetItem(cur, digits ? Value::Int(index) : Value::String(part));
    if (dot == std::string::npos) return cur;
    pos = dot + 1;
  }
}

// Sort key: case-insensitive comparisons lower-case strings only.
Value Folded(const Value& v, bool case_sensitive) {
  if (!case_sensitive && v.is_string()) return Value::String(PyLower(v.str));
  return v;
}

bool LessOrThrow(const Value& a, const Value& b) {
  std::optional<bool> lt = Less(a, b);
  if (!lt) RaiseType("'<' not supported between instances of '" + TypeName(a) + "' and '" + TypeName(b) + "'");
  return *lt;
}

std::vector<Value> SortedItems(Interpreter& in, const Value& input, CallArgs& a, size_t reverse_pos, size_t cs_pos, size_t attr_pos) {
  std::vector<Value> items = in.Iterate(input);
  bool reverse = Truthy(a.GetOr(reverse_pos, "reverse", Value::Bool(false)));
  bool cs = Truthy(a.GetOr(cs_pos, "case_sensitive", Value::Bool(false)));
  Value attribute = a.GetOr(attr_pos, "attribute", Value::None());
  std::vector<std::pair<Value, Value>> keyed;
  for (Value& v : items) keyed.emplace_back(Folded(attribute.is_none() ? v : AttrPath(in, v, attribute), cs), v);
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& x, const auto& y) {
    return reverse ? LessOrThrow(y.first, x.first) : LessOrThrow(x.first, y.first);
  });
  std::vector<Value> out;
  for (auto& kv : keyed) out.push_back(std::move(kv.second));
  return out;
}

Value MinMax(Interpreter& in, const Value& input, CallArgs& a, bool max) {
  std::vector<Value> items = in.Iterate(input);
  if (items.empty()) return Value::Undefined("No aggregated item, sequence was empty.");
  bool cs = Truthy(a.GetOr(0, "case_sensitive", Value::Bool(false)));
  Value attribute = a.GetOr(1, "attribute", Value::None());
  auto key = [&](const Value& v) { return Folded(attribute.is_none() ? v : AttrPath(in, v, attribute), cs); };
  size_t best = 0;
  Value best_key = key(items[0]);
  for (size_t i = 1; i < items.size(); ++i) {
    Value k = key(items[i]);
    if (max ? LessOrThrow(best_key, k) : LessOrThrow(k, best_key)) {
      best = i;
      best_key = k;
    }
  }
  return items[best];
}

// select / reject / selectattr / rejectattr.
Value SelectOrReject(Interpreter& in, const Value& input, CallArgs& a, bool by_attr, bool select) {
  size_t first = 0;
  Value attribute;
  if (by_attr) {
    if (a.args.empty()) RaiseType("Missing parameter for attribute name");
    attribute = a.args[0];
    first = 1;
  }
  std::string test;
  CallArgs targs;
  if (a.args.size() > first) {
    test = Str(a.args[first]);
    targs.args.assign(a.args.begin() + first + 1, a.args.end());
  }
  targs.kwargs = a.kwargs;
  List out;
  for (const Value& item : in.Iterate(input)) {
    Value x = by_attr ? AttrPath(in, item, attribute) : item;
    bool ok = test.empty() ? Truthy(x) : in.ApplyTest(test, x, targs);
    if (ok == select) out.push_back(item);
  }
  return Value::MakeList(std::move(out));
}

std::optional<int64_t> ParseInt(std::string s, int base) {
  s = PyStrip(s, std::nullopt, true, true);
  std::string clean;
  for (char c : s)
    if (c != '_') clean += c;
  if (clean.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(clean.c_str(), &end, base);
  if (errno || *end) return std::nullopt;
  return v;
}

std::optional<double> ParseFloat(const std::string& raw) {
  std::string s = PyStrip(raw, std::nullopt, true, true);
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (*end) return std::nullopt;
  return v;
}

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

Value RoundFilter(Interpreter&, const Value& v, CallArgs& a) {
  int64_t precision = a.GetOr(0, "precision", Value::Int(0)).as_int();
  std::string method = Str(a.GetOr(1, "method", Value::String("common")));
  if (!v.is_number()) RaiseType("type " + TypeName(v) + " doesn't define __round__ method");
  if (method == "common") {
    if (v.is_integer()) return Value::Int(v.as_int());  // round(int, n) stays an int
    // printf rounds the exact binary value, ties to even: Python's round().
    char buf[512];
    std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(std::max<int64_t>(0, precision)), v.num.f);
    return Value::Float(std::strtod(buf, nullptr));
  }
  if (method != "ceil" && method != "floor") throw JinjaError("FilterArgumentError", "method must be common, ceil or floor");
  double scale = std::pow(10.0, static_cast<double>(precision));
  double x = v.as_double() * scale;
  return Value::Float((method == "ceil" ? std::ceil(x) : std::floor(x)) / scale);
}

Value IndentFilter(Interpreter&, const Value& v, CallArgs& a) {
  Value width = a.GetOr(0, "width", Value::Int(4));
  bool first = Truthy(a.GetOr(1, "first", Value::Bool(false)));
  bool blank = Truthy(a.GetOr(2, "blank", Value::Bool(false)));
  std::string ind = width.is_string() ? width.str : std::string(static_cast<size_t>(std::max<int64_t>(0, width.as_int())), ' ');
  std::string s = Str(v) + "\n";
  std::vector<std::string> lines;
  std::string cur;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '\n' || c == '\r' || c == '\v' || c == '\f') {
      lines.push_back(cur);
      cur.clear();
      if (c == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ++i;
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) lines.push_back(cur);
  std::string rv;
  if (blank) {
    for (size_t i = 0; i < lines.size(); ++i) {
      if (i) {
        rv += '\n';
        rv += ind;
      }
      rv += lines[i];
    }
  } else {
    rv = lines.empty() ? "" : lines[0];
    for (size_t i = 1; i < lines.size(); ++i) {
      rv += '\n';
      if (!lines[i].empty()) {
        rv += ind;
        rv += lines[i];
      }
    }
  }
  if (first) rv = ind + rv;
  return Value::String(rv);
}

Value ToJson(Interpreter&, const Value& v, CallArgs& a) {
  JsonDumpOptions o;
  o.ensure_ascii = Truthy(a.GetOr(0, "ensure_ascii", Value::Bool(false)));
  Value indent = a.GetOr(1, "indent", Value::None());
  if (indent.is_string()) o.indent = indent.str;
  else if (indent.is_integer()) o.indent = std::string(static_cast<size_t>(std::max<int64_t>(0, indent.as_int())), ' ');
  else if (!indent.is_none()) RaiseType("indent must be an int or str");
  Value seps = a.GetOr(2, "separators", Value::None());
  if (seps.is_list()) {
    if (seps.list->size() != 2) throw JinjaError("ValueError", "separators must be a (item, key) pair");
    o.item_sep = Str((*seps.list)[0]);
    o.key_sep = Str((*seps.list)[1]);
  }
  o.sort_keys = Truthy(a.GetOr(3, "sort_keys", Value::Bool(false)));
  return Value::String(JsonDump(v, o));
}

Value Truncate(Interpreter&, const Value& v, CallArgs& a) {
  std::string s = Str(v);
  int64_t length = a.GetOr(0, "length", Value::Int(255)).as_int();
  bool killwords = Truthy(a.GetOr(1, "killwords", Value::Bool(false)));
  std::string end = Str(a.GetOr(2, "end", Value::String("...")));
  int64_t leeway = a.GetOr(3, "leeway", Value::Int(5)).as_int();
  std::vector<uint32_t> cps = DecodeUtf8(s);
  int64_t n = static_cast<int64_t>(cps.size()), end_len = static_cast<int64_t>(CodePointLength(end));
  if (n <= length + leeway) return Value::String(s);
  int64_t keep = std::max<int64_t>(0, length - end_len);
  std::string head = EncodeUtf8(cps, 0, static_cast<size_t>(keep));
  if (killwords) return Value::String(head + end);
  size_t sp = head.rfind(' ');
  return Value::String((sp == std::string::npos ? std::string() : head.substr(0, sp)) + end);
}

const std::pair<const char*, FilterFn> kFilters[] = {
    {"abs", [](Interpreter&, const Value& v, CallArgs&) {
       if (v.kind == Kind::kFloat) return Value::Float(std::fabs(v.num.f));
       if (v.is_integer()) return Value::Int(std::llabs(v.as_int()));
       RaiseType("bad operand type for abs(): '" + TypeName(v) + "'");
     }},
    {"attr", [](Interpreter& in, const Value& v, CallArgs& a) { return in.GetAttr(v, Str(a.GetOr(0, "name", Value::String("")))); }},
    {"batch", [](Interpreter& in, const Value& v, CallArgs& a) {
       int64_t n = a.GetOr(0, "linecount", Value::Int(1)).as_int();
       if (n <= 0) throw JinjaError("FilterArgumentError", "linecount must be positive");
       const Value* fill = a.Get(1, "fill_with");
       List out, cur;
       for (Value& x : in.Iterate(v)) {
         cur.push_back(std::move(x));
         if (static_cast<int64_t>(cur.size()) == n) {
           out.push_back(Value::MakeList(std::move(cur)));
           cur.clear();
         }
       }
       if (!cur.empty()) {
         if (fill && !fill->is_none())
           while (static_cast<int64_t>(cur.size()) < n) cur.push_back(*fill);
         out.push_back(Value::MakeList(std::move(cur)));
       }
       return Value::MakeList(std::move(out));
     }},
    {"capitalize", [](Interpreter&, const Value& v, CallArgs&) { return Value::String(PyCapitalize(Str(v))); }},
    {"center", [](Interpreter&, const Value& v, CallArgs& a) {
       std::string s = Str(v);
       int64_t width = a.GetOr(0, "width", Value::Int(80)).as_int();
       int64_t len = static_cast<int64_t>(CodePointLength(s));
       if (len >= width) return Value::String(s);
       int64_t pad = width - len, left = pad / 2 + (pad & width & 1);  // CPython's centering rule
       return Value::String(std::string(left, ' ') + s + std::string(pad - left, ' '));
     }},
    {"count", [](Interpreter&, const Value& v, CallArgs&) { return Len(v); }},
    {"length", [](Interpreter&, const Value& v, CallArgs&) { return Len(v); }},
    {"default", [](Interpreter&, const Value& v, CallArgs& a) {
       Value def = a.GetOr(0, "default_value", Value::String(""));
       bool boolean = Truthy(a.GetOr(1, "boolean", Value::Bool(false)));
       if (v.is_undefined() || (boolean && !Truthy(v))) return def;
       return v;
     }},
    {"dictsort", [](Interpreter& in, const Value& v, CallArgs& a) {
       if (v.is_undefined()) RaiseUndefined(v);
       if (!v.is_dict()) RaiseType("'" + TypeName(v) + "' object has no attribute 'items'");
       bool cs = Truthy(a.GetOr(0, "case_sensitive", Value::Bool(false)));
       std::string by = Str(a.GetOr(1, "by", Value::String("key")));
       bool reverse = Truthy(a.GetOr(2, "reverse", Value::Bool(false)));
       if (by != "key" && by != "value") throw JinjaError("FilterArgumentError", "You can only sort by either \"key\" or \"value\"");
       std::vector<std::pair<Value, Value>> items = v.dict->items;
       int pos = by == "key" ? 0 : 1;
       std::stable_sort(items.begin(), items.end(), [&](const auto& x, const auto& y) {
         Value kx = Folded(pos ? x.second : x.first, cs), ky = Folded(pos ? y.second : y.first, cs);
         return reverse ? LessOrThrow(ky, kx) : LessOrThrow(kx, ky);
       });
       List out;
       for (auto& kv : items) out.push_back(Value::Tuple({kv.first, kv.second}));
       return Value::MakeList(std::move(out));
     }},
    {"escape", [](Interpreter&, const Value& v, CallArgs&) {
       if (v.is_safe) return v;
       Value s = Value::String(Escape(Str(v)));
       s.is_safe = true;
       return s;
     }},
    {"forceescape", [](Interpreter&, const Value& v, CallArgs&) {
       Value s = Value::String(Escape(Str(v)));
       s.is_safe = true;
       return s;
     }},
    {"first", [](Interpreter& in, const Value& v, CallArgs&) {
       std::vector<Value> items = in.Iterate(v);
       return items.empty() ? Value::Undefined("No first item, sequence was empty.") : items.front();
     }},
    {"last", [](Interpreter& in, const Value& v, CallArgs&) {
       std::vector<Value> items = in.Iterate(v);
       return items.empty() ? Value::Undefined("No last item, sequence was empty.") : items.back();
     }},
    {"float", [](Interpreter&, const Value& v, CallArgs& a) {
       Value def = a.GetOr(0, "default", Value::Float(0.0));
       if (v.is_number()) return Value::Float(v.as_double());
       if (v.is_string())
         if (auto f = ParseFloat(v.str)) return Value::Float(*f);
       return def;
     }},
    {"format", [](Interpreter&, const Value& v, CallArgs& a) {
       if (!a.kwargs.empty()) {
         Value d = Value::MakeDict();
         for (auto& [k, x] : a.kwargs) d.dict->Set(Value::String(k), x);
         return Value::String(PercentFormat(Str(v), d));
       }
       return Value::String(PercentFormat(Str(v), Value::Tuple(a.args)));
     }},
    {"int", [](Interpreter&, const Value& v, CallArgs& a) {
       Value def = a.GetOr(0, "default", Value::Int(0));
       int base = static_cast<int>(a.GetOr(1, "base", Value::Int(10)).as_int());
       if (v.kind == Kind::kFloat) return std::isfinite(v.num.f) ? Value::Int(static_cast<int64_t>(v.num.f)) : def;
       if (v.is_integer()) return Value::Int(v.as_int());
       if (v.is_string()) {
         if (auto i = ParseInt(v.str, base)) return Value::Int(*i);
         if (auto f = ParseFloat(v.str); f && std::isfinite(*f)) return Value::Int(static_cast<int64_t>(*f));
       }
       return def;
     }},
    {"items", [](Interpreter&, const Value& v, CallArgs&) {
       List out;
       if (v.is_undefined()) return Value::MakeList();
       if (!v.is_dict()) RaiseType("Can only get item pairs from a mapping.");
       for (const auto& [k, x] : v.dict->items) out.push_back(Value::Tuple({k, x}));
       return Value::MakeList(std::move(out));
     }},
    {"join", [](Interpreter& in, const Value& v, CallArgs& a) {
       std::string sep = Str(a.GetOr(0, "d", Value::String("")));
       Value attribute = a.GetOr(1, "attribute", Value::None());
       std::string out;
       size_t i = 0;
       for (const Value& x : in.Iterate(v)) {
         if (i++) out += sep;
         out += Str(attribute.is_none() ? x : AttrPath(in, x, attribute));
       }
       return Value::String(std::move(out));
     }},
    {"list", [](Interpreter& in, const Value& v, CallArgs&) { return Value::MakeList(in.Iterate(v)); }},
    {"lower", [](Interpreter&, const Value& v, CallArgs&) { return Value::String(PyLower(Str(v))); }},
    {"upper", [](Interpreter&, const Value& v, CallArgs&) { return Value::String(PyUpper(Str(v))); }},
    {"map", [](Interpreter& in, const Value& v, CallArgs& a) {
       List out;
       const Value* attribute = nullptr;
       for (const auto& [k, x] : a.kwargs)
         if (k == "attribute") attribute = &x;
       if (attribute) {
         Value def = Value::Undefined();
         bool has_default = false;
         for (const auto& [k, x] : a.kwargs)
           if (k == "default") {
             def = x;
             has_default = true;
           }
         for (const Value& item : in.Iterate(v)) {
           Value r = AttrPath(in, item, *attribute);
           out.push_back(has_default && r.is_undefined() ? def : r);
         }
         return Value::MakeList(std::move(out));
       }
       if (a.args.empty()) RaiseType("map requires a filter argument");
       std::string name = Str(a.args[0]);
       CallArgs fargs;
       fargs.args.assign(a.args.begin() + 1, a.args.end());
       fargs.kwargs = a.kwargs;
       for (const Value& item : in.Iterate(v)) {
         CallArgs copy = fargs;
         out.push_back(in.ApplyFilter(name, item, copy));
       }
       return Value::MakeList(std::move(out));
     }},
    {"max", [](Interpreter& in, const Value& v, CallArgs& a) { return MinMax(in, v, a, true); }},
    {"min", [](Interpreter& in, const Value& v, CallArgs& a) { return MinMax(in, v, a, false); }},
    {"select", [](Interpreter& in, const Value& v, CallArgs& a) { return SelectOrReject(in, v, a, false, true); }},
    {"reject", [](Interpreter& in, const Value& v, CallArgs& a) { return SelectOrReject(in, v, a, false, false); }},
    {"selectattr", [](Interpreter& in, const Value& v, CallArgs& a) { return SelectOrReject(in, v, a, true, true); }},
    {"rejectattr", [](Interpreter& in, const Value& v, CallArgs& a) { return SelectOrReject(in, v, a, true, false); }},
    {"replace", [](Interpreter&, const Value& v, CallArgs& a) {
       Value count = a.GetOr(2, "count", Value::None());
       return Value::String(PyReplace(Str(v), Str(a.GetOr(0, "old", Value::String(""))), Str(a.GetOr(1, "new", Value::String(""))),
                                      count.is_none() ? -1 : count.as_int()));
     }},
    {"reverse", [](Interpreter& in, const Value& v, CallArgs&) {
       if (v.is_string()) return Slice(v, Value::None(), Value::None(), Value::Int(-1));
       std::vector<Value> items = in.Iterate(v);
       std::reverse(items.begin(), items.end());
       return Value::MakeList(std::move(items));
     }},
    {"round", RoundFilter},
    {"safe", [](Interpreter&, const Value& v, CallArgs&) {
       Value s = Value::String(Str(v));
       s.is_safe = true;
       return s;
     }},
    {"sort", [](Interpreter& in, const Value& v, CallArgs& a) { return Value::MakeList(SortedItems(in, v, a, 0, 1, 2)); }},
    {"string", [](Interpreter&, const Value& v, CallArgs&) { return v.is_string() ? v : Value::String(Str(v)); }},
    {"sum", [](Interpreter& in, const Value& v, CallArgs& a) {
       Value attribute = a.GetOr(0, "attribute", Value::None());
       Value acc = a.GetOr(1, "start", Value::Int(0));
       for (const Value& x : in.Iterate(v)) acc = BinaryOp("+", acc, attribute.is_none() ? x : AttrPath(in, x, attribute));
       return acc;
     }},
    {"title", [](Interpreter&, const Value& v, CallArgs&) {
       // jinja2 splits words at runs of [-\s({[<] and capitalizes each piece.
       std::vector<uint32_t> cps = DecodeUtf8(Str(v));
       auto sep = [](uint32_t c) { return c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || IsPySpace(c); };
       std::string out;
       bool start = true;
       for (uint32_t c : cps) {
         if (sep(c)) {
           AppendUtf8(out, c);
           start = true;
           continue;
         }
         std::string one;
         AppendUtf8(one, c);
         out += start ? PyUpper(one) : PyLower(one);
         start = false;
       }
       return Value::String(out);
     }},
    {"indent", IndentFilter},
    {"tojson", ToJson},
    {"trim", [](Interpreter&, const Value& v, CallArgs& a) {
       Value chars = a.GetOr(0, "chars", Value::None());
       return Value::String(PyStrip(Str(v), chars.is_none() ? std::nullopt : std::optional<std::string>(Str(chars)), true, true));
     }},
    {"truncate", Truncate},
    {"unique", [](Interpreter& in, const Value& v, CallArgs& a) {
       bool cs = Truthy(a.GetOr(0, "case_sensitive", Value::Bool(false)));
       Value attribute = a.GetOr(1, "attribute", Value::None());
       List out, seen;
       for (const Value& x : in.Iterate(v)) {
         Value key = Folded(attribute.is_none() ? x : AttrPath(in, x, attribute), cs);
         bool dup = false;
         for (const Value& s : seen) dup = dup || Equal(s, key);
         if (dup) continue;
         seen.push_back(key);
         out.push_back(x);
       }
       return Value::MakeList(std::move(out));
     }},
    {"wordcount", [](Interpreter&, const Value& v, CallArgs&) {
       int64_t n = 0;
       bool in_word = false;
       for (uint32_t c : DecodeUtf8(Str(v))) {
         bool w = (c < 0x80) ? (std::isalnum(static_cast<int>(c)) || c == '_') : !IsPySpace(c);
         if (w && !in_word) ++n;
         in_word = w;
       }
       return Value::Int(n);
     }},
    {"striptags", [](Interpreter&, const Value& v, CallArgs&) {
       std::string s = Str(v), out;
       bool tag = false;
       for (char c : s) {
         if (c == '<') tag = true;
         else if (c == '>' && tag) tag = false;
         else if (!tag) out += c;
       }
       return Value::String(PyStrip(out, std::nullopt, true, true));
     }},
};

FilterFn Find(const std::string& name) {
  if (name == "d") return Find("default");
  if (name == "e") return Find("escape");
  for (const auto& [n, f] : kFilters)
    if (name == n) return f;
  return nullptr;
}

}  // namespace

bool HasFilter(const std::string& name) { return Find(name) != nullptr; }

Value CallFilter(Interpreter& in, const std::string& name, const Value& input, CallArgs& args) {
  return Find(name)(in, input, args);
}

}  // namespace uaii::jinja
