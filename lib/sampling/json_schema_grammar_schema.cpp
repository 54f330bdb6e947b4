#include "sampling/json_schema_grammar_schema.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>
#include <set>
#include <unordered_map>

#include <simdjson.h>

#include "sampling/json_schema_grammar.h"
#include "util/json_writer.h"
#include "util/str_cat.h"

namespace uaii::sampling::json_schema {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;
using simdjson::dom::object;
using Limits = JsonSchemaLimits;
using uaii::JsonWriter;

// A duplicated key reads as its last value, kept at its first position (nlohmann::json's,
// and so llama.cpp's, reading of a JSON object).
std::optional<element> Find(object o, std::string_view key) {
  std::optional<element> found;
  for (auto field : o)
    if (field.key == key) found = field.value;
  return found;
}

std::vector<std::pair<std::string_view, element>> Fields(object o) {
  std::vector<std::pair<std::string_view, element>> out;
  std::unordered_map<std::string_view, size_t> index;
  for (auto field : o) {
    auto [it, fresh] = index.emplace(field.key, out.size());
    if (fresh) {
      out.emplace_back(field.key, field.value);
    } else {
      out[it->second].second = field.value;
    }
  }
  return out;
}

bool IsInteger(element e) { return e.type() == element_type::INT64 || e.type() == element_type::UINT64; }
bool IsNumber(element e) { return IsInteger(e) || e.type() == element_type::DOUBLE; }
bool IsTrue(element e) { return e.type() == element_type::BOOL && bool(e); }

// nlohmann::json's dump() of a double: the shortest round-trip digits, fixed-point for
// decimal exponents in [-4, 15), scientific otherwise (e+NN, at least two exponent digits).
void AppendDouble(double v, std::string& out) {
  if (std::signbit(v)) {
    out += '-';
    v = -v;
  }
  if (v == 0) {
    out += "0.0";
    return;
  }
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string_view sci(buf, res.ptr - buf);  // d[.ddd]e[+-]XX
  const size_t e_pos = sci.find('e');
  std::string digits(sci.substr(0, 1));
  if (e_pos > 1) digits += sci.substr(2, e_pos - 2);
  const int exp10 = std::atoi(std::string(sci.substr(e_pos + 1)).c_str());
  const int k = static_cast<int>(digits.size());
  const int n = exp10 + 1;  // the decimal point's position after the first digit
  if (k <= n && n <= 15) {
    out += digits + std::string(n - k, '0') + ".0";
  } else if (0 < n && n <= 15) {
    out += digits.substr(0, n) + "." + digits.substr(n);
  } else if (-4 < n && n <= 0) {
    out += "0." + std::string(-n, '0') + digits;
  } else {
    out += digits.substr(0, 1);
    if (k > 1) out += "." + digits.substr(1);
    char e[16];
    const int x = n - 1;
    std::snprintf(e, sizeof e, "e%c%02d", x < 0 ? '-' : '+', x < 0 ? -x : x);
    out += e;
  }
}

void AppendJson(element e, std::string& out) {
  switch (e.type()) {
    case element_type::OBJECT: {
      out += '{';
      bool first = true;
      for (auto& [k, v] : Fields(object(e))) {
        if (!first) out += ',';
        first = false;
        out += JsonQuote(k);
        out += ':';
        AppendJson(v, out);
      }
      out += '}';
      return;
    }
    case element_type::ARRAY: {
      out += '[';
      bool first = true;
      for (element v : simdjson::dom::array(e)) {
        if (!first) out += ',';
        first = false;
        AppendJson(v, out);
      }
      out += ']';
      return;
    }
    case element_type::STRING: out += JsonQuote(std::string_view(e)); return;
    case element_type::INT64: out += std::to_string(int64_t(e)); return;
    case element_type::UINT64: out += std::to_string(uint64_t(e)); return;
    case element_type::DOUBLE: AppendDouble(double(e), out); return;
    case element_type::BOOL: out += bool(e) ? "true" : "false"; return;
    case element_type::NULL_VALUE: out += "null"; return;
  }
}

std::string DumpJson(element e) {
  std::string out;
  AppendJson(e, out);
  return out;
}

class Builder {
 public:
  explicit Builder(element root, Document& doc) : root_(root), doc_(doc) {}

  NodePtr Build() {
    NodePtr node = BuildNode(root_, "#", 0, nullptr);
    for (Node* ref : pending_) ref->target = doc_.refs.at(ref->ref).get();
    RejectRefCycles();
    return node;
  }

 private:
  [[noreturn]] static void Fail(const std::string& path, std::string_view msg) {
    throw SchemaError(StrCat("JSON schema error at ", path, ": ", msg));
  }

  static int GetCount(object schema, std::string_view key, const std::string& path, int fallback) {
    std::optional<element> v = Find(schema, key);
    if (!v) return fallback;
    if (!IsInteger(*v) || (v->type() == element_type::INT64 && int64_t(*v) < 0))
      Fail(path, StrCat(key, " must be a non-negative integer"));
    if (v->type() == element_type::UINT64 || int64_t(*v) > Limits::kMaxRepetition)
      Fail(path, StrCat(key, " exceeds the limit of ", Limits::kMaxRepetition));
    return static_cast<int>(int64_t(*v));
  }

  // A fractional bound is rounded inwards, towards the integers it still admits.
  static int64_t GetBound(element v, std::string_view key, const std::string& path, bool round_up) {
    if (!IsNumber(v)) Fail(path, StrCat(key, " must be a number"));
    double d = v.type() == element_type::DOUBLE ? (round_up ? std::ceil(double(v)) : std::floor(double(v)))
               : v.type() == element_type::UINT64 ? static_cast<double>(uint64_t(v))
                                                  : static_cast<double>(int64_t(v));
    if (!(std::fabs(d) <= static_cast<double>(Limits::kMaxIntegerBound)))
      Fail(path, StrCat(key, " is beyond the limit of +-", Limits::kMaxIntegerBound));
    return v.type() == element_type::INT64 ? int64_t(v) : static_cast<int64_t>(d);
  }

  static StringFormat GetFormat(object schema, const std::string& path) {
    std::optional<element> v = Find(schema, "format");
    if (!v) return StringFormat::kNone;
    if (v->type() != element_type::STRING) Fail(path, "format must be a string");
    std::string_view f(*v);
    if (f == "date") return StringFormat::kDate;
    if (f == "time") return StringFormat::kTime;
    if (f == "date-time") return StringFormat::kDateTime;
    if (f == "uuid" || (f.size() == 5 && f.substr(0, 4) == "uuid" && f[4] >= '1' && f[4] <= '5'))
      return StringFormat::kUuid;
    return StringFormat::kNone;
  }

  // "#/a/b/0": object keys and array indexes, taken literally (no ~0 / ~1 or %-decoding).
  element ResolveRef(const std::string& ref, const std::string& path) {
    element target = root_;
    size_t pos = 2;  // past "#/"
    while (true) {
      const size_t slash = ref.find('/', pos);
      const std::string sel = ref.substr(pos, slash == std::string::npos ? std::string::npos : slash - pos);
      if (target.type() == element_type::OBJECT && Find(object(target), sel)) {
        target = *Find(object(target), sel);
      } else if (target.type() == element_type::ARRAY) {
        simdjson::dom::array arr(target);
        size_t idx = arr.size();
        try {
          idx = std::stoull(sel);
        } catch (const std::logic_error&) {
        }
        if (idx >= arr.size()) Fail(path, StrCat("cannot resolve $ref ", ref, ", ", sel, " is out of range"));
        target = arr.at(idx).value();
      } else {
        Fail(path, StrCat("cannot resolve $ref ", ref, ", ", sel, " not found"));
      }
      if (slash == std::string::npos) return target;
      pos = slash + 1;
    }
  }

  NodePtr BuildRef(element v, const std::string& path, int depth) {
    if (v.type() != element_type::STRING) Fail(path, "$ref must be a string");
    std::string ref{std::string_view(v)};
    if (ref.compare(0, 2, "#/") != 0)
      Fail(path, StrCat("unsupported $ref ", ref, ", only references into the same document (\"#/...\") are supported"));
    if (doc_.refs.find(ref) == doc_.refs.end()) {
      doc_.refs[ref] = nullptr;  // reserved first: a cycle back to this $ref stops here
      NodePtr target = BuildNode(ResolveRef(ref, path), ref, depth + 1, nullptr);
      doc_.refs[ref] = std::move(target);
    }
    auto node = NewNode(Kind::kRef);
    node->ref = ref;
    pending_.push_back(node.get());
    return node;
  }

  NodePtr BuildAlternatives(Kind kind, element alts, const std::string& path, int depth) {
    if (alts.type() != element_type::ARRAY) Fail(path, "must be an array of schemas");
    simdjson::dom::array arr(alts);
    if (arr.size() == 0) Fail(path, "must not be empty");
    auto node = NewNode(kind);
    size_t i = 0;
    for (element alt : arr) node->children.push_back(BuildNode(alt, StrCat(path, "/", i++), depth + 1, nullptr));
    return node;
  }

  NodePtr BuildObject(object schema, const std::string& path, int depth) {
    auto node = NewNode(Kind::kObject);
    std::set<std::string_view> required;
    if (auto req = Find(schema, "required"); req && req->type() == element_type::ARRAY)
      for (element name : simdjson::dom::array(*req))
        if (name.type() == element_type::STRING) required.insert(std::string_view(name));
    auto props = Find(schema, "properties");
    if (props) {
      if (props->type() != element_type::OBJECT) Fail(path, "properties must be an object");
      for (auto& [name, prop] : Fields(object(*props)))
        node->properties.push_back(
            {std::string(name), BuildNode(prop, StrCat(path, "/properties/", name), depth + 1, nullptr), required.count(name) > 0});
    }
    if (auto add = Find(schema, "additionalProperties")) {
      if (add->type() == element_type::BOOL) {
        if (bool(*add)) node->additional = NewNode(Kind::kAny);
      } else if (add->type() == element_type::OBJECT) {
        node->additional = BuildNode(*add, path + "/additionalProperties", depth + 1, nullptr);
      } else {
        Fail(path, "additionalProperties must be a boolean or a schema");
      }
    } else if (!props) {
      node->additional = NewNode(Kind::kAny);  // {"type": "object"} alone accepts any object
    }
    return node;
  }

  NodePtr BuildArray(object schema, const std::string& path, int depth) {
    auto node = NewNode(Kind::kArray);
    // "items" wins over "prefixItems"; a list is a tuple, a schema the item schema.
    std::optional<element> items = Find(schema, "items");
    std::string key = "items";
    if (!items) {
      items = Find(schema, "prefixItems");
      key = "prefixItems";
    }
    if (items) {
      if (items->type() == element_type::ARRAY) {
        auto tuple = NewNode(Kind::kTuple);
        size_t i = 0;
        for (element item : simdjson::dom::array(*items))
          tuple->children.push_back(BuildNode(item, StrCat(path, "/", key, "/", i++), depth + 1, nullptr));
        return tuple;
      }
      node->items = BuildNode(*items, StrCat(path, "/", key), depth + 1, nullptr);
    } else {
      node->items = NewNode(Kind::kAny);
    }
    node->min_items = GetCount(schema, "minItems", path, 0);
    node->max_items = GetCount(schema, "maxItems", path, -1);
    return node;
  }

  NodePtr BuildString(object schema, const std::string& path) {
    auto node = NewNode(Kind::kString);
    if (auto p = Find(schema, "pattern")) {
      if (p->type() != element_type::STRING) Fail(path, "pattern must be a string");
      node->pattern = std::string(std::string_view(*p));
    }
    node->format = GetFormat(schema, path);
    node->min_length = GetCount(schema, "minLength", path, 0);
    node->max_length = GetCount(schema, "maxLength", path, -1);
    return node;
  }

  NodePtr BuildInteger(object schema, const std::string& path) {
    auto node = NewNode(Kind::kInteger);
    if (auto v = Find(schema, "minimum")) {
      node->minimum = GetBound(*v, "minimum", path, /*round_up=*/true);
    } else if (auto x = Find(schema, "exclusiveMinimum")) {
      node->minimum = GetBound(*x, "exclusiveMinimum", path, /*round_up=*/false) + 1;
    }
    if (auto v = Find(schema, "maximum")) {
      node->maximum = GetBound(*v, "maximum", path, /*round_up=*/false);
    } else if (auto x = Find(schema, "exclusiveMaximum")) {
      node->maximum = GetBound(*x, "exclusiveMaximum", path, /*round_up=*/true) - 1;
    }
    return node;
  }

  // `type_override`: the one type of a {"type": [...]} alternative, in place of the schema's own.
  NodePtr BuildNode(element e, const std::string& path, int depth, const element* type_override) {
    if (depth > Limits::kMaxDepth) Fail(path, StrCat("schemas nest deeper than the limit of ", Limits::kMaxDepth));
    if (e.type() != element_type::OBJECT) Fail(path, "schema must be an object");
    object schema(e);
    if (auto ref = Find(schema, "$ref")) return BuildRef(*ref, path, depth);
    for (const char* key : {"oneOf", "anyOf"})
      if (auto alts = Find(schema, key)) return BuildAlternatives(Kind::kAnyOf, *alts, StrCat(path, "/", key), depth);

    std::optional<element> type = type_override ? std::optional<element>(*type_override) : Find(schema, "type");
    if (type && type->type() == element_type::NULL_VALUE) type.reset();
    if (type && type->type() == element_type::ARRAY) {
      // {"type": ["a", "b"], ...} is {"anyOf": [{"type": "a", ...}, {"type": "b", ...}]}
      simdjson::dom::array types(*type);
      if (types.size() == 0) Fail(path, "type must not be empty");
      auto node = NewNode(Kind::kAnyOf);
      size_t i = 0;
      for (element t : types) node->children.push_back(BuildNode(e, StrCat(path, "/type/", i++), depth + 1, &t));
      return node;
    }
    if (auto c = Find(schema, "const")) {
      auto node = NewNode(Kind::kConst);
      node->values.push_back(DumpJson(*c));
      return node;
    }
    if (auto values = Find(schema, "enum")) {
      if (values->type() != element_type::ARRAY || simdjson::dom::array(*values).size() == 0)
        Fail(path, "enum must be a non-empty array");
      auto node = NewNode(Kind::kEnum);
      for (element v : simdjson::dom::array(*values)) node->values.push_back(DumpJson(v));
      return node;
    }
    if (type && type->type() != element_type::STRING) Fail(path, "type must be a string or an array of strings");

    const std::string_view type_name = type ? std::string_view(*type) : std::string_view();
    auto additional = Find(schema, "additionalProperties");
    const bool has_properties = Find(schema, "properties") || (additional && !IsTrue(*additional));
    auto all_of = Find(schema, "allOf");

    if (type_name.empty()) {  // without a type the structural keywords decide, in llama.cpp's order
      if (has_properties) return BuildObject(schema, path, depth);
      if (all_of) return BuildAlternatives(Kind::kAllOf, *all_of, path + "/allOf", depth);
      if (Find(schema, "items") || Find(schema, "prefixItems")) return BuildArray(schema, path, depth);
      if (Find(schema, "pattern") || Find(schema, "minLength") || Find(schema, "maxLength") ||
          GetFormat(schema, path) != StringFormat::kNone)
        return BuildString(schema, path);
      return NewNode(Kind::kAny);
    }
    if (type_name == "object") {
      if (!has_properties && all_of) return BuildAlternatives(Kind::kAllOf, *all_of, path + "/allOf", depth);
      return BuildObject(schema, path, depth);
    }
    if (type_name == "string") {
      if (all_of) return BuildAlternatives(Kind::kAllOf, *all_of, path + "/allOf", depth);
      return BuildString(schema, path);
    }
    if (type_name == "array") return BuildArray(schema, path, depth);
    if (type_name == "integer") return BuildInteger(schema, path);
    if (type_name == "number") return NewNode(Kind::kNumber);
    if (type_name == "boolean") return NewNode(Kind::kBoolean);
    if (type_name == "null") return NewNode(Kind::kNull);
    Fail(path, StrCat("unrecognized type ", type_name));
  }

  NodePtr NewNode(Kind kind) {
    if (++n_nodes_ > Limits::kMaxNodes) throw SchemaError(StrCat("JSON schema has more than the limit of ", Limits::kMaxNodes, " schemas"));
    auto node = std::make_unique<Node>();
    node->kind = kind;
    return node;
  }

  // A $ref whose target is a $ref whose target is ... back to the first names no schema:
  // llama.cpp would recurse without end (allOf) or build a left-recursive grammar.
  void RejectRefCycles() const {
    for (const auto& [ref, target] : doc_.refs) {
      const Node* n = target.get();
      for (size_t steps = 0; n && n->kind == Kind::kRef; ++steps) {
        if (steps > doc_.refs.size()) throw SchemaError(StrCat("JSON schema error at ", ref, ": $ref cycle with no schema in it"));
        n = n->target;
      }
    }
  }

  element root_;
  Document& doc_;
  std::vector<Node*> pending_;  // ref nodes, given their target once every $ref is built
  size_t n_nodes_ = 0;
};

}  // namespace

std::string JsonQuote(std::string_view s) {
  std::string out;
  JsonWriter::AppendEscaped(out, s);  // nlohmann's escapes for valid UTF-8 (simdjson checked it)
  return out;
}

Document ParseSchema(std::string_view json_text) {
  if (json_text.size() > Limits::kMaxSchemaBytes)
    throw SchemaError(StrCat("JSON schema of ", json_text.size(), " bytes exceeds the limit of ", Limits::kMaxSchemaBytes));
  simdjson::dom::parser parser;
  simdjson::padded_string padded(json_text);
  element root;
  if (auto err = parser.parse(padded).get(root); err != simdjson::SUCCESS)
    throw SchemaError(StrCat("invalid JSON in the schema: ", simdjson::error_message(err)));
  Document doc;
  try {
    doc.root = Builder(root, doc).Build();
  } catch (const simdjson::simdjson_error& e) {  // a value of an unexpected type read somewhere unchecked
    throw SchemaError(StrCat("JSON schema error: ", e.what()));
  }
  return doc;
}

}  // namespace uaii::sampling::json_schema
