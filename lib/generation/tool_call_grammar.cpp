#include "generation/tool_call_grammar.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_join.h"
#include "chat/tool_call_gemma4.h"
#include "chat/value.h"
#include "sampling/json_schema_grammar.h"
#include "simdjson.h"
#include "util/str_cat.h"
#include "uaii/json_writer.h"

namespace uaii {
namespace {

using chat::ToolCallSyntax;
using sampling::GbnfBuilder;

// A tool parameter as the XML and Gemma 4 forms need it.
struct Param {
  std::string name;
  std::string schema;  // its JSON Schema, compact
  std::string type;    // the schema's "type" when it is one string; else ""
  bool required = false;
};

struct Tool {
  std::string name;
  std::string parameters;  // the parameters' JSON Schema, compact ({"type":"object"} when absent)
  std::vector<Param> params;
};

#define ASSIGN_OR_RETURN(lhs, expr) \
  auto lhs##_or = (expr);                    \
  if (!lhs##_or.ok()) return lhs##_or.status(); \
  auto lhs = *std::move(lhs##_or)

absl::StatusOr<std::vector<Tool>> ReadTools(std::string_view tools_json) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  simdjson::dom::array list;
  if (parser.parse(tools_json.data(), tools_json.size()).get(doc) != simdjson::SUCCESS ||
      doc.get(list) != simdjson::SUCCESS)
    return absl::InvalidArgumentError("tools: not a JSON array");
  std::vector<Tool> tools;
  for (simdjson::dom::element entry : list) {
    simdjson::dom::element fn = entry;
    if (simdjson::dom::element f; entry.is_object() && entry["function"].get(f) == simdjson::SUCCESS) fn = f;
    std::string_view name;
    if (!fn.is_object() || fn["name"].get(name) != simdjson::SUCCESS || name.empty())
      return absl::InvalidArgumentError(StrCat("tools[", tools.size(), "]: a function needs a 'name' string"));
    Tool tool{std::string(name), "{\"type\":\"object\"}", {}};
    simdjson::dom::element params;
    if (fn["parameters"].get(params) == simdjson::SUCCESS && params.is_object()) {
      tool.parameters = simdjson::minify(params);
      std::vector<std::string_view> required;
      if (simdjson::dom::array req; params["required"].get(req) == simdjson::SUCCESS)
        for (simdjson::dom::element r : req)
          if (r.is_string()) required.push_back(r.get_string().value_unsafe());
      if (simdjson::dom::object props; params["properties"].get(props) == simdjson::SUCCESS) {
        for (auto [key, schema] : props) {
          Param p{std::string(key), simdjson::minify(schema), "", false};
          std::string_view type;
          if (schema.is_object() && schema["type"].get(type) == simdjson::SUCCESS) p.type = std::string(type);
          p.required = std::find(required.begin(), required.end(), key) != required.end();
          tool.params.push_back(std::move(p));
        }
      }
    }
    tools.push_back(std::move(tool));
  }
  return tools;
}

// One code point inside a GBNF character class.
std::string ClassChar(uint32_t c) {
  if (c >= 0x20 && c < 0x7F && c != '\\' && c != ']' && c != '[' && c != '-' && c != '^' && c != '"')
    return std::string(1, static_cast<char>(c));
  char buf[12];
  std::snprintf(buf, sizeof buf, "\\U%08X", c);
  return buf;
}

// A rule matching any text up to and including the first occurrence of `marker`: the
// states of the marker's KMP automaton (state k: the text's end matches the marker's first
// k characters), one rule each; a character moves to the next state by tail reference, so
// the matcher's stacks do not grow with the text.
absl::StatusOr<std::string> UntilRule(GbnfBuilder& g, const std::string& name, std::string_view marker) {
  const std::vector<uint32_t> m = jinja::DecodeUtf8(marker);  // GBNF matches code points
  const size_t n = m.size();
  std::vector<size_t> fail(n + 1, 0);  // longest proper border of m[0..k)
  for (size_t k = 2; k <= n; ++k) {
    size_t j = fail[k - 1];
    while (j > 0 && m[j] != m[k - 1]) j = fail[j];
    fail[k] = m[j] == m[k - 1] ? j + 1 : 0;
  }
  auto next = [&](size_t k, uint32_t c) {
    while (k > 0 && m[k] != c) k = fail[k];
    return m[k] == c ? k + 1 : 0;
  };
  std::vector<uint32_t> alphabet(m.begin(), m.end());
  std::sort(alphabet.begin(), alphabet.end());
  alphabet.erase(std::unique(alphabet.begin(), alphabet.end()), alphabet.end());
  // The states refer to each other, so their names are chosen before any is added: free
  // names ending "-K-" or "-K-N" (N digits), which no two states can share.
  std::vector<std::string> names(n);
  for (size_t k = 0; k < n; ++k) names[k] = g.FreeName(StrCat(name, "-", k, "-"));
  for (size_t k = 0; k < n; ++k) {
    std::string others = "[^", moves;  // characters back to state 0; those that go elsewhere
    for (uint32_t c : alphabet) {
      const size_t to = next(k, c);
      if (to == 0) continue;
      others += ClassChar(c);
      moves += StrCat(" | [", ClassChar(c), "]", to == n ? "" : " " + names[to]);
    }
    ASSIGN_OR_RETURN(added, g.AddRule(names[k], others + "] " + names[0] + moves));
    if (added != names[k]) return absl::InternalError(StrCat("tool-call grammar: rule ", names[k], " was taken"));
  }
  return names[0];
}

// `items` joined by `sep` where the optional ones (after the required ones, in order) may
// each be left out: the list the JSON converter writes for an object's properties.
std::string FieldList(const std::vector<std::string>& required, const std::vector<std::string>& optional,
                      const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < required.size(); ++i) out += (i ? " " + sep + " " : "") + required[i];
  if (!required.empty()) {
    for (const std::string& o : optional) out += " ( " + sep + " " + o + " )?";
    return out;
  }
  if (optional.empty()) return "";
  out = "(";
  for (size_t i = 0; i < optional.size(); ++i) {
    out += (i ? " | " : " ") + optional[i];
    for (size_t j = i + 1; j < optional.size(); ++j) out += " ( " + sep + " " + optional[j] + " )?";
  }
  return out + " )?";
}

std::string JsonKeyedCallSchema(const Tool& tool, std::string_view args_key) {
  JsonWriter w;
  w.BeginObject().Key("type").String("object").Key("properties").BeginObject();
  w.Key("name").BeginObject().Key("const").String(tool.name).EndObject();
  w.Key(args_key).Raw(tool.parameters).EndObject();
  w.Key("required").BeginArray().String("name").String(args_key).EndArray().EndObject();
  return w.str();
}

class Builder {
 public:
  explicit Builder(GbnfBuilder& g) : g_(g) {}

  // The alternatives of one call's JSON object, one per tool.
  absl::StatusOr<std::string> JsonCall(const std::vector<Tool>& tools, std::string_view args_key) {
    std::vector<std::string> alts;
    for (const Tool& t : tools) {
      ASSIGN_OR_RETURN(rule, g_.AddSchema(t.name + "-call", JsonKeyedCallSchema(t, args_key)));
      alts.push_back(rule);
    }
    return g_.AddRule("tool-call-object", absl::StrJoin(alts, " | "));
  }

  absl::StatusOr<std::string> QwenXmlCall(const std::vector<Tool>& tools) {
    std::vector<std::string> alts;
    for (const Tool& t : tools) {
      std::string body = GbnfBuilder::Literal("<function=" + t.name + ">") + " space";
      for (const Param& p : t.params) {
        std::string value;
        if (p.type == "string") {
          ASSIGN_OR_RETURN(until, Until("xml-parameter-text", "</parameter>"));
          value = until;
        } else {
          ASSIGN_OR_RETURN(schema, g_.AddSchema(t.name + "-" + p.name, p.schema));
          value = schema + " space " + GbnfBuilder::Literal("</parameter>");
        }
        ASSIGN_OR_RETURN(rule, g_.AddRule(t.name + "-" + p.name + "-parameter",
                                                   GbnfBuilder::Literal("<parameter=" + p.name + ">") + " space " +
                                                       value + " space"));
        body += " " + rule + (p.required ? "" : "?");
      }
      body += " " + GbnfBuilder::Literal("</function>");
      ASSIGN_OR_RETURN(rule, g_.AddRule(t.name + "-function", body));
      alts.push_back(rule);
    }
    return g_.AddRule("tool-call-function", absl::StrJoin(alts, " | "));
  }

  absl::StatusOr<std::string> Gemma4Call(const std::vector<Tool>& tools) {
    std::vector<std::string> alts;
    for (const Tool& t : tools) {
      std::vector<std::string> required, optional;
      for (const Param& p : t.params) {
        ASSIGN_OR_RETURN(value, Gemma4Typed(p));
        ASSIGN_OR_RETURN(rule, g_.AddRule(t.name + "-" + p.name + "-argument",
                                                   GbnfBuilder::Literal(p.name + ":") + " " + value));
        (p.required ? required : optional).push_back(rule);
      }
      ASSIGN_OR_RETURN(
          rule, g_.AddRule(t.name + "-call", GbnfBuilder::Literal("call:" + t.name + "{") + " " +
                                                 FieldList(required, optional, "\",\"") + " \"}\""));
      alts.push_back(rule);
    }
    return g_.AddRule("tool-call-body", absl::StrJoin(alts, " | "));
  }

  absl::StatusOr<std::string> Until(const std::string& name, std::string_view marker) {
    auto it = std::find_if(untils_.begin(), untils_.end(), [&](const auto& u) { return u.first == marker; });
    if (it != untils_.end()) return it->second;
    ASSIGN_OR_RETURN(rule, UntilRule(g_, name, marker));
    untils_.emplace_back(std::string(marker), rule);
    return rule;
  }

 private:
  // A Gemma 4 argument value of the parameter's declared type: strings between <|"|>
  // quotes (nothing escaped inside), numbers and literals bare, others any value.
  absl::StatusOr<std::string> Gemma4Typed(const Param& p) {
    if (p.type == "string") {
      ASSIGN_OR_RETURN(text, Until("gemma4-string-text", chat::kGemma4Quote));
      return GbnfBuilder::Literal(chat::kGemma4Quote) + " " + text;
    }
    if (p.type == "integer" || p.type == "number" || p.type == "boolean" || p.type == "null")
      return g_.AddBuiltin(p.type);
    return Gemma4Value();
  }

  absl::StatusOr<std::string> Gemma4Value() {
    if (!gemma4_value_.empty()) return gemma4_value_;
    ASSIGN_OR_RETURN(text, Until("gemma4-string-text", chat::kGemma4Quote));
    ASSIGN_OR_RETURN(key, g_.AddRule("gemma4-key", "[a-zA-Z_] [a-zA-Z0-9_]*"));
    const std::string quoted = GbnfBuilder::Literal(chat::kGemma4Quote) + " " + text;
    const std::string value = g_.FreeName("gemma4-value");  // the rule refers to itself
    const std::string members = key + " \":\" " + value;
    const std::string body = quoted + " | " + g_.AddBuiltin("number") + " | " + g_.AddBuiltin("boolean") + " | " +
                             g_.AddBuiltin("null") + " | \"{\" ( " + members + " ( \",\" " + members +
                             " )* )? \"}\" | \"[\" ( " + value + " ( \",\" " + value + " )* )? \"]\"";
    ASSIGN_OR_RETURN(rule, g_.AddRule(value, body));
    if (rule != value) return absl::InternalError(StrCat("tool-call grammar: rule ", value, " was taken"));
    gemma4_value_ = rule;
    return rule;
  }

  GbnfBuilder& g_;
  std::vector<std::pair<std::string, std::string>> untils_;  // marker -> its rule
  std::string gemma4_value_;
};

// One call or, with `parallel`, one or more separated by `sep`.
std::string Repeated(const std::string& call, bool parallel, const std::string& sep = "space") {
  return parallel ? call + " ( " + sep + " " + call + " )*" : call;
}

}  // namespace

absl::StatusOr<std::string> ToolCallGrammar(const chat::ChatSyntax& syntax, std::string_view tools_json,
                                            const ToolChoice& choice, bool starts_in_thinking,
                                            bool thinking_allowed) {
  if (choice.mode == ToolChoice::Mode::kAuto)
    return absl::InvalidArgumentError("\"auto\" forces nothing: no grammar to build");
  if (syntax.tool_calls == ToolCallSyntax::kNone)
    return absl::InvalidArgumentError(
        "the model's chat template has no tool-call syntax uaii reads, so no call can be forced");
  ASSIGN_OR_RETURN(all, ReadTools(tools_json));
  std::vector<Tool> tools;
  for (Tool& t : all)
    if (choice.mode == ToolChoice::Mode::kRequired || t.name == choice.function) tools.push_back(std::move(t));
  if (tools.empty()) {
    if (choice.mode == ToolChoice::Mode::kFunction)
      return absl::InvalidArgumentError(StrCat("it names the function \"", choice.function,
                                               "\", which is not among the request's tools"));
    return absl::InvalidArgumentError("\"required\" needs at least one tool");
  }
  // Llama 3's bare JSON call is the whole reply: one call only.
  const bool parallel = choice.parallel && syntax.tool_calls != ToolCallSyntax::kLlama3;
  GbnfBuilder g;
  Builder b(g);
  std::string calls;
  switch (syntax.tool_calls) {
    case ToolCallSyntax::kTaggedJson:
    case ToolCallSyntax::kQwenXml: {
      // The same <tool_call> wrapper around a JSON object or a <function=...> element.
      auto inner = syntax.tool_calls == ToolCallSyntax::kTaggedJson ? b.JsonCall(tools, "arguments")
                                                                    : b.QwenXmlCall(tools);
      if (!inner.ok()) return inner.status();
      ASSIGN_OR_RETURN(call, g.AddRule("tool-call", "\"<tool_call>\" space " + *inner + " space \"</tool_call>\""));
      calls = Repeated(call, parallel);
      break;
    }
    case ToolCallSyntax::kGemma4: {
      ASSIGN_OR_RETURN(body, b.Gemma4Call(tools));
      ASSIGN_OR_RETURN(call, g.AddRule("tool-call", "\"<|tool_call>\" " + body + " \"<tool_call|>\""));
      calls = Repeated(call, parallel, "");
      break;
    }
    case ToolCallSyntax::kGranite: {
      ASSIGN_OR_RETURN(object, b.JsonCall(tools, "arguments"));
      calls = "\"<|tool_call|>\" space \"[\" space " + Repeated(object, parallel, "\",\" space") + " space \"]\"";
      if (!syntax.tool_call_close.empty()) calls += " space " + GbnfBuilder::Literal(syntax.tool_call_close);
      break;
    }
    case ToolCallSyntax::kLlama3: {
      ASSIGN_OR_RETURN(object, b.JsonCall(tools, "parameters"));
      calls = object;
      break;
    }
    case ToolCallSyntax::kNone: break;
  }
  std::string root = calls;
  if (syntax.reasoning && (starts_in_thinking || thinking_allowed)) {
    ASSIGN_OR_RETURN(thought, b.Until("reasoning-text", syntax.reasoning->close));
    root = starts_in_thinking
               ? thought + " space " + calls
               : "( " + GbnfBuilder::Literal(syntax.reasoning->open) + " " + thought + " space )? " + calls;
  }
  ASSIGN_OR_RETURN(added, g.AddRule("root", root));
  if (added != "root") return absl::InternalError("tool-call grammar: the rule name root was taken");
  return g.Format();
}

#undef ASSIGN_OR_RETURN

}  // namespace uaii
