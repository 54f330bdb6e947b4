// `uaii template` end to end: the printed prompt equals jinja2's golden render, the
// default model without a chat template fails naming the file, usage errors exit 2.
// Skips (printing SKIP) when the uaii binary or the shared data is absent.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "chat/json.h"
#include "test_util.h"

using namespace uaii::jinja;
using namespace uaii::jinja::testing;

namespace {

struct RunResult {
  int code;
  std::string out;
};

RunResult Run(const std::string& cmd) {
  RunResult r{-1, ""};
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int st = pclose(p);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

std::string Binary() { return UAII_BINARY_DIR "/uaii"; }

std::string WriteJson(const std::string& name, const Value& v) {
  std::string path = (std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()) + ".json")).string();
  std::ofstream(path, std::ios::binary) << JsonDump(v, {});
  return path;
}

}  // namespace

TEST_CASE("uaii template prints jinja2's render of the model's template", "[chat]") {
  std::string dir = SharedDir() + "/data/tokenizers/qwen3";
  if (!FileExists(Binary()) || !FileExists(dir + "/tokenizer_config.json")) {
    WARN("SKIP: needs " << Binary() << " and " << dir);
    return;
  }
  std::string golden_path = SourceDir() + "/tests/golden/chat/qwen3.json";
  auto golden = ParseJson(ReadFile(golden_path), golden_path);
  REQUIRE(golden.ok());
  for (const Value& c : *Field(*golden, "cases")->list) {
    if (!Field(c, "output")) continue;
    std::string cmd = Binary() + " template --model " + dir + " --messages " + WriteJson("msgs", *Field(c, "messages"));
    if (const Value* t = Field(c, "tools")) cmd += " --tools " + WriteJson("tools", *t);
    if (const Value* t = Field(c, "enable_thinking")) cmd += Truthy(*t) ? " --think" : " --no-think";
    if (!Truthy(*Field(c, "add_generation_prompt"))) cmd += " --no-generation-prompt";
    INFO(Field(c, "name")->str << ": " << cmd);
    RunResult r = Run(cmd);
    CHECK(r.code == 0);
    CHECK(r.out == Field(c, "output")->str);
  }
}

TEST_CASE("uaii template on a model without a chat template names the file", "[chat]") {
  std::string dir = SharedDir() + "/data/tokenizers/llama2";
  if (!FileExists(Binary()) || !FileExists(dir + "/tokenizer_config.json")) {
    WARN("SKIP: needs " << Binary() << " and " << dir);
    return;
  }
  Value msgs = *ParseJson(R"([{"role": "user", "content": "hi"}])", "test");
  RunResult r = Run(Binary() + " template --model " + dir + " --messages " + WriteJson("msgs", msgs));
  CHECK(r.code == 1);
  CHECK(r.out.find(dir + "/tokenizer_config.json has no chat template") != std::string::npos);
  if (FileExists("/tmp/gemma.gguf")) {  // the default model carries no template
    r = Run("UAII_MODEL=/tmp/gemma.gguf " + Binary() + " template --messages " + WriteJson("msgs", msgs));
    CHECK(r.code == 1);
    CHECK(r.out.find("/tmp/gemma.gguf has no chat template") != std::string::npos);
  }
}

TEST_CASE("uaii template usage errors exit 2", "[chat]") {
  if (!FileExists(Binary())) {
    WARN("SKIP: needs " << Binary());
    return;
  }
  CHECK(Run(Binary() + " template").code == 2);
  CHECK(Run(Binary() + " template --messages x.json --think --no-think").code == 2);
  CHECK(Run(Binary() + " template --bogus").code == 2);
}
