// Family builders on the tiny fixtures (tests/fixtures/make_tiny_models.py) and, when
// present, the default model: graphs validate, reference the right tensors and carry
// the per-family features (gemma3 sliding pattern and rope bases).
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "ir/serialize.h"
#include "loaders/model_locator.h"
#include "ir/validate.h"
#include "models/families.h"

using namespace uaii;

namespace {
std::string Tiny(const std::string& name) { return std::string(UAII_FIXTURE_DIR) + "/tiny/" + name; }

const ir::Op* FindOp(const ir::Graph& g, const std::string& name) {
  for (const auto& op : g.ops)
    if (op.name == name) return &op;
  return nullptr;
}

ir::Graph Build(const std::string& path) {
  auto f = gguf::File::Open(path);
  REQUIRE(f.ok());
  auto spec = models::SpecFromGguf(**f);
  REQUIRE(spec.ok());
  auto g = models::BuildGraph(*spec);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  return *g;
}
}  // namespace

TEST_CASE("models: family table") {
  CHECK(models::FindFamily("llama"));
  CHECK(models::FindFamily("gemma3"));
  CHECK_FALSE(models::FindFamily("gpt-neox"));
  models::ModelSpec s;
  s.arch = "gpt-neox";
  s.file = "x.gguf";
  auto g = models::BuildGraph(s);
  REQUIRE_FALSE(g.ok());
  CHECK(std::string(g.status().message()).find("gpt-neox") != std::string::npos);
}

TEST_CASE("models: llama tiny graph") {
  if (!std::filesystem::exists(Tiny("tiny-llama-q8_0.gguf"))) FAIL("fixtures missing: run make_tiny_models.py");
  ir::Graph g = Build(Tiny("tiny-llama-q8_0.gguf"));
  CHECK(ir::Validate(g).ok());
  const ir::Op* rope = FindOp(g, "blk.0.q_rope");
  REQUIRE(rope);
  CHECK(rope->Str("mode") == "norm");
  const ir::Op* attn = FindOp(g, "blk.2.attn");
  REQUIRE(attn);
  CHECK(attn->Float("scale") == Approx(1.0 / 8.0));
  CHECK_FALSE(attn->Has("window"));
  const ir::Tensor* head = g.FindTensor("output.weight");
  REQUIRE(head);
  REQUIRE(head->weight);
  CHECK(head->weight->ToString() == Tiny("tiny-llama-q8_0.gguf") + "#output.weight");
  CHECK(head->dtype == TensorType::Q8_0);
}

TEST_CASE("models: gemma3 tiny graph has the 5:1 sliding pattern") {
  if (!std::filesystem::exists(Tiny("tiny-gemma3-q4_k.gguf"))) FAIL("fixtures missing: run make_tiny_models.py");
  ir::Graph g = Build(Tiny("tiny-gemma3-q4_k.gguf"));
  for (int il = 0; il < 7; ++il) {
    const ir::Op* attn = FindOp(g, "blk." + std::to_string(il) + ".attn");
    const ir::Op* rope = FindOp(g, "blk." + std::to_string(il) + ".q_rope");
    REQUIRE(attn);
    REQUIRE(rope);
    const bool global = (il + 1) % 6 == 0;
    CHECK(attn->Int("window", 0) == (global ? 0 : 16));
    CHECK(rope->Float("freq_base") == (global ? 1e6 : 10000.0));
    CHECK(rope->Str("mode") == "neox");
    CHECK(attn->Float("scale") == 1.0);
  }
  // Tied head, embedding scale, QK-norm, post norms.
  CHECK(g.FindTensor("output.weight") == nullptr);
  CHECK(FindOp(g, "inp_scaled")->Float("scale") == Approx(16.0));
  CHECK(FindOp(g, "blk.0.q_normed"));
  CHECK(FindOp(g, "blk.0.ffn_post"));
  CHECK(FindOp(g, "blk.0.q_scaled")->Float("scale") == Approx(0.125));
  // The JSON form round-trips and still validates.
  auto json = ir::ToJson(g);
  REQUIRE(json.ok());
  auto back = ir::FromJson(*json);
  REQUIRE(back.ok());
  CHECK(ir::Validate(*back).ok());
  CHECK(back->ops.size() == g.ops.size());
}

TEST_CASE("models: missing tensor is named") {
  auto f = gguf::File::Open(Tiny("tiny-gemma3-f16.gguf"));
  if (!f.ok()) FAIL("fixtures missing: run make_tiny_models.py");
  auto spec = models::SpecFromGguf(**f);
  REQUIRE(spec.ok());
  spec->tensors.erase("blk.3.attn_k_norm.weight");
  auto g = models::BuildGraph(*spec);
  REQUIRE_FALSE(g.ok());
  CHECK(std::string(g.status().message()).find("blk.3.attn_k_norm.weight") != std::string::npos);
}

TEST_CASE("models: default gemma3 model graph") {
  auto path = ResolveModelPath("");
  if (!path.ok()) {
    WARN("SKIP default model: " << path.status().message());
    return;
  }
  ir::Graph g = Build(*path);
  CHECK(FindOp(g, "blk.17.attn"));
  CHECK(FindOp(g, "blk.5.attn")->Int("window", 0) == 0);
  CHECK(FindOp(g, "blk.4.attn")->Int("window", 0) == 512);
}

namespace {
std::string Family(const std::string& name) {
  return std::string(UAII_FIXTURE_DIR) + "/families/" + name + ".gguf";
}
models::ModelSpec FamilySpec(const std::string& name) {
  auto f = gguf::File::Open(Family(name));
  if (!f.ok()) FAIL("fixtures missing: run make_family_models.py (" << f.status().message() << ")");
  auto spec = models::SpecFromGguf(**f);
  REQUIRE(spec.ok());
  return *spec;
}
std::string BuildError(const models::ModelSpec& s) {
  auto g = models::BuildGraph(s);
  REQUIRE_FALSE(g.ok());
  return std::string(g.status().message());
}
}  // namespace

TEST_CASE("models: unsupported architecture lists the supported ones") {
  models::ModelSpec s;
  s.arch = "mamba";
  s.file = "x.gguf";
  const std::string msg = BuildError(s);
  CHECK(msg.find("unsupported GGUF architecture mamba; supported: llama, gemma3, qwen2, qwen3") != std::string::npos);
  for (const char* a : {"gemma", "gemma2", "phi3", "gpt2", "smollm3", "granite", "olmo2", "ernie4_5"}) {
    CHECK(models::FindFamily(a));
    CHECK(msg.find(a) != std::string::npos);
  }
}

TEST_CASE("models: family features reach the graph") {
  {
    ir::Graph g = Build(Family("gemma2-f16"));
    for (int il = 0; il < 4; ++il) {
      const ir::Op* attn = FindOp(g, "blk." + std::to_string(il) + ".attn");
      REQUIRE(attn);
      CHECK(attn->Int("window", 0) == (il % 2 == 0 ? 16 : 0));
      CHECK(attn->Float("softcap") == 50.0);
    }
    CHECK(FindOp(g, "logits")->type == "softcap");
  }
  {
    ir::Graph g = Build(Family("smollm3-q5_1"));
    CHECK(FindOp(g, "blk.2.q_rope"));
    CHECK_FALSE(FindOp(g, "blk.3.q_rope"));  // (il + 1) % 4 == 0: no RoPE
  }
  {
    ir::Graph g = Build(Family("gpt2-f32"));
    CHECK(FindOp(g, "inp_pos_embd"));
    CHECK(FindOp(g, "blk.0.attn_in")->type == "layer_norm");
    CHECK(FindOp(g, "blk.0.k")->type == "slice");
    CHECK_FALSE(FindOp(g, "blk.0.q_rope"));
  }
  {
    ir::Graph g = Build(Family("qwen2-q8_0"));
    CHECK(FindOp(g, "blk.0.q")->type == "add");  // bias
    CHECK(FindOp(g, "blk.0.q_rope")->Str("mode") == "neox");
  }
  {
    ir::Graph g = Build(Family("qwen2-yarn-q8_0"));
    const ir::Op* rope = FindOp(g, "blk.0.q_rope");
    CHECK(rope->Float("ext_factor") == 1.0);
    CHECK(rope->Float("freq_scale") == 0.25);
    CHECK(rope->Int("n_ctx_orig") == 64);
  }
  {
    ir::Graph g = Build(Family("phi3-q5_0"));
    CHECK(FindOp(g, "blk.0.ffn_act")->type == "swiglu_fused");
    CHECK(FindOp(g, "blk.0.q_rope")->inputs[2] == "rope_factors_short.weight");
    CHECK(FindOp(g, "blk.0.q_rope")->inputs[3] == "rope_factors_long.weight");
    CHECK(FindOp(g, "blk.0.q_rope")->Int("long_factors_ctx") == 256);
  }
  {
    ir::Graph g = Build(Family("granite-q6_k"));
    CHECK(FindOp(g, "inp_scaled")->Float("scale") == 12.0);
    CHECK(FindOp(g, "logits")->Float("scale") == Approx(0.125));
    CHECK(FindOp(g, "blk.0.attn")->Float("scale") == Approx(0.0078125));
  }
  {
    ir::Graph g = Build(Family("olmo2-q5_k"));
    CHECK_FALSE(FindOp(g, "blk.0.attn_in"));  // no pre-norm
    CHECK(FindOp(g, "blk.0.q_normed")->type == "rms_norm");
  }
}

TEST_CASE("models: missing tensors and keys, wrong shapes are named") {
  auto s = FamilySpec("qwen3-q4_k");
  s.tensors["blk.1.attn_k_norm.weight"].shape = {32};
  CHECK(BuildError(s).find("tensor blk.1.attn_k_norm.weight has shape [32], expected [64]") != std::string::npos);
  s = FamilySpec("phi3-q5_0");
  s.tensors.erase("blk.2.attn_qkv.weight");
  CHECK(BuildError(s).find("blk.2.attn_q.weight is missing") != std::string::npos);
  s = FamilySpec("granite-q6_k");
  s.hparams = models::HParams(s.hparams.origin());  // no granite.* keys
  CHECK(BuildError(s).find("GGUF metadata granite.logit_scale: missing") != std::string::npos);
  s.hparams.SetNumber("logit_scale", 0);
  CHECK(BuildError(s).find("granite.logit_scale = 0") != std::string::npos);
  s.hparams.Set("logit_scale", models::HParams::Value{{}, "8", true, false});
  CHECK(BuildError(s).find("granite.logit_scale must be a number, not a string") != std::string::npos);
  {  // the shared blocks (llama, gemma3) check shapes too
    auto f = gguf::File::Open(Tiny("tiny-llama-q8_0.gguf"));
    REQUIRE(f.ok());
    auto ls = models::SpecFromGguf(**f);
    REQUIRE(ls.ok());
    ls->tensors["blk.1.attn_v.weight"].shape = {64, 256};
    CHECK(BuildError(*ls).find("tensor blk.1.attn_v.weight has shape [64,256], expected [128,256]") !=
          std::string::npos);
  }
  s = FamilySpec("gpt2-f32");
  s.tensors.erase("position_embd.weight");
  CHECK(BuildError(s).find("position_embd.weight") != std::string::npos);
}

TEST_CASE("models: the family table maps Hugging Face model_types onto GGUF architectures") {
  for (auto [type, arch] : {std::pair{"llama", "llama"}, {"mistral", "llama"}, {"mixtral", "llama"},
                            {"qwen2", "qwen2"}, {"qwen3", "qwen3"}, {"qwen2_moe", "qwen2moe"},
                            {"qwen3_moe", "qwen3moe"}, {"gemma", "gemma"}, {"gemma2", "gemma2"},
                            {"gemma3_text", "gemma3"}, {"phi3", "phi3"}, {"gpt2", "gpt2"}}) {
    const models::Family* f = models::FindHfFamily(type);
    INFO(type);
    REQUIRE(f != nullptr);
    CHECK(f->arch == arch);
  }
  CHECK(models::FindHfFamily("") == nullptr);
  CHECK(models::FindHfFamily("llama4") == nullptr);   // no prefix matches
  CHECK(models::FindHfFamily("mist") == nullptr);
  CHECK(models::SupportedHfModelTypes().find("gemma3_text") != std::string::npos);
}

TEST_CASE("models: a GGUF tensor the graph does not read fails the load, naming it") {
  models::ModelSpec s;
  s.arch = "llama";
  s.file = "x.gguf";
  s.n_vocab = 8, s.n_embd = 4, s.n_layer = 1, s.n_ff = 8, s.n_head = 1, s.n_head_kv = 1;
  s.head_dim_k = s.head_dim_v = s.n_rot = 4;
  auto add = [&](const std::string& name, std::vector<int64_t> shape) { s.tensors[name] = {TensorType::F32, shape, 0, 0}; };
  add("token_embd.weight", {8, 4});
  add("output_norm.weight", {4});
  for (const char* n : {"attn_norm", "ffn_norm"}) add(std::string("blk.0.") + n + ".weight", {4});
  for (const char* n : {"attn_q", "attn_k", "attn_v", "attn_output"}) add(std::string("blk.0.") + n + ".weight", {4, 4});
  add("blk.0.ffn_gate.weight", {8, 4});
  add("blk.0.ffn_up.weight", {8, 4});
  add("blk.0.ffn_down.weight", {4, 8});
  REQUIRE(models::BuildGraph(s).ok());
  add("blk.0.attn_q_norm.weight", {4});  // llama.cpp's llama graph has no QK-norm
  const std::string msg = BuildError(s);
  CHECK(msg.find("tensor blk.0.attn_q_norm.weight is not read by uaii's llama graph") != std::string::npos);
}
