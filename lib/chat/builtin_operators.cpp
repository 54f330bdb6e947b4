// Python's binary operators, `in`, slicing and string formatting on jinja values.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "chat/error.h"
#include "chat/interpreter.h"

namespace uaii::jinja {
namespace {

[[noreturn]] void Unsupported(const std::string& op, const Value& a, const Value& b) {
  RaiseType("unsupported operand type(s) for " + op + ": '" + TypeName(a) + "' and '" + TypeName(b) + "'");
}

// 64-bit arithmetic; Python's ints are unbounded, so overflow is an error here.
int64_t Checked(bool (*op)(int64_t, int64_t, int64_t*), int64_t a, int64_t b) {
  int64_t r = 0;
  if (op(a, b, &r)) throw JinjaError("OverflowError", "integer result does not fit in 64 bits");
  return r;
}
bool Add(int64_t a, int64_t b, int64_t* r) { return __builtin_add_overflow(a, b, r); }
bool Sub(int64_t a, int64_t b, int64_t* r) { return __builtin_sub_overflow(a, b, r); }
bool Mul(int64_t a, int64_t b, int64_t* r) { return __builtin_mul_overflow(a, b, r); }

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

Value Repeat(const Value& seq, int64_t n) {
  if (seq.is_string()) {
    std::string out;
    for (int64_t i = 0; i < n; ++i) out += seq.str;
    return Value::String(std::move(out));
  }
  List out;
  for (int64_t i = 0; i < n; ++i) out.insert(out.end(), seq.list->begin(), seq.list->end());
  Value v = Value::MakeList(std::move(out));
  v.is_tuple = seq.is_tuple;
  return v;
}

}  // namespace

Value BinaryOp(const std::string& op, const Value& a, const Value& b) {
  bool nums = a.is_number() && b.is_number();
  bool flt = nums && (a.kind == Kind::kFloat || b.kind == Kind::kFloat);
  if (op == "+") {
    if (nums) {
      if (flt) return Value::Float(a.as_double() + b.as_double());
      return Value::Int(Checked(Add, a.as_int(), b.as_int()));
    }
    if (a.is_string() && b.is_string()) return Value::String(a.str + b.str);
    if (a.is_list() && b.is_list() && a.is_tuple == b.is_tuple) {
      List out = *a.list;
      out.insert(out.end(), b.list->begin(), b.list->end());
      Value v = Value::MakeList(std::move(out));
      v.is_tuple = a.is_tuple;
      return v;
    }
    if (a.is_string()) RaiseType("can only concatenate str (not \"" + TypeName(b) + "\") to str");
    if (a.is_list()) RaiseType("can only concatenate " + TypeName(a) + " (not \"" + TypeName(b) + "\") to " + TypeName(a));
    Unsupported("+", a, b);
  }
  if (op == "-") {
    if (!nums) Unsupported("-", a, b);
    if (flt) return Value::Float(a.as_double() - b.as_double());
    return Value::Int(Checked(Sub, a.as_int(), b.as_int()));
  }
  if (op == "*") {
    if (nums) {
      if (flt) return Value::Float(a.as_double() * b.as_double());
      return Value::Int(Checked(Mul, a.as_int(), b.as_int()));
    }
    if ((a.is_string() || a.is_list()) && b.is_integer()) return Repeat(a, b.as_int());
    if ((b.is_string() || b.is_list()) && a.is_integer()) return Repeat(b, a.as_int());
    if (a.is_string() || b.is_string() || a.is_list() || b.is_list())
      RaiseType("can't multiply sequence by non-int of type '" + TypeName(a.is_string() || a.is_list() ? b : a) + "'");
    Unsupported("*", a, b);
  }
  if (op == "/") {
    if (!nums) Unsupported("/", a, b);
    if (b.as_double() == 0.0) throw JinjaError("ZeroDivisionError", flt ? "float division by zero" : "division by zero");
    return Value::Float(a.as_double() / b.as_double());
  }
  if (op == "//") {
    if (!nums) Unsupported("//", a, b);
    if (b.as_double() == 0.0)
      throw JinjaError("ZeroDivisionError", flt ? "float floor division by zero" : "integer division or modulo by zero");
    if (flt) return Value::Float(std::floor(a.as_double() / b.as_double()));
    return Value::Int(FloorDiv(a.as_int(), b.as_int()));
  }
  if (op == "%") {
    if (a.is_string()) return Value::String(PercentFormat(a.str, b));
    if (!nums) Unsupported("%", a, b);
    if (b.as_double() == 0.0)
      throw JinjaError("ZeroDivisionError", flt ? "float modulo" : "integer division or modulo by zero");
    if (flt) {
      double x = a.as_double(), y = b.as_double();
      double m = std::fmod(x, y);
      if (m != 0 && ((m < 0) != (y < 0))) m += y;
      return Value::Float(m);
    }
    int64_t x = a.as_int(), y = b.as_int();
    return Value::Int(x - FloorDiv(x, y) * y);
  }
  if (op == "**") {
    if (!nums) Unsupported("** or pow()", a, b);
    if (!flt && b.as_int() >= 0) {
      int64_t base = a.as_int(), acc = 1;
      for (int64_t e = b.as_int(); e > 0; --e) {
        if (__builtin_mul_overflow(acc, base, &acc)) throw JinjaError("OverflowError", "integer result does not fit in 64 bits");
        if (acc == 0 || acc == 1) break;
      }
      return Value::Int(acc);
    }
    return Value::Float(std::pow(a.as_double(), b.as_double()));
  }
  RaiseType("unknown operator " + op);
}

bool Contains(const Value& c, const Value& item) {
  switch (c.kind) {
    case Kind::kString:
      if (!item.is_string()) RaiseType("'in <string>' requires string as left operand, not " + TypeName(item));
      return c.str.find(item.str) != std::string::npos;
    case Kind::kList:
      for (const Value& v : *c.list)
        if (Equal(v, item)) return true;
      return false;
    case Kind::kDict: return c.dict->Find(item) != nullptr;
    case Kind::kUndefined: return false;
    default: RaiseType("argument of type '" + TypeName(c) + "' is not iterable");
  }
}

Value Slice(const Value& obj, const Value& start_v, const Value& stop_v, const Value& step_v) {
  auto idx = [](const Value& v, const char* what) -> std::optional<int64_t> {
    if (v.is_none()) return std::nullopt;
    if (!v.is_integer()) RaiseType("slice indices must be integers or None or have an __index__ method");
    return v.as_int();
  };
  std::optional<int64_t> o_start = idx(start_v, "start"), o_stop = idx(stop_v, "stop"), o_step = idx(step_v, "step");
  int64_t step = o_step.value_or(1);
  if (step == 0) throw JinjaError("ValueError", "slice step cannot be zero");
  std::vector<uint32_t> cps;
  int64_t n;
  if (obj.is_string()) {
    cps = DecodeUtf8(obj.str);
    n = static_cast<int64_t>(cps.size());
  } else if (obj.is_list()) {
    n = static_cast<int64_t>(obj.list->size());
  } else {
    RaiseType("'" + TypeName(obj) + "' object is not subscriptable");
  }
  // Python's PySlice_AdjustIndices.
  auto adjust = [&](std::optional<int64_t> v, int64_t def) {
    if (!v) return def;
    int64_t x = *v;
    if (x < 0) {
      x += n;
      if (x < 0) x = step < 0 ? -1 : 0;
    } else if (x >= n) {
      x = step < 0 ? n - 1 : n;
    }
    return x;
  };
  int64_t start = adjust(o_start, step < 0 ? n - 1 : 0);
  int64_t stop = adjust(o_stop, step < 0 ? -1 : n);
  std::vector<int64_t> picks;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) picks.push_back(i);
  if (obj.is_string()) {
    std::string out;
    for (int64_t i : picks) AppendUtf8(out, cps[i]);
    return Value::String(std::move(out));
  }
  List out;
  for (int64_t i : picks) out.push_back((*obj.list)[i]);
  Value v = Value::MakeList(std::move(out));
  v.is_tuple = obj.is_tuple;
  return v;
}

namespace {

// One conversion of printf-style or format-spec formatting on a number/string.
std::string FormatNumber(const Value& v, char type, int precision, bool plus) {
  char buf[512];
  if (type == 'd' || type == 'i') {
    if (!v.is_number()) RaiseType("%d format: a real number is required, not " + TypeName(v));
    int64_t x = v.kind == Kind::kFloat ? static_cast<int64_t>(std::trunc(v.num.f)) : v.as_int();
    std::snprintf(buf, sizeof buf, plus ? "%+lld" : "%lld", static_cast<long long>(x));
    return buf;
  }
  if (!v.is_number()) RaiseType("must be real number, not " + TypeName(v));
  std::string f = std::string("%") + (plus ? "+" : "") + "." + std::to_string(precision < 0 ? 6 : precision) + type;
  std::snprintf(buf, sizeof buf, f.c_str(), v.as_double());
  return buf;
}

std::string Pad(std::string s, char align, char fill, size_t width) {
  size_t len = CodePointLength(s);
  if (len >= width) return s;
  size_t pad = width - len;
  std::string f(1, fill);
  auto rep = [&](size_t k) {
    std::string o;
    for (size_t i = 0; i < k; ++i) o += f;
    return o;
  };
  if (align == '<') return s + rep(pad);
  if (align == '^') return rep(pad / 2) + s + rep(pad - pad / 2);
  return rep(pad) + s;
}

}  // namespace

std::string PercentFormat(const std::string& fmt, const Value& args) {
  std::vector<Value> items;
  const Dict* mapping = nullptr;
  if (args.is_list() && args.is_tuple) items = *args.list;
  else if (args.is_dict()) mapping = args.dict.get();
  else items.push_back(args);
  size_t next = 0;
  std::string out;
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%') {
      out += fmt[i];
      continue;
    }
    if (++i >= fmt.size()) throw JinjaError("ValueError", "incomplete format");
    const Value* arg = nullptr;
    if (fmt[i] == '(') {
      size_t close = fmt.find(')', i);
      if (close == std::string::npos || !mapping) throw JinjaError("ValueError", "incomplete format key");
      arg = mapping->Find(std::string_view(fmt).substr(i + 1, close - i - 1));
      if (!arg) throw JinjaError("KeyError", "'" + fmt.substr(i + 1, close - i - 1) + "'");
      i = close + 1;
    }
    bool minus = false, plus = false, zero = false;
    for (; i < fmt.size() && (fmt[i] == '-' || fmt[i] == '+' || fmt[i] == '0' || fmt[i] == ' '); ++i) {
      minus |= fmt[i] == '-';
      plus |= fmt[i] == '+';
      zero |= fmt[i] == '0';
    }
    size_t width = 0;
    for (; i < fmt.size() && std::isdigit(static_cast<unsigned char>(fmt[i])); ++i) width = width * 10 + (fmt[i] - '0');
    int precision = -1;
    if (i < fmt.size() && fmt[i] == '.') {
      precision = 0;
      for (++i; i < fmt.size() && std::isdigit(static_cast<unsigned char>(fmt[i])); ++i) precision = precision * 10 + (fmt[i] - '0');
    }
    if (i >= fmt.size()) throw JinjaError("ValueError", "incomplete format");
    char type = fmt[i];
    if (type == '%') {
      out += '%';
      continue;
    }
    if (!arg) {
      if (next >= items.size()) RaiseType("not enough arguments for format string");
      arg = &items[next++];
    }
    std::string piece;
    switch (type) {
      case 's': piece = Str(*arg); break;
      case 'r': piece = Repr(*arg); break;
      case 'd':
      case 'i': piece = FormatNumber(*arg, 'd', -1, plus); break;
      case 'f':
      case 'F':
      case 'e':
      case 'g': piece = FormatNumber(*arg, type, precision, plus); break;
      default: throw JinjaError("ValueError", std::string("unsupported format character '") + type + "'");
    }
    if (precision >= 0 && type == 's') piece = piece.substr(0, precision);
    out += Pad(piece, minus ? '<' : '>', zero && !minus && type != 's' ? '0' : ' ', width);
  }
  if (!mapping && next < items.size()) RaiseType("not all arguments converted during string formatting");
  return out;
}

std::string PyFormat(const std::string& fmt, const CallArgs& args) {
  std::string out;
  size_t auto_index = 0;
  for (size_t i = 0; i < fmt.size(); ++i) {
    char c = fmt[i];
    if (c == '}') {
      if (i + 1 < fmt.size() && fmt[i + 1] == '}') ++i;
      else if (true) throw JinjaError("ValueError", "Single '}' encountered in format string");
      out += '}';
      continue;
    }
    if (c != '{') {
      out += c;
      continue;
    }
    if (i + 1 < fmt.size() && fmt[i + 1] == '{') {
      out += '{';
      ++i;
      continue;
    }
    size_t close = fmt.find('}', i);
    if (close == std::string::npos) throw JinjaError("ValueError", "Single '{' encountered in format string");
    std::string field = fmt.substr(i + 1, close - i - 1);
    i = close;
    std::string spec, conv;
    if (size_t colon = field.find(':'); colon != std::string::npos) {
      spec = field.substr(colon + 1);
      field = field.substr(0, colon);
    }
    if (size_t bang = field.find('!'); bang != std::string::npos) {
      conv = field.substr(bang + 1);
      field = field.substr(0, bang);
    }
    const Value* v = nullptr;
    if (field.empty()) {
      if (auto_index >= args.args.size())
        throw JinjaError("IndexError", "Replacement index " + std::to_string(auto_index) + " out of range for positional args tuple");
      v = &args.args[auto_index++];
    } else if (std::isdigit(static_cast<unsigned char>(field[0]))) {
      // Python refuses an index beyond Py_ssize_t (std::stoul threw here: fuzz_jinja).
      int64_t k = 0;
      if (std::from_chars(field.data(), field.data() + field.size(), k).ec != std::errc())
        throw JinjaError("ValueError", "Too many decimal digits in format string");
      if (static_cast<uint64_t>(k) >= args.args.size())
        throw JinjaError("IndexError", "Replacement index " + field + " out of range for positional args tuple");
      v = &args.args[k];
    } else {
      for (const auto& [name, val] : args.kwargs)
        if (name == field) v = &val;
      if (!v) throw JinjaError("KeyError", "'" + field + "'");
    }
    std::string piece;
    // spec: [[fill]align][sign][0][width][.precision][type]
    char fill = ' ', align = 0, type = 0;
    bool plus = false;
    size_t p = 0, width = 0;
    int precision = -1;
    if (spec.size() >= 2 && (spec[1] == '<' || spec[1] == '>' || spec[1] == '^')) {
      fill = spec[0];
      align = spec[1];
      p = 2;
    } else if (!spec.empty() && (spec[0] == '<' || spec[0] == '>' || spec[0] == '^')) {
      align = spec[0];
      p = 1;
    }
    if (p < spec.size() && (spec[p] == '+' || spec[p] == '-')) plus = spec[p++] == '+';
    if (p < spec.size() && spec[p] == '0') {
      fill = '0';
      if (!align) align = '>';
      ++p;
    }
    for (; p < spec.size() && std::isdigit(static_cast<unsigned char>(spec[p])); ++p) width = width * 10 + (spec[p] - '0');
    if (p < spec.size() && spec[p] == '.') {
      precision = 0;
      for (++p; p < spec.size() && std::isdigit(static_cast<unsigned char>(spec[p])); ++p) precision = precision * 10 + (spec[p] - '0');
    }
    if (p < spec.size()) type = spec[p];
    if (conv == "r") piece = Repr(*v);
    else if (type == 'd' || type == 'f' || type == 'e' || type == 'g' || (type == 0 && precision >= 0 && v->is_number()))
      piece = FormatNumber(*v, type ? type : 'g', precision, plus);
    else {
      piece = Str(*v);
      if (precision >= 0 && v->is_string()) piece = piece.substr(0, precision);
    }
    if (!align) align = v->is_number() && conv.empty() ? '>' : '<';
    out += Pad(piece, align, fill, width);
  }
  return out;
}

}  // namespace uaii::jinja
