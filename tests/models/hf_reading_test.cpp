// Each family's own reading of a Hugging Face config.json (families.h HfReadFn), seen
// through models::ReadHfFamily: the sliding layers, norm offsets and activation that
// transformers' modeling code derives per model_type.
#include <catch2/catch.hpp>

#include "loaders/hf_config.h"
#include "models/hf_graph.h"

using namespace uaii;
using hf::Activation;

namespace {

hf::HfConfig Cfg(const std::string& model_type, int layers, const std::string& extra = "") {
  const std::string json = R"({"model_type":")" + model_type + R"(","vocab_size":64,"hidden_size":32,)" +
                           R"("num_hidden_layers":)" + std::to_string(layers) +
                           R"(,"num_attention_heads":4,"intermediate_size":64)" + (extra.empty() ? "" : ",") + extra +
                           "}";
  auto c = hf::ParseHfConfig(json, "config.json");
  REQUIRE(c.ok());
  return *c;
}

models::HfFamilyReading Read(const hf::HfConfig& c) {
  auto r = models::ReadHfFamily(c);
  REQUIRE(r.ok());
  return *r;
}

using Layers = std::vector<bool>;

}  // namespace

TEST_CASE("hf reading: gemma norms are offsets and hidden_activation is the MLP's", "[hf_reading]") {
  for (const char* t : {"gemma", "gemma2", "gemma3_text"}) {
    auto r = Read(Cfg(t, 2, R"("hidden_act":"gelu")"));
    REQUIRE(r.family != nullptr);
    CHECK(r.reading.norm_plus_one);
    CHECK(r.reading.activation == Activation::kGeluTanh);  // hidden_act ignored; the default
  }
  CHECK(Read(Cfg("gemma2", 2, R"("hidden_activation":"gelu")")).reading.activation == Activation::kGeluErf);
  for (const char* t : {"llama", "qwen3", "phi3", "gpt2"}) {
    auto r = Read(Cfg(t, 2, R"("hidden_act":"gelu_new")"));
    CHECK_FALSE(r.reading.norm_plus_one);
    CHECK(r.reading.activation == Activation::kGeluTanh);  // hidden_act as written
  }
}

TEST_CASE("hf reading: sliding layers per family", "[hf_reading]") {
  // gemma3: sliding_window_pattern (default 6): every n-th layer is global.
  CHECK(Read(Cfg("gemma3_text", 7, R"("sliding_window":16)")).sliding_layers ==
        Layers{true, true, true, true, true, false, true});
  CHECK(Read(Cfg("gemma3_text", 4, R"("sliding_window":16,"sliding_window_pattern":2)")).sliding_layers ==
        Layers{true, false, true, false});
  CHECK(Read(Cfg("gemma3_text", 4)).sliding_layers.empty());  // no window, every layer global
  // gemma2: even layers.
  CHECK(Read(Cfg("gemma2", 4, R"("sliding_window":16)")).sliding_layers == Layers{true, false, true, false});
  // qwen2 / qwen3 / their MoE: from max_window_layers on, only with use_sliding_window.
  for (const char* t : {"qwen2", "qwen3", "qwen2_moe", "qwen3_moe"}) {
    CHECK(Read(Cfg(t, 3, R"("sliding_window":16,"use_sliding_window":true,"max_window_layers":1)")).sliding_layers ==
          Layers{false, true, true});
    CHECK(Read(Cfg(t, 3, R"("sliding_window":16,"use_sliding_window":false)")).sliding_layers.empty());
  }
  // Mistral, Mixtral and Phi-3: every layer; Llama has no window.
  for (const char* t : {"mistral", "mixtral", "phi3"})
    CHECK(Read(Cfg(t, 2, R"("sliding_window":16)")).sliding_layers == Layers{true, true});
  CHECK(Read(Cfg("llama", 2, R"("sliding_window":16)")).sliding_layers.empty());
}

TEST_CASE("hf reading: layer_types name the sliding layers for every family", "[hf_reading]") {
  const std::string lt = R"("sliding_window":16,"layer_types":["full_attention","sliding_attention","full_attention"])";
  for (const char* t : {"gemma3_text", "gemma2", "qwen3", "mistral", "llama"})
    CHECK(Read(Cfg(t, 3, lt)).sliding_layers == Layers{false, true, false});
  auto bad = models::ReadHfFamily(Cfg("qwen3", 2, lt));
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(std::string(bad.status().message()),
             Catch::Contains("config.json: layer_types has 3 entries for num_hidden_layers 2"));
}

TEST_CASE("hf reading: a model_type uaii does not build reads no family keys", "[hf_reading]") {
  auto r = Read(Cfg("starcoder2", 2, R"("hidden_act":"gelu_new","sliding_window":16)"));
  CHECK(r.family == nullptr);
  CHECK(r.reading.activation == Activation::kGeluTanh);
  CHECK(r.sliding_layers.empty());
}

TEST_CASE("hf reading: a sliding-layer RoPE base only Gemma 3 rotates apart", "[hf_reading]") {
  const std::string nested = R"("sliding_window":16,"rope_parameters":{"full_attention":{"rope_theta":1e6},)"
                             R"("sliding_attention":{"rope_theta":1e4}})";
  CHECK(models::ReadHfFamily(Cfg("gemma3_text", 2, nested)).ok());
  auto qwen = models::ReadHfFamily(Cfg("qwen3", 2, nested));
  REQUIRE_FALSE(qwen.ok());
  CHECK_THAT(std::string(qwen.status().message()),
             Catch::Contains("sliding layers' RoPE base 10000") && Catch::Contains("qwen3 graph does not model"));
}

TEST_CASE("hf reading: known non-decoder model_types are refused by name", "[hf_reading]") {
  for (const char* t : {"t5", "whisper", "mamba", "rwkv", "deepseek_v3", "gpt_oss"}) {
    INFO(t);
    CHECK_FALSE(models::RefusedHfModelType(t).empty());
    CHECK(models::FindHfFamily(t) == nullptr);
  }
  CHECK_THAT(std::string(models::RefusedHfModelType("deepseek_v3")), Catch::Contains("use GGUF"));
  CHECK(models::RefusedHfModelType("llama").empty());
  CHECK(models::RefusedHfModelType("granite").empty());  // unsupported, but no refusal words of its own
}
