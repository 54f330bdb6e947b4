// ChatEngine: template rendering, prefix reuse across turns, and the error for a model
// without a chat template. Tiny random llama; a small template written here.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "uaii/chat.h"

using namespace uaii;

namespace {

std::string Fixture(const std::string& rel) {
  const char* dir = std::getenv("UAII_FIXTURE_DIR");
  return std::string(dir ? dir : UAII_FIXTURE_DIR) + "/" + rel;
}

// One file per process and call: ctest runs the cases of this file as parallel
// processes (and other checkouts may run them too), so a shared name races.
// `generation_prompt`: what the template writes for add_generation_prompt.
std::string WriteTemplate(const std::string& generation_prompt = "assistant:") {
  static int calls = 0;
  auto path = std::filesystem::temp_directory_path() /
              ("uaii_chat_engine_test." + std::to_string(::getpid()) + "." + std::to_string(++calls) + ".jinja");
  std::ofstream(path) << "{{ bos_token }}{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
                         "{% if add_generation_prompt %}" << generation_prompt << "{% endif %}";
  return path.string();
}

std::unique_ptr<ChatEngine> Engine(const std::string& template_path) {
  auto model = Model::Load(Fixture("tiny/tiny-llama-f32.gguf"));
  REQUIRE(model.ok());
  ChatEngineOptions o;
  o.session.threads = 1;
  o.session.max_context = 256;  // the tiny model's training context
  o.chat_template_path = template_path;
  auto e = ChatEngine::Create(*model, o);
  INFO((e.ok() ? "" : std::string(e.status().message())));
  REQUIRE(e.ok());
  return *std::move(e);
}

}  // namespace

TEST_CASE("chat engine: renders, streams, and reuses the conversation's cache", "[generation][chat]") {
  auto engine = Engine(WriteTemplate());
  ChatTurnRequest turn;
  turn.messages_json = R"([{"role":"user","content":"tok5 tok6"}])";
  turn.max_tokens = 5;
  auto text = engine->Render(turn);
  REQUIRE(text.ok());
  CHECK(*text == "<s>user: tok5 tok6\nassistant:");

  std::string streamed;
  auto first = engine->Run(turn, [&](const chat::OutputBlock& e) {
    CHECK(e.kind == chat::BlockKind::kText);
    streamed += e.text;
    return true;
  });
  REQUIRE(first.ok());
  CHECK(first->generation.cached_tokens == 0);
  // The parser trims a block's outer whitespace; the text is otherwise the raw reply.
  CHECK(first->generation.text.find(streamed) != std::string::npos);
  CHECK(first->reasoning_tokens == 0);

  // Second turn: the history, the reply, a new user message.
  ChatTurnRequest second = turn;
  second.messages_json = R"([{"role":"user","content":"tok5 tok6"},{"role":"assistant","content":"tok7"},)"
                         R"({"role":"user","content":"tok8"}])";
  auto r2 = engine->Run(second);
  REQUIRE(r2.ok());
  CHECK(r2->generation.cached_tokens > 0);
  CHECK(r2->generation.prefilled_tokens == r2->generation.prompt_tokens - r2->generation.cached_tokens);

  // A cold engine gives the same reply.
  auto cold = Engine(WriteTemplate())->Run(second);
  REQUIRE(cold.ok());
  CHECK(cold->generation.tokens == r2->generation.tokens);
}

TEST_CASE("chat engine: a model without a template fails with advice", "[generation][chat]") {
  auto model = Model::Load(Fixture("tiny/tiny-llama-f32.gguf"));
  REQUIRE(model.ok());
  auto e = ChatEngine::Create(*model, ChatEngineOptions{});
  REQUIRE(!e.ok());
  CHECK_THAT(std::string(e.status().message()), Catch::Contains("has no chat template") && Catch::Contains("--chat-template"));
}

TEST_CASE("chat engine: malformed messages are a named error", "[generation][chat]") {
  auto engine = Engine(WriteTemplate());
  ChatTurnRequest turn;
  turn.messages_json = "[{\"role\": ";
  auto r = engine->Run(turn);
  REQUIRE(!r.ok());
  CHECK_THAT(std::string(r.status().message()), Catch::Contains("messages"));
}

TEST_CASE("chat engine: reasoning tokens are counted whether thinking was asked for or is the default",
          "[generation][chat]") {
  // The generation prompt opens a thinking block, so the reply starts in thinking: a
  // template that thinks by default (the request says nothing) counts as asked.
  const std::string tmpl = WriteTemplate("assistant:<think>\n");
  ChatTurnRequest turn;
  turn.messages_json = R"([{"role":"user","content":"tok5 tok6"}])";
  turn.max_tokens = 4;
  auto by_default = Engine(tmpl)->Run(turn);
  REQUIRE(by_default.ok());
  CHECK(by_default->started_in_thinking);
  CHECK(by_default->reasoning_tokens > 0);
  CHECK(by_default->reasoning_tokens <= static_cast<int64_t>(by_default->generation.tokens.size()));
  turn.think = true;
  auto thinking = Engine(tmpl)->Run(turn);
  REQUIRE(thinking.ok());
  CHECK(thinking->reasoning_tokens == by_default->reasoning_tokens);
  // A reply outside any reasoning block counts none (the first test's template).
  auto plain = Engine(WriteTemplate())->Run(turn);
  REQUIRE(plain.ok());
  CHECK(!plain->started_in_thinking);
  CHECK(plain->reasoning_tokens == 0);
}

TEST_CASE("chat engine: a prepared prompt runs as the request itself", "[generation][chat]") {
  // Prepare once (what a server does to pick a slot), Run without rendering again: the
  // same reply as Run(request), on another engine of the same template.
  const std::string tmpl = WriteTemplate();
  ChatTurnRequest turn;
  turn.messages_json = R"([{"role":"user","content":"tok5 tok6"}])";
  turn.max_tokens = 6;
  auto direct = Engine(tmpl)->Run(turn);
  REQUIRE(direct.ok());
  auto renderer = Engine(tmpl);
  auto prompt = renderer->Prepare(turn);
  REQUIRE(prompt.ok());
  CHECK(prompt->text == *renderer->Render(turn));
  CHECK(prompt->tokens == *renderer->PromptTokens(turn));
  auto prepared = Engine(tmpl)->Run(turn, *prompt);
  REQUIRE(prepared.ok());
  CHECK(prepared->generation.tokens == direct->generation.tokens);
  CHECK(prepared->generation.prompt_tokens == static_cast<int64_t>(prompt->tokens.size()));
}
