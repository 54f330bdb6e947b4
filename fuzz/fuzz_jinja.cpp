// Jinja chat templates (lib/chat: lexer, parser, interpreter, builtins): parse the
// input as a template and render it over a chat context with tools, the way
// RenderChat does, under RenderLimits tighter than the defaults so that one run stays
// short (the limits are what is being tested: a runaway template must stop with a
// LimitError, not hang or exhaust memory). Input: the template source.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "chat/chat_template.h"
#include "chat/json.h"
#include "chat/template.h"
#include "fuzz_util.h"

namespace {

const uaii::jinja::Value& Context() {
  static const uaii::jinja::Value ctx = [] {
    uaii::chat::ChatRequest req;
    req.messages = *uaii::jinja::ParseJson(R"([
      {"role": "system", "content": "You are helpful."},
      {"role": "user", "content": "Hi <b>there</b> \u00e9"},
      {"role": "assistant", "content": "", "reasoning_content": "think",
       "tool_calls": [{"type": "function", "function": {"name": "get", "arguments": {"x": 1, "y": [true, null]}}}]},
      {"role": "tool", "content": "{\"r\": 2.5}"},
      {"role": "user", "content": [{"type": "text", "text": "part"}]}])", "messages");
    req.tools = *uaii::jinja::ParseJson(R"([{"type": "function", "function": {"name": "get",
      "description": "d", "parameters": {"type": "object", "properties": {"x": {"type": "integer"}}}}}])", "tools");
    req.bos_token = "<s>";
    req.eos_token = "</s>";
    req.enable_thinking = true;
    return uaii::chat::BuildContext(req);
  }();
  return ctx;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace uaii;
  auto tmpl = jinja::Template::Parse(std::string(fuzz::AsText(data, size)));
  if (!tmpl.ok()) return 0;
  jinja::RenderOptions opts;
  opts.limits.max_call_depth = 32;
  opts.limits.max_loop_iterations = 10'000;
  opts.limits.max_output_bytes = 64u << 10;
  opts.fixed_time = 1'700'000'000;
  (void)tmpl->Render(Context(), opts);
  return 0;
}
