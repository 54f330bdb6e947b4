#include "chat/json.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "chat/error.h"
#include "chat/interpreter.h"
#include "simdjson.h"

namespace uaii::jinja {
namespace {

Value FromElement(simdjson::dom::element e) {
  using T = simdjson::dom::element_type;
  switch (e.type()) {
    case T::ARRAY: {
      List items;
      for (simdjson::dom::element x : e.get_array()) items.push_back(FromElement(x));
      return Value::MakeList(std::move(items));
    }
    case T::OBJECT: {
      Value d = Value::MakeDict();
      for (auto field : e.get_object()) d.dict->Set(Value::String(std::string(field.key)), FromElement(field.value));
      return d;
    }
    case T::INT64: return Value::Int(int64_t(e));
    case T::UINT64: return Value::Float(static_cast<double>(uint64_t(e)));
    case T::DOUBLE: return Value::Float(double(e));
    case T::STRING: return Value::String(std::string(std::string_view(e)));
    case T::BOOL: return Value::Bool(bool(e));
    case T::NULL_VALUE: return Value::None();
  }
  return Value::None();
}

void DumpString(const std::string& s, bool ensure_ascii, std::string& out) {
  out += '"';
  for (uint32_t cp : DecodeUtf8(s)) {
    char buf[16];
    switch (cp) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      case '\b': out += "\\b"; continue;
      case '\f': out += "\\f"; continue;
      default: break;
    }
    if (cp < 0x20) {
      std::snprintf(buf, sizeof buf, "\\u%04x", cp);
      out += buf;
    } else if (ensure_ascii && cp > 0x7e) {
      if (cp >= 0x10000) {
        uint32_t v = cp - 0x10000;
        std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", 0xd800 + (v >> 10), 0xdc00 + (v & 0x3ff));
      } else {
        std::snprintf(buf, sizeof buf, "\\u%04x", cp);
      }
      out += buf;
    } else {
      AppendUtf8(out, cp);
    }
  }
  out += '"';
}

std::string FloatJson(double f) {
  if (std::isnan(f)) return "NaN";
  if (std::isinf(f)) return f > 0 ? "Infinity" : "-Infinity";
  return FloatRepr(f);
}

class Dumper {
 public:
  explicit Dumper(const JsonDumpOptions& o) : o_(o) {
    item_sep_ = o.item_sep ? *o.item_sep : (o.indent ? "," : ", ");
    key_sep_ = o.key_sep ? *o.key_sep : ": ";
  }

  void Dump(const Value& v, int level, std::string& out) {
    if (level > 512) throw JinjaError("ValueError", "Circular reference detected");
    switch (v.kind) {
      case Kind::kNone: out += "null"; return;
      case Kind::kBool: out += v.num.b ? "true" : "false"; return;
      case Kind::kInt: out += std::to_string(v.num.i); return;
      case Kind::kFloat: out += FloatJson(v.num.f); return;
      case Kind::kString: DumpString(v.str, o_.ensure_ascii, out); return;
      case Kind::kList: {
        if (v.list->empty()) {
          out += "[]";
          return;
        }
        out += '[';
        for (size_t i = 0; i < v.list->size(); ++i) {
          out += i ? item_sep_ : "";
          Newline(level + 1, out);
          Dump((*v.list)[i], level + 1, out);
        }
        Newline(level, out);
        out += ']';
        return;
      }
      case Kind::kDict: {
        if (v.is_namespace) break;
        if (v.dict->items.empty()) {
          out += "{}";
          return;
        }
        std::vector<std::pair<std::string, const Value*>> items;
        for (const auto& [k, val] : v.dict->items) items.emplace_back(KeyString(k), &val);
        if (o_.sort_keys)
          std::stable_sort(items.begin(), items.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        out += '{';
        for (size_t i = 0; i < items.size(); ++i) {
          out += i ? item_sep_ : "";
          Newline(level + 1, out);
          DumpString(items[i].first, o_.ensure_ascii, out);
          out += key_sep_;
          Dump(*items[i].second, level + 1, out);
        }
        Newline(level, out);
        out += '}';
        return;
      }
      default: break;
    }
    RaiseType("Object of type " + TypeName(v) + " is not JSON serializable");
  }

 private:
  static std::string KeyString(const Value& k) {
    switch (k.kind) {
      case Kind::kString: return k.str;
      case Kind::kNone: return "null";
      case Kind::kBool: return k.num.b ? "true" : "false";
      case Kind::kInt: return std::to_string(k.num.i);
      case Kind::kFloat: return FloatJson(k.num.f);
      default: RaiseType("keys must be str, int, float, bool or None, not " + TypeName(k));
    }
  }
  void Newline(int level, std::string& out) const {
    if (!o_.indent) return;
    out += '\n';
    for (int i = 0; i < level; ++i) out += *o_.indent;
  }

  const JsonDumpOptions& o_;
  std::string item_sep_, key_sep_;
};

// simdjson refuses integers beyond 64 bits (tokenizer_config.json's
// model_max_length is often 1000000000000000019884624838656); Python reads them as
// ints. Such literals (outside strings) get a ".0" so they load as floats.
std::string WidenHugeIntegers(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 16);
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) out += text[++i];
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
      out += c;
      continue;
    }
    if ((c >= '0' && c <= '9') || c == '-') {
      size_t j = i + (c == '-');
      while (j < text.size() && text[j] >= '0' && text[j] <= '9') ++j;
      bool plain_int = j == text.size() || (text[j] != '.' && text[j] != 'e' && text[j] != 'E');
      out.append(text.substr(i, j - i));
      if (plain_int && j - i > 18) out += ".0";
      i = j - 1;
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

absl::StatusOr<Value> ParseJson(std::string_view text, std::string_view what) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded(text);
  simdjson::dom::element root;
  auto err = parser.parse(padded).get(root);
  std::string widened;
  if (err == simdjson::NUMBER_OUT_OF_RANGE || err == simdjson::NUMBER_ERROR) {
    widened = WidenHugeIntegers(text);
    padded = simdjson::padded_string(widened);
    err = parser.parse(padded).get(root);
  }
  if (err) return absl::InvalidArgumentError(absl::StrCat(std::string(what), ": invalid JSON: ", std::string(simdjson::error_message(err))));
  return FromElement(root);
}

std::string JsonDump(const Value& v, const JsonDumpOptions& opts) {
  std::string out;
  Dumper(opts).Dump(v, 0, out);
  return out;
}

}  // namespace uaii::jinja
