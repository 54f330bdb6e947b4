// RenderChatTemplate and CheckJsonArray (uaii/chat.h): `uaii template` and the
// argument checks of `uaii chat` without a loaded model.
#include <string>

#include "chat/chat_template.h"
#include "chat/json.h"
#include "uaii/chat.h"
#include "uaii/str_cat.h"

namespace uaii {
namespace {

// `json` as a list; `key` unwraps an object such as {"messages": [...]}.
absl::StatusOr<jinja::Value> ParseList(std::string_view json, const std::string& origin, std::string_view key) {
  auto v = jinja::ParseJson(json, origin);
  if (!v.ok()) return v.status();
  if (v->is_dict())
    if (const jinja::Value* inner = v->dict->Find(key)) return *inner;
  if (!v->is_list())
    return absl::InvalidArgumentError(StrCat(origin, ": expected a JSON list (or an object with \"", key,
                                             "\"), got ", jinja::TypeName(*v)));
  return *v;
}

}  // namespace

absl::StatusOr<std::string> RenderChatTemplate(const std::string& model_path, const ChatRenderRequest& request) {
  chat::ChatRequest req;
  auto messages = ParseList(request.messages_json, request.messages_origin, "messages");
  if (!messages.ok()) return messages.status();
  req.messages = *std::move(messages);
  if (request.tools_json) {
    auto tools = ParseList(*request.tools_json, request.tools_origin, "tools");
    if (!tools.ok()) return tools.status();
    req.tools = *std::move(tools);
  }
  req.enable_thinking = request.enable_thinking;
  req.add_generation_prompt = request.add_generation_prompt;
  auto templates = chat::LoadModelTemplates(model_path);
  if (!templates.ok()) return templates.status();
  auto source = chat::SelectTemplate(*templates, chat::HasTools(req));
  if (!source.ok()) return source.status();
  req.bos_token = templates->bos_token;
  req.eos_token = templates->eos_token;
  return chat::RenderChat(*source, req);
}

absl::Status CheckJsonArray(std::string_view json, std::string_view origin, bool non_empty) {
  auto v = jinja::ParseJson(json, origin);
  if (!v.ok()) return v.status();
  if (!v->is_list() || (non_empty && v->list->empty()))
    return absl::InvalidArgumentError(StrCat(origin, ": expected a ", non_empty ? "non-empty " : "", "JSON array",
                                             non_empty ? " of messages" : ""));
  return absl::OkStatus();
}

}  // namespace uaii
