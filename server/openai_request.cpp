#include "openai_request.h"

#include <cmath>
#include <limits>

#include "simdjson.h"
#include "uaii/json_writer.h"
#include "uaii/str_cat.h"

namespace uaii::server {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

std::string_view TypeName(element_type t) {
  switch (t) {
    case element_type::ARRAY: return "an array";
    case element_type::OBJECT: return "an object";
    case element_type::INT64:
    case element_type::UINT64:
    case element_type::DOUBLE: return "a number";
    case element_type::STRING: return "a string";
    case element_type::BOOL: return "a boolean";
    case element_type::NULL_VALUE: return "null";
  }
  return "a value";
}

// Typed reads of one JSON object's fields. The first failure is kept in *error and
// every later read is a no-op, so a parser reads its fields in a row and checks once.
class Fields {
 public:
  Fields(simdjson::dom::object obj, ApiError* error) : obj_(obj), error_(error) {}

  bool ok() const { return ok_; }
  bool Fail(std::string message, std::string param) {
    if (ok_) *error_ = BadRequest(std::move(message), std::move(param));
    ok_ = false;
    return false;
  }
  // The field, when present and not null.
  std::optional<element> Get(std::string_view key) const {
    element e;
    if (!ok_ || obj_[key].get(e) != simdjson::SUCCESS || e.is_null()) return std::nullopt;
    return e;
  }
  bool WrongType(std::string_view key, std::string_view wanted, element got) {
    return Fail(StrCat("'", key, "' must be ", wanted, ", got ", TypeName(got.type())), std::string(key));
  }

  void Bool(std::string_view key, bool* out) {
    auto e = Get(key);
    if (!e) return;
    if (!e->is_bool()) { WrongType(key, "a boolean", *e); return; }
    *out = e->get_bool().value_unsafe();
  }
  void Float(std::string_view key, float* out, double lo, double hi) {
    auto e = Get(key);
    if (!e) return;
    if (!e->is_number()) { WrongType(key, "a number", *e); return; }
    const double v = e->get_double().value_unsafe();
    if (!(v >= lo && v <= hi)) {
      Fail(StrCat("'", key, "' = ", v, " is outside [", lo, ", ", hi, "]"), std::string(key));
      return;
    }
    *out = static_cast<float>(v);
  }
  // An integer (a number with no fraction) in [lo, hi].
  std::optional<int64_t> Int(std::string_view key, int64_t lo, int64_t hi) {
    auto e = Get(key);
    if (!e) return std::nullopt;
    if (!e->is_number()) { WrongType(key, "an integer", *e); return std::nullopt; }
    int64_t v = 0;
    if (e->is_int64()) {
      v = e->get_int64().value_unsafe();
    } else {
      const double d = e->is_uint64() ? static_cast<double>(e->get_uint64().value_unsafe())
                                      : e->get_double().value_unsafe();
      if (d != std::floor(d) || d < static_cast<double>(lo) || d > static_cast<double>(hi)) {
        Fail(StrCat("'", key, "' must be an integer in [", lo, ", ", hi, "]"), std::string(key));
        return std::nullopt;
      }
      v = static_cast<int64_t>(d);
    }
    if (v < lo || v > hi) {
      Fail(StrCat("'", key, "' = ", v, " is outside [", lo, ", ", hi, "]"), std::string(key));
      return std::nullopt;
    }
    return v;
  }
  std::optional<std::string> String(std::string_view key) {
    auto e = Get(key);
    if (!e) return std::nullopt;
    if (!e->is_string()) { WrongType(key, "a string", *e); return std::nullopt; }
    return std::string(e->get_string().value_unsafe());
  }

 private:
  simdjson::dom::object obj_;
  ApiError* error_;
  bool ok_ = true;
};

// The body as a JSON object (simdjson validates all of it, UTF-8 included).
struct Body {
  simdjson::dom::parser parser;
  simdjson::dom::object object;
};
bool ParseBody(std::string_view text, Body* body, ApiError* error) {
  element root;
  if (auto err = body->parser.parse(text.data(), text.size()).get(root); err) {
    *error = BadRequest(StrCat("the request body is not valid JSON: ", simdjson::error_message(err)));
    return false;
  }
  if (root.get(body->object) != simdjson::SUCCESS) {
    *error = BadRequest(StrCat("the request body must be a JSON object, got ", TypeName(root.type())));
    return false;
  }
  return true;
}

// A message as the chat template reads it, in the shape Hugging Face templates expect
// of an OpenAI conversation (as llama-server converts it): an assistant message that only
// made tool calls has content "" where OpenAI clients send null or nothing, and each
// call's `arguments` — a JSON string in OpenAI's API — is the object it holds. The rest
// is copied (simdjson's minify keeps every value and its type: 1.0 stays a float).
void WriteMessage(uaii::JsonWriter& w, simdjson::dom::object m) {
  std::string_view role;
  const bool assistant = m["role"].get(role) == simdjson::SUCCESS && role == "assistant";
  element content;
  const bool content_given = m["content"].get(content) == simdjson::SUCCESS && !content.is_null();
  w.BeginObject();
  for (auto [key, value] : m) {
    w.Key(key);
    if (key == "tool_calls" && value.is_array()) {
      w.BeginArray();
      // (simdjson's results are materialized first: a range-for over a temporary
      // result's value_unsafe() would iterate a destroyed object.)
      const simdjson::dom::array calls = value.get_array().value_unsafe();
      for (element call : calls) {
        simdjson::dom::object fn;
        if (!call.is_object() || call["function"].get(fn) != simdjson::SUCCESS) {
          w.Raw(simdjson::minify(call));
          continue;
        }
        w.BeginObject();
        const simdjson::dom::object call_fields = call.get_object().value_unsafe();
        for (auto [ck, cv] : call_fields) {
          w.Key(ck);
          if (ck != "function") {
            w.Raw(simdjson::minify(cv));
            continue;
          }
          w.BeginObject();
          for (auto [fk, fv] : fn) {
            w.Key(fk);
            simdjson::dom::parser args_parser;
            element args;
            if (fk == "arguments" && fv.is_string() &&
                args_parser.parse(std::string(fv.get_string().value_unsafe())).get(args) == simdjson::SUCCESS &&
                args.is_object())
              w.Raw(simdjson::minify(args));
            else
              w.Raw(simdjson::minify(fv));
          }
          w.EndObject();
        }
        w.EndObject();
      }
      w.EndArray();
    } else if (key == "content" && value.is_null() && assistant) {
      w.String("");
    } else {
      w.Raw(simdjson::minify(value));
    }
  }
  if (assistant && !content_given && m["content"].error() == simdjson::NO_SUCH_FIELD) w.Key("content").String("");
  w.EndObject();
}

void ReadStop(Fields& f, const RequestLimits& limits, std::vector<std::string>* stop) {
  auto e = f.Get("stop");
  if (!e) return;
  if (e->is_string()) {
    stop->emplace_back(e->get_string().value_unsafe());
  } else if (e->is_array()) {
    const simdjson::dom::array strings = e->get_array().value_unsafe();
    for (element s : strings) {
      if (!s.is_string()) { f.Fail("'stop' must be a string or an array of strings", "stop"); return; }
      stop->emplace_back(s.get_string().value_unsafe());
    }
  } else {
    f.WrongType("stop", "a string or an array of strings", *e);
    return;
  }
  if (stop->size() > limits.max_stop)
    f.Fail(StrCat("'stop' holds ", stop->size(), " strings; at most ", limits.max_stop), "stop");
  for (const auto& s : *stop)
    if (s.empty()) { f.Fail("'stop' strings must not be empty", "stop"); return; }
}

// response_format: {"type": "text"} none; {"type": "json_object"} any JSON object
// (or, as llama-server reads it, the object's "schema"); {"type": "json_schema",
// "json_schema": {"name": ..., "schema": {...}}} that schema.
void ReadResponseFormat(Fields& f, std::optional<std::string>* schema) {
  auto e = f.Get("response_format");
  if (!e) return;
  simdjson::dom::object rf;
  if (e->get(rf) != simdjson::SUCCESS) { f.WrongType("response_format", "an object", *e); return; }
  std::string_view type;
  if (rf["type"].get(type) != simdjson::SUCCESS) {
    f.Fail("'response_format' needs a 'type': \"text\", \"json_object\" or \"json_schema\"", "response_format");
    return;
  }
  element s;
  if (type == "text") return;
  if (type == "json_object") {
    *schema = rf["schema"].get(s) == simdjson::SUCCESS && s.is_object() ? simdjson::minify(s) : "{\"type\":\"object\"}";
    return;
  }
  if (type == "json_schema") {
    simdjson::dom::object spec;
    if (rf["json_schema"].get(spec) != simdjson::SUCCESS || spec["schema"].get(s) != simdjson::SUCCESS ||
        !(s.is_object() || s.is_bool())) {
      f.Fail("'response_format' of type \"json_schema\" needs 'json_schema': {\"name\": ..., \"schema\": {...}}",
             "response_format");
      return;
    }
    *schema = simdjson::minify(s);
    return;
  }
  f.Fail(StrCat("'response_format.type' must be \"text\", \"json_object\" or \"json_schema\", got \"", type, "\""),
         "response_format");
}

void ReadSampling(Fields& f, const RequestLimits& limits, SamplingRequest* r) {
  f.Bool("stream", &r->stream);
  if (auto so = f.Get("stream_options"); so && so->is_object()) {
    element u;
    if (so->get_object().value_unsafe()["include_usage"].get(u) == simdjson::SUCCESS && u.is_bool())
      r->include_usage = u.get_bool().value_unsafe();
  }
  for (const char* key : {"max_tokens", "max_completion_tokens", "n_predict"})
    if (auto v = f.Int(key, 0, limits.max_tokens)) r->max_tokens = *v;
  sampling::SamplingParams& p = r->sampling;
  f.Float("temperature", &p.temperature, 0, 100);
  f.Float("top_p", &p.top_p, 0, 1);
  f.Float("min_p", &p.min_p, 0, 1);
  f.Float("repeat_penalty", &p.repeat_penalty, 0, 100);
  f.Float("presence_penalty", &p.presence_penalty, -2, 2);
  f.Float("frequency_penalty", &p.frequency_penalty, -2, 2);
  if (auto k = f.Int("top_k", -1, std::numeric_limits<int32_t>::max())) p.top_k = static_cast<int32_t>(*k);
  if (auto n = f.Int("repeat_last_n", -1, std::numeric_limits<int32_t>::max())) p.penalty_last_n = static_cast<int32_t>(*n);
  if (auto s = f.Int("seed", std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max())) {
    p.seed = static_cast<uint32_t>(*s);  // OpenAI's seeds are 64-bit; the sampler's engine takes 32 bits
    r->seed_given = true;
  }
  if (auto n = f.Int("n", 1, std::numeric_limits<int32_t>::max()); n && *n != 1)
    f.Fail("only n = 1 is supported", "n");
  bool logprobs = false;
  f.Bool("logprobs", &logprobs);
  if (logprobs) f.Fail("logprobs are not supported", "logprobs");
  ReadStop(f, limits, &r->stop);
  if (auto g = f.String("grammar")) r->grammar = *g;
  ReadResponseFormat(f, &r->json_schema);
  if (!r->grammar.empty() && r->json_schema)
    f.Fail("'grammar' and 'response_format' exclude each other", "grammar");
  if (!f.ok()) return;
  if (auto st = sampling::ValidateSamplingParams(p); !st.ok()) f.Fail(std::string(st.message()), "");
}

bool ReadTokenIds(element e, std::vector<TokenId>* out) {
  simdjson::dom::array a;
  if (e.get(a) != simdjson::SUCCESS) return false;
  for (element t : a) {
    int64_t v = 0;
    if (t.get(v) != simdjson::SUCCESS || v < 0 || v > std::numeric_limits<TokenId>::max()) return false;
    out->push_back(static_cast<TokenId>(v));
  }
  return true;
}

}  // namespace

std::optional<ChatCompletionRequest> ParseChatCompletionRequest(std::string_view body, const RequestLimits& limits,
                                                                ApiError* error) {
  Body b;
  if (!ParseBody(body, &b, error)) return std::nullopt;
  Fields f(b.object, error);
  ChatCompletionRequest r;
  auto messages = f.Get("messages");
  if (!messages) {
    f.Fail("'messages' is required", "messages");
    return std::nullopt;
  }
  simdjson::dom::array ma;
  if (messages->get(ma) != simdjson::SUCCESS) {
    f.WrongType("messages", "an array", *messages);
    return std::nullopt;
  }
  if (ma.size() == 0) f.Fail("'messages' must hold at least one message", "messages");
  if (ma.size() > limits.max_messages)
    f.Fail(StrCat("'messages' holds ", ma.size(), " messages; at most ", limits.max_messages), "messages");
  size_t i = 0;
  for (element m : ma) {
    simdjson::dom::object mo;
    std::string_view role;
    if (!f.ok()) break;
    if (m.get(mo) != simdjson::SUCCESS) {
      f.Fail(StrCat("'messages[", i, "]' must be an object, got ", TypeName(m.type())), "messages");
    } else if (mo["role"].get(role) != simdjson::SUCCESS) {
      f.Fail(StrCat("'messages[", i, "]' needs a 'role' string"), "messages");
    } else {
      element content;
      if (mo["content"].get(content) == simdjson::SUCCESS && !content.is_string() && !content.is_array() &&
          !content.is_null())
        f.Fail(StrCat("'messages[", i, "].content' must be a string, an array of parts or null"), "messages");
    }
    ++i;
  }
  std::string tool_choice = "auto";
  if (auto tc = f.Get("tool_choice")) {
    std::string_view mode, name;
    simdjson::dom::object fn;
    if (tc->get(mode) == simdjson::SUCCESS) {
      if (mode != "auto" && mode != "none" && mode != "required")
        f.Fail(StrCat("'tool_choice' must be \"auto\", \"none\", \"required\" or {\"type\": \"function\", "
                      "\"function\": {\"name\": ...}}, got \"", mode, "\""),
               "tool_choice");
      tool_choice = std::string(mode);
      if (mode == "required") r.tool_choice.mode = ToolChoice::Mode::kRequired;
    } else if (!tc->is_object() || tc->get_object().value_unsafe()["function"].get(fn) != simdjson::SUCCESS ||
               fn["name"].get(name) != simdjson::SUCCESS || name.empty()) {
      f.Fail("'tool_choice' as an object must be {\"type\": \"function\", \"function\": {\"name\": ...}}",
             "tool_choice");
    } else {
      r.tool_choice = {ToolChoice::Mode::kFunction, std::string(name), false};
    }
  }
  if (auto p = f.Get("parallel_tool_calls")) {
    if (!p->is_bool()) f.WrongType("parallel_tool_calls", "a boolean", *p);
    else r.tool_choice.parallel = p->get_bool().value_unsafe();
  }
  bool has_tools = false;
  if (auto tools = f.Get("tools")) {
    simdjson::dom::array list;
    if (tools->get(list) != simdjson::SUCCESS) {
      f.WrongType("tools", "an array", *tools);
    } else {
      has_tools = list.size() > 0;
      for (element t : list)
        if (!t.is_object()) { f.Fail("'tools' must be an array of objects", "tools"); break; }
    }
  }
  if (auto kw = f.Get("chat_template_kwargs")) {
    element think;
    if (!kw->is_object()) f.WrongType("chat_template_kwargs", "an object", *kw);
    else if (kw->get_object().value_unsafe()["enable_thinking"].get(think) == simdjson::SUCCESS) {
      if (!think.is_bool()) f.Fail("'chat_template_kwargs.enable_thinking' must be a boolean", "chat_template_kwargs");
      else r.think = think.get_bool().value_unsafe();
    }
  }
  ReadSampling(f, limits, &r);
  if (r.tool_choice.mode != ToolChoice::Mode::kAuto) {
    if (!has_tools) f.Fail("'tool_choice' forces a tool call, but the request has no 'tools'", "tool_choice");
    else if (!r.grammar.empty() || r.json_schema)
      f.Fail("'tool_choice' forcing a call excludes 'grammar' and 'response_format'", "tool_choice");
  }
  if (!f.ok()) return std::nullopt;
  uaii::JsonWriter w;
  w.BeginArray();
  for (element m : ma) WriteMessage(w, m.get_object().value_unsafe());
  w.EndArray();
  r.messages_json = w.str();
  if (has_tools && tool_choice != "none") r.tools_json = simdjson::minify(*f.Get("tools"));
  return r;
}

std::optional<CompletionRequest> ParseCompletionRequest(std::string_view body, const RequestLimits& limits,
                                                        ApiError* error) {
  Body b;
  if (!ParseBody(body, &b, error)) return std::nullopt;
  Fields f(b.object, error);
  CompletionRequest r;
  r.max_tokens = 16;  // OpenAI's and llama-cpp-python's default for completions
  auto prompt = f.Get("prompt");
  if (!prompt) {
    f.Fail("'prompt' is required", "prompt");
    return std::nullopt;
  }
  if (prompt->is_string()) {
    r.prompt = std::string(prompt->get_string().value_unsafe());
  } else if (prompt->is_array()) {
    // [ids], or a batch of one: ["text"] / [[ids]].
    simdjson::dom::array a = prompt->get_array().value_unsafe();
    element first;
    if (a.size() == 1 && a.at(0).get(first) == simdjson::SUCCESS && (first.is_string() || first.is_array())) {
      if (first.is_string()) r.prompt = std::string(first.get_string().value_unsafe());
      else if (!ReadTokenIds(first, &r.prompt_tokens)) f.Fail("'prompt' token ids must be non-negative integers", "prompt");
      else r.prompt_is_tokens = true;
    } else if (a.size() > 1 && a.at(0).get(first) == simdjson::SUCCESS && !first.is_number()) {
      f.Fail("'prompt' holds several prompts; send one per request", "prompt");
    } else if (!ReadTokenIds(*prompt, &r.prompt_tokens)) {
      f.Fail("'prompt' must be a string or an array of token ids", "prompt");
    } else {
      r.prompt_is_tokens = true;
    }
    if (f.ok() && r.prompt_is_tokens && r.prompt_tokens.empty()) f.Fail("'prompt' holds no tokens", "prompt");
  } else {
    f.WrongType("prompt", "a string or an array of token ids", *prompt);
  }
  bool echo = false;
  f.Bool("echo", &echo);
  if (echo) f.Fail("echo is not supported", "echo");
  ReadSampling(f, limits, &r);
  if (!f.ok()) return std::nullopt;
  return r;
}

std::optional<TokenizeRequest> ParseTokenizeRequest(std::string_view body, ApiError* error) {
  Body b;
  if (!ParseBody(body, &b, error)) return std::nullopt;
  Fields f(b.object, error);
  TokenizeRequest r;
  auto content = f.String("content");
  if (f.ok() && !content) f.Fail("'content' is required", "content");
  f.Bool("add_special", &r.add_special);
  f.Bool("parse_special", &r.parse_special);
  f.Bool("with_pieces", &r.with_pieces);
  if (!f.ok()) return std::nullopt;
  r.content = *std::move(content);
  return r;
}

std::optional<DetokenizeRequest> ParseDetokenizeRequest(std::string_view body, ApiError* error) {
  Body b;
  if (!ParseBody(body, &b, error)) return std::nullopt;
  Fields f(b.object, error);
  DetokenizeRequest r;
  auto tokens = f.Get("tokens");
  if (!tokens) f.Fail("'tokens' is required", "tokens");
  else if (!ReadTokenIds(*tokens, &r.tokens)) f.Fail("'tokens' must be an array of non-negative integers", "tokens");
  if (!f.ok()) return std::nullopt;
  return r;
}

}  // namespace uaii::server
