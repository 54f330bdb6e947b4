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
