#include "chat/value.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace uaii::jinja {

Value Value::Undefined(std::string message) {
  Value v;
  v.kind = Kind::kUndefined;
  v.str = std::move(message);
  return v;
}
Value Value::None() {
  Value v;
  v.kind = Kind::kNone;
  return v;
}
Value Value::Bool(bool b) {
  Value v;
  v.kind = Kind::kBool;
  v.num.b = b;
  return v;
}
Value Value::Int(int64_t i) {
  Value v;
  v.kind = Kind::kInt;
  v.num.i = i;
  return v;
}
Value Value::Float(double f) {
  Value v;
  v.kind = Kind::kFloat;
  v.num.f = f;
  return v;
}
Value Value::String(std::string s) {
  Value v;
  v.kind = Kind::kString;
  v.str = std::move(s);
  return v;
}
Value Value::MakeList(List items) {
  Value v;
  v.kind = Kind::kList;
  v.list = std::make_shared<List>(std::move(items));
  return v;
}
Value Value::Tuple(List items) {
  Value v = MakeList(std::move(items));
  v.is_tuple = true;
  return v;
}
Value Value::MakeDict() {
  Value v;
  v.kind = Kind::kDict;
  v.dict = std::make_shared<Dict>();
  return v;
}
Value Value::Namespace() {
  Value v = MakeDict();
  v.is_namespace = true;
  return v;
}
Value Value::Func(std::string name, std::function<Value(Interpreter&, CallArgs&)> f) {
  Value v;
  v.kind = Kind::kFunction;
  v.fn = std::make_shared<Function>(Function{std::move(name), std::move(f)});
  return v;
}

double Value::as_double() const {
  switch (kind) {
    case Kind::kBool: return num.b ? 1.0 : 0.0;
    case Kind::kInt: return static_cast<double>(num.i);
    case Kind::kFloat: return num.f;
    default: return 0.0;
  }
}
int64_t Value::as_int() const {
  switch (kind) {
    case Kind::kBool: return num.b ? 1 : 0;
    case Kind::kInt: return num.i;
    case Kind::kFloat: return static_cast<int64_t>(num.f);
    default: return 0;
  }
}

const Value* Dict::Find(const Value& key) const {
  for (const auto& kv : items)
    if (Equal(kv.first, key)) return &kv.second;
  return nullptr;
}
Value* Dict::Find(const Value& key) {
  for (auto& kv : items)
    if (Equal(kv.first, key)) return &kv.second;
  return nullptr;
}
const Value* Dict::Find(std::string_view key) const {
  for (const auto& kv : items)
    if (kv.first.kind == Kind::kString && kv.first.str == key) return &kv.second;
  return nullptr;
}
void Dict::Set(Value key, Value value) {
  if (Value* v = Find(key)) {
    *v = std::move(value);
    return;
  }
  items.emplace_back(std::move(key), std::move(value));
}
bool Dict::Erase(const Value& key) {
  for (auto it = items.begin(); it != items.end(); ++it)
    if (Equal(it->first, key)) {
      items.erase(it);
      return true;
    }
  return false;
}

bool Truthy(const Value& v) {
  switch (v.kind) {
    case Kind::kUndefined:
    case Kind::kNone: return false;
    case Kind::kBool: return v.num.b;
    case Kind::kInt: return v.num.i != 0;
    case Kind::kFloat: return v.num.f != 0.0;
    case Kind::kString: return !v.str.empty();
    case Kind::kList: return !v.list->empty();
    case Kind::kDict: return v.is_namespace || !v.dict->items.empty();
    case Kind::kFunction: return true;
  }
  return false;
}

std::string FloatRepr(double f) {
  if (std::isnan(f)) return "nan";
  if (std::isinf(f)) return f > 0 ? "inf" : "-inf";
  if (f == 0.0) return std::signbit(f) ? "-0.0" : "0.0";
  // Shortest round-trip digits in scientific form, then Python's layout rule:
  // fixed notation when -4 <= exponent < 16, else d.ddde+XX.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, f, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  bool neg = sci[0] == '-';
  if (neg) sci.erase(0, 1);
  size_t e = sci.find('e');
  std::string mant = sci.substr(0, e);
  int exp = std::stoi(sci.substr(e + 1));
  std::string digits;
  for (char c : mant)
    if (c != '.') digits += c;
  std::string out = neg ? "-" : "";
  if (exp >= -4 && exp < 16) {
    if (exp < 0) {
      out += "0.";
      out.append(static_cast<size_t>(-exp - 1), '0');
      out += digits;
    } else if (static_cast<size_t>(exp) + 1 >= digits.size()) {
      out += digits;
      out.append(exp + 1 - digits.size(), '0');
      out += ".0";
    } else {
      out += digits.substr(0, exp + 1) + "." + digits.substr(exp + 1);
    }
  } else {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char eb[16];
    std::snprintf(eb, sizeof eb, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    out += eb;
  }
  return out;
}

namespace {

// Python's repr of a str: single quotes unless the text holds ' and no ".
std::string StringRepr(const std::string& s) {
  bool has_single = s.find('\'') != std::string::npos;
  bool has_double = s.find('"') != std::string::npos;
  char q = (has_single && !has_double) ? '"' : '\'';
  std::string out(1, q);
  for (uint32_t cp : DecodeUtf8(s)) {
    if (cp == static_cast<uint32_t>(q) || cp == '\\') {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0) || cp == 0xad) {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", cp);
      out += b;
    } else if ((cp >= 0x2028 && cp <= 0x202f && cp != 0x202f) || (cp >= 0xd800 && cp < 0xe000) ||
               cp == 0xfeff || (cp >= 0x200b && cp <= 0x200f) || (cp >= 0x2060 && cp <= 0x2064)) {
      // Python escapes code points that are not printable (line/paragraph
      // separators, format characters, lone surrogates).
      char b[12];
      std::snprintf(b, sizeof b, "\\u%04x", cp);
      out += b;
    } else {
      AppendUtf8(out, cp);
    }
  }
  out += q;
  return out;
}

}  // namespace

std::string Repr(const Value& v) {
  switch (v.kind) {
    case Kind::kString: return StringRepr(v.str);
    case Kind::kUndefined: return "Undefined";
    default: break;
  }
  return Str(v);
}

std::string Str(const Value& v) {
  switch (v.kind) {
    case Kind::kUndefined: return "";
    case Kind::kNone: return "None";
    case Kind::kBool: return v.num.b ? "True" : "False";
    case Kind::kInt: return std::to_string(v.num.i);
    case Kind::kFloat: return FloatRepr(v.num.f);
    case Kind::kString: return v.str;
    case Kind::kList: {
      std::string out = v.is_tuple ? "(" : "[";
      for (size_t i = 0; i < v.list->size(); ++i) {
        if (i) out += ", ";
        out += Repr((*v.list)[i]);
      }
      if (v.is_tuple && v.list->size() == 1) out += ",";
      out += v.is_tuple ? ")" : "]";
      return out;
    }
    case Kind::kDict: {
      std::string out = v.is_namespace ? "<Namespace {" : "{";
      bool first = true;
      for (const auto& [k, val] : v.dict->items) {
        if (!first) out += ", ";
        first = false;
        out += Repr(k) + ": " + Repr(val);
      }
      out += v.is_namespace ? "}>" : "}";
      return out;
    }
    case Kind::kFunction: return "<function " + v.fn->name + ">";
  }
  return "";
}

bool Equal(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.kind == Kind::kFloat || b.kind == Kind::kFloat) return a.as_double() == b.as_double();
    return a.as_int() == b.as_int();
  }
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Kind::kUndefined:
    case Kind::kNone: return true;
    case Kind::kString: return a.str == b.str;
    case Kind::kList: {
      if (a.is_tuple != b.is_tuple || a.list->size() != b.list->size()) return false;
      for (size_t i = 0; i < a.list->size(); ++i)
        if (!Equal((*a.list)[i], (*b.list)[i])) return false;
      return true;
    }
    case Kind::kDict: {
      if (a.dict == b.dict) return true;
      if (a.is_namespace || b.is_namespace) return false;
      if (a.dict->items.size() != b.dict->items.size()) return false;
      for (const auto& [k, val] : a.dict->items) {
        const Value* o = b.dict->Find(k);
        if (!o || !Equal(val, *o)) return false;
      }
      return true;
    }
    case Kind::kFunction: return a.fn == b.fn;
    default: return false;
  }
}

std::optional<bool> Less(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.kind == Kind::kFloat || b.kind == Kind::kFloat) return a.as_double() < b.as_double();
    return a.as_int() < b.as_int();
  }
  if (a.kind == Kind::kString && b.kind == Kind::kString) return a.str < b.str;  // UTF-8 order == code point order
  if (a.kind == Kind::kList && b.kind == Kind::kList && a.is_tuple == b.is_tuple) {
    size_t n = std::min(a.list->size(), b.list->size());
    for (size_t i = 0; i < n; ++i) {
      const Value& x = (*a.list)[i];
      const Value& y = (*b.list)[i];
      if (Equal(x, y)) continue;
      return Less(x, y);
    }
    return a.list->size() < b.list->size();
  }
  return std::nullopt;
}

std::string TypeName(const Value& v) {
  switch (v.kind) {
    case Kind::kUndefined: return "Undefined";
    case Kind::kNone: return "NoneType";
    case Kind::kBool: return "bool";
    case Kind::kInt: return "int";
    case Kind::kFloat: return "float";
    case Kind::kString: return "str";
    case Kind::kList: return v.is_tuple ? "tuple" : "list";
    case Kind::kDict: return v.is_namespace ? "Namespace" : "dict";
    case Kind::kFunction: return "function";
  }
  return "object";
}

std::vector<uint32_t> DecodeUtf8(std::string_view s) {
  std::vector<uint32_t> out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    unsigned char c = s[i];
    uint32_t cp;
    size_t n;
    if (c < 0x80) {
      cp = c;
      n = 1;
    } else if ((c >> 5) == 6) {
      cp = c & 0x1f;
      n = 2;
    } else if ((c >> 4) == 14) {
      cp = c & 0x0f;
      n = 3;
    } else if ((c >> 3) == 30) {
      cp = c & 0x07;
      n = 4;
    } else {
      out.push_back(0xfffd);  // invalid lead byte
      ++i;
      continue;
    }
    if (i + n > s.size()) {
      out.push_back(0xfffd);
      break;
    }
    for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3f);
    out.push_back(cp);
    i += n;
  }
  return out;
}

void AppendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

std::string EncodeUtf8(const std::vector<uint32_t>& cps, size_t begin, size_t end) {
  std::string out;
  for (size_t i = begin; i < end; ++i) AppendUtf8(out, cps[i]);
  return out;
}

size_t CodePointLength(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xc0) != 0x80) ++n;
  return n;
}

bool IsPySpace(uint32_t cp) {
  return (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x20) || cp == 0x85 || cp == 0xa0 ||
         cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 ||
         cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

}  // namespace uaii::jinja
