#include <catch2/catch.hpp>

#include <cstring>

#include "ir/serialize.h"
#include "planner/content_hash.h"
#include "planner/fusion.h"
#include "planner/pipeline.h"
#include "planner/plan_cache.h"
#include "test_util.h"

using namespace uaii;
using namespace uaii::planner;
using namespace uaii::planner::testing;

namespace {
int CountOps(const ir::Graph& g, const std::string& type) {
  int n = 0;
  for (const auto& op : g.ops) n += op.type == type;
  return n;
}
}  // namespace

TEST_CASE("planner: fusions rewrite QKV and gate+up+act into norm_linear ops") {
  ir::Graph g = BuiltGraph(Tiny("tiny-llama-q8_0.gguf"));  // 3 layers
  auto plan = RunPasses(g, PlanOptions{});
  INFO(plan.status().ToString());
  REQUIRE(plan.ok());
  const ir::Graph& f = plan->graph;
  // Per layer: attn_norm -> q,k,v and ffn_norm -> gate,up (+swiglu); plus output_norm -> head.
  CHECK(CountOps(f, "norm_linear") == 3 * 2 + 1);
  CHECK(CountOps(f, "swiglu") == 0);
  CHECK(CountOps(f, "rms_norm") == 0);
  CHECK(CountOps(f, "matmul") == 3 * 2);  // attn_output and ffn_down stay
  CHECK(f.ops.size() + 3 * 6 + 1 == g.ops.size());
  REQUIRE(plan->passes.size() == 2);
  CHECK(plan->passes[0] == "fuse_norm_linear: 7 rewrites");
  CHECK(plan->passes[1] == "fuse_gated_activation: 3 rewrites");
  PlanOptions off;
  off.fuse = false;
  auto plain = RunPasses(g, off);
  REQUIRE(plain.ok());
  CHECK(plain->graph.ops.size() == g.ops.size());
}

TEST_CASE("planner: fused graphs give bit-identical logits (llama, gemma3, every fixture type)") {
  const auto prompt = TinyPrompt();
  REQUIRE(prompt.size() >= 16);
  for (std::string fam : {"llama", "gemma3"})
    for (std::string ty : {"f32", "f16", "q8_0", "q4_0", "q4_k"}) {
      INFO(fam << " " << ty);
      ir::Graph g = BuiltGraph(Tiny("tiny-" + fam + "-" + ty + ".gguf"));
      auto plan = RunPasses(g, PlanOptions{});
      REQUIRE(plan.ok());
      CHECK(CountOps(plan->graph, "norm_linear") > 0);
      for (int64_t chunk : {int64_t{7}, int64_t{64}}) {
        auto a = Forward(g, prompt, chunk);
        auto b = Forward(plan->graph, prompt, chunk);
        REQUIRE(a.size() == b.size());
        CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
      }
    }
}

TEST_CASE("planner: memory plan reuses activation buffers by liveness") {
  ir::Graph g = BuiltGraph(Tiny("tiny-gemma3-q4_0.gguf"));  // 7 layers
  for (bool fuse : {false, true}) {
    PlanOptions o;
    o.fuse = fuse;
    o.prefill_tokens = 64;
    auto plan = RunPasses(g, o);
    REQUIRE(plan.ok());
    for (const MemoryPlan* m : {&plan->decode, &plan->prefill}) {
      INFO("fuse " << fuse << " T " << m->tokens);
      CHECK(m->peak_live_bytes > 0);
      CHECK(m->peak_live_bytes <= m->arena_bytes);
      CHECK(m->arena_bytes * 4 < m->no_reuse_bytes);  // reuse across 7 layers
      // No two buffers alive at the same step overlap in the arena.
      for (size_t i = 0; i < m->buffers.size(); ++i)
        for (size_t j = i + 1; j < m->buffers.size(); ++j) {
          const auto &a = m->buffers[i], &b = m->buffers[j];
          const bool time = a.first <= b.last && b.first <= a.last;
          const bool space = a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
          if (time && space) FAIL(a.tensor << " and " << b.tensor << " overlap");
        }
    }
    CHECK(plan->prefill.peak_live_bytes > plan->decode.peak_live_bytes);
  }
}

TEST_CASE("planner: the GGUF content hash covers header and tensor table") {
  auto a = gguf::File::Open(Tiny("tiny-llama-q8_0.gguf"));
  auto b = gguf::File::Open(Tiny("tiny-llama-q4_0.gguf"));
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  const std::string ha = GgufContentHash(**a);
  CHECK(ha.size() == 64);
  CHECK(ha == GgufContentHash(**a));
  CHECK(ha != GgufContentHash(**b));
}

TEST_CASE("plan cache: a second plan hits — model, options or graph changes miss") {
  const std::string dir = ScratchDir("cache");
  ir::Graph g = BuiltGraph(Tiny("tiny-llama-q4_k.gguf"));
  PlanOptions o;
  auto first = PlanWithCache(g, "model-a", o, dir);
  REQUIRE(first.ok());
  CHECK(!first->from_cache);
  auto second = PlanWithCache(g, "model-a", o, dir);
  REQUIRE(second.ok());
  CHECK(second->from_cache);
  CHECK(second->cache_key == first->cache_key);
  CHECK(*ir::ToBinary(second->graph) == *ir::ToBinary(first->graph));
  CHECK(second->passes == first->passes);
  CHECK(second->prefill.peak_live_bytes == first->prefill.peak_live_bytes);
  CHECK(second->decode.arena_bytes == first->decode.arena_bytes);
  // Another model (content hash), other options, another backend, another graph: misses.
  CHECK(!PlanWithCache(g, "model-b", o, dir)->from_cache);
  PlanOptions unfused = o;
  unfused.fuse = false;
  CHECK(!PlanWithCache(g, "model-a", unfused, dir)->from_cache);
  PlanOptions chunk = o;
  chunk.prefill_tokens = 32;
  CHECK(!PlanWithCache(g, "model-a", chunk, dir)->from_cache);
  PlanOptions vk = o;
  vk.backend = "vulkan";
  CHECK(!PlanWithCache(g, "model-a", vk, dir)->from_cache);
  ir::Graph g2 = g;
  g2.metadata.emplace_back("note", "builder changed");
  CHECK(!PlanWithCache(g2, "model-a", o, dir)->from_cache);
  // A corrupt entry is a miss, and the plan is recomputed and rewritten.
  const std::string entry = dir + "/" + first->cache_key + ".uaii";
  REQUIRE(std::filesystem::exists(entry));
  { std::ofstream(entry, std::ios::trunc) << "not a plan"; }
  auto again = PlanWithCache(g, "model-a", o, dir);
  REQUIRE(again.ok());
  CHECK(!again->from_cache);
  CHECK(PlanWithCache(g, "model-a", o, dir)->from_cache);
  // No directory: no cache.
  CHECK(!PlanWithCache(g, "model-a", o, "")->from_cache);
  std::filesystem::remove_all(dir);
}
