// Hostile tokenizer.json files (docs/reliability.md, "Hostile input"): each is refused
// with a status that names the file and the cause — no crash, no allocation sized by a
// hostile id, no misleading message from a later stage.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "uaii/tokenizer.h"

namespace {

std::string Write(const std::string& name, const std::string& body) {
  auto dir = std::filesystem::temp_directory_path() / ("uaii_hostile_tok_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto path = (dir / name).string();
  std::ofstream(path, std::ios::binary) << body;
  return path;
}

// A byte-level BPE over {a, b, ab} with `model_extra` spliced into the model object and
// `top_extra` into the top level.
std::string Bpe(const std::string& vocab, const std::string& merges, const std::string& top_extra = "") {
  return R"({"model":{"type":"BPE","vocab":{)" + vocab + R"(},"merges":[)" + merges + "]}" +
         (top_extra.empty() ? "" : "," + top_extra) + "}";
}

}  // namespace

TEST_CASE("hostile tokenizer.json files are refused by name", "[tokenizers][hostile]") {
  const std::string ok_vocab = R"("a":0,"b":1,"ab":2)";
  struct Case {
    const char* name;
    std::string body;
    const char* want;
  };
  const Case cases[] = {
      {"merge_unknown_left", Bpe(ok_vocab, R"(["x","b"])"), R"(BPE merge 0 "x b": x is not in the vocabulary)"},
      {"merge_unknown_right", Bpe(ok_vocab, R"("a y")"), "y is not in the vocabulary"},
      {"merge_result_unknown", Bpe(R"("a":0,"b":1)", R"(["a","b"])"), "ab is not in the vocabulary"},
      {"merge_no_space", Bpe(ok_vocab, R"("ab")"), "has no space"},
      {"merge_not_pair", Bpe(ok_vocab, R"(["a"])"), "neither"},
      {"merge_not_strings", Bpe(ok_vocab, R"([1,2])"), "not two strings"},
      {"duplicate_id", Bpe(R"("a":0,"b":0,"ab":2)", ""), R"(gives id 0 to both "a" and "b")"},
      {"negative_id", Bpe(R"("a":-1,"b":1)", ""), R"("a" has no valid id (-1 is outside)"},
      {"oversized_id", Bpe(R"("a":0,"b":2147483647)", ""), "2147483647 is outside [0, 50000000]"},
      // fuzz_tokenizer_json (out of memory): one id of 33 333 218 in a 4 KB file sized a
      // dense vocabulary of 33 million entries.
      {"sparse_id", Bpe(R"("a":0,"b":33333218)", ""), "token id 33333218 is far beyond the 2 tokens"},
      {"sparse_added_id", Bpe(ok_vocab, "", R"("added_tokens":[{"id":9000000,"content":"<x>","special":true}])"),
       "token id 9000000 is far beyond the 4 tokens"},
      {"id_not_integer", Bpe(R"("a":"zero")", ""), "not an integer"},
      {"added_id_oversized",
       Bpe(ok_vocab, "", R"("added_tokens":[{"id":4294967296,"content":"<x>","special":true}])"),
       R"(added_tokens entry "<x>" without a valid id)"},
      {"added_id_missing", Bpe(ok_vocab, "", R"("added_tokens":[{"content":"<x>"}])"), "without a valid id"},
      {"invalid_regex",
       Bpe(ok_vocab, "", R"("pre_tokenizer":{"type":"Split","pattern":{"Regex":"(a"},"behavior":"Isolated"})"),
       R"(invalid regex "(a")"},
      {"no_model", R"({"added_tokens":[]})", R"(no "model" object)"},
      {"no_vocab", R"({"model":{"type":"BPE","merges":[]}})", "model.vocab missing"},
      {"not_json", "{\"model\":", "tokenizer.json"},
      {"invalid_utf8_key", "{\"model\":{\"type\":\"BPE\",\"vocab\":{\"\xff\xfe\":0},\"merges\":[]}}", "UTF-8"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    const std::string path = Write(std::string(c.name) + ".json", c.body);
    auto t = uaii::Tokenizer::FromTokenizerJson(path);
    REQUIRE(!t.ok());
    const std::string msg(t.status().message());
    INFO(msg);
    CHECK(msg.find(path) != std::string::npos);  // names the file
    CHECK(msg.find(c.want) != std::string::npos);
  }
}
