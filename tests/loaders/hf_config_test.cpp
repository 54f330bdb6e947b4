// config.json parsing: aliases, defaults, rope scaling kinds, fail-closed keys.
#include <catch2/catch.hpp>

#include "loaders/hf_config.h"

using namespace uaii::hf;

namespace {

std::string Message(const absl::Status& s) { return std::string(s.message()); }

// A llama-like config with `extra` spliced in (JSON members, no braces).
std::string Cfg(const std::string& extra = "") {
  std::string base = R"("model_type":"llama","vocab_size":256,"hidden_size":64,"num_hidden_layers":2,
    "num_attention_heads":4,"num_key_value_heads":2,"intermediate_size":128,"max_position_embeddings":512)";
  return "{" + base + (extra.empty() ? "" : "," + extra) + "}";
}

}  // namespace

TEST_CASE("hf config: llama basics and defaults", "[hf_config]") {
  auto c = ParseHfConfig(Cfg(R"("rms_norm_eps":1e-6,"rope_theta":500000.0,"eos_token_id":[1,2],"bos_token_id":0)"),
                         "config.json");
  REQUIRE(c.ok());
  CHECK(c->hidden_size == 64);
  CHECK(c->head_dim == 16);  // hidden / heads
  CHECK(c->num_key_value_heads == 2);
  CHECK(c->norm_eps == 1e-6);
  CHECK(c->rope_theta == 500000.0);
  CHECK(c->eos_token_ids == std::vector<int64_t>{1, 2});
  CHECK(c->activation == Activation::kSilu);
  CHECK(c->rope_scaling.kind == RopeScaling::Kind::kNone);
  CHECK(c->RotaryDims() == 16);
  auto d = ParseHfConfig(R"({"hidden_size":64,"num_attention_heads":4})", "c");
  REQUIRE(d.ok());
  CHECK(d->num_key_value_heads == 4);  // defaults to num_attention_heads
}

TEST_CASE("hf config: GPT-2 aliases", "[hf_config]") {
  auto c = ParseHfConfig(R"({"model_type":"gpt2","vocab_size":50257,"n_embd":768,"n_layer":12,"n_head":12,
      "n_inner":null,"n_positions":1024,"layer_norm_epsilon":1e-5,"activation_function":"gelu_new",
      "rotary_emb_base":1234.0})",
                         "config.json");
  REQUIRE(c.ok());
  CHECK(c->hidden_size == 768);
  CHECK(c->num_hidden_layers == 12);
  CHECK(c->num_attention_heads == 12);
  CHECK(c->intermediate_size == 0);  // absent: the gpt2 family uses 4 * hidden
  CHECK(c->max_position_embeddings == 1024);
  CHECK(c->norm_eps == 1e-5);
  CHECK(c->rope_theta == 1234.0);
  CHECK(c->activation == Activation::kGeluTanh);
  auto n = ParseHfConfig(R"({"n_inner":3072})", "c");
  CHECK(n->intermediate_size == 3072);
}

TEST_CASE("hf config: rope scaling kinds", "[hf_config]") {
  auto l3 = ParseHfConfig(Cfg(R"("rope_scaling":{"rope_type":"llama3","factor":8.0,"low_freq_factor":1.0,
      "high_freq_factor":4.0,"original_max_position_embeddings":8192})"), "c");
  REQUIRE(l3.ok());
  CHECK(l3->rope_scaling.kind == RopeScaling::Kind::kLlama3);
  CHECK(l3->rope_scaling.factor == 8.0);
  CHECK(l3->rope_scaling.original_max_position_embeddings == 8192);
  auto lin = ParseHfConfig(Cfg(R"("rope_scaling":{"type":"linear","factor":2})"), "c");
  CHECK(lin->rope_scaling.kind == RopeScaling::Kind::kLinear);
  auto dyn = ParseHfConfig(Cfg(R"("rope_scaling":{"type":"dynamic","factor":2})"), "c");
  CHECK(dyn->rope_scaling.kind == RopeScaling::Kind::kDynamicNtk);
  auto yarn = ParseHfConfig(Cfg(R"("rope_scaling":{"rope_type":"yarn","factor":4,"beta_fast":16,
      "original_max_position_embeddings":4096,"attention_factor":1.1})"), "c");
  REQUIRE(yarn.ok());
  CHECK(yarn->rope_scaling.kind == RopeScaling::Kind::kYarn);
  CHECK(yarn->rope_scaling.beta_fast == 16);
  CHECK(yarn->rope_scaling.beta_slow == 1);
  CHECK(*yarn->rope_scaling.attention_factor == 1.1);
  // longrope / su: one factor per rotary frequency (head_dim 16 -> 8).
  std::string f8 = "[1,1,1,1,1,1,1,1.5]";
  auto lr = ParseHfConfig(Cfg(R"("original_max_position_embeddings":4096,"rope_scaling":{"type":"su",
      "short_factor":)" + f8 + R"(,"long_factor":)" + f8 + "}"), "c");
  REQUIRE(lr.ok());
  CHECK(lr->rope_scaling.kind == RopeScaling::Kind::kLongRope);
  CHECK(lr->rope_scaling.long_factor.back() == 1.5);
  CHECK(lr->rope_scaling.original_max_position_embeddings == 4096);
  auto lr_bad = ParseHfConfig(Cfg(R"("rope_scaling":{"type":"longrope","short_factor":[1,1],"long_factor":[1,1]})"), "c");
  CHECK_THAT(Message(lr_bad.status()), Catch::Contains("rope_scaling.short_factor"));
  auto none = ParseHfConfig(Cfg(R"("rope_scaling":null)"), "c");
  CHECK(none->rope_scaling.kind == RopeScaling::Kind::kNone);
  auto unknown = ParseHfConfig(Cfg(R"("rope_scaling":{"type":"mrope","factor":2})"), "config.json");
  REQUIRE(!unknown.ok());
  CHECK_THAT(Message(unknown.status()), Catch::Contains("rope_scaling.type") && Catch::Contains("mrope"));
  auto missing = ParseHfConfig(Cfg(R"("rope_scaling":{"type":"llama3","factor":8})"), "c");
  CHECK_THAT(Message(missing.status()), Catch::Contains("rope_scaling.low_freq_factor"));
  auto newer = ParseHfConfig(Cfg(R"("rope_parameters":{"rope_type":"linear","factor":2,"rope_theta":50000})"), "c");
  REQUIRE(newer.ok());
  CHECK(newer->rope_theta == 50000);
  CHECK(newer->rope_scaling.kind == RopeScaling::Kind::kLinear);
}

TEST_CASE("hf config: fail closed with the key named", "[hf_config]") {
  const std::pair<std::string, std::string> cases[] = {
      {Cfg(R"("hidden_act":"mish")"), "hidden_act"},
      {Cfg(R"("hidden_activation":"xielu")"), "hidden_activation"},
      {Cfg(R"("position_embedding_type":"alibi")"), "position_embedding_type"},
      {Cfg(R"("alibi":true)"), "alibi"},
      {R"({"hidden_size":"64"})", "hidden_size"},
      {R"({"hidden_size":-3})", "hidden_size"},
      {R"({"num_hidden_layers":2.5})", "num_hidden_layers"},
      // fuzz_hf_config: 1.4e13 layers (the num_layers alias) reached a per-layer table.
      {R"({"model_type": "gemma2", "num_layers": 1372e10})", "num_layers: 13720000000000 is not plausible"},
      {R"({"hidden_size":65,"num_attention_heads":4})", "head_dim"},
      {R"({"num_attention_heads":4,"num_key_value_heads":3})", "num_key_value_heads"},
      {Cfg(R"("num_local_experts":8,"num_experts_per_tok":9)"), "num_experts_per_tok"},
      {Cfg(R"("partial_rotary_factor":1.5)"), "partial_rotary_factor"},
      {Cfg(R"("rms_norm_eps":0)"), "rms_norm_eps"},
      {"{not json", "invalid JSON"},
      {"[1,2]", "not a JSON object"},
  };
  for (const auto& [json, key] : cases) {
    INFO(json);
    auto c = ParseHfConfig(json, "dir/config.json");
    REQUIRE(!c.ok());
    CHECK_THAT(Message(c.status()), Catch::Contains(key) && Catch::StartsWith("dir/config.json"));
  }
}

TEST_CASE("hf config: MoE and quantization keys", "[hf_config]") {
  auto moe = ParseHfConfig(Cfg(R"("num_local_experts":8,"num_experts_per_tok":2)"), "c");
  REQUIRE(moe.ok());
  CHECK(moe->num_experts == 8);
  CHECK(moe->num_experts_per_tok == 2);
  auto qwen_moe = ParseHfConfig(Cfg(R"("num_experts":4,"num_experts_per_tok":1,"moe_intermediate_size":32)"), "c");
  CHECK(qwen_moe->num_experts == 4);
  CHECK(qwen_moe->moe_intermediate_size == 32);
  auto gptq = ParseHfConfig(Cfg(R"("quantization_config":{"quant_method":"gptq","bits":4})"), "c");
  CHECK(gptq->quant_method == "gptq");
  auto bnb = ParseHfConfig(Cfg(R"("quantization_config":{"load_in_4bit":true})"), "c");
  CHECK(bnb->quant_method == "bitsandbytes");
  // Each activation key is kept apart (which one a family applies is lib/models').
  auto gemma = ParseHfConfig(R"({"model_type":"gemma","hidden_act":"gelu","hidden_activation":"gelu_pytorch_tanh"})", "c");
  CHECK(gemma->activation == Activation::kGeluErf);
  CHECK(gemma->hidden_activation == Activation::kGeluTanh);
  CHECK(gemma->hidden_activation_name == "gelu_pytorch_tanh");
  CHECK_FALSE(ParseHfConfig(R"({"model_type":"gemma","hidden_act":"gelu"})", "c")->hidden_activation.has_value());
  auto vis = ParseHfConfig(Cfg(R"("vision_config":{"hidden_size":8})"), "c");
  CHECK(vis->sub_configs == std::vector<std::string>{"vision_config"});
}

TEST_CASE("hf config: RoPE as transformers 5 writes it", "[hf_config]") {
  // One rope_parameters block, partial_rotary_factor inside it (Phi-3).
  auto flat = ParseHfConfig(Cfg(R"("rope_parameters":{"rope_type":"default","rope_theta":20000,
      "partial_rotary_factor":0.5})"), "c");
  REQUIRE(flat.ok());
  CHECK(flat->rope_theta == 20000);
  CHECK(flat->partial_rotary_factor == 0.5);
  CHECK(flat->RotaryDims() == 8);
  // One block per layer type (Gemma 3): full_attention is rope_theta / rope_scaling,
  // sliding_attention the sliding layers' base.
  auto nested = ParseHfConfig(Cfg(R"("rope_parameters":{
      "full_attention":{"rope_type":"linear","factor":8.0,"rope_theta":1000000.0},
      "sliding_attention":{"rope_type":"default","rope_theta":10000.0}})"), "c");
  REQUIRE(nested.ok());
  CHECK(nested->rope_theta == 1000000.0);
  CHECK(nested->rope_scaling.kind == RopeScaling::Kind::kLinear);
  CHECK(nested->rope_scaling.factor == 8.0);
  CHECK(nested->rope_local_base_freq == 10000.0);
  // yarn's truncate (transformers 5).
  auto yarn = ParseHfConfig(Cfg(R"("rope_parameters":{"rope_type":"yarn","factor":4,"truncate":false,
      "original_max_position_embeddings":128})"), "c");
  REQUIRE(yarn.ok());
  CHECK_FALSE(yarn->rope_scaling.truncate);
}

TEST_CASE("hf config: a RoPE key or form the reader does not understand fails closed", "[hf_config]") {
  const std::pair<std::string, std::string> cases[] = {
      {R"("rope_parameters":{"rope_type":"default","rope_theta":1e4,"mrope_section":[2,3]})",
       "rope_parameters.mrope_section"},
      {R"("rope_scaling":{"type":"longrope","short_factor":[1],"long_factor":[1],"short_mscale":1.1})",
       "rope_scaling.short_mscale"},
      {R"("rope_parameters":{"full_attention":{"rope_theta":1e6},"chunked_attention":{"rope_theta":1e4}})",
       "rope_parameters.chunked_attention"},
      {R"("rope_parameters":{"full_attention":{"rope_theta":1e6},"sliding_attention":{"rope_type":"linear","factor":2}})",
       "rope_parameters.sliding_attention.rope_type"},
      {R"("rope_parameters":{"full_attention":{"rope_theta":1e6},"sliding_attention":{"rope_theta":1e4,"foo":1}})",
       "rope_parameters.sliding_attention.foo"},
      {R"("use_bidirectional_attention":true)", "use_bidirectional_attention"},
  };
  for (const auto& [extra, key] : cases) {
    auto c = ParseHfConfig(Cfg(extra), "config.json");
    INFO(extra);
    REQUIRE_FALSE(c.ok());
    CHECK_THAT(Message(c.status()), Catch::Contains(key));
  }
}
