// moe_ffn on the Vulkan backend (lib/backends/vulkan/vulkan_moe.h) against the CPU
// backend: whole-model logits of every MoE fixture (build/fixtures/moe: Mixtral,
// Qwen2-MoE with its gated shared expert, Qwen3-MoE, Granite-MoE with and without a
// shared expert; each makes experts 2 and 5 tie on every token), with the file's k and
// with SessionOptions::moe_top_k = 1, chunked prefill against whole prefill, and the
// op alone on identical inputs (whole and chunked weights).
// Without a Vulkan device every case prints a SKIP line and passes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "backends/registry.h"
#include "backends/vulkan/vk_device.h"
#include "backends/vulkan/vulkan_program.h"
#include "kernels/matmul.h"
#include "runtime/kv_cache.h"
#include "runtime/model_impl.h"
#include "uaii/session.h"
#include "vulkan_test_util.h"

using namespace uaii;
using namespace uaii::vulkan_test;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> MoeFixtures() {
  std::vector<std::string> paths;
  for (const auto& e : fs::directory_iterator(Fixtures("moe")))
    if (e.path().extension() == ".gguf") paths.push_back(e.path().string());
  std::sort(paths.begin(), paths.end());
  return paths;
}

// The fixtures' 64-token prompt (moe/prompt.txt, as uaii_moe_tests), within the vocabulary.
std::vector<TokenId> Prompt(int64_t n_vocab) {
  std::vector<TokenId> p;
  std::ifstream in(Fixtures("moe/prompt.txt"));
  for (long long t; in >> t;) p.push_back(static_cast<TokenId>(t % n_vocab));
  if (p.empty())
    for (TokenId t = 1; t <= 20; ++t) p.push_back(t * 7 % static_cast<TokenId>(n_vocab));
  return p;
}

// Every prompt row's logits (prefill in chunks of `chunk`), then three decode steps'.
std::vector<float> Logits(const std::shared_ptr<const Model>& m, const std::string& device,
                          const std::vector<TokenId>& prompt, int64_t moe_top_k = 0, int64_t chunk = 512) {
  SessionOptions o;
  o.device = device;
  o.max_context = 128;
  o.threads = 2;
  o.prefill_chunk = chunk;
  o.moe_top_k = moe_top_k;
  return EvalThenDecode(m, o, prompt);
}

// The products' tolerance is the dense quantized fixtures' (vulkan_parity_test.cpp):
// the device multiplies f32 activations by the weights where the CPU quantizes
// activations to Q8_0 / Q8_K first (as ggml), a few percent on a random tiny model
// (every bank's type, Q5_0 and the K-quants too, is read packed). moe_ffn alone on identical inputs (the last case) routes every
// row as the CPU does and stays within it (measured 0.015 - 0.046).
constexpr double kTolerance = 6e-2;
// A whole model's moe_ffn inputs differ by that drift, and the fixtures' random
// routers leave near-tied experts (top-k probability gaps down to 1e-5 on 64 tokens;
// experts 2 and 5 tie exactly and resolve alike): a few rows pick a different k-th
// expert than the CPU (measured: 1 row of 67 on three fixtures, 0.13 - 0.32 relative,
// traced to gaps of 1e-4 - 1e-3), and the rows after them see it through attention
// only slightly. So: every row within kTolerance but at most kFlipRows, and those
// within kFlipBound (a wrong routing or combine is off on every row, by the scale).
constexpr int kFlipRows = 3;
constexpr double kFlipBound = 0.5;

void CompareAll(int64_t moe_top_k) {
  int compared = 0;
  for (const auto& path : MoeFixtures()) {
    INFO(path);
    auto m = Model::Load(path);
    INFO(m.status().ToString());
    REQUIRE(m.ok());
    const auto prompt = Prompt((*m)->info().n_vocab);
    const auto cpu = Logits(*m, "cpu", prompt, moe_top_k);
    const auto gpu = Logits(*m, "vulkan", prompt, moe_top_k);
    const size_t V = static_cast<size_t>((*m)->info().n_vocab);
    const double worst = WorstRelative(cpu, gpu, V);
    const auto rel = RowRelative(cpu, gpu, V);
    int over = 0;
    double rest = 0;
    for (double r : rel) {
      if (r > kTolerance) ++over;
      else rest = std::max(rest, r);
    }
    std::printf("vulkan moe %s (moe_top_k %lld): worst relative difference %.3g; %d of %zu rows over %.3g, the "
                "rest within %.3g\n",
                fs::path(path).filename().c_str(), static_cast<long long>(moe_top_k), worst, over, rel.size(),
                kTolerance, rest);
    CHECK(over <= kFlipRows);
    CHECK(worst <= kFlipBound);
    ++compared;
  }
  CHECK(compared == 6);  // every file of tests/fixtures/make_moe_models.py
}

}  // namespace

TEST_CASE("vulkan: every MoE fixture's logits equal the CPU's within tolerance", "[vulkan][moe]") {
  if (!HaveVulkan()) return;
  CompareAll(0);
}

TEST_CASE("vulkan: moe_top_k = 1 routes to one expert per token as the CPU does", "[vulkan][moe]") {
  if (!HaveVulkan()) return;
  CompareAll(1);
  // The cap takes effect: top-1 logits are not the file's top-2 ones.
  auto m = Model::Load(Fixtures("moe/mixtral-q4_0.gguf"));
  REQUIRE(m.ok());
  const auto prompt = Prompt((*m)->info().n_vocab);
  const double moved = WorstRelative(Logits(*m, "vulkan", prompt, 0), Logits(*m, "vulkan", prompt, 1),
                                     static_cast<size_t>((*m)->info().n_vocab));
  std::printf("vulkan moe mixtral-q4_0: top-1 against top-2, worst relative difference %.3g\n", moved);
  CHECK(moved > 10 * kTolerance);
}

TEST_CASE("vulkan: MoE chunked prefill equals whole prefill", "[vulkan][moe]") {
  // Every row's routing and expert products are its own (no batch-dependent sums).
  if (!HaveVulkan()) return;
  auto m = Model::Load(Fixtures("moe/qwen2moe-q8_0.gguf"));
  REQUIRE(m.ok());
  const auto prompt = Prompt((*m)->info().n_vocab);
  const auto whole = Logits(*m, "vulkan", prompt);
  const auto chunked = Logits(*m, "vulkan", prompt, 0, 13);
  CHECK(WorstRelative(whole, chunked, static_cast<size_t>((*m)->info().n_vocab)) == 0);
}

// Gemma 4's MoE layers on the device (GELU experts, the router's own input, per-expert
// output scales), with separate and fused gate|up banks: chunked prefill is row-exact,
// and under a device budget of a kilobyte every bank stays in host memory, read in place
// per selected expert, with the same bits as resident banks.
TEST_CASE("vulkan: gemma4 MoE (separate and fused gate|up banks): chunked = whole, host banks = resident", "[vulkan][moe]") {
  if (!HaveVulkan()) return;
  for (const char* name : {"moe-q8_0", "moe-fused-q8_0", "moe-fused-q4_0"}) {
    INFO(name);
    auto m = Model::Load(Fixtures(std::string("gemma4/") + name + ".gguf"));
    REQUIRE(m.ok());
    const auto prompt = Prompt((*m)->info().n_vocab);
    const auto whole = Logits(*m, "vulkan", prompt);
    CHECK(WorstRelative(whole, Logits(*m, "vulkan", prompt, 0, 13), static_cast<size_t>((*m)->info().n_vocab)) == 0);
    SessionOptions o;
    o.device = "vulkan";
    o.max_context = 128;
    o.threads = 2;
    o.device_memory_bytes = 1024;
    auto s = Session::Create(*m, o);
    REQUIRE(s.ok());
    CHECK((*s)->device_stats().host_bytes > 0);
    s->reset();
    CHECK(EvalThenDecode(*m, o, prompt) == whole);
  }
}

namespace {

// The model's graph cut to its first moe_ffn on an F32 copy of the token embeddings
// ("moe_test.x", dequantized on the host and adopted into a copy of the weight set):
// tokens -> embed -> moe_ffn -> "logits" [T, E]. Both devices read an F32 table
// exactly, so they route bit-identical inputs.
struct MoeOnly {
  ir::Graph graph;
  std::unique_ptr<runtime::WeightSet> weights;
};

MoeOnly CutToMoe(const ir::Graph& g, const runtime::WeightSet& weights) {
  MoeOnly cut{g, std::make_unique<runtime::WeightSet>(weights)};
  const ir::Op *embed = nullptr, *moe = nullptr;
  for (const auto& op : g.ops) {
    if (!embed && op.type == "embed" && op.inputs.size() > 1 && op.inputs[1] == "tokens") embed = &op;
    if (!moe && op.type == "moe_ffn") moe = &op;
  }
  REQUIRE(embed);
  REQUIRE(moe);
  const runtime::BoundWeight* table = weights.Find(embed->inputs[0]);
  REQUIRE(table);
  REQUIRE(table->shape.size() == 2);
  const int64_t V = table->shape[0], E = table->shape[1];
  auto f32 = std::make_shared<std::vector<float>>(static_cast<size_t>(V * E));
  for (int64_t r = 0; r < V; ++r)
    REQUIRE(DequantizeRow(table->type, table->data + r * table->row_bytes, E, f32->data() + r * E).ok());
  runtime::BoundWeight x;
  x.type = TensorType::F32;
  x.shape = {V, E};
  x.data = reinterpret_cast<const uint8_t*>(f32->data());
  x.bytes = static_cast<uint64_t>(V * E) * 4;
  x.row_bytes = static_cast<uint64_t>(E) * 4;
  cut.weights->Adopt({{"moe_test.x", x}}, {f32});
  ir::Tensor t;
  t.name = "moe_test.x";
  t.shape = {V, E};
  t.weight = ir::TensorRef{"moe_test", "moe_test.x", 0, x.bytes};
  cut.graph.tensors.push_back(t);
  ir::Op e = *embed, m = *moe;
  e.inputs[0] = "moe_test.x";
  m.inputs[0] = e.outputs[0];
  m.outputs = {"logits"};
  cut.graph.ops = {e, m};
  cut.graph.outputs = {"logits"};
  const ir::Tensor* xt = g.FindTensor(e.outputs[0]);
  REQUIRE(xt);
  cut.graph.FindTensor("logits")->shape = xt->shape;
  return cut;
}

// y [T, E] of one program over the whole vocabulary as a batch (every row's routing).
std::vector<float> RunAll(const backends::Program& p, int64_t n_vocab, int64_t top_k) {
  std::vector<int32_t> tokens, positions;
  std::vector<int64_t> rows;
  for (int64_t t = 0; t < n_vocab; ++t) {
    tokens.push_back(static_cast<int32_t>(t));
    positions.push_back(static_cast<int32_t>(t));
    rows.push_back(t);
  }
  runtime::KvCache cache(p.kv_layers(), n_vocab);
  backends::RunContext ctx;
  ctx.moe_top_k = top_k;
  auto ws = p.NewWorkspace();
  ctx.workspace = ws.get();
  std::vector<float> out;
  const auto st = p.Run(tokens.data(), positions.data(), n_vocab, rows, cache, ctx, &out);
  INFO(st.ToString());
  REQUIRE(st.ok());
  return out;
}

}  // namespace

TEST_CASE("vulkan: moe_ffn alone on the same inputs equals the CPU's, whole or split into chunks", "[vulkan][moe]") {
  // Every token of the vocabulary (320 rows) through the first layer's moe_ffn, on an
  // F32 input both devices read exactly; the router is F32 on both, so its logits
  // differ by float summation order only and every row routes alike (experts 2 and 5
  // tie exactly on ~15% of the rows at the k-th slot; the smallest other gap seen is
  // 1e-5): a routing difference would put a row off by its scale. What remains is the
  // products' drift (kTolerance). Weights split into 4 KiB chunks (experts' rows cross
  // chunk boundaries) give the bits of whole ones.
  if (!HaveVulkan()) return;
  auto cpu = backends::SelectBackend("cpu");
  REQUIRE(cpu.ok());
  auto dev = backends::vulkan::Device::Open(0);
  REQUIRE(dev.ok());
  for (const auto& path : MoeFixtures()) {
    INFO(path);
    auto m = Model::Load(path);
    REQUIRE(m.ok());
    const auto& internals = ModelInternals::Of(**m);
    const MoeOnly cut = CutToMoe(internals.graph, *internals.weights);
    const ir::Graph& g = cut.graph;
    auto c = (*cpu)->Compile(g, *cut.weights);
    INFO(c.status().ToString());
    REQUIRE(c.ok());
    auto whole = backends::vulkan::VulkanProgram::Create(*dev, g, *cut.weights);
    INFO(whole.status().ToString());
    REQUIRE(whole.ok());
    auto split = backends::vulkan::VulkanProgram::Create(*dev, g, *cut.weights, 4096);
    REQUIRE(split.ok());
    const int64_t V = (*m)->info().n_vocab;
    const size_t E = static_cast<size_t>(g.FindTensor("logits")->shape.back());
    for (int64_t top_k : {int64_t{0}, int64_t{1}}) {
      const auto want = RunAll(**c, V, top_k), got = RunAll(**whole, V, top_k);
      const double worst = WorstRelative(want, got, E);
      std::printf("vulkan moe_ffn alone %s (moe_top_k %lld, %lld rows): worst relative difference %.3g\n",
                  fs::path(path).filename().c_str(), static_cast<long long>(top_k), static_cast<long long>(V), worst);
      CHECK(worst <= kTolerance);
      CHECK(RunAll(**split, V, top_k) == got);
    }
  }
}
