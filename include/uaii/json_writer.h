// uaii::JsonWriter: a small streaming JSON writer for every `--json` output and the C ABI's
// JSON documents (simdjson only parses).
// Strings are escaped per RFC 8259; invalid UTF-8 bytes become U+FFFD so the output
// is always valid JSON. Doubles use the shortest round-trip form; NaN/Inf become null.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace uaii {

class JsonWriter {
 public:
  explicit JsonWriter(int indent = 0) : indent_(indent) {}

  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  JsonWriter& Key(std::string_view k);
  JsonWriter& String(std::string_view s);
  JsonWriter& Int(int64_t v);
  JsonWriter& Uint(uint64_t v);
  JsonWriter& Double(double v);
  JsonWriter& Bool(bool v);
  JsonWriter& Null();
  // Inserts an already serialized JSON value verbatim.
  JsonWriter& Raw(std::string_view json);

  const std::string& str() const { return out_; }

  static void AppendEscaped(std::string& out, std::string_view s);

 private:
  void BeforeValue();
  void Newline();
  std::string out_;
  struct Level { bool is_object; bool empty; };
  std::vector<Level> stack_;
  bool after_key_ = false;
  int indent_;
};

}  // namespace uaii
