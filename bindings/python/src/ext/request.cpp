// Python keyword arguments -> uaii_generate_options, and the call itself.
#include "request.h"

#include <climits>
#include <cstdint>

namespace uaii_py {
namespace {

int32_t ToInt32(const char* name, int64_t v) {
  if (v < INT32_MIN || v > INT32_MAX)
    Fail(UAII_ERR_INVALID_ARGUMENT, std::string(name) + " " + std::to_string(v) + " is out of range");
  return static_cast<int32_t>(v);
}

uint64_t ToSeed(const py::object& o) {
  if (!py::isinstance<py::int_>(o) || py::isinstance<py::bool_>(o)) throw py::type_error("seed must be an int");
  unsigned long long v = PyLong_AsUnsignedLongLong(o.ptr());
  if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
    PyErr_Clear();
    Fail(UAII_ERR_INVALID_ARGUMENT, "seed " + std::string(py::str(o)) + " is outside 0..2**64-1");
  }
  return v;
}

// A str that a C string must carry whole: no NUL inside.
std::string NoNul(const char* what, std::string s) {
  if (s.find('\0') != std::string::npos)
    Fail(UAII_ERR_INVALID_ARGUMENT, std::string(what) + " contains a NUL character");
  return s;
}

void Apply(const SamplingArgs& a, Request* r) {
  uaii_generate_options& o = r->options;
  uaii_generate_options_init(&o);
  if (a.max_tokens) o.max_tokens = ToInt32("max_tokens", *a.max_tokens);
  if (a.temperature) o.temperature = static_cast<float>(*a.temperature);
  if (a.top_k) o.top_k = ToInt32("top_k", *a.top_k);
  if (a.top_p) o.top_p = static_cast<float>(*a.top_p);
  if (a.min_p) o.min_p = static_cast<float>(*a.min_p);
  if (a.repeat_penalty) o.repeat_penalty = static_cast<float>(*a.repeat_penalty);
  if (a.presence_penalty) o.presence_penalty = static_cast<float>(*a.presence_penalty);
  if (a.frequency_penalty) o.frequency_penalty = static_cast<float>(*a.frequency_penalty);
  if (!a.seed.is_none()) o.seed = ToSeed(a.seed);
  if (!a.grammar.is_none()) {
    if (!py::isinstance<py::str>(a.grammar)) throw py::type_error("grammar must be a str (GBNF)");
    r->grammar = NoNul("the grammar", EncodeUtf8(a.grammar));
  }
  if (!a.json_schema.is_none()) r->json_schema = ToJson("json_schema", a.json_schema);
  if (r->grammar && r->json_schema) Fail(UAII_ERR_INVALID_ARGUMENT, "grammar and json_schema exclude each other");
  if (a.stop.is_none()) return;
  if (py::isinstance<py::str>(a.stop)) {  // one stop string, not its characters
    r->stop.push_back(NoNul("a stop string", EncodeUtf8(a.stop)));
    return;
  }
  if (!py::isinstance<py::iterable>(a.stop)) throw py::type_error("stop must be a str or a list of str");
  for (const py::handle& s : a.stop) {
    if (!py::isinstance<py::str>(s)) throw py::type_error("stop must be a str or a list of str");
    r->stop.push_back(NoNul("a stop string", EncodeUtf8(s)));
  }
}

}  // namespace

std::string ToJson(const char* what, const py::object& o) {
  if (py::isinstance<py::str>(o)) return NoNul(what, EncodeUtf8(o));  // already JSON
  try {
    return EncodeUtf8(py::module_::import("json").attr("dumps")(o, py::arg("ensure_ascii") = false));
  } catch (py::error_already_set& e) {
    if (!e.matches(PyExc_TypeError) && !e.matches(PyExc_ValueError)) throw;
    Fail(UAII_ERR_INVALID_ARGUMENT, std::string(what) + " cannot be written as JSON: " + std::string(py::str(e.value())));
  }
}

SamplingArgs MakeSamplingArgs(std::optional<int64_t> max_tokens, std::optional<double> temperature,
                              std::optional<int64_t> top_k, std::optional<double> top_p, std::optional<double> min_p,
                              std::optional<double> repeat_penalty, std::optional<double> presence_penalty,
                              std::optional<double> frequency_penalty, py::object seed, py::object stop) {
  SamplingArgs a;
  a.max_tokens = max_tokens;
  a.temperature = temperature;
  a.top_k = top_k;
  a.top_p = top_p;
  a.min_p = min_p;
  a.repeat_penalty = repeat_penalty;
  a.presence_penalty = presence_penalty;
  a.frequency_penalty = frequency_penalty;
  a.seed = std::move(seed);
  a.stop = std::move(stop);
  return a;
}

SamplingArgs WithGrammar(SamplingArgs args, py::object grammar, py::object json_schema) {
  args.grammar = std::move(grammar);
  args.json_schema = std::move(json_schema);
  return args;
}

Request Request::Generate(const py::object& prompt, const SamplingArgs& args) {
  if (!py::isinstance<py::str>(prompt)) throw py::type_error("prompt must be a str");
  Request r;
  r.prompt = NoNul("the prompt", EncodeUtf8(prompt));
  Apply(args, &r);
  return r;
}

Request Request::Chat(const py::object& messages, const py::object& tools, std::optional<bool> think,
                      const SamplingArgs& args) {
  Request r;
  r.chat = true;
  r.messages_json = ToJson("messages", messages);
  if (!tools.is_none()) r.tools_json = ToJson("tools", tools);
  Apply(args, &r);
  r.options.think = think ? (*think ? 1 : 0) : -1;
  return r;
}

uaii_generate_options OptionsFor(const Request& request, std::vector<const char*>* stop) {
  uaii_generate_options o = request.options;
  stop->clear();
  for (const std::string& s : request.stop) stop->push_back(s.c_str());
  o.stop = stop->empty() ? nullptr : stop->data();
  o.n_stop = stop->size();
  o.grammar = request.grammar ? request.grammar->c_str() : nullptr;
  o.json_schema = request.json_schema ? request.json_schema->c_str() : nullptr;
  return o;
}

Outcome RunRequest(uaii_session* session, const Request& request, uaii_event_fn on_event, void* user_data) {
  std::vector<const char*> stop;
  const uaii_generate_options o = OptionsFor(request, &stop);

  Outcome out;
  out.result.struct_size = sizeof(out.result);
  char* text = nullptr;
  if (request.chat) {
    out.status = uaii_session_chat(session, request.messages_json.c_str(),
                                   request.tools_json ? request.tools_json->c_str() : nullptr, &o, on_event,
                                   user_data, &out.result, &text);
  } else {
    out.status = uaii_session_generate(session, request.prompt.c_str(), &o, on_event, user_data, &out.result, &text);
  }
  if (out.status != UAII_OK) out.error = uaii_last_error();
  if (text != nullptr) {
    out.text = text;
    uaii_string_free(text);
  }
  return out;
}

}  // namespace uaii_py
