// Public API: thread safety, streaming decode, vocabulary queries, load errors.
#include <catch2/catch.hpp>

#include <thread>

#include "golden_util.h"
#include "uaii/tokenizer.h"

namespace {
std::unique_ptr<uaii::Tokenizer> Spm() {
  auto t = uaii::Tokenizer::Load(uaii::testing::SourcePath("tests/golden/tokenizers/spm_tiny.model"));
  REQUIRE(t.ok());
  return std::move(*t);
}
}  // namespace

TEST_CASE("one tokenizer used from several threads gives the same ids", "[tokenizers][threads]") {
  std::unique_ptr<uaii::Tokenizer> tok;
  if (uaii::testing::HaveShared()) {
    auto t = uaii::Tokenizer::Load(uaii::testing::SharedDir() + "/data/tokenizers/llama3");
    REQUIRE(t.ok());
    tok = std::move(*t);
  } else {
    tok = Spm();
  }
  std::vector<std::string> texts;
  for (int i = 0; i < 64; ++i)
    texts.push_back("Thread " + std::to_string(i * 7919) + " says héllo 世界 👍🏽\n\tdon't stop " +
                    std::string(i % 13, ' ') + "end");
  std::vector<std::vector<uaii::TokenId>> want;
  for (const auto& t : texts) want.push_back(tok->Encode(t).value());
  std::vector<int> mismatches(8, 0);
  std::vector<std::thread> threads;
  for (int th = 0; th < 8; ++th)
    threads.emplace_back([&, th] {
      for (int rep = 0; rep < 20; ++rep)
        for (size_t i = 0; i < texts.size(); ++i) {
          const size_t k = (i + th * 5) % texts.size();
          if (tok->Encode(texts[k]).value() != want[k]) ++mismatches[th];
        }
    });
  for (auto& t : threads) t.join();
  for (int m : mismatches) CHECK(m == 0);
}

TEST_CASE("streaming decode never emits half a character", "[tokenizers][stream]") {
  auto tok = Spm();
  const std::string text = "日本語 😀 café \xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD";
  auto ids = tok->Encode(text, {.parse_special = false, .add_special = false}).value();
  uaii::StreamDecoder dec(*tok);
  std::string out;
  for (auto id : ids) {
    std::string piece = dec.Push(id);
    bool incomplete = false;
    (void)incomplete;
    // Every emitted chunk is complete, valid UTF-8 on its own.
    for (size_t i = 0; i < piece.size();) {
      const auto b = static_cast<uint8_t>(piece[i]);
      const size_t n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : 4;
      REQUIRE(i + n <= piece.size());
      i += n;
    }
    out += piece;
  }
  out += dec.Flush();
  CHECK(out == text);
  // Bytes that can never become valid come out as U+FFFD.
  const auto ff = tok->PieceToId("<0xFF>");
  REQUIRE(ff != uaii::kNoToken);
  uaii::StreamDecoder bad(*tok);
  CHECK(bad.Push(ff) == "\xEF\xBF\xBD");
}

TEST_CASE("vocabulary queries and errors", "[tokenizers][api]") {
  auto tok = Spm();
  CHECK(tok->vocab_size() > 100);
  const auto bos = tok->special_ids().bos;
  REQUIRE(bos != uaii::kNoToken);
  CHECK(tok->Type(bos) == uaii::TokenType::kControl);
  CHECK(tok->PieceToId(tok->Piece(bos)) == bos);
  CHECK(tok->IsEndOfGeneration(tok->special_ids().eos));
  CHECK(tok->Type(tok->PieceToId("<0x41>")) == uaii::TokenType::kByte);
  // Special tokens are parsed only when asked.
  const std::string eos_text(tok->Piece(tok->special_ids().eos));
  auto parsed = tok->Encode("a" + eos_text, {.parse_special = true, .add_special = false}).value();
  CHECK(parsed.back() == tok->special_ids().eos);
  auto raw = tok->Encode("a" + eos_text, {.parse_special = false, .add_special = false}).value();
  CHECK(raw.back() != tok->special_ids().eos);
  // BOS is never doubled.
  auto twice = tok->Encode(std::string(tok->Piece(bos)) + "x", {.parse_special = true, .add_special = true}).value();
  CHECK(twice[0] == bos);
  CHECK(twice[1] != bos);

  auto missing = uaii::Tokenizer::Load("/nonexistent/tokenizer");
  CHECK(!missing.ok());
}

TEST_CASE("tokenizer.json errors name the cause", "[tokenizers][api]") {
  const std::string dir = std::string(UAII_FIXTURE_DIR) + "/tok_errors";
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& body) {
    FILE* f = std::fopen((dir + "/" + name).c_str(), "w");
    std::fputs(body.c_str(), f);
    std::fclose(f);
    return dir + "/" + name;
  };
  auto uni = uaii::Tokenizer::FromTokenizerJson(write("unigram.json", R"({"model":{"type":"Unigram","vocab":[]}})"));
  REQUIRE(!uni.ok());
  CHECK(std::string(uni.status().message()).find("tokenizer.model") != std::string::npos);
  // A regex no hand-written splitter knows runs in the general engine...
  auto rx = uaii::Tokenizer::FromTokenizerJson(write("regex.json",
      R"({"model":{"type":"BPE","vocab":{"a":0,"b":1},"merges":[]},"pre_tokenizer":{"type":"Split","pattern":{"Regex":"(?<=a)b"},"behavior":"Isolated"}})"));
  INFO(rx.status().ToString());
  REQUIRE(rx.ok());
  CHECK((*rx)->Encode("abab", {}).value() == std::vector<uaii::TokenId>{0, 1, 0, 1});
  // ...and one Oniguruma cannot compile fails naming the pattern and the component.
  for (const char* part : {R"("pre_tokenizer":{"type":"Split","pattern":{"Regex":"(a"},"behavior":"Isolated"})",
                           R"("normalizer":{"type":"Replace","pattern":{"Regex":"[a"},"content":""})"}) {
    auto broken = uaii::Tokenizer::FromTokenizerJson(
        write("broken.json", std::string(R"({"model":{"type":"BPE","vocab":{"a":0},"merges":[]},)") + part + "}"));
    REQUIRE(!broken.ok());
    CHECK(std::string(broken.status().message()).find("invalid regex") != std::string::npos);
  }
  // A catastrophic pattern loads, and an encode that trips its backtracking bound
  // fails with the cause instead of running unbounded.
  auto evil = uaii::Tokenizer::FromTokenizerJson(write("evil.json",
      R"({"model":{"type":"BPE","vocab":{"a":0,"b":1},"merges":[]},"pre_tokenizer":{"type":"Split","pattern":{"Regex":"(a*)*[^a]"},"behavior":"Removed"}})"));
  REQUIRE(evil.ok());
  auto ids = (*evil)->Encode(std::string(5000, 'a'), {});
  REQUIRE(!ids.ok());
  CHECK(std::string(ids.status().message()).find("catastrophic backtracking") != std::string::npos);
  auto bad = uaii::Tokenizer::FromTokenizerJson(write("bad.json", "{not json"));
  CHECK(!bad.ok());
}
