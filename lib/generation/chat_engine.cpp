#include "uaii/chat.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "chat/chat_template.h"
#include "chat/json.h"
#include "chat/output_parser.h"
#include "chat/output_syntax.h"
#include "chat/tool_call_xml.h"
#include "generation/tool_call_grammar.h"
#include "generation/tool_call_ids.h"
#include "util/str_cat.h"

namespace uaii {
namespace {

absl::StatusOr<chat::ModelTemplates> LoadTemplates(const Model& model, const std::string& override_path) {
  auto own = chat::LoadModelTemplates(model.info().path);
  if (!own.ok()) return own.status();
  if (override_path.empty()) return own;
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(override_path, ec) || fs::path(override_path).filename() == "tokenizer_config.json") {
    auto other = chat::LoadModelTemplates(override_path);
    if (!other.ok()) return other.status();
    // Special-token strings come from the model's own vocabulary when it has them.
    if (own->bos_token) other->bos_token = own->bos_token;
    if (own->eos_token) other->eos_token = own->eos_token;
    return other;
  }
  std::ifstream in(override_path, std::ios::binary);
  if (!in) return absl::NotFoundError(StrCat("chat template ", override_path, ": cannot open"));
  std::stringstream ss;
  ss << in.rdbuf();
  own->named = {{"default", ss.str()}};
  own->origin = override_path;
  own->builtin_note.clear();
  return own;
}

}  // namespace

struct ChatEngine::Impl {
  std::shared_ptr<Generator> generator;
  chat::ModelTemplates templates;
  chat::ChatSyntax syntax;
  ToolCallIds call_ids;
};

ChatEngine::ChatEngine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ChatEngine::~ChatEngine() = default;
void ChatEngine::Reset() { impl_->generator->Reset(); }
const chat::ChatSyntax& ChatEngine::syntax() const { return impl_->syntax; }
const std::string& ChatEngine::template_note() const { return impl_->templates.builtin_note; }
Generator& ChatEngine::generator() { return *impl_->generator; }

absl::StatusOr<std::unique_ptr<ChatEngine>> ChatEngine::Create(std::shared_ptr<Generator> generator,
                                                               const std::string& chat_template_path) {
  auto templates = LoadTemplates(generator->model(), chat_template_path);
  if (!templates.ok()) return templates.status();
  if (templates->named.empty())
    return absl::NotFoundError(StrCat(templates->origin,
                                      " has no chat template; supply one "
                                      "(a .jinja file or a tokenizer_config.json; on the command line: --chat-template FILE)"));
  auto impl = std::make_unique<Impl>();
  impl->templates = *std::move(templates);
  // The syntax of the template a plain request picks (tool_use templates share it).
  auto source = chat::SelectTemplate(impl->templates, /*has_tools=*/false);
  if (!source.ok()) return source.status();
  const Tokenizer& tok = generator->model().tokenizer();
  impl->syntax = chat::DetectChatSyntax(*source, [&tok](std::string_view piece) {
    return tok.PieceToId(piece) != kNoToken;
  });
  impl->generator = std::move(generator);
  return std::unique_ptr<ChatEngine>(new ChatEngine(std::move(impl)));
}

absl::StatusOr<std::unique_ptr<ChatEngine>> ChatEngine::Create(std::shared_ptr<const Model> model,
                                                               const ChatEngineOptions& options) {
  auto gen = Generator::Create(std::move(model), options.session);
  if (!gen.ok()) return gen.status();
  return Create(std::shared_ptr<Generator>(*std::move(gen)), options.chat_template_path);
}

absl::StatusOr<std::string> ChatEngine::Render(const ChatTurnRequest& request) const {
  chat::ChatRequest cr;
  auto messages = jinja::ParseJson(request.messages_json, "messages");
  if (!messages.ok()) return messages.status();
  cr.messages = *std::move(messages);
  if (request.tools_json) {
    auto tools = jinja::ParseJson(*request.tools_json, "tools");
    if (!tools.ok()) return tools.status();
    cr.tools = *std::move(tools);
  }
  cr.add_generation_prompt = request.add_generation_prompt;
  cr.enable_thinking = request.think;
  cr.bos_token = impl_->templates.bos_token;
  cr.eos_token = impl_->templates.eos_token;
  auto source = chat::SelectTemplate(impl_->templates, chat::HasTools(cr));
  if (!source.ok()) return source.status();
  return chat::RenderChat(*source, cr);
}

namespace {
// The rendered prompt spells its special tokens out; BOS is not doubled when the
// template already wrote it.
absl::StatusOr<std::vector<TokenId>> EncodePrompt(const Tokenizer& tok, const std::string& prompt_text) {
  return tok.Encode(prompt_text, EncodeOptions{.parse_special = true, .add_special = true});
}
}  // namespace

absl::StatusOr<ChatEngine::Prompt> ChatEngine::Prepare(const ChatTurnRequest& request) const {
  auto text = Render(request);
  if (!text.ok()) return text.status();
  auto tokens = EncodePrompt(impl_->generator->model().tokenizer(), *text);
  if (!tokens.ok()) return tokens.status();
  Prompt prompt{*std::move(text), *std::move(tokens), ""};
  if (request.tool_choice.mode != ToolChoice::Mode::kAuto) {
    if (!request.tools_json)
      return absl::InvalidArgumentError("tool_choice: forcing a tool call needs the request's tools");
    if (!request.grammar.empty())
      return absl::InvalidArgumentError("tool_choice: a forced tool call and a grammar exclude each other");
    auto grammar = ToolCallGrammar(impl_->syntax, *request.tools_json, request.tool_choice,
                                   impl_->syntax.StartsInThinking(prompt.text),
                                   /*thinking_allowed=*/request.think.value_or(true));
    if (!grammar.ok())
      return absl::InvalidArgumentError(StrCat("tool_choice: ", std::string(grammar.status().message())));
    prompt.tool_call_grammar = *std::move(grammar);
  }
  return prompt;
}

absl::StatusOr<std::vector<TokenId>> ChatEngine::PromptTokens(const ChatTurnRequest& request) const {
  auto prompt = Prepare(request);
  if (!prompt.ok()) return prompt.status();
  return std::move(prompt->tokens);
}

absl::StatusOr<ChatTurnResult> ChatEngine::Run(const ChatTurnRequest& request, const ChatEventCallback& on_event) {
  auto prompt = Prepare(request);
  if (!prompt.ok()) return prompt.status();
  return Run(request, *std::move(prompt), on_event);
}

absl::StatusOr<ChatTurnResult> ChatEngine::Run(const ChatTurnRequest& request, Prompt prompt,
                                               const ChatEventCallback& on_event) {
  GenerationRequest gen;
  gen.prompt = std::move(prompt.tokens);
  gen.max_tokens = request.max_tokens;
  gen.sampling = request.sampling;
  gen.stop = request.stop;
  gen.grammar = request.grammar;
  ChatTurnResult result;
  result.started_in_thinking = impl_->syntax.StartsInThinking(prompt.text);
  if (!prompt.tool_call_grammar.empty()) gen.grammar = std::move(prompt.tool_call_grammar);
  chat::ChatOutputParser parser(impl_->syntax, result.started_in_thinking);
  if (request.tools_json) {
    // Qwen 3.5's XML calls carry bare values: the declared types say which stay strings.
    auto types = chat::ToolParamTypesFromJson(*request.tools_json);
    if (!types.ok()) return types.status();
    parser.SetToolParamTypes(*std::move(types));
  }
  bool go_on = true;
  impl_->call_ids.NewReply();
  auto deliver = [&](std::vector<chat::OutputBlock> events) {
    impl_->call_ids.Assign(events);
    for (const auto& e : events)
      if (go_on && on_event && !on_event(e)) go_on = false;
    chat::AppendBlocks(result.blocks, events);
  };
  // Every token the parser reads inside a reasoning block counts, whether the request
  // asked for thinking or the template thinks by default (as llama-server counts its
  // reasoning_content).
  auto r = impl_->generator->Run(gen, [&](TokenId id, std::string_view text) {
    deliver(parser.Feed(text));
    if (id != kNoToken && parser.last_piece_class() == chat::PieceClass::kThinking)
      ++result.reasoning_tokens;
    if (go_on && request.on_token && id != kNoToken && !request.on_token(id, text)) go_on = false;
    return go_on;
  });
  if (!r.ok()) return r.status();
  deliver(parser.Flush());
  result.generation = *std::move(r);
  return result;
}

}  // namespace uaii
