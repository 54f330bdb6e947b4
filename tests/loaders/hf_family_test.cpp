// Family detection from weight names: roles, variants, denials, quantized checkpoints.
#include <catch2/catch.hpp>

#include "loaders/hf_family.h"

using namespace uaii::hf;
using uaii::safetensors::Dtype;

namespace {

std::string Message(const absl::Status& s) { return std::string(s.message()); }

constexpr int64_t V = 256, E = 64, NQ = 4, NKV = 2, HD = 16, FF = 128, L = 2;

HfConfig Config(const std::string& model_type = "llama") {
  std::string json = R"({"model_type":")" + model_type + R"(","vocab_size":256,"hidden_size":64,
      "num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,"intermediate_size":128,
      "max_position_embeddings":512})";
  return *ParseHfConfig(json, "config.json");
}

std::vector<TensorDesc> Llama(bool fused_qkv = false, bool tied = false) {
  std::vector<TensorDesc> t = {{"model.embed_tokens.weight", Dtype::BF16, {V, E}},
                               {"model.norm.weight", Dtype::BF16, {E}}};
  if (!tied) t.push_back({"lm_head.weight", Dtype::BF16, {V, E}});
  for (int l = 0; l < L; ++l) {
    std::string p = "model.layers." + std::to_string(l) + ".";
    t.push_back({p + "input_layernorm.weight", Dtype::BF16, {E}});
    t.push_back({p + "post_attention_layernorm.weight", Dtype::BF16, {E}});
    if (fused_qkv) {
      t.push_back({p + "self_attn.W_pack.weight", Dtype::BF16, {(NQ + 2 * NKV) * HD, E}});
    } else {
      t.push_back({p + "self_attn.q_proj.weight", Dtype::BF16, {NQ * HD, E}});
      t.push_back({p + "self_attn.k_proj.weight", Dtype::BF16, {NKV * HD, E}});
      t.push_back({p + "self_attn.v_proj.weight", Dtype::BF16, {NKV * HD, E}});
    }
    t.push_back({p + "self_attn.o_proj.weight", Dtype::BF16, {E, NQ * HD}});
    t.push_back({p + "mlp.gate_proj.weight", Dtype::BF16, {FF, E}});
    t.push_back({p + "mlp.up_proj.weight", Dtype::BF16, {FF, E}});
    t.push_back({p + "mlp.down_proj.weight", Dtype::BF16, {E, FF}});
  }
  return t;
}

const TensorRole& RoleOf(const Detection& d, const std::vector<TensorDesc>& t, const std::string& name) {
  for (size_t i = 0; i < t.size(); ++i)
    if (t[i].name == name) return d.roles[i];
  FAIL("no tensor " << name);
  static TensorRole none;
  return none;
}

}  // namespace

TEST_CASE("hf family: llama layout maps every tensor to a role", "[hf_family]") {
  auto t = Llama();
  auto d = DetectFamily(Config(), t);
  REQUIRE(d.ok());
  CHECK(d->arch.family == "llama");
  CHECK(d->arch.variant == "llama");
  CHECK(d->arch.qkv == QkvLayout::kSeparate);
  CHECK(d->arch.ffn == FfnKind::kGated);
  CHECK(d->arch.norm == NormKind::kRms);
  CHECK(!d->arch.tied_embeddings);
  CHECK(d->arch.n_ff == FF);
  CHECK(d->arch.rotary_dims == HD);
  const auto& q = RoleOf(*d, t, "model.layers.1.self_attn.q_proj.weight");
  CHECK(q.role == "attn_q");
  CHECK(q.layer == 1);
  CHECK(RoleOf(*d, t, "model.layers.0.post_attention_layernorm.weight").role == "ffn_norm");
  CHECK(RoleOf(*d, t, "lm_head.weight").role == "output");
}

TEST_CASE("hf family: fused qkv and tied embeddings", "[hf_family]") {
  auto t = Llama(/*fused_qkv=*/true, /*tied=*/true);
  auto d = DetectFamily(Config("baichuan"), t);
  REQUIRE(d.ok());
  CHECK(d->arch.qkv == QkvLayout::kConcat);
  CHECK(d->arch.tied_embeddings);
  CHECK(RoleOf(*d, t, "model.layers.0.self_attn.W_pack.weight").role == "attn_qkv");
  // GPT-NeoX-style query_key_value inside a gated-MLP decoder: per-head groups.
  for (auto& x : t)
    if (x.name.find("W_pack") != std::string::npos) x.name.replace(x.name.find("W_pack"), 6, "query_key_value");
  auto g = DetectFamily(Config(), t);
  REQUIRE(g.ok());
  CHECK(g->arch.qkv == QkvLayout::kGroupedHeads);
  // tie_word_embeddings false yet no lm_head: fail closed.
  auto c = *ParseHfConfig(R"({"vocab_size":256,"hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,
      "num_key_value_heads":2,"intermediate_size":128,"max_position_embeddings":512,"tie_word_embeddings":false})", "c");
  CHECK_THAT(Message(DetectFamily(c, Llama(false, true)).status()), Catch::Contains("lm_head.weight"));
}

TEST_CASE("hf family: MoE banks", "[hf_family]") {
  auto t = Llama();
  std::vector<TensorDesc> moe;
  for (auto& x : t)
    if (x.name.find(".mlp.") == std::string::npos) moe.push_back(x);
  for (int l = 0; l < L; ++l) {
    std::string p = "model.layers." + std::to_string(l) + ".block_sparse_moe.";
    moe.push_back({p + "gate.weight", Dtype::BF16, {4, E}});
    for (int e = 0; e < 4; ++e) {
      std::string q = p + "experts." + std::to_string(e) + ".";
      moe.push_back({q + "w1.weight", Dtype::BF16, {FF, E}});
      moe.push_back({q + "w3.weight", Dtype::BF16, {FF, E}});
      moe.push_back({q + "w2.weight", Dtype::BF16, {E, FF}});
    }
  }
  auto c = *ParseHfConfig(R"({"model_type":"mixtral","vocab_size":256,"hidden_size":64,"num_hidden_layers":2,
      "num_attention_heads":4,"num_key_value_heads":2,"intermediate_size":128,"max_position_embeddings":512,
      "num_local_experts":4,"num_experts_per_tok":2})", "c");
  auto d = DetectFamily(c, moe);
  REQUIRE(d.ok());
  CHECK(d->arch.ffn == FfnKind::kMoe);
  const auto& r = RoleOf(*d, moe, "model.layers.1.block_sparse_moe.experts.3.w2.weight");
  CHECK(r.role == "ffn_down");
  CHECK(r.expert == 3);
  CHECK(r.layer == 1);
  // Experts in the weights but no num_local_experts in config.json.
  CHECK_THAT(Message(DetectFamily(Config(), moe).status()), Catch::Contains("num_local_experts"));
}

TEST_CASE("hf family: critical dims and shapes fail closed", "[hf_family]") {
  auto t = Llama();
  auto no_ff = *ParseHfConfig(R"({"vocab_size":256,"hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,
      "num_key_value_heads":2,"max_position_embeddings":512})", "c");
  CHECK_THAT(Message(DetectFamily(no_ff, t).status()), Catch::Contains("intermediate_size: missing"));
  auto no_vocab = *ParseHfConfig(R"({"hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,
      "intermediate_size":128,"max_position_embeddings":512})", "c");
  CHECK_THAT(Message(DetectFamily(no_vocab, t).status()), Catch::Contains("vocab_size: missing"));
  auto bad = t;
  bad[3].shape = {E + 1};
  CHECK_THAT(Message(DetectFamily(Config(), bad).status()), Catch::Contains(bad[3].name) && Catch::Contains("shape"));
  auto missing = t;
  missing.erase(missing.begin() + 5);  // a q/k/v projection of layer 0
  CHECK_THAT(Message(DetectFamily(Config(), missing).status()), Catch::Contains("layer 0: missing"));
  auto unknown = t;
  unknown.push_back({"model.layers.0.self_attn.mystery.weight", Dtype::BF16, {E}});
  CHECK_THAT(Message(DetectFamily(Config(), unknown).status()), Catch::Contains("mystery") && Catch::Contains("not part of"));
  auto deep = t;
  deep.push_back({"model.layers.7.input_layernorm.weight", Dtype::BF16, {E}});
  CHECK_THAT(Message(DetectFamily(Config(), deep).status()), Catch::Contains("beyond config.json num_hidden_layers"));
  auto i64 = t;
  i64[0].dtype = Dtype::I64;
  CHECK_THAT(Message(DetectFamily(Config(), i64).status()), Catch::Contains("dtype I64"));
}

TEST_CASE("hf family: denied layouts name the reason", "[hf_family]") {
  const std::pair<std::string, std::string> by_name[] = {
      {"model.layers.0.self_attn.q_a_proj.weight", "use GGUF"},
      {"model.layers.0.self_attn.kv_a_proj_with_mqa.weight", "use GGUF"},
      {"vision_tower.encoder.layers.0.weight", "vision tower"},
      {"multi_modal_projector.linear_1.weight", "LLaVA"},
      {"encoder.block.0.layer.0.SelfAttention.q.weight", "T5"},
      {"bert.encoder.layer.0.attention.self.query.weight", "BERT"},
      {"model.encoder.conv1.weight", "Whisper"},
      {"backbone.layers.0.mixer.A_log", "Mamba"},
      {"rwkv.blocks.0.attention.time_decay", "RWKV"},
      {"audio_tower.layers.0.weight", "audio"},
  };
  for (const auto& [name, want] : by_name) {
    INFO(name);
    auto t = Llama();
    t.push_back({name, Dtype::F32, {4}});
    auto d = DetectFamily(Config(), t);
    REQUIRE(!d.ok());
    CHECK_THAT(Message(d.status()), Catch::StartsWith("denied") && Catch::Contains(want) && Catch::Contains(name));
  }
  // A model_type alone decides no family math here: lib/models refuses the known
  // non-decoder ones by name (tests/models/hf_reading_test.cpp).
  auto vis = *ParseHfConfig(R"({"model_type":"gemma3","vision_config":{},"text_config":{}})", "c");
  CHECK_THAT(Message(DetectFamily(vis, Llama()).status()), Catch::Contains("vision"));
  auto encdec = *ParseHfConfig(R"({"is_encoder_decoder":true})", "c");
  CHECK_THAT(Message(DetectFamily(encdec, Llama()).status()), Catch::Contains("encoder-decoder"));
  std::vector<TensorDesc> other = {{"foo.weight", Dtype::F32, {4}}};
  CHECK_THAT(Message(DetectFamily(Config(), other).status()), Catch::Contains("unrecognized weight layout"));
}

TEST_CASE("hf family: quantized checkpoints are refused with the conversion advice", "[hf_family]") {
  auto gptq_cfg = *ParseHfConfig(R"({"quantization_config":{"quant_method":"gptq"}})", "c");
  CHECK_THAT(Message(DetectFamily(gptq_cfg, Llama()).status()), Catch::Contains("gptq") &&
                                                                    Catch::Contains("convert to dense BF16/F16 or to GGUF"));
  for (const char* suffix : {".qweight", ".qzeros", ".scales", ".weight_scale_inv", ".SCB", ".absmax", ".W_q"}) {
    INFO(suffix);
    auto t = Llama();
    t.push_back({std::string("model.layers.0.self_attn.q_proj") + suffix, Dtype::I32, {4}});
    CHECK_THAT(Message(DetectFamily(Config(), t).status()), Catch::Contains("convert to dense BF16/F16 or to GGUF"));
  }
  for (Dtype dt : {Dtype::F8_E4M3, Dtype::F8_E5M2, Dtype::F4}) {
    auto t = Llama();
    t[0].dtype = dt;
    CHECK_THAT(Message(DetectFamily(Config(), t).status()), Catch::Contains("convert to dense BF16/F16 or to GGUF"));
  }
  for (const char* method : {"awq", "bitsandbytes", "hqq", "fp8", "mxfp4"}) {
    auto c = *ParseHfConfig(std::string(R"({"quantization_config":{"quant_method":")") + method + "\"}}", "c");
    CHECK_THAT(Message(CheckNotQuantized(c, Llama())), Catch::Contains(method) && Catch::Contains("GGUF"));
  }
}

TEST_CASE("hf family: gpt-oss is named and not runnable", "[hf_family]") {
  auto c = *ParseHfConfig(R"({"model_type":"gpt_oss","quantization_config":{"quant_method":"mxfp4"}})", "c");
  std::vector<TensorDesc> t = {{"model.layers.0.mlp.router.weight", Dtype::BF16, {4, E}},
                               {"model.layers.0.mlp.experts.gate_up_proj_blocks", Dtype::U8, {4, 8, 2, 16}}};
  auto d = DetectFamily(c, t);
  REQUIRE(d.ok());
  CHECK(d->arch.family == "gpt_oss");
  CHECK(!d->arch.runnable);
  CHECK_THAT(d->arch.not_runnable_reason, Catch::Contains("use GGUF"));
}

TEST_CASE("hf family: variants from the weights (the family's math is lib/models')", "[hf_family]") {
  auto t = Llama(false, true);
  for (int l = 0; l < L; ++l) {
    std::string p = "model.layers." + std::to_string(l) + ".";
    t.push_back({p + "pre_feedforward_layernorm.weight", Dtype::BF16, {E}});
    t.push_back({p + "post_feedforward_layernorm.weight", Dtype::BF16, {E}});
    t.push_back({p + "self_attn.q_norm.weight", Dtype::BF16, {HD}});
    t.push_back({p + "self_attn.k_norm.weight", Dtype::BF16, {HD}});
  }
  auto c = *ParseHfConfig(R"({"model_type":"gemma3_text","vocab_size":256,"hidden_size":64,"num_hidden_layers":2,
      "num_attention_heads":4,"num_key_value_heads":2,"intermediate_size":128,"max_position_embeddings":512,
      "sliding_window":32,"sliding_window_pattern":2,"query_pre_attn_scalar":64,
      "hidden_activation":"gelu_pytorch_tanh"})", "c");
  auto d = DetectFamily(c, t);
  REQUIRE(d.ok());
  CHECK(d->arch.family == "llama");
  CHECK(d->arch.variant == "gemma3_text");
  CHECK(d->arch.norm == NormKind::kRms);  // offsets or not is the family's reading
  CHECK(d->arch.sandwich_norms);
  CHECK(d->arch.qk_norm);
  CHECK(RoleOf(*d, t, "model.layers.0.post_attention_layernorm.weight").role == "attn_post_norm");
  CHECK(RoleOf(*d, t, "model.layers.0.pre_feedforward_layernorm.weight").role == "ffn_norm");
  // The same weights under another model_type give the same layout.
  auto g2 = c;
  g2.model_type = "gemma2";
  auto d2 = DetectFamily(g2, t);
  REQUIRE(d2.ok());
  CHECK(d2->arch.sandwich_norms);
  CHECK(d2->arch.norm == NormKind::kRms);
}
