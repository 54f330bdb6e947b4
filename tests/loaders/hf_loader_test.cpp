// HfLoader over the fixture directories of tests/fixtures/make_hf_fixtures.py.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <tuple>

#include "loaders/hf_loader.h"
#include "test_paths.h"

using namespace uaii;
using namespace uaii::hf;

namespace {

std::string Message(const absl::Status& s) { return std::string(s.message()); }
std::string Model(const std::string& name) { return test::HfFixture("models/" + name); }
bool HaveSharedTokenizers() {
  return std::filesystem::is_directory(std::string(UAII_SOURCE_DIR) + "/../shared/data/tokenizers");
}

}  // namespace

TEST_CASE("hf loader: llama directory", "[hf_loader]") {
  REQUIRE(IsHfDirectory(Model("llama")));
  auto m = LoadHfModel(Model("llama"));
  REQUIRE(m.ok());
  CHECK(m->arch.family == "llama");
  CHECK(m->arch.variant == "llama");
  CHECK(m->config.rope_scaling.kind == RopeScaling::Kind::kLlama3);
  CHECK(m->weight_files.size() == 1);
  CHECK(m->tensors.size() == 3 + 2 * 9);
  const HfTensor* q = m->Find("model.layers.1.self_attn.q_proj.weight");
  REQUIRE(q != nullptr);
  CHECK(q->role == "attn_q");
  CHECK(q->layer == 1);
  CHECK(q->dtype == TensorType::F16);
  CHECK(q->shape == std::vector<int64_t>{64, 64});
  CHECK(q->bytes == 64 * 64 * 2);
  CHECK(q->file == m->weight_files[0]);
  CHECK(m->FindRole("attn_q", 1) == q);
  // The reference points at the right bytes: compare with the mapped header.
  const auto& f = *m->files[0];
  CHECK(q->offset == f.FileOffset(*f.header().Find(q->name)));
  CHECK(q->offset + q->bytes <= f.file_bytes());
  CHECK(CheckRunnable(*m).ok());
  if (!HaveSharedTokenizers()) {
    WARN("SKIP tokenizer checks: ../shared is absent");
    return;
  }
  const auto& tok = m->tokenizer;
  CHECK(tok.model == "bpe");
  CHECK(tok.vocab_size == 128256);
  CHECK(tok.chat_template_source == "tokenizer_config.json");
  CHECK(!tok.chat_template.empty());
  REQUIRE(!tok.special.empty());
  CHECK(tok.special[0].kind == "bos");
  CHECK(tok.special[0].id == 128000);
  CHECK(tok.special[0].content == "<|begin_of_text|>");
  std::vector<int64_t> eog;
  for (const auto& t : tok.end_of_generation) eog.push_back(t.id);
  CHECK(std::find(eog.begin(), eog.end(), 128001) != eog.end());
  CHECK(std::find(eog.begin(), eog.end(), 128009) != eog.end());  // <|eot_id|>
}

TEST_CASE("hf loader: sharded directories equal the single-file tables", "[hf_loader]") {
  for (auto [single, sharded, shards] : {std::tuple{"llama", "llama_sharded", 2}, {"qwen3", "qwen3_sharded", 3}}) {
    INFO(sharded);
    auto a = LoadHfModel(Model(single));
    auto b = LoadHfModel(Model(sharded));
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    CHECK(b->weight_files.size() == static_cast<size_t>(shards));
    REQUIRE(a->tensors.size() == b->tensors.size());
    for (size_t i = 0; i < a->tensors.size(); ++i) {
      CHECK(a->tensors[i].name == b->tensors[i].name);
      CHECK(a->tensors[i].role == b->tensors[i].role);
      CHECK(a->tensors[i].shape == b->tensors[i].shape);
      auto x = MaterializeF32(*a, a->tensors[i]);
      auto y = MaterializeF32(*b, b->tensors[i]);
      REQUIRE(x.ok());
      REQUIRE(y.ok());
      CHECK(*x == *y);
    }
  }
}

TEST_CASE("hf loader: qwen3 gemma3 phi3 gpt2 variants", "[hf_loader]") {
  auto q = LoadHfModel(Model("qwen3"));
  REQUIRE(q.ok());
  CHECK(q->arch.qk_norm);
  CHECK(q->arch.tied_embeddings);
  CHECK(q->tensors[0].dtype == TensorType::F32);
  auto g = LoadHfModel(Model("gemma3"));
  REQUIRE(g.ok());
  CHECK(g->arch.variant == "gemma3_text");
  CHECK(g->arch.sandwich_norms);
  CHECK(g->config.hidden_activation == Activation::kGeluTanh);
  auto p = LoadHfModel(Model("phi3"));
  REQUIRE(p.ok());
  CHECK(p->arch.qkv == QkvLayout::kConcat);
  CHECK(p->arch.ffn == FfnKind::kGatedFused);
  CHECK(p->arch.rotary_dims == 12);
  CHECK(p->config.rope_scaling.kind == RopeScaling::Kind::kLongRope);
  CHECK(p->config.rope_scaling.original_max_position_embeddings == 256);
  CHECK(p->FindRole("ffn_gate_up", 0)->shape == std::vector<int64_t>{256, 64});
  auto t = LoadHfModel(Model("gpt2"));
  REQUIRE(t.ok());
  CHECK(t->arch.family == "gpt2");
  CHECK(t->arch.qkv == QkvLayout::kGpt2Conv1D);
  CHECK(t->arch.ffn == FfnKind::kMlp);
  CHECK(t->arch.norm == NormKind::kLayerNorm);
  CHECK(t->arch.learned_positions);
  CHECK(!t->arch.rope);
  CHECK(t->arch.n_ff == 256);  // n_inner null -> 4 * n_embd
  CHECK(t->arch.tied_embeddings);
  CHECK(t->FindRole("attn_qkv", 0, -1, true)->shape == std::vector<int64_t>{192});
  CHECK(t->Find("h.0.attn.bias")->role.empty());  // causal-mask buffer, ignored
}

TEST_CASE("hf loader: I8 and U8 weights are promoted to f32", "[hf_loader]") {
  auto m = LoadHfModel(Model("llama_int8"));
  REQUIRE(m.ok());
  const HfTensor* down = m->Find("model.layers.0.mlp.down_proj.weight");
  const HfTensor* norm = m->Find("model.norm.weight");
  REQUIRE(down != nullptr);
  REQUIRE(norm != nullptr);
  CHECK(down->promote_to_f32);
  CHECK(down->stored == safetensors::Dtype::I8);
  CHECK(down->dtype == TensorType::F32);
  CHECK(down->bytes == 64 * 128);
  CHECK(norm->stored == safetensors::Dtype::U8);
  auto v = MaterializeF32(*m, *down);
  REQUIRE(v.ok());
  REQUIRE(v->size() == 64 * 128);
  bool integral = true, negative = false;
  for (float x : *v) integral &= x == static_cast<float>(static_cast<int>(x)) && x >= -128 && x <= 127, negative |= x < 0;
  CHECK(integral);
  CHECK(negative);
  CHECK(!m->Find("model.embed_tokens.weight")->promote_to_f32);
}

TEST_CASE("hf loader: refused and described-only directories", "[hf_loader]") {
  auto gptq = LoadHfModel(Model("gptq"));
  CHECK_THAT(Message(gptq.status()), Catch::Contains("convert to dense BF16/F16 or to GGUF"));
  auto fp8 = LoadHfModel(Model("fp8"));
  CHECK_THAT(Message(fp8.status()), Catch::Contains("F8_E4M3") && Catch::Contains("GGUF"));
  auto llava = LoadHfModel(Model("llava"));
  CHECK_THAT(Message(llava.status()), Catch::Contains("denied") && Catch::Contains("vision"));
  auto mla = LoadHfModel(Model("mla"));
  CHECK_THAT(Message(mla.status()), Catch::Contains("use GGUF"));
  auto oss = LoadHfModel(Model("gpt_oss"));
  REQUIRE(oss.ok());
  CHECK(oss->arch.family == "gpt_oss");
  CHECK(!CheckRunnable(*oss).ok());
  CHECK_THAT(Message(CheckRunnable(*oss)), Catch::Contains("gpt_oss"));
}

TEST_CASE("hf loader: directory problems", "[hf_loader]") {
  namespace fs = std::filesystem;
  const fs::path tmp = fs::temp_directory_path() / ("uaii_hf_loader_test_" + std::to_string(::getpid()));
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  CHECK(!IsHfDirectory(tmp.string()));
  CHECK_THAT(Message(LoadHfModel(tmp.string()).status()), Catch::Contains("no config.json"));
  fs::copy_file(Model("llama") + "/config.json", tmp / "config.json");
  CHECK_THAT(Message(LoadHfModel(tmp.string()).status()), Catch::Contains("no .safetensors weights"));
  { std::ofstream(tmp / "pytorch_model.bin") << "x"; }
  CHECK_THAT(Message(LoadHfModel(tmp.string()).status()), Catch::Contains("convert to safetensors"));
  // An index naming a missing shard.
  { std::ofstream(tmp / "model.safetensors.index.json") << R"({"weight_map":{"a":"model-1.safetensors"}})"; }
  CHECK_THAT(Message(LoadHfModel(tmp.string()).status()), Catch::Contains("shard model-1.safetensors is missing"));
  // An index claiming a tensor the shard does not hold.
  fs::copy_file(Model("llama") + "/model.safetensors", tmp / "model-1.safetensors");
  CHECK_THAT(Message(LoadHfModel(tmp.string()).status()), Catch::Contains("does not hold it"));
  fs::remove_all(tmp);
}
