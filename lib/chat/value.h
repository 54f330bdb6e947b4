// A Jinja value with Python's data model: what a chat template sees when it reads
// `messages`, builds a list, or prints a number. Lists and dicts are shared by
// reference (as in Python), strings are UTF-8 and indexed by code point.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace uaii::jinja {

struct Value;
using List = std::vector<Value>;

// Insertion-ordered mapping (Python dict). Chat-template dicts are small, so the
// lookups are linear; keys may be any hashable value, almost always strings.
struct Dict {
  std::vector<std::pair<Value, Value>> items;
  const Value* Find(const Value& key) const;
  Value* Find(const Value& key);
  const Value* Find(std::string_view key) const;
  void Set(Value key, Value value);
  bool Erase(const Value& key);
};

class Interpreter;
struct CallArgs;
// A callable: global function, bound method, macro, `loop` or `caller`.
struct Function {
  std::string name;
  std::function<Value(Interpreter&, CallArgs&)> call;
};

enum class Kind : uint8_t { kUndefined, kNone, kBool, kInt, kFloat, kString, kList, kDict, kFunction };

struct Value {
  Kind kind = Kind::kUndefined;
  bool is_tuple = false;      // kList: a Python tuple (immutable, repr with parens)
  bool is_namespace = false;  // kDict: a jinja2 namespace() (attributes are assignable)
  bool is_safe = false;       // kString: came from |safe (only matters for printing nothing else)
  union {
    bool b;
    int64_t i;
    double f;
  } num{};
  std::string str;  // kString: the text; kUndefined: the message an access raises
  std::shared_ptr<List> list;
  std::shared_ptr<Dict> dict;
  std::shared_ptr<Function> fn;

  Value() = default;
  static Value Undefined(std::string message = {});
  static Value None();
  static Value Bool(bool v);
  static Value Int(int64_t v);
  static Value Float(double v);
  static Value String(std::string v);
  static Value MakeList(List items = {});
  static Value Tuple(List items);
  static Value MakeDict();
  static Value Namespace();
  static Value Func(std::string name, std::function<Value(Interpreter&, CallArgs&)> f);

  bool is_undefined() const { return kind == Kind::kUndefined; }
  bool is_none() const { return kind == Kind::kNone; }
  bool is_string() const { return kind == Kind::kString; }
  bool is_list() const { return kind == Kind::kList; }
  bool is_dict() const { return kind == Kind::kDict; }
  bool is_number() const { return kind == Kind::kInt || kind == Kind::kFloat || kind == Kind::kBool; }
  bool is_integer() const { return kind == Kind::kInt || kind == Kind::kBool; }
  double as_double() const;
  int64_t as_int() const;  // kBool/kInt (caller checked)
};

// Python truthiness.
bool Truthy(const Value& v);
// Python str(v) (Undefined prints empty, as jinja2's default Undefined does).
std::string Str(const Value& v);
// Python repr(v).
std::string Repr(const Value& v);
// Python repr of a float: shortest round-trip digits, "1.0", "1e+16", "inf", "nan".
std::string FloatRepr(double f);
// Python == (1 == 1.0 == True; dicts compare regardless of order).
bool Equal(const Value& a, const Value& b);
// Python <, or nullopt when the types are not orderable.
std::optional<bool> Less(const Value& a, const Value& b);
// Python's type name used in error messages ("str", "int", "list", "dict", "NoneType").
std::string TypeName(const Value& v);

// UTF-8 helpers: strings index and measure by code point, like Python.
std::vector<uint32_t> DecodeUtf8(std::string_view s);
void AppendUtf8(std::string& out, uint32_t cp);
std::string EncodeUtf8(const std::vector<uint32_t>& cps, size_t begin, size_t end);
size_t CodePointLength(std::string_view s);
// Python str.isspace for one code point.
bool IsPySpace(uint32_t cp);

}  // namespace uaii::jinja
