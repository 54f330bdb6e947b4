// One generate or chat call as plain C++ data (built from the Python arguments with the
// GIL held, run later without it, possibly on another thread), and the code that runs
// it through the C ABI.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common.h"

namespace uaii_py {

// The sampling keywords shared by Session.generate and Session.chat. None keeps the
// C ABI's default (uaii_generate_options_init).
struct SamplingArgs {
  std::optional<int64_t> max_tokens;
  std::optional<double> temperature;
  std::optional<int64_t> top_k;
  std::optional<double> top_p;
  std::optional<double> min_p;
  std::optional<double> repeat_penalty;
  std::optional<double> presence_penalty;
  std::optional<double> frequency_penalty;
  py::object seed = py::none();
  py::object stop = py::none();  // None, a str, or an iterable of str
  py::object grammar = py::none();      // None or a GBNF str
  py::object json_schema = py::none();  // None, a JSON Schema as a dict / bool, or its JSON text
};

// `o` as JSON text: a str is taken as JSON already, anything else goes through json.dumps
// (InvalidArgumentError naming `what` when it cannot).
std::string ToJson(const char* what, const py::object& o);

// args with the structured-output keywords set (Session.generate / chat, uaii.Sampler).
SamplingArgs WithGrammar(SamplingArgs args, py::object grammar, py::object json_schema);

// The keywords as one SamplingArgs (Session.generate / chat, and uaii.Sampler with no
// max_tokens or stop).
SamplingArgs MakeSamplingArgs(std::optional<int64_t> max_tokens, std::optional<double> temperature,
                              std::optional<int64_t> top_k, std::optional<double> top_p, std::optional<double> min_p,
                              std::optional<double> repeat_penalty, std::optional<double> presence_penalty,
                              std::optional<double> frequency_penalty, py::object seed, py::object stop);

struct Request {
  bool chat = false;
  std::string prompt;         // generate: the raw prompt text
  std::string messages_json;  // chat
  std::optional<std::string> tools_json;
  uaii_generate_options options{};
  std::vector<std::string> stop;
  std::optional<std::string> grammar;      // options.grammar points here when run
  std::optional<std::string> json_schema;  // options.json_schema

  // Builds a request (raises InvalidArgumentError / TypeError on bad values).
  static Request Generate(const py::object& prompt, const SamplingArgs& args);
  static Request Chat(const py::object& messages, const py::object& tools, std::optional<bool> think,
                      const SamplingArgs& args);
};

// What one call gave back: its status and message (read on the thread that ran it),
// the usage and the whole reply.
struct Outcome {
  uaii_status status = UAII_OK;
  std::string error;
  uaii_generate_result result{};
  std::string text;
};

// The request's options with their pointers (stop strings, grammar) aimed at the
// request's own storage, valid while `request` and `stop` live.
uaii_generate_options OptionsFor(const Request& request, std::vector<const char*>* stop);

// Runs the request on `session` (no Python, no GIL needed): streams through `on_event`
// when it is not NULL.
Outcome RunRequest(uaii_session* session, const Request& request, uaii_event_fn on_event, void* user_data);

}  // namespace uaii_py
