// The expert LRU in the storage plan (storage/expert_plan.h, docs/moe.md): expert
// banks are never pinned or staged; the LRU gets what the trunk leaves, capped by the
// preset and never below one layer's top-k experts, which is part of the minimum;
// --moe-top-k lowers the per-token bytes and is reported as such.
#include <catch2/catch.hpp>

#include <string>

#include "storage/expert_plan.h"
#include "storage/plan.h"

using namespace uaii::storage;

namespace {
constexpr uint64_t kMiB = uint64_t{1} << 20;

// n_layers layers: 2 attention matmuls of 1 MiB, and 3 expert banks of 8 experts of
// `expert_mib` each (top-2); embeddings and lm_head of 2 MiB; norms of 4 KiB.
PlanInputs MoeModel(int n_layers, uint64_t expert_mib) {
  PlanInputs in;
  auto add = [&](std::string name, uint64_t bytes, TensorRole role, int layer, bool matmul, bool embed,
                 int64_t n_expert = 0) {
    PlanTensor t;
    t.name = std::move(name);
    t.bytes = bytes;
    t.rows = 1024;
    t.row_bytes = bytes / 1024;
    t.role = role;
    t.layer = layer;
    t.matmul = matmul;
    t.embed = embed;
    t.n_expert = n_expert;
    t.expert_used = t.expert_used_file = n_expert ? 2 : 0;
    in.tensors.push_back(t);
  };
  add("token_embd.weight", 2 * kMiB, TensorRole::kEmbedding, -1, false, true);
  add("output_norm.weight", 4096, TensorRole::kElementwise, -1, false, false);
  add("output.weight", 2 * kMiB, TensorRole::kLmHead, -1, true, false);
  for (int l = 0; l < n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    add(p + "attn_norm.weight", 4096, TensorRole::kElementwise, l, false, false);
    add(p + "attn_q.weight", kMiB, TensorRole::kLayer, l, true, false);
    add(p + "attn_output.weight", kMiB, TensorRole::kLayer, l, true, false);
    for (const char* b : {"ffn_up_exps", "ffn_gate_exps", "ffn_down_exps"})
      add(p + b + ".weight", 8 * expert_mib * kMiB, TensorRole::kLayer, l, false, false, 8);
  }
  in.kv_bytes = kMiB;
  in.activation_bytes = kMiB;
  return in;
}

ResolvedPreset Budget(uint64_t bytes, uint64_t lru_cap) {
  ResolvedPreset r;
  r.preset = Preset::kLaptop;
  r.budget_bytes = bytes;
  r.pin = PinPolicy::kAutoTrunk;
  r.streaming = StreamPolicy::kWhenOverBudget;
  r.staging_buffers = 2;
  r.expert_lru_bytes = lru_cap;
  return r;
}

int CountResidency(const StoragePlan& p, Residency r) {
  int n = 0;
  for (auto x : p.residency) n += x == r;
  return n;
}
}  // namespace

TEST_CASE("expert plan: needs of the banks") {
  const PlanInputs in = MoeModel(4, 1);  // 4 layers x 3 banks x 8 experts x 1 MiB
  const ExpertNeeds n = MeasureExperts(in);
  CHECK(n.total_bytes == 96 * kMiB);
  CHECK(n.step_bytes == 6 * kMiB);  // top-2, three slices each
  CHECK(n.bytes_per_token == 24 * kMiB);
  CHECK(n.top_k == 2);
  CHECK(n.n_expert == 8);
}

TEST_CASE("expert plan: banks go to the LRU, the trunk is pinned first, the cap holds") {
  const PlanInputs in = MoeModel(4, 1);  // trunk 12 MiB + norms; experts 96 MiB
  auto p = PlanStorage(in, Budget(64 * kMiB, 32 * kMiB));
  REQUIRE(p.ok());
  CHECK(CountResidency(*p, Residency::kExpertLru) == 12);
  CHECK(CountResidency(*p, Residency::kStreamed) == 0);  // the trunk fits: all pinned
  CHECK(p->pinned_layers == 4);
  CHECK(p->pinned_bytes < 13 * kMiB);  // experts are not counted as pinned
  CHECK(p->expert_cache_bytes == 32 * kMiB);  // the preset's cap
  CHECK(p->expected_peak_bytes <= 64 * kMiB);
  CHECK(p->expert_bytes == 96 * kMiB);
  // Without the cap, the LRU takes everything the trunk leaves.
  auto q = PlanStorage(in, Budget(64 * kMiB, 0));
  REQUIRE(q.ok());
  CHECK(q->expert_cache_bytes == 64 * kMiB - q->pinned_bytes - 2 * kMiB);
  CHECK(q->expected_peak_bytes == 64 * kMiB);
  // A budget that holds everything still keeps the LRU (experts are never pinned),
  // at most the banks' size.
  auto r = PlanStorage(in, Budget(1024 * kMiB, 0));
  REQUIRE(r.ok());
  CHECK(r->expert_cache_bytes == 96 * kMiB);
}

TEST_CASE("expert plan: the LRU never shrinks the trunk, its minimum is one layer's top-k") {
  const PlanInputs in = MoeModel(4, 1);
  // Budget: the trunk (12 MiB + norms), KV and activations (2 MiB) and the step (6 MiB), just.
  auto tight = PlanStorage(in, Budget(21 * kMiB, 0));
  REQUIRE(tight.ok());
  CHECK(tight->pinned_layers == 4);
  CHECK(tight->expert_cache_bytes >= 6 * kMiB);
  CHECK(tight->expected_peak_bytes <= 21 * kMiB);
  // Smaller: the trunk streams, the LRU keeps its minimum.
  auto small = PlanStorage(in, Budget(12 * kMiB, 0));
  REQUIRE(small.ok());
  CHECK(small->streaming);
  CHECK(small->expert_cache_bytes >= 6 * kMiB);
  CHECK(small->expected_peak_bytes <= 12 * kMiB);
  // The minimum names the experts; below it the plan fails closed.
  auto none = PlanStorage(in, Budget(6 * kMiB, 0));
  REQUIRE(!none.ok());
  CHECK(std::string(none.status().message()).find("one layer's top-2 experts 6.0 MiB") != std::string::npos);
  // A preset cap below the step is raised to the step.
  auto capped = PlanStorage(in, Budget(64 * kMiB, kMiB));
  REQUIRE(capped.ok());
  CHECK(capped->expert_cache_bytes == 6 * kMiB);
}

TEST_CASE("expert plan: no budget reads the banks through the mapping") {
  const PlanInputs in = MoeModel(2, 1);
  ResolvedPreset none;
  auto p = PlanStorage(in, none);
  REQUIRE(p.ok());
  CHECK(CountResidency(*p, Residency::kExpertLru) == 0);
  CHECK(p->expert_cache_bytes == 0);
  CHECK(p->pinned_bytes > 48 * kMiB);
}

TEST_CASE("expert plan: --moe-top-k lowers the bytes per token and says so") {
  PlanInputs in = MoeModel(4, 1);
  ApplyMoeTopK(&in, 1);
  auto p = PlanStorage(in, Budget(64 * kMiB, 0));
  REQUIRE(p.ok());
  CHECK(p->moe_top_k == 1);
  CHECK(p->moe_top_k_file == 2);
  CHECK(p->expert_step_bytes == 3 * kMiB);
  CHECK(p->expert_bytes_per_token == 12 * kMiB);
  CHECK(p->expert_bytes_per_token_file_k == 24 * kMiB);
  ApplyMoeTopK(&in, 5);  // never more than the file's
  CHECK(MeasureExperts(in).top_k == 2);
  ApplyMoeTopK(&in, 0);
  CHECK(MeasureExperts(in).top_k == 2);
}
