// Python classes uaii.Event, uaii.GenerateResult and uaii.Usage (read-only values).
#include "results.h"

#include <pybind11/stl.h>

#include "common.h"

namespace uaii_py {

const char* StopReasonName(uint32_t stop_reason) {
  switch (stop_reason) {
    case UAII_STOP_END_OF_GENERATION: return "end_of_generation";
    case UAII_STOP_MAX_TOKENS: return "max_tokens";
    case UAII_STOP_STRING: return "stop_string";
    case UAII_STOP_CANCELLED: return "cancelled";
    case UAII_STOP_CONTEXT_FULL: return "context_full";
  }
  return "unknown";
}

const char* EventKindName(uint32_t kind) {
  switch (kind) {
    case UAII_EVENT_TEXT: return "text";
    case UAII_EVENT_THINKING: return "thinking";
    case UAII_EVENT_TOOL_CALL: return "tool_call";
    case UAII_EVENT_ERROR: return "error";
    case UAII_EVENT_DONE: return "done";
  }
  return "unknown";
}

GenerateResult MakeResult(const uaii_generate_result& r, std::string text) {
  GenerateResult g;
  g.text = std::move(text);
  g.stop_reason = StopReasonName(r.stop_reason);
  g.usage.prompt_tokens = r.prompt_tokens;
  g.usage.completion_tokens = r.completion_tokens;
  g.usage.cached_tokens = r.cached_tokens;
  g.usage.reasoning_tokens = r.reasoning_tokens;
  g.usage.prefill_tokens_per_s = r.prefill_tokens_per_s;
  g.usage.decode_tokens_per_s = r.decode_tokens_per_s;
  g.usage.peak_rss_bytes = r.peak_rss_bytes;
  g.usage.draft_tokens = r.draft_tokens;
  g.usage.draft_accepted_tokens = r.draft_accepted_tokens;
  g.usage.draft_acceptance_rate = r.draft_acceptance_rate;
  return g;
}

namespace {

py::dict UsageDict(const Usage& u) {
  py::dict d;
  d["prompt_tokens"] = u.prompt_tokens;
  d["completion_tokens"] = u.completion_tokens;
  d["cached_tokens"] = u.cached_tokens;
  d["reasoning_tokens"] = u.reasoning_tokens;
  d["prefill_tokens_per_s"] = u.prefill_tokens_per_s;
  d["decode_tokens_per_s"] = u.decode_tokens_per_s;
  d["peak_rss_bytes"] = u.peak_rss_bytes;
  d["draft_tokens"] = u.draft_tokens;
  d["draft_accepted_tokens"] = u.draft_accepted_tokens;
  d["draft_acceptance_rate"] = u.draft_acceptance_rate;
  return d;
}

}  // namespace

void BindResults(py::module_& m) {
  py::class_<Usage>(m, "Usage", "Token counts, speeds and memory of one generation.")
      .def_readonly("prompt_tokens", &Usage::prompt_tokens, "Tokens of the prompt (including cached ones).")
      .def_readonly("completion_tokens", &Usage::completion_tokens, "Tokens generated.")
      .def_readonly("cached_tokens", &Usage::cached_tokens,
                    "Prompt tokens reused from the session's KV cache (not computed again).")
      .def_readonly("reasoning_tokens", &Usage::reasoning_tokens, "Generated tokens that were thinking (chat).")
      .def_readonly("prefill_tokens_per_s", &Usage::prefill_tokens_per_s, "Prompt processing speed.")
      .def_readonly("decode_tokens_per_s", &Usage::decode_tokens_per_s, "Generation speed.")
      .def_readonly("peak_rss_bytes", &Usage::peak_rss_bytes, "Peak resident memory of the process so far.")
      .def_readonly("draft_tokens", &Usage::draft_tokens,
                    "Speculative decoding (Session(draft=...)): tokens the drafter proposed (0 without one).")
      .def_readonly("draft_accepted_tokens", &Usage::draft_accepted_tokens,
                    "Of the drafter's proposals, the ones the acceptance rule kept.")
      .def_readonly("draft_acceptance_rate", &Usage::draft_acceptance_rate,
                    "draft_accepted_tokens / draft_tokens (0 without proposals).")
      .def("to_dict", &UsageDict, "The fields as a dict.")
      .def("__repr__", [](const Usage& u) {
        return py::str("Usage(prompt_tokens={}, completion_tokens={}, cached_tokens={}, reasoning_tokens={}, "
                       "prefill_tokens_per_s={:.1f}, decode_tokens_per_s={:.1f}, peak_rss_bytes={})")
            .format(u.prompt_tokens, u.completion_tokens, u.cached_tokens, u.reasoning_tokens,
                    u.prefill_tokens_per_s, u.decode_tokens_per_s, u.peak_rss_bytes);
      });

  py::class_<GenerateResult, std::shared_ptr<GenerateResult>>(m, "GenerateResult",
                                                              "The outcome of one generate or chat call.")
      .def_property_readonly("text", [](const GenerateResult& r) { return DecodeUtf8(r.text); },
                             "The whole reply (for chat: as generated, thinking and tool calls included).")
      .def_readonly("stop_reason", &GenerateResult::stop_reason,
                    "Why it stopped: 'end_of_generation', 'max_tokens', 'stop_string', 'cancelled' or "
                    "'context_full'.")
      .def_readonly("usage", &GenerateResult::usage, "Token counts, speeds and memory (uaii.Usage).")
      .def("to_dict",
           [](const GenerateResult& r) {
             py::dict d;
             d["text"] = DecodeUtf8(r.text);
             d["stop_reason"] = r.stop_reason;
             d["usage"] = UsageDict(r.usage);
             return d;
           },
           "The result as a dict: text, stop_reason, usage.")
      .def("__repr__", [](const GenerateResult& r) {
        return py::str("GenerateResult(stop_reason={!r}, completion_tokens={}, text={!r})")
            .format(r.stop_reason, r.usage.completion_tokens, DecodeUtf8(r.text));
      });

  py::class_<Event>(m, "Event", "One piece of a streamed reply.")
      .def_readonly("kind", &Event::kind,
                    "'text' (visible text), 'thinking' (reasoning), 'tool_call' (text is the call as JSON), "
                    "'error' (a malformed tool call; the stream goes on) or 'done' (the last event).")
      .def_property_readonly("text", [](const Event& e) { return DecodeUtf8(e.text); },
                             "The event's text ('' for 'done').")
      .def_property_readonly(
          "result", [](const Event& e) { return e.result; },
          "The uaii.GenerateResult on the 'done' event, else None.")
      .def_property_readonly(
          "tool_call",
          [](const Event& e) -> py::object {
            if (e.kind != "tool_call") return py::none();
            return py::module_::import("json").attr("loads")(DecodeUtf8(e.text));
          },
          "For a 'tool_call' event the call as a dict {'name': ..., 'arguments': {...}}, else None.")
      .def("__repr__", [](const Event& e) {
        return py::str("Event(kind={!r}, text={!r})").format(e.kind, DecodeUtf8(e.text));
      });
}

}  // namespace uaii_py
