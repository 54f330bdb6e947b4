// The messages and tools JSON that `uaii chat` / `uaii template` and the C ABI
// (uaii_session_chat) accept: the argument check (CheckJsonArray, lib/generation
// chat_render.cpp), the JSON reader (lib/chat json.cpp) and the render through the
// real chat templates of Llama 3, Qwen 3 and Gemma 3 (../shared/data/tokenizers) as
// ChatEngine::Render does it. Input: the messages JSON, optionally followed by
// kToolsSeparator and the tools JSON; the last byte picks the template and the flags.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "chat/chat_template.h"
#include "chat/json.h"
#include "fuzz_util.h"
#include "uaii/chat.h"

namespace {

constexpr std::string_view kToolsSeparator = "\n---tools---\n";

std::vector<uaii::chat::ModelTemplates>& Templates() {
  static std::vector<uaii::chat::ModelTemplates> all;
  return all;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  for (const char* name : {"llama3_1", "qwen3", "gemma3"}) {
    auto t = uaii::chat::LoadModelTemplates(uaii::fuzz::SharedDataPath(std::string("tokenizers/") + name));
    if (t.ok() && !t->named.empty()) Templates().push_back(*std::move(t));
    else std::fprintf(stderr, "fuzz_chat_request: no chat template for %s\n", name);
  }
  if (Templates().empty()) std::abort();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace uaii;
  if (size < 1) return 0;
  const uint8_t pick = data[size - 1];
  std::string_view in = fuzz::AsText(data, size - 1), messages = in, tools;
  bool has_tools = false;
  if (size_t at = in.find(kToolsSeparator); at != std::string_view::npos) {
    messages = in.substr(0, at);
    tools = in.substr(at + kToolsSeparator.size());
    has_tools = true;
  }
  (void)CheckJsonArray(messages, "messages", /*non_empty=*/true);
  if (has_tools) (void)CheckJsonArray(tools, "tools");
  chat::ChatRequest req;
  auto m = jinja::ParseJson(messages, "messages");
  if (!m.ok()) return 0;
  req.messages = *std::move(m);
  if (has_tools) {
    auto t = jinja::ParseJson(tools, "tools");
    if (!t.ok()) return 0;
    req.tools = *std::move(t);
  }
  req.add_generation_prompt = (pick & 0x10) != 0;
  if (pick & 0x20) req.enable_thinking = (pick & 0x40) != 0;
  const auto& templates = Templates()[pick % Templates().size()];
  req.bos_token = templates.bos_token;
  req.eos_token = templates.eos_token;
  auto source = chat::SelectTemplate(templates, chat::HasTools(req));
  if (!source.ok()) return 0;
  (void)chat::RenderChat(*source, req);
  return 0;
}
