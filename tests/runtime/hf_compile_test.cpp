// `uaii compile` on Hugging Face directories (CompileModel): the graph file it writes
// (.uaii and .uaii.json, built and fused) carries the weights' views and the tokenizer
// directory, and loading it gives logits bit-identical to loading the directory
// itself, on the tiny fixtures of every view kind: Gemma (add-one), GPT-2 (transpose),
// MoE (stacked expert banks), rope_scaling (synthetic factors), BF16 (zero-copy),
// resident and under the phone preset (weights streamed by the storage engine).
// Hostile graph files (a view's bytes past its file, parts that disagree) fail with
// the cause named.
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

#include "uaii/compile.h"
#include "uaii/model.h"
#include "uaii/session.h"

namespace uaii {
namespace {

namespace fs = std::filesystem;

std::string Fixture(const std::string& name) { return std::string(UAII_FIXTURE_DIR) + "/hf_tiny/" + name; }

std::string Message(const absl::Status& st) { return std::string(st.message()); }

std::vector<float> Logits(const std::shared_ptr<const Model>& m, const std::vector<TokenId>& tokens,
                          const char* preset = "none") {
  SessionOptions o;
  o.threads = 2;
  o.preset = *ParsePreset(preset);
  auto s = Session::Create(m, o);
  REQUIRE(s.ok());
  auto r = (*s)->Eval(tokens, true);
  REQUIRE(r.ok());
  return *r;
}

fs::path TempDir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("uaii_hf_compile_" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string Read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void Write(const fs::path& p, const std::string& s) { std::ofstream(p) << s; }

}  // namespace

TEST_CASE("compiled HF directories load and give the directory's logits bit for bit", "[hf_compile]") {
  for (const char* name : {"gemma3_f32", "gemma_f32", "gpt2_f32", "gpt2_bf16_sharded", "mixtral_f32", "qwen2_moe_f32",
                           "llama3_rope_f32", "qwen2_yarn_f32", "phi3_f32", "llama_bf16_sharded", "v5_gemma3_f32",
                           "v5_qwen2_yarn_f32"}) {
    DYNAMIC_SECTION(name) {
      auto direct = Model::Load(Fixture(name));
      INFO((direct.ok() ? "" : Message(direct.status())));
      REQUIRE(direct.ok());
      const int64_t V = (*direct)->info().n_vocab;
      std::vector<TokenId> tokens;
      for (int i = 0; i < 24; ++i) tokens.push_back(static_cast<TokenId>((7 * i + 3) % V));
      const std::vector<float> want = Logits(*direct, tokens);
      // Under the phone preset the storage engine streams the zero-copy views from the
      // safetensors files (a graph file's as the directory's).
      const std::vector<float> want_phone = Logits(*direct, tokens, "phone");
      auto ids = (*direct)->tokenizer().Encode("hello world");
      REQUIRE(ids.ok());
      const fs::path dir = TempDir(name);
      struct Variant {
        const char* file;
        bool fused, absolute;
      };
      for (const Variant& v : {Variant{"m.uaii", false, false}, Variant{"m.uaii.json", false, false},
                               Variant{"fused.uaii", true, true}}) {
        INFO(v.file);
        CompileOptions opts;
        opts.output = (dir / v.file).string();
        opts.write_fused = v.fused;
        opts.absolute_paths = v.absolute;
        auto r = CompileModel(Fixture(name), opts);
        INFO((r.ok() ? "" : Message(r.status())));
        REQUIRE(r.ok());
        auto compiled = Model::Load(opts.output);
        INFO((compiled.ok() ? "" : Message(compiled.status())));
        REQUIRE(compiled.ok());
        CHECK((*compiled)->info().n_vocab == V);
        CHECK((*compiled)->info().n_layer == (*direct)->info().n_layer);
        auto ids2 = (*compiled)->tokenizer().Encode("hello world");
        REQUIRE(ids2.ok());
        CHECK(*ids2 == *ids);  // the tokenizer comes from the directory
        const std::vector<float> got = Logits(*compiled, tokens);
        REQUIRE(got.size() == want.size());
        CHECK(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)) == 0);
        const std::vector<float> phone = Logits(*compiled, tokens, "phone");
        REQUIRE(phone.size() == want_phone.size());
        CHECK(std::memcmp(phone.data(), want_phone.data(), phone.size() * sizeof(float)) == 0);
      }
      // The JSON names the views and the tokenizer directory, relative to the graph file.
      const std::string json = Read(dir / "m.uaii.json");
      CHECK(json.find("\"source_dtype\"") != std::string::npos);
      CHECK(json.find("\"key\": \"tokenizer.dir\"") != std::string::npos);
      CHECK(json.find("\"file\": \"/") == std::string::npos);  // relative paths
      CHECK(json.find("\"value\": \"/") == std::string::npos);
      fs::remove_all(dir);
    }
  }
}

TEST_CASE("a compiled HF graph file with hostile views fails naming the cause", "[hf_compile]") {
  const fs::path dir = TempDir("hostile");
  CompileOptions opts;
  opts.output = (dir / "m.uaii.json").string();
  REQUIRE(CompileModel(Fixture("qwen2_moe_f32"), opts).ok());
  const std::string json = Read(opts.output);
  auto edit = [&](const std::string& from, const std::string& to) {
    std::string s = json;
    const size_t at = s.find(from);
    REQUIRE(at != std::string::npos);
    s.replace(at, from.size(), to);
    const fs::path p = dir / "edited.uaii.json";
    Write(p, s);
    return Model::Load(p.string()).status();
  };
  SECTION("a view's bytes past the end of its file") {
    // The first stored view's offset, moved past the file (its bytes unchanged).
    const size_t at = json.find("\"offset\": ");
    REQUIRE(at != std::string::npos);
    const size_t end = json.find_first_of(",\n", at);
    auto st = edit(json.substr(at, end - at), "\"offset\": 1000000000");
    CHECK(absl::IsOutOfRange(st));
    CHECK_THAT(Message(st), Catch::Contains("outside the file of"));
  }
  SECTION("expert parts that disagree on their stored type") {
    const size_t bank = json.find("\"parts\": [");
    REQUIRE(bank != std::string::npos);
    const size_t second = json.find("\"source_dtype\": \"F32\"", json.find("\"source_dtype\"", bank) + 1);
    REQUIRE(second != std::string::npos);
    std::string s = json;
    s.replace(second, std::strlen("\"source_dtype\": \"F32\""), "\"source_dtype\": \"F16\"");
    Write(dir / "parts.uaii.json", s);
    auto st = Model::Load((dir / "parts.uaii.json").string()).status();
    CHECK(absl::IsInvalidArgument(st));
    CHECK_THAT(Message(st), Catch::Contains("view: "));
    CHECK_THAT(Message(st), Catch::Contains("_exps.weight"));
  }
  SECTION("a missing tokenizer directory") {
    std::string s = json;
    const size_t k = s.find("\"key\": \"tokenizer.dir\"");
    REQUIRE(k != std::string::npos);
    const size_t v = s.find("\"value\": \"", k) + std::strlen("\"value\": \"");
    s.insert(v, "missing/");
    Write(dir / "tok.uaii.json", s);
    auto st2 = Model::Load((dir / "tok.uaii.json").string()).status();
    CHECK_FALSE(st2.ok());
    CHECK_THAT(Message(st2), Catch::Contains("tokenizer.dir"));
  }
  SECTION("two tokenizer sources") {
    std::string s = json;
    const size_t k = s.find("{\n        \"key\": \"tokenizer.dir\"");
    REQUIRE(k != std::string::npos);
    s.insert(k, "{\"key\": \"tokenizer.gguf\", \"value\": \"x.gguf\"},\n");
    Write(dir / "two.uaii.json", s);
    auto st = Model::Load((dir / "two.uaii.json").string()).status();
    CHECK(absl::IsInvalidArgument(st));
    CHECK_THAT(Message(st), Catch::Contains("needs one of \"tokenizer.gguf\""));
  }
  fs::remove_all(dir);
}

}  // namespace uaii
