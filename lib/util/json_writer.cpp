#include "util/json_writer.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace uaii {

void JsonWriter::Newline() {
  if (indent_ <= 0) return;
  out_.push_back('\n');
  out_.append(stack_.size() * indent_, ' ');
}

void JsonWriter::BeforeValue() {
  if (after_key_) { after_key_ = false; return; }
  if (stack_.empty()) return;
  if (!stack_.back().empty) out_.push_back(',');
  stack_.back().empty = false;
  Newline();
}

JsonWriter& JsonWriter::BeginObject() { BeforeValue(); out_.push_back('{'); stack_.push_back({true, true}); return *this; }
JsonWriter& JsonWriter::BeginArray() { BeforeValue(); out_.push_back('['); stack_.push_back({false, true}); return *this; }

JsonWriter& JsonWriter::EndObject() {
  bool empty = stack_.back().empty;
  stack_.pop_back();
  if (!empty) Newline();
  out_.push_back('}');
  return *this;
}

JsonWriter& JsonWriter::EndArray() {
  bool empty = stack_.back().empty;
  stack_.pop_back();
  if (!empty) Newline();
  out_.push_back(']');
  return *this;
}

JsonWriter& JsonWriter::Key(std::string_view k) {
  BeforeValue();
  AppendEscaped(out_, k);
  out_.append(indent_ > 0 ? ": " : ":");
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::String(std::string_view s) { BeforeValue(); AppendEscaped(out_, s); return *this; }
JsonWriter& JsonWriter::Int(int64_t v) { BeforeValue(); out_.append(std::to_string(v)); return *this; }
JsonWriter& JsonWriter::Uint(uint64_t v) { BeforeValue(); out_.append(std::to_string(v)); return *this; }
JsonWriter& JsonWriter::Bool(bool v) { BeforeValue(); out_.append(v ? "true" : "false"); return *this; }
JsonWriter& JsonWriter::Null() { BeforeValue(); out_.append("null"); return *this; }
JsonWriter& JsonWriter::Raw(std::string_view json) { BeforeValue(); out_.append(json); return *this; }

JsonWriter& JsonWriter::Double(double v) {
  BeforeValue();
  if (!std::isfinite(v)) { out_.append("null"); return *this; }
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out_.append(buf, r.ptr);
  return *this;
}

// Length of the valid UTF-8 sequence at s[i], or 0 when it is invalid.
static size_t Utf8SequenceLength(std::string_view s, size_t i) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((b(i + k) & 0xC0) != 0x80) return 0;
  if (n == 2 && c < 0xC2) return 0;                              // overlong
  if (n == 3) {
    unsigned cp = ((c & 0x0F) << 12) | ((b(i + 1) & 0x3F) << 6) | (b(i + 2) & 0x3F);
    if (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;  // overlong / surrogate
  }
  if (n == 4) {
    unsigned cp = ((c & 0x07) << 18) | ((b(i + 1) & 0x3F) << 12) | ((b(i + 2) & 0x3F) << 6) | (b(i + 3) & 0x3F);
    if (cp < 0x10000 || cp > 0x10FFFF) return 0;
  }
  return n;
}

void JsonWriter::AppendEscaped(std::string& out, std::string_view s) {
  out.push_back('"');
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      size_t n = Utf8SequenceLength(s, i);
      if (n == 0) { out.append("\xEF\xBF\xBD"); ++i; continue; }
      out.append(s.substr(i, n));
      i += n;
      continue;
    }
    switch (c) {
      case '"': out.append("\\\""); break;
      case '\\': out.append("\\\\"); break;
      case '\n': out.append("\\n"); break;
      case '\r': out.append("\\r"); break;
      case '\t': out.append("\\t"); break;
      case '\b': out.append("\\b"); break;
      case '\f': out.append("\\f"); break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out.append(buf);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
    ++i;
  }
  out.push_back('"');
}

}  // namespace uaii
