// The real chat templates (/work/shared/data/tokenizers/*/tokenizer_config.json)
// rendered by uaii must equal jinja2's renders in HF's environment
// (tests/golden/chat/<model>.json, made by tests/oracles/chat_template_goldens.py),
// including the cases where the template raises.
#include <catch2/catch.hpp>

#include <filesystem>
#include <set>

#include "chat/builtin_templates.h"
#include "chat/chat_template.h"
#include "loaders/model_locator.h"
#include "test_util.h"

using namespace uaii;
using namespace uaii::jinja;
using namespace uaii::jinja::testing;

namespace {

// Every case of the golden rendered from `templates` equals jinja2's output (or error).
void CheckGolden(const std::string& model, const chat::ModelTemplates* templates) {
  std::string golden_path = SourceDir() + "/tests/golden/chat/" + model + ".json";
  auto golden = ParseJson(ReadFile(golden_path), golden_path);
  REQUIRE(golden.ok());
  const Value* bos = Field(*golden, "bos_token");
  const Value* eos = Field(*golden, "eos_token");
  CHECK(templates->bos_token.value_or("<none>") == (bos->is_string() ? bos->str : "<none>"));
  CHECK(templates->eos_token.value_or("<none>") == (eos->is_string() ? eos->str : "<none>"));
  RenderOptions opts;
  opts.fixed_time = Field(*golden, "strftime_now_epoch")->as_int();
  const Value* cases = Field(*golden, "cases");
  REQUIRE(cases);
  REQUIRE(cases->list->size() >= 7);
  for (const Value& c : *cases->list) {
    chat::ChatRequest req;
    req.messages = *Field(c, "messages");
    if (const Value* t = Field(c, "tools")) req.tools = *t;
    req.add_generation_prompt = Truthy(*Field(c, "add_generation_prompt"));
    if (const Value* t = Field(c, "enable_thinking")) req.enable_thinking = Truthy(*t);
    req.bos_token = templates->bos_token;
    req.eos_token = templates->eos_token;
    auto source = chat::SelectTemplate(*templates, chat::HasTools(req));
    REQUIRE(source.ok());
    auto out = chat::RenderChat(*source, req, opts);
    INFO(model << " / " << Field(c, "name")->str);
    if (const Value* want = Field(c, "output")) {
      INFO("uaii: " << (out.ok() ? *out : std::string(out.status().message())));
      REQUIRE(out.ok());
      CHECK(*out == want->str);
    } else {
      const Value& err = *Field(c, "error");
      std::string want_err = Field(err, "type")->str + ": " + Field(err, "message")->str;
      INFO("want error: " << want_err);
      REQUIRE_FALSE(out.ok());
      CHECK(std::string(out.status().message()).find(want_err) != std::string::npos);
    }
  }
}

void CheckModel(const std::string& model) {
  std::string dir = SharedDir() + "/data/tokenizers/" + model;
  if (!FileExists(dir + "/tokenizer_config.json")) {
    WARN("SKIP: " << dir << " is absent");
    return;
  }
  auto templates = chat::LoadModelTemplates(dir);
  INFO(templates.status().message());
  REQUIRE(templates.ok());
  CheckGolden(model, &*templates);
}

// A built-in template (lib/chat/templates) with the golden's special-token strings.
void CheckBuiltin(const std::string& name) {
  const chat::BuiltinTemplate* b = chat::FindBuiltinTemplate(name);
  REQUIRE(b != nullptr);
  const std::string golden_path = SourceDir() + "/tests/golden/chat/builtin_" + name + ".json";
  auto golden = ParseJson(ReadFile(golden_path), golden_path);
  REQUIRE(golden.ok());
  chat::ModelTemplates t;
  t.named["default"] = std::string(b->source);
  const Value* bos = Field(*golden, "bos_token");
  const Value* eos = Field(*golden, "eos_token");
  if (bos->is_string()) t.bos_token = bos->str;
  if (eos->is_string()) t.eos_token = eos->str;
  CheckGolden("builtin_" + name, &t);
}

std::string DefaultModelFile() {
  const std::string p = uaii::DefaultModelPath();
  return FileExists(p) ? p : "";
}

}  // namespace

TEST_CASE("built-in chat templates match jinja2", "[chat]") {
  for (const char* name : {"gemma", "llama3", "chatml"}) {
    INFO(name);
    CheckBuiltin(name);
  }
}

TEST_CASE("gemma3 chat template matches jinja2", "[chat]") { CheckModel("gemma3"); }
TEST_CASE("llama3 chat template matches jinja2", "[chat]") { CheckModel("llama3"); }
TEST_CASE("llama3_1 chat template matches jinja2", "[chat]") { CheckModel("llama3_1"); }
TEST_CASE("qwen3 chat template matches jinja2", "[chat]") { CheckModel("qwen3"); }

// Gemma 4's template ships inside its GGUF files: llama.cpp's Gemma 4 vocabulary file
// (tests/fixtures/make_llama_vocabs.py extracts it from the llama-cpp-python sdist).
TEST_CASE("gemma4 chat template (from llama.cpp's Gemma 4 GGUF) matches jinja2", "[chat]") {
  const std::string path = std::string(UAII_FIXTURE_DIR) + "/llama-vocab/ggml-vocab-gemma-4.gguf";
  if (!FileExists(path)) {
    WARN("SKIP: " << path << " is absent (tests/fixtures/make_llama_vocabs.py needs the llama-cpp-python sdist)");
    return;
  }
  auto templates = chat::LoadModelTemplates(path);
  INFO(templates.status().message());
  REQUIRE(templates.ok());
  CheckGolden("gemma4", &*templates);
}

TEST_CASE("every committed chat golden has a test", "[chat]") {
  for (const auto& e : std::filesystem::directory_iterator(SourceDir() + "/tests/golden/chat")) {
    std::string stem = e.path().stem().string();
    if (stem == "jinja_snippets") continue;
    INFO(stem);
    CHECK((stem == "gemma3" || stem == "gemma4" || stem == "llama3" || stem == "llama3_1" || stem == "qwen3" || stem == "builtin_gemma" ||
           stem == "builtin_llama3" || stem == "builtin_chatml"));
  }
}

TEST_CASE("a tokenizer_config without chat_template fails with a clear error", "[chat]") {
  std::string dir = SharedDir() + "/data/tokenizers/llama2";
  if (!FileExists(dir + "/tokenizer_config.json")) {
    WARN("SKIP: " << dir << " is absent");
    return;
  }
  auto t = chat::LoadModelTemplates(dir);
  INFO(t.status().message());
  REQUIRE(t.ok());
  auto s = chat::SelectTemplate(*t, false);
  REQUIRE_FALSE(s.ok());
  CHECK(std::string(s.status().message()).find("tokenizer_config.json has no chat template") != std::string::npos);
}

TEST_CASE("a GGUF without a chat template gets the built-in one its vocabulary chooses", "[chat]") {
  auto pieces = [](std::set<std::string> p) {
    return [p](std::string_view s) { return p.count(std::string(s)) > 0; };
  };
  CHECK(chat::PickBuiltinTemplate(pieces({"<start_of_turn>", "<end_of_turn>"}))->name == "gemma");
  CHECK(chat::PickBuiltinTemplate(pieces({"<|start_header_id|>", "<|eot_id|>"}))->name == "llama3");
  CHECK(chat::PickBuiltinTemplate(pieces({"<|im_start|>", "<|im_end|>"}))->name == "chatml");
  CHECK(chat::PickBuiltinTemplate(pieces({"<start_of_turn>"})) == nullptr);  // both markers or none
  CHECK(chat::PickBuiltinTemplate(pieces({})) == nullptr);
  // The default model (Gemma 3 270M GGUF) carries no template: the Gemma one stands in.
  const std::string model = DefaultModelFile();
  if (model.empty()) {
    WARN("SKIP: the default model is not installed");
    return;
  }
  auto t = chat::LoadModelTemplates(model);
  REQUIRE(t.ok());
  REQUIRE(t->named.count("default"));
  CHECK(t->named.at("default") == chat::FindBuiltinTemplate("gemma")->source);
  CHECK_THAT(t->builtin_note, Catch::Contains("carries no chat template; using the built-in gemma template") &&
                                  Catch::Contains("<start_of_turn>"));
}
