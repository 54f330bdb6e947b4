// Where chat templates come from: tokenizer_config.json (string or named list),
// chat_template.jinja, GGUF metadata (tokenizer.chat_template[.NAME]), and HF's
// choice between named templates.
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>

#include "chat/chat_template.h"
#include "test_util.h"

using namespace uaii;
using namespace uaii::jinja::testing;

namespace {

std::string TempDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("uaii_chat_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

void Write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// A GGUF v3 file with only metadata (no tensors): string KVs plus a token list and
// BOS / EOS ids.
std::string WriteGguf(const std::string& path, const std::vector<std::pair<std::string, std::string>>& strings) {
  std::string b = "GGUF";
  auto u32 = [&](uint32_t v) { b.append(reinterpret_cast<const char*>(&v), 4); };
  auto u64 = [&](uint64_t v) { b.append(reinterpret_cast<const char*>(&v), 8); };
  auto str = [&](const std::string& s) {
    u64(s.size());
    b += s;
  };
  u32(3);
  u64(0);
  u64(strings.size() + 3);
  for (const auto& [k, v] : strings) {
    str(k);
    u32(8);
    str(v);
  }
  str("tokenizer.ggml.tokens");
  u32(9);
  u32(8);
  u64(3);
  str("<unk>");
  str("<s>");
  str("</s>");
  str("tokenizer.ggml.bos_token_id");
  u32(4);
  u32(1);
  str("tokenizer.ggml.eos_token_id");
  u32(4);
  u32(2);
  while (b.size() % 32) b += '\0';
  Write(path, b);
  return path;
}

}  // namespace

TEST_CASE("tokenizer_config.json with a named template list picks as HF does", "[chat]") {
  std::string dir = TempDir("list");
  Write(dir + "/tokenizer_config.json",
        R"({"bos_token": {"content": "<s>", "lstrip": false}, "eos_token": "</s>",
            "chat_template": [{"name": "default", "template": "D{{ bos_token }}"},
                              {"name": "tool_use", "template": "T{{ tools | length }}"}]})");
  auto t = chat::LoadModelTemplates(dir);
  REQUIRE(t.ok());
  CHECK(t->bos_token == std::optional<std::string>("<s>"));
  CHECK(t->eos_token == std::optional<std::string>("</s>"));
  CHECK(*chat::SelectTemplate(*t, false) == "D{{ bos_token }}");
  CHECK(*chat::SelectTemplate(*t, true) == "T{{ tools | length }}");
  std::filesystem::remove_all(dir);
}

TEST_CASE("several templates without a default is an error listing the names", "[chat]") {
  std::string dir = TempDir("nodefault");
  Write(dir + "/tokenizer_config.json",
        R"({"chat_template": [{"name": "a", "template": "A"}, {"name": "b", "template": "B"}]})");
  auto t = chat::LoadModelTemplates(dir);
  REQUIRE(t.ok());
  auto s = chat::SelectTemplate(*t, false);
  REQUIRE_FALSE(s.ok());
  CHECK(std::string(s.status().message()).find("a, b") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("chat_template.jinja is used when tokenizer_config.json has none", "[chat]") {
  std::string dir = TempDir("jinjafile");
  Write(dir + "/tokenizer_config.json", R"({"eos_token": "<e>"})");
  Write(dir + "/chat_template.jinja", "{% for m in messages %}{{ m.content }}{% endfor %}{{ eos_token }}");
  auto t = chat::LoadModelTemplates(dir);
  REQUIRE(t.ok());
  auto s = chat::SelectTemplate(*t, false);
  REQUIRE(s.ok());
  chat::ChatRequest req;
  auto msgs = jinja::ParseJson(R"([{"role": "user", "content": "hi"}])", "test");
  req.messages = *msgs;
  req.eos_token = t->eos_token;
  CHECK(*chat::RenderChat(*s, req) == "hi<e>");
  std::filesystem::remove_all(dir);
}

TEST_CASE("malformed tokenizer_config.json gives an error naming the file", "[chat]") {
  std::string dir = TempDir("bad");
  Write(dir + "/tokenizer_config.json", "{not json");
  auto t = chat::LoadModelTemplates(dir);
  REQUIRE_FALSE(t.ok());
  CHECK(std::string(t.status().message()).find("tokenizer_config.json") != std::string::npos);
  Write(dir + "/tokenizer_config.json", R"({"chat_template": 5})");
  t = chat::LoadModelTemplates(dir);
  REQUIRE_FALSE(t.ok());
  CHECK(std::string(t.status().message()).find("chat_template must be a string or a list") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("GGUF metadata: default and named templates, BOS/EOS pieces", "[chat]") {
  std::string dir = TempDir("gguf");
  std::string path = WriteGguf(dir + "/m.gguf", {{"general.architecture", "llama"},
                                                  {"tokenizer.chat_template", "{{ bos_token }}default"},
                                                  {"tokenizer.chat_template.tool_use", "{{ eos_token }}tools"}});
  auto t = chat::LoadModelTemplates(path);
  REQUIRE(t.ok());
  CHECK(t->named.size() == 2);
  CHECK(t->bos_token == std::optional<std::string>("<s>"));
  CHECK(t->eos_token == std::optional<std::string>("</s>"));
  chat::ChatRequest req;
  req.messages = jinja::Value::MakeList();
  req.bos_token = t->bos_token;
  req.eos_token = t->eos_token;
  CHECK(*chat::RenderChat(*chat::SelectTemplate(*t, false), req) == "<s>default");
  CHECK(*chat::RenderChat(*chat::SelectTemplate(*t, true), req) == "</s>tools");
  std::filesystem::remove_all(dir);
}

TEST_CASE("a GGUF without tokenizer.chat_template fails naming the file", "[chat]") {
  std::string dir = TempDir("gguf_none");
  std::string path = WriteGguf(dir + "/none.gguf", {{"general.architecture", "llama"}});
  auto t = chat::LoadModelTemplates(path);
  REQUIRE(t.ok());
  auto s = chat::SelectTemplate(*t, false);
  REQUIRE_FALSE(s.ok());
  CHECK(std::string(s.status().message()).find(path + " has no chat template") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("variables: tools undefined unless declared, thinking false unless enabled", "[chat]") {
  chat::ChatRequest req;
  req.messages = jinja::Value::MakeList();
  std::string probe =
      "{{ tools is defined }}|{{ enable_thinking }}|{{ thinking }}|{{ preserve_thinking }}|"
      "{{ add_generation_prompt }}|{{ bos_token is defined }}";
  CHECK(*chat::RenderChat(probe, req) == "False|False|False|False|True|False");
  req.tools = jinja::Value::MakeList();  // an empty list declares no tool
  req.enable_thinking = true;
  req.add_generation_prompt = false;
  req.bos_token = "<b>";
  CHECK(*chat::RenderChat(probe, req) == "False|True|True|False|False|True");
  req.tools->list->push_back(jinja::Value::String("t"));
  CHECK(*chat::RenderChat(probe, req) == "True|True|True|False|False|True");
  CHECK(chat::HasTools(req));
  // HF's {% generation %} tags (assistant masks) render their body.
  CHECK(*chat::RenderChat("a{% generation %}b{% endgeneration %}c", req) == "abc");
}
