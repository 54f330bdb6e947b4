// Logits parity of Hugging Face directories with transformers (CPU, float32) on the
// tiny random models of tests/fixtures/make_hf_tiny_models.py; goldens in
// tests/golden/transformers/ (tests/oracles/transformers_tiny_models.py).
//
// Per family: the golden's token sequence is evaluated (1) in one prefill, all rows'
// logits compared with the golden, and (2) in chunks (13 tokens, 3 single-token
// decodes, the rest), whose rows must be bit-identical to (1) (prefill is row-exact),
// also under the phone memory preset (weights streamed by the storage engine).
// Tolerance: max |uaii - transformers| over every logit <= tol * rms(golden logits).
// uaii differs from transformers' f32 math by design: the KV cache and the attention
// weights are f16 (llama.cpp's CPU path), activations meet BF16 weights as BF16, and
// GELU goes through ggml's f16 table; the tolerances below are those figures with
// headroom (each run prints the measured value).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "simdjson.h"
#include "uaii/model.h"
#include "uaii/session.h"

namespace uaii {
namespace {

struct Family {
  const char* name;  // fixture directory and golden file stem
  double tol;        // max |diff| / rms(golden)
};

// One row per tiny model; adding a family = a row in the fixture script, a golden, a row here.
constexpr Family kFamilies[] = {
    {"llama_f32", 0.01},       {"llama_bf16_sharded", 0.03}, {"llama3_rope_f32", 0.01},
    {"mistral_f32", 0.01},
    {"qwen2_bf16", 0.03},      {"qwen2_yarn_f32", 0.01},      {"qwen3_f32_sharded", 0.01},  {"gemma_f32", 0.01},
    {"gemma2_f32", 0.01},      {"gemma3_bf16", 0.03},        {"gemma3_f32", 0.01},
    {"phi3_f32", 0.01},        {"mixtral_f32", 0.01},        {"qwen2_moe_f32", 0.01},        {"gpt2_f32", 0.01},           {"gpt2_bf16_sharded", 0.03},
    // config.json as transformers 5 saves it (rope_parameters, nested per layer type
    // for Gemma 3; tests/oracles/transformers_v5_configs.py), RoPE bases off their defaults.
    {"v5_llama_f32", 0.01},    {"v5_llama3_rope_f32", 0.01}, {"v5_mistral_f32", 0.01},     {"v5_mixtral_f32", 0.01},
    {"v5_qwen2_yarn_f32", 0.01}, {"v5_qwen3_f32_sharded", 0.01}, {"v5_qwen2_moe_f32", 0.01}, {"v5_gemma_f32", 0.01},
    {"v5_gemma2_f32", 0.01},   {"v5_gemma3_f32", 0.01},      {"v5_phi3_f32", 0.01},        {"v5_gpt2_f32", 0.01},
};

struct Golden {
  std::vector<TokenId> tokens;
  int64_t n_vocab = 0;
  std::vector<float> logits;  // [tokens, n_vocab]
  std::string reference;
};

Golden ReadGolden(const std::string& name) {
  Golden g;
  const std::string path = std::string(UAII_SOURCE_DIR) + "/tests/golden/transformers/" + name + ".json";
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  REQUIRE(parser.load(path).get(doc) == simdjson::SUCCESS);
  for (int64_t t : doc["tokens"].get_array()) g.tokens.push_back(static_cast<TokenId>(t));
  g.n_vocab = doc["n_vocab"].get_int64();
  g.reference = std::string(doc["reference"].get_string().value());
  for (simdjson::dom::array row : doc["logits"].get_array())
    for (double x : row) g.logits.push_back(static_cast<float>(x));
  REQUIRE(g.logits.size() == g.tokens.size() * static_cast<size_t>(g.n_vocab));
  return g;
}

std::vector<float> EvalChunked(const std::shared_ptr<const Model>& model, const std::vector<TokenId>& tokens,
                               const std::string& preset) {
  SessionOptions o;
  o.threads = 2;
  o.preset = *ParsePreset(preset);
  auto s = Session::Create(model, o);
  REQUIRE(s.ok());
  std::vector<float> all;
  auto append = [&](size_t b, size_t e) {
    auto r = (*s)->Eval(std::span<const TokenId>(tokens.data() + b, e - b), true);
    REQUIRE(r.ok());
    all.insert(all.end(), r->begin(), r->end());
  };
  append(0, 13);
  for (size_t t = 13; t < 16; ++t) append(t, t + 1);
  append(16, tokens.size());
  return all;
}

TEST_CASE("HF directories match transformers float32 logits, whole and chunked prefill", "[hf_parity]") {
  for (const Family& f : kFamilies) {
    DYNAMIC_SECTION(f.name) {
      const std::string dir = std::string(UAII_FIXTURE_DIR) + "/hf_tiny/" + f.name;
      REQUIRE(std::filesystem::exists(dir + "/config.json"));
      Golden g = ReadGolden(f.name);
      auto model = Model::Load(dir);
      INFO(dir << ": " << (model.ok() ? "" : std::string(model.status().message())));
      REQUIRE(model.ok());
      REQUIRE((*model)->info().n_vocab == g.n_vocab);
      SessionOptions o;
      o.threads = 2;
      auto s = Session::Create(*model, o);
      REQUIRE(s.ok());
      auto whole = (*s)->Eval(g.tokens, true);
      REQUIRE(whole.ok());
      REQUIRE(whole->size() == g.logits.size());
      double ss = 0, max_diff = 0;
      int argmax_same = 0;
      const int64_t V = g.n_vocab, T = static_cast<int64_t>(g.tokens.size());
      for (size_t i = 0; i < g.logits.size(); ++i) {
        ss += static_cast<double>(g.logits[i]) * g.logits[i];
        max_diff = std::max(max_diff, static_cast<double>(std::fabs((*whole)[i] - g.logits[i])));
      }
      const double rms = std::sqrt(ss / static_cast<double>(g.logits.size()));
      for (int64_t t = 0; t < T; ++t) {
        auto a = whole->begin() + t * V, b = g.logits.begin() + t * V;
        argmax_same += std::max_element(a, a + V) - a == std::max_element(b, b + V) - b;
      }
      std::printf("hf_parity %-20s max|diff| %.3g  rms %.3g  ratio %.2e (tol %.0e)  argmax %d/%lld\n", f.name,
                  max_diff, rms, max_diff / rms, f.tol, argmax_same, static_cast<long long>(T));
      CHECK(max_diff <= f.tol * rms);
      // Chunked, then chunked under the phone preset (matmul weights streamed from the
      // safetensors files in row slices by the storage engine).
      for (const char* preset : {"none", "phone"}) {
        INFO("preset " << preset);
        auto chunked = EvalChunked(*model, g.tokens, preset);
        REQUIRE(chunked.size() == whole->size());
        size_t differ = 0;
        for (size_t i = 0; i < chunked.size(); ++i) differ += chunked[i] != (*whole)[i];
        CHECK(differ == 0);
      }
    }
  }
}

TEST_CASE("Model::Load names the cause for a broken HF directory", "[hf_parity]") {
  namespace fs = std::filesystem;
  const fs::path src = fs::path(UAII_FIXTURE_DIR) / "hf_tiny" / "llama_f32";
  const fs::path dir = fs::temp_directory_path() / ("uaii_hf_broken_config." + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* f : {"model.safetensors", "tokenizer.json", "tokenizer_config.json"})
    fs::copy_file(src / f, dir / f);
  {
    std::ifstream in(src / "config.json");
    std::stringstream ss;
    ss << in.rdbuf();
    std::string cfg = ss.str();
    const std::string from = "\"hidden_act\": \"silu\"", to = "\"hidden_act\": \"relu\"";
    REQUIRE(cfg.find(from) != std::string::npos);
    cfg.replace(cfg.find(from), from.size(), to);
    std::ofstream(dir / "config.json") << cfg;
  }
  auto m = Model::Load(dir.string());
  REQUIRE_FALSE(m.ok());
  CHECK(m.status().code() == absl::StatusCode::kUnimplemented);
  CHECK(std::string(m.status().message()).find("relu") != std::string::npos);
  fs::remove(dir / "tokenizer.json");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace uaii
