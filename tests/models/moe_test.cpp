// Mixture-of-experts families (docs/moe.md) against llama.cpp: iterates the goldens
// tests/golden/llamacpp/moe-*.json (tests/oracles/llamacpp_moe.py, llama-cpp-python;
// CPU, F16 KV cache, no flash attention) over the tiny random GGUFs of
// tests/fixtures/make_moe_models.py (8 experts, top-2, packed quantized banks, a
// router tie between experts 2 and 5 on every token).
//
// Per family: the 64-token prompt prefilled whole, and again in chunks of 13 / 27 / 24
// tokens; all 64 logit rows are compared.
//   whole vs llama.cpp:  max |dlogit| <= tolerance(type) + golden rounding (1 / (2 scale))
//   chunked vs whole:    bit-identical (routing and experts are per row)
// The tolerances are the dense families' (families_test.cpp): float-order drift of
// the kernels against ggml's SIMD paths, for logits up to ~5; scaled down with the
// golden's max |logit| below that (granite divides logits by logit_scale 8), since
// drift scales with the values. Reversing the tie order of the router's argsort
// (higher index first) moves max |dlogit| to 0.91 (mixtral), 2.14 (qwen2moe), 4.04
// (qwen3moe), 0.080 and 0.088 (granitemoe, against tolerances 0.017 / 0.042).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <zlib.h>

#include "../runtime/golden.h"
#include "models/families.h"
#include "formats/gguf_file.h"
#include "backends/cpu/moe.h"
#include "runtime/moe_cache.h"
#include "simdjson.h"
#include "uaii/session.h"

using namespace uaii;
using namespace uaii::testing;


TEST_CASE("moe: tiny random MoE models of every family match llama.cpp") {
  const int n = CheckTableGoldens(
      "moe-", "make_moe_models.py",
      [](const std::string& type, double max_abs) { return QuantTypeRelTolerance(type) * max_abs; },
      {13, 27, 24});
  CHECK(n >= 6);  // every row of make_moe_models.MOE_FAMILIES
}

TEST_CASE("moe: routing ties go to the lower expert index, as ggml's argsort") {
  using namespace uaii::runtime;
  using namespace uaii::backends::cpu;
  MoeParams p;
  p.n_expert = 6;
  p.n_expert_used = 2;
  // Row 0: experts 1, 2 and 4 tie for first place; row 1: 3 wins, 0 and 5 tie for second.
  const float probs[12] = {0.1f, 0.3f, 0.3f, 0.1f, 0.3f, 0.0f, 0.2f, 0.1f, 0.1f, 0.4f, 0.1f, 0.2f};
  int32_t sel[4];
  float w[4];
  MoeRoute(p, probs, nullptr, 2, sel, w);
  CHECK(sel[0] == 1);
  CHECK(sel[1] == 2);
  CHECK(sel[2] == 3);
  CHECK(sel[3] == 0);
  CHECK(w[0] == 0.3f);  // not renormalised
  p.norm_w = true;
  MoeRoute(p, probs, nullptr, 2, sel, w);
  CHECK(w[2] == 0.4f / static_cast<float>(double(0.4f) + double(0.2f)));
  // A selection bias changes the choice but not the weights.
  const float bias[6] = {0, 0, 0, 0, 0, 1.0f};
  p.norm_w = false;
  MoeRoute(p, probs, bias, 2, sel, w);
  CHECK(sel[0] == 5);
  CHECK(w[0] == 0.0f);
}

TEST_CASE("moe: expert slices of a packed bank") {
  using namespace uaii::runtime;
  using namespace uaii::backends::cpu;
  std::vector<uint8_t> bytes(8 * 3 * 34);  // Q8_0 bank [8, 3, 32]: 34-byte rows
  BoundWeight bank;
  bank.type = TensorType::Q8_0;
  bank.shape = {8, 3, 32};
  bank.data = bytes.data();
  bank.bytes = bytes.size();
  bank.row_bytes = 34;
  bank.offset = 1000;
  BoundWeight e5 = ExpertSlice(bank, 5);
  CHECK(e5.shape == std::vector<int64_t>{3, 32});
  CHECK(e5.bytes == 3 * 34);
  CHECK(e5.data == bytes.data() + 5 * 3 * 34);
  CHECK(e5.offset == 1000 + 5 * 3 * 34);
}

TEST_CASE("moe: only the routed experts' slices are read") {
  using namespace uaii::runtime;
  using namespace uaii::backends::cpu;
  constexpr int64_t E = 32, F = 32, N = 4, T = 3;
  // Router: x . row = x[e] (one-hot rows), so with x[0], x[1] largest experts 0 and 1 win.
  std::vector<float> router(N * E, 0.0f), x(T * E, 0.0f);
  for (int64_t e = 0; e < N; ++e) router[e * E + e] = 1.0f;
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t c = 0; c < E; ++c) x[t * E + c] = 0.01f * float((c * 7 + t) % 11) - 0.05f;
    x[t * E + 0] = 2.0f + t;
    x[t * E + 1] = 1.0f;
  }
  // Banks: experts 2 and 3 are NaN, so reading them would poison the output.
  std::vector<float> up(N * F * E), gate(N * F * E), down(N * E * F);
  for (size_t i = 0; i < up.size(); ++i) {
    const bool unused = int64_t(i) / (F * E) >= 2;
    const float nan = std::numeric_limits<float>::quiet_NaN();
    up[i] = unused ? nan : 0.01f * float(i % 13) - 0.06f;
    gate[i] = unused ? nan : 0.02f * float(i % 7) - 0.05f;
    down[i] = unused ? nan : 0.015f * float(i % 5) - 0.03f;
  }
  auto bound = [](std::vector<float>& v, std::vector<int64_t> shape) {
    BoundWeight w;
    w.type = TensorType::F32;
    w.shape = std::move(shape);
    w.data = reinterpret_cast<const uint8_t*>(v.data());
    w.bytes = v.size() * sizeof(float);
    w.row_bytes = w.shape.back() * sizeof(float);
    return w;
  };
  BoundWeight r = bound(router, {N, E}), u = bound(up, {N, F, E}), g = bound(gate, {N, F, E}),
              d = bound(down, {N, E, F});
  MoeParams p;
  p.n_expert = N;
  p.n_expert_used = 2;
  p.norm_w = true;
  MoeWeights w{&r, &u, &g, &d};
  std::vector<float> y(T * E);
  REQUIRE(MoeFfn(p, w, x.data(), T, y.data(), nullptr).ok());
  for (int64_t t = 0; t < T; ++t) {
    // Reference in double: softmax over the 4 logits, experts 0 and 1, renormalised.
    double l[N], mx = -1e30, s = 0;
    for (int64_t e = 0; e < N; ++e) mx = std::max(mx, l[e] = x[t * E + e]);
    for (int64_t e = 0; e < N; ++e) s += (l[e] = std::exp(l[e] - mx));
    const double w0 = l[0] / s, w1 = l[1] / s;
    for (int64_t c = 0; c < E; ++c) {
      double acc = 0;
      for (int64_t e = 0; e < 2; ++e) {
        double o = 0;
        for (int64_t f = 0; f < F; ++f) {
          double gu = 0, uu = 0;
          for (int64_t i = 0; i < E; ++i) {
            gu += double(gate[(e * F + f) * E + i]) * x[t * E + i];
            uu += double(up[(e * F + f) * E + i]) * x[t * E + i];
          }
          o += double(down[(e * E + c) * F + f]) * (gu / (1 + std::exp(-gu))) * uu;
        }
        acc += (e == 0 ? w0 : w1) / (w0 + w1) * o;
      }
      INFO("t " << t << " c " << c);
      REQUIRE(std::isfinite(y[t * E + c]));
      CHECK(std::fabs(y[t * E + c] - acc) < 1e-4);
    }
  }
}

TEST_CASE("moe: bad expert metadata names the key") {
  models::ModelSpec s;
  s.arch = "qwen3moe";
  s.file = "x.gguf";
  s.n_expert = 8;
  s.n_expert_used = 0;
  s.n_ff_exp = 64;
  auto g = models::BuildGraph(s);
  REQUIRE(!g.ok());
  CHECK(g.status().message().find("qwen3moe.expert_used_count") != std::string_view::npos);
  s.n_expert_used = 9;
  g = models::BuildGraph(s);
  REQUIRE(!g.ok());
  CHECK(g.status().message().find("expert_used_count = 9") != std::string_view::npos);
  s.n_expert_used = 2;
  s.tensors["blk.0.ffn_gate_inp.weight"] = {};
  g = models::BuildGraph(s);
  REQUIRE(!g.ok());
  INFO(g.status().message());
  CHECK(g.status().message().find("re-convert") != std::string_view::npos);
}

namespace {

// A GGUF fixture read into memory, handing out its 3-D expert banks (and other
// tensors) as BoundWeights over those bytes, with the file named for slice reads.
struct FixtureBanks {
  explicit FixtureBanks(const std::string& path) : path(path), bytes(ReadFile(path)) {
    auto opened = gguf::File::Open(path);
    REQUIRE(opened.ok());
    file = std::move(*opened);
  }
  runtime::BoundWeight Bank(const std::string& name) const {
    for (const auto& t : file->tensors())
      if (t.name == name) {
        runtime::BoundWeight w;
        w.type = static_cast<TensorType>(t.type_id);
        for (auto it = t.dims.rbegin(); it != t.dims.rend(); ++it) w.shape.push_back(int64_t(*it));
        w.offset = t.offset;
        w.bytes = t.bytes;
        w.row_bytes = t.bytes / (w.shape[0] * w.shape[1]);
        w.data = reinterpret_cast<const uint8_t*>(bytes.data()) + t.offset;
        w.file = path;
        return w;
      }
    FAIL("no tensor " << name);
    return runtime::BoundWeight{};
  }
  std::string path;
  std::string bytes;
  decltype(gguf::File::Open(std::string()))::value_type file;
};

}  // namespace

TEST_CASE("moe: expert LRU reads routed slices in file order and gives the same output") {
  using namespace uaii::runtime;
  using namespace uaii::backends::cpu;
  // The qwen3moe fixture's layer-0 banks, run once from memory and once through an
  // LRU that holds only 2 experts (6 slices): same bits, misses read from the file.
  const std::string path = std::string(UAII_FIXTURE_DIR) + "/moe/qwen3moe-q4_k.gguf";
  if (!std::filesystem::exists(path)) FAIL("missing fixture " << path << " (run make_moe_models.py)");
  const FixtureBanks fixture(path);
  auto bank = [&](const std::string& name) { return fixture.Bank(name); };
  BoundWeight r = bank("blk.0.ffn_gate_inp.weight"), u = bank("blk.0.ffn_up_exps.weight"),
              g = bank("blk.0.ffn_gate_exps.weight"), d = bank("blk.0.ffn_down_exps.weight");
  r.row_bytes = r.bytes / r.shape[0];
  MoeParams p;
  p.n_expert = 8;
  p.n_expert_used = 2;
  p.norm_w = true;
  const int64_t E = 256, T = 5;
  std::vector<float> x(T * E);
  for (int64_t i = 0; i < T * E; ++i) x[i] = std::sin(0.37f * float(i));
  std::vector<float> want(T * E), got(T * E);
  MoeWeights w{&r, &u, &g, &d};
  REQUIRE(MoeFfn(p, w, x.data(), 1, want.data(), nullptr).ok());
  const uint64_t slice = u.bytes / 8;
  ExpertCache cache(6 * slice);
  w.cache = &cache;
  u.data = g.data = d.data = nullptr;  // the cache must read from the file
  REQUIRE(MoeFfn(p, w, x.data(), 1, got.data(), nullptr).ok());
  CHECK(std::vector<float>(got.begin(), got.begin() + E) == std::vector<float>(want.begin(), want.begin() + E));
  CHECK(cache.stats().misses == 6);
  CHECK(cache.stats().bytes_read == 6 * slice);
  REQUIRE(MoeFfn(p, w, x.data(), 1, got.data(), nullptr).ok());  // same token: all hits
  CHECK(cache.stats().hits == 6);
  CHECK(cache.stats().used_bytes <= cache.stats().capacity_bytes);
  // A batch of T tokens routes to more experts than the cache holds: they are
  // acquired in groups that fit, in index order, with the same bits as resident.
  std::vector<float> want_t(T * E);
  {
    MoeWeights resident{&r, &u, &g, &d};
    BoundWeight ur = u, gr = g, dr = d;
    ur.data = reinterpret_cast<const uint8_t*>(fixture.bytes.data()) + u.offset;
    gr.data = reinterpret_cast<const uint8_t*>(fixture.bytes.data()) + g.offset;
    dr.data = reinterpret_cast<const uint8_t*>(fixture.bytes.data()) + d.offset;
    resident.up_exps = &ur, resident.gate_exps = &gr, resident.down_exps = &dr;
    REQUIRE(MoeFfn(p, resident, x.data(), T, want_t.data(), nullptr).ok());
  }
  for (bool uring : {true, false})  // io_uring (where the kernel allows it) and pread: the same bytes
    for (uint64_t experts : {1, 2, 3}) {
      ExpertCache small(3 * experts * slice, uring);
      if (!uring) CHECK(!small.stats().io_uring);
      w.cache = &small;
      REQUIRE(MoeFfn(p, w, x.data(), T, got.data(), nullptr).ok());
      CHECK(got == want_t);
      CHECK(small.stats().misses >= 9);  // more than 2 experts were routed
      CHECK(small.stats().used_bytes <= small.stats().capacity_bytes);
    }
  // A cache smaller than one expert's three slices fails closed, naming the sizes.
  ExpertCache tiny(slice);
  w.cache = &tiny;
  auto st = MoeFfn(p, w, x.data(), 1, got.data(), nullptr);
  REQUIRE(!st.ok());
  CHECK(st.code() == absl::StatusCode::kResourceExhausted);
}

TEST_CASE("moe: --moe-top-k lowers the experts per token, exact when not set") {
  using namespace uaii::runtime;
  using namespace uaii::backends::cpu;
  // Through a whole model: top-1 changes the logits (an approximation), top-2 (the
  // file's) and larger values leave them bit-identical.
  const std::string path = std::string(UAII_FIXTURE_DIR) + "/moe/mixtral-q4_0.gguf";
  if (!std::filesystem::exists(path)) FAIL("missing fixture " << path << " (run make_moe_models.py)");
  auto model = Model::Load(path);
  REQUIRE(model.ok());
  std::vector<TokenId> prompt;
  for (int i = 0; i < 12; ++i) prompt.push_back(3 + (i * 37) % 300);
  auto run = [&](int64_t k) {
    SessionOptions so;
    so.max_context = 64;
    so.moe_top_k = k;
    auto s = Session::Create(*model, so);
    REQUIRE(s.ok());
    auto logits = (*s)->Eval(prompt, true);
    REQUIRE(logits.ok());
    return *logits;
  };
  const auto exact = run(0);
  CHECK(run(2) == exact);
  CHECK(run(8) == exact);
  CHECK(run(1) != exact);
}

TEST_CASE("moe: expert prefetch changes when reads happen, not results") {
  using namespace uaii::runtime;
  using namespace uaii::backends::cpu;
  // Two layers of the qwen3moe fixture, 6 decode steps each through a cache holding 3
  // experts with prefetch on: every output equals the resident run's bit for bit,
  // and the prefetch thread did read ahead.
  const std::string path = std::string(UAII_FIXTURE_DIR) + "/moe/qwen3moe-q4_k.gguf";
  if (!std::filesystem::exists(path)) FAIL("missing fixture " << path << " (run make_moe_models.py)");
  const FixtureBanks fixture(path);
  auto bank = [&](const std::string& name) { return fixture.Bank(name); };
  struct Layer {
    BoundWeight r, u, g, d;
  };
  std::vector<Layer> layers;
  for (int l = 0; l < 2; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    layers.push_back({bank(p + "ffn_gate_inp.weight"), bank(p + "ffn_up_exps.weight"), bank(p + "ffn_gate_exps.weight"),
                      bank(p + "ffn_down_exps.weight")});
    layers.back().r.row_bytes = layers.back().r.bytes / layers.back().r.shape[0];
  }
  MoeParams p;
  p.n_expert = 8;
  p.n_expert_used = 2;
  p.norm_w = true;
  const int64_t E = 256;
  ExpertCache cache(9 * (layers[0].u.bytes / 8));
  cache.EnablePrefetch(true);
  for (int step = 0; step < 6; ++step)
    for (auto& L : layers) {
      std::vector<float> x(E), want(E), got(E);
      for (int64_t i = 0; i < E; ++i) x[i] = std::sin(0.37f * float(i) + 0.9f * float(step));
      MoeWeights resident{&L.r, &L.u, &L.g, &L.d};
      REQUIRE(MoeFfn(p, resident, x.data(), 1, want.data(), nullptr).ok());
      BoundWeight u = L.u, g = L.g, d = L.d;
      u.data = g.data = d.data = nullptr;
      MoeWeights cached{&L.r, &u, &g, &d};
      cached.cache = &cache;
      REQUIRE(MoeFfn(p, cached, x.data(), 1, got.data(), nullptr).ok());
      CHECK(got == want);
      if (step % 2) cache.WaitForPrefetch();  // every other step: the read-ahead has landed
    }
  const auto st = cache.stats();
  CHECK(st.prefetch);
  CHECK(st.prefetch_reads > 0);
  CHECK(st.used_bytes <= st.capacity_bytes);
}
