// CPU operators against their formulas (ggml semantics), and attention against a
// direct computation.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <initializer_list>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "formats/fp16.h"
#include "kernels/dot_f16_queries.h"
#include "kernels/quantize_act.h"
#include "kernels/thread_pool.h"
#include "backends/cpu/attention.h"
#include "backends/cpu/cpu_ops.h"
#include "runtime/kv_cache.h"
#include "runtime/step_profile.h"

using namespace uaii;
using namespace uaii::runtime;
using namespace uaii::backends::cpu;

TEST_CASE("ops: rms_norm") {
  std::vector<float> x = {1, 2, 3, 4, -1, 0, 0, 1}, w = {1, 0.5f, 2, 1}, y(8);
  RmsNorm(x.data(), w.data(), 2, 4, 1e-6f, y.data());
  const float s0 = 1.0f / std::sqrt(30.0f / 4 + 1e-6f);
  CHECK(y[0] == Approx(1 * s0));
  CHECK(y[1] == Approx(2 * s0 * 0.5f));
  CHECK(y[2] == Approx(3 * s0 * 2));
  const float s1 = 1.0f / std::sqrt(2.0f / 4 + 1e-6f);
  CHECK(y[4] == Approx(-s1));
  CHECK(y[7] == Approx(s1));
}

// RmsNorm runs four rows' sums of squares side by side; each row must still be
// ggml's sequential double sum, bit for bit, whatever the row count.
TEST_CASE("ops: rms_norm rows are ggml's sequential sums for any row count") {
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> u(-3, 3);
  for (int64_t n : {1, 7, 256, 640}) {
    for (int64_t rows = 1; rows <= 9; ++rows) {
      std::vector<float> x(rows * n), w(n), y(rows * n);
      for (float& v : x) v = u(rng) * std::pow(10.0f, u(rng));  // wide exponents: order matters
      for (float& v : w) v = u(rng);
      RmsNorm(x.data(), w.data(), rows, n, 1e-6f, y.data());
      for (int64_t r = 0; r < rows; ++r) {
        double sum = 0;
        for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[r * n + i] * x[r * n + i]);
        const float scale = 1.0f / std::sqrt(static_cast<float>(sum / static_cast<double>(n)) + 1e-6f);
        INFO("n=" << n << " rows=" << rows << " row " << r);
        for (int64_t i = 0; i < n; ++i) {
          const float ref = (x[r * n + i] * scale) * w[i];
          REQUIRE(std::memcmp(&ref, &y[r * n + i], sizeof ref) == 0);
        }
      }
    }
  }
}

TEST_CASE("ops: rope norm and neox rotate the right pairs") {
  const int64_t D = 4;
  std::vector<float> a = {1, 0, 1, 0}, b = a;
  int32_t pos = 1;
  Rope(a.data(), &pos, 1, 1, D, D, 10000.f, 1.f, nullptr, /*neox=*/false);
  // pair (0,1) at theta = 1, pair (2,3) at theta = 10000^(-1/2)
  CHECK(a[0] == Approx(std::cos(1.0f)));
  CHECK(a[1] == Approx(std::sin(1.0f)));
  CHECK(a[2] == Approx(std::cos(0.01f)));
  CHECK(a[3] == Approx(std::sin(0.01f)));
  Rope(b.data(), &pos, 1, 1, D, D, 10000.f, 1.f, nullptr, /*neox=*/true);
  // pairs (0,2) at theta = 1 and (1,3) at 0.01: x = (1,0,1,0)
  CHECK(b[0] == Approx(std::cos(1.0f) - std::sin(1.0f)));
  CHECK(b[2] == Approx(std::sin(1.0f) + std::cos(1.0f)));
  CHECK(b[1] == Approx(0.0f).margin(1e-7));
  // position 0 is the identity
  std::vector<float> c = {0.3f, -2, 5, 7};
  int32_t zero = 0;
  auto c0 = c;
  Rope(c.data(), &zero, 1, 1, D, D, 10000.f, 1.f, nullptr, true);
  CHECK(c == c0);
}

// Rope keeps its last few cos/sin tables per thread (cpu_ops.cpp, RopeTables). A
// sequence of calls that hits, misses and evicts them (positions, bases, scales,
// factors by value, YaRN) must give each call what a thread with no tables gives.
TEST_CASE("ops: rope's cached tables give what a fresh computation gives") {
  const int64_t D = 8, heads = 2;
  std::vector<float> factors_a = {1, 2, 4, 8}, factors_b = {1, 2, 4, 9};
  RopeYarn yarn;
  yarn.ext_factor = 1;
  yarn.n_ctx_orig = 64;
  struct Call {
    std::vector<int32_t> pos;
    float base, scale;
    const std::vector<float>* factors;
    const RopeYarn* yarn;
  };
  const RopeYarn plain;
  const std::vector<Call> calls = {
      {{5}, 10000, 1, nullptr, &plain},     {{5}, 10000, 1, nullptr, &plain},  // hit
      {{5}, 1e6f, 1, nullptr, &plain},      {{6}, 10000, 1, nullptr, &plain},  // base, position
      {{5, 6, 7}, 10000, 1, nullptr, &plain}, {{5}, 10000, 0.5f, nullptr, &plain},
      {{5}, 10000, 1, &factors_a, &plain},  {{5}, 10000, 1, &factors_b, &plain},  // factors by value
      {{5}, 10000, 1, nullptr, &yarn},      {{5}, 10000, 1, nullptr, &plain},  // evicted by now
      {{5, 6, 7}, 10000, 1, nullptr, &plain}};
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-2, 2);
  for (size_t i = 0; i < calls.size(); ++i) {
    const Call& c = calls[i];
    const int64_t T = static_cast<int64_t>(c.pos.size());
    std::vector<float> x(T * heads * D);
    for (float& v : x) v = u(rng);
    for (bool neox : {false, true}) {
      std::vector<float> cached = x, fresh = x;
      const float* f = c.factors ? c.factors->data() : nullptr;
      Rope(cached.data(), c.pos.data(), T, heads, D, D, c.base, c.scale, f, neox, *c.yarn);
      std::thread([&] { Rope(fresh.data(), c.pos.data(), T, heads, D, D, c.base, c.scale, f, neox, *c.yarn); }).join();
      INFO("call " << i << (neox ? " neox" : ""));
      CHECK(std::memcmp(cached.data(), fresh.data(), x.size() * sizeof(float)) == 0);
    }
  }
  // Tables are cut at ~1 MiB: 8192 dims (32 rows per table) over 70 positions.
  const int64_t wide = 8192, T = 70;
  std::vector<int32_t> pos(T);
  for (int64_t t = 0; t < T; ++t) pos[t] = static_cast<int32_t>(3 * t + 1);
  std::vector<float> x(T * wide);
  for (float& v : x) v = u(rng);
  std::vector<float> cached = x, fresh = x;
  Rope(cached.data(), pos.data(), T, 1, wide, wide, 10000, 1, nullptr, true);
  std::thread([&] {
    for (int64_t t = 0; t < T; ++t) Rope(fresh.data() + t * wide, &pos[t], 1, 1, wide, wide, 10000, 1, nullptr, true);
  }).join();
  CHECK(std::memcmp(cached.data(), fresh.data(), x.size() * sizeof(float)) == 0);
}

TEST_CASE("ops: gelu through the f16 table, silu") {
  for (float x : {-12.f, -3.f, -0.5f, 0.f, 0.1f, 1.f, 2.5f, 11.f}) {
    const float ref = 0.5f * x * (1.0f + std::tanh(0.7978845608f * x * (1.0f + 0.044715f * x * x)));
    CHECK(GeluF16Table(x) == Approx(ref).margin(2e-3));
  }
  CHECK(GeluF16Table(-10.5f) == 0.0f);
  CHECK(GeluF16Table(10.5f) == 10.5f);
  CHECK(Silu(0.0f) == 0.0f);
  CHECK(Silu(2.0f) == Approx(2.0f / (1.0f + std::exp(-2.0f))));
  float g[2] = {1, -1}, u[2] = {2, 3}, y[2];
  Geglu(g, u, 2, y);
  CHECK(y[0] == Approx(GeluF16Table(1) * 2));
  Swiglu(g, u, 2, y);
  CHECK(y[1] == Approx(Silu(-1) * 3));
  float c[2] = {100, -0.01f};
  Softcap(c, 2, 30);
  CHECK(c[0] == Approx(30 * std::tanh(100.0f / 30)));
}

// Fills the vectors in turn with uniform values in [-1, 1) from a seeded LCG.
void FillUniform(uint32_t seed, std::initializer_list<std::vector<float>*> vs) {
  for (auto* a : vs)
    for (auto& x : *a) {
      seed = seed * 1664525u + 1013904223u;
      x = ((seed >> 8) / float(1 << 24)) * 2 - 1;
    }
}

TEST_CASE("ops: attention matches a direct GQA softmax with causal and sliding masks") {
  const int64_t T = 9, Hq = 4, Hkv = 2, D = 8, window = 4;
  std::vector<float> q(T * Hq * D), k(T * Hkv * D), v(T * Hkv * D);
  FillUniform(7, {&q, &k, &v});
  std::vector<int32_t> pos(T);
  for (int t = 0; t < T; ++t) pos[t] = t;
  for (int64_t win : {int64_t{0}, window}) {
    KvCache cache({{Hkv, D, D}}, 64);
    AttentionParams p{0, Hq, 0.35f, win, 0};
    std::vector<float> out(T * Hq * D);
    Attention(cache, p, q.data(), k.data(), v.data(), pos.data(), T, out.data(), nullptr);
    auto r16 = [](float x) { return Fp16ToFp32(Fp32ToFp16(x)); };
    for (int64_t t = 0; t < T; ++t)
      for (int64_t h = 0; h < Hq; ++h) {
        const int64_t hk = h / (Hq / Hkv);
        std::vector<double> s;
        double mx = -1e30;
        for (int64_t j = 0; j <= t; ++j) {
          double d = 0;
          for (int64_t i = 0; i < D; ++i) d += r16(q[(t * Hq + h) * D + i]) * r16(k[(j * Hkv + hk) * D + i]);
          d *= 0.35;
          if (win && t - j >= win) d = -INFINITY;
          s.push_back(d);
          mx = std::max(mx, d);
        }
        double sum = 0;
        for (auto& e : s) sum += (e = std::exp(e - mx));
        for (int64_t d = 0; d < D; ++d) {
          double o = 0;
          for (int64_t j = 0; j <= t; ++j) o += s[j] / sum * r16(v[(j * Hkv + hk) * D + d]);
          CHECK(out[(t * Hq + h) * D + d] == Approx(o).margin(2e-3));
        }
      }
    // Threads claim (row, head) tasks, whole prompts and one row at a time (decode):
    // bit-identical to one thread.
    for (int threads : {2, 3}) {
      ThreadPool pool(threads);
      KvCache c2({{Hkv, D, D}}, 64);
      std::vector<float> got(T * Hq * D);
      Attention(c2, p, q.data(), k.data(), v.data(), pos.data(), T, got.data(), &pool);
      CHECK(std::memcmp(got.data(), out.data(), out.size() * sizeof(float)) == 0);
      KvCache c3({{Hkv, D, D}}, 64);
      for (int64_t t = 0; t < T; ++t)
        Attention(c3, p, q.data() + t * Hq * D, k.data() + t * Hkv * D, v.data() + t * Hkv * D, pos.data() + t, 1,
                  got.data() + t * Hq * D, &pool);
      CHECK(std::memcmp(got.data(), out.data(), out.size() * sizeof(float)) == 0);
    }
  }
}

// Decode over a long cache: each thread's K and V are then too large to read ahead of
// its dots in one pass, so every range is read just before its dots (attention.cpp,
// StageBudgetBytes), and the threads deal the cells out in runs. One row at a time at
// 1, 2 and 3 threads is bit-identical to the whole prompt in one call.
TEST_CASE("ops: decode attention over a long cache is identical for any thread count") {
  const int64_t T = 1200, Hq = 8, Hkv = 4, D = 64;  // 1216 cells x 4 heads x 256 B: ~1.2 MB of K and V
  std::vector<float> q(T * Hq * D), k(T * Hkv * D), v(T * Hkv * D);
  FillUniform(11, {&q, &k, &v});
  std::vector<int32_t> pos(T);
  for (int64_t t = 0; t < T; ++t) pos[t] = static_cast<int32_t>(t);
  const AttentionParams p{0, Hq, 0.125f, 0, 0};
  KvCache whole({{Hkv, D, D}}, T);
  std::vector<float> want(T * Hq * D);
  Attention(whole, p, q.data(), k.data(), v.data(), pos.data(), T, want.data(), nullptr);
  for (int threads : {1, 2, 3}) {
    INFO("threads " << threads);
    ThreadPool pool(threads);
    KvCache cache({{Hkv, D, D}}, T);
    std::vector<float> got(T * Hq * D);
    for (int64_t t = 0; t < T; ++t)
      Attention(cache, p, q.data() + t * Hq * D, k.data() + t * Hkv * D, v.data() + t * Hkv * D, pos.data() + t, 1,
                got.data() + t * Hq * D, &pool);
    CHECK(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)) == 0);
  }
}

// The all-cells decode of one row, as llama.cpp's non-flash attention orders it and as
// attention.cpp did before it skipped the cells a sliding window hides: every cell a
// decode at qp reads (KvCache::DecodeCells) is dotted, masked to -inf by the position
// it holds (causal, the sliding window, the resident window), softmaxed and dotted with
// V^T, in cell order. Built here from the kernels on a mirror of the cache's K and V^T
// (k16 [cell][Hkv][D], vt16 [Hkv * D][cell]); the cache gives only its bookkeeping.
namespace {
struct Mirror {
  int64_t cells, Hkv, D;
  std::vector<uint16_t> k16, vt16;
  Mirror(int64_t cells_, int64_t Hkv_, int64_t D_)
      : cells(cells_), Hkv(Hkv_), D(D_), k16(cells_ * Hkv_ * D_, 0), vt16(Hkv_ * D_ * cells_, 0) {}
  void Write(int64_t cell, const float* k, const float* v) {
    kernels::ConvertRowF16(k, &k16[cell * Hkv * D], Hkv * D);
    for (int64_t i = 0; i < Hkv * D; ++i) vt16[i * cells + cell] = Fp32ToFp16(v[i]);
  }
};

std::vector<float> AllCellsDecodeRow(const KvCache& cache, const Mirror& m, const float* q, int64_t qp,
                                     int64_t window, int64_t Hq, float scale) {
  const int64_t Hkv = m.Hkv, D = m.D, group = Hq / Hkv, n = cache.DecodeCells(qp);
  std::vector<uint16_t> q16(Hq * D), w16(Hq * n);
  std::vector<float> qf(Hq * D), w(Hq * n), wf(Hq * n), out(Hq * D);
  kernels::ConvertRowF16(q, q16.data(), Hq * D);
  kernels::WidenRowF16(q16.data(), qf.data(), Hq * D);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t hk = 0; hk < Hkv; ++hk)
      kernels::DotF16Queries(&m.k16[(j * Hkv + hk) * D], &q16[hk * group * D], &qf[hk * group * D], D,
                             static_cast<int>(group), D, &w[hk * group * n + j], n);
  for (int64_t h = 0; h < Hq; ++h) {
    for (int64_t j = 0; j < n; ++j) {
      const int64_t pj = cache.CellPos(j);
      const bool hidden = pj < 0 || pj > qp || !cache.InWindow(qp, pj) || (window > 0 && qp - pj >= window);
      w[h * n + j] = hidden ? -INFINITY : w[h * n + j] * scale;
    }
    SoftmaxGgml(&w[h * n], n);
    kernels::ConvertRowF16(&w[h * n], &w16[h * n], n);
    kernels::WidenRowF16(&w16[h * n], &wf[h * n], n);
  }
  for (int64_t hk = 0; hk < Hkv; ++hk)
    kernels::DotF16QueriesRows(&m.vt16[hk * D * m.cells], m.cells, D, &w16[hk * group * n], &wf[hk * group * n], n,
                               static_cast<int>(group), n, &out[hk * group * D], D);
  return out;
}

bool SameBits(const float* a, const std::vector<float>& b) {
  return std::memcmp(a, b.data(), b.size() * sizeof(float)) == 0;
}
}  // namespace

// A sliding window: decode and prefill skip the whole 32-cell blocks it hides
// (KvCache::AttendedCells), bit-identical to dotting every cell, for windows on and
// off the block edges, at 1 and 2 threads. With this shape a 512-cell window's K and
// V exceed half of a 1 MiB L2, so decode reads each range just before its dots; a
// 33-cell window's are read ahead as one run per thread (attention.cpp).
TEST_CASE("ops: attention skips the cells a sliding window hides, bit for bit") {
  const int64_t T = 1100, Hq = 8, Hkv = 4, D = 128;
  std::vector<float> q(T * Hq * D), k(T * Hkv * D), v(T * Hkv * D);
  FillUniform(23, {&q, &k, &v});
  std::vector<int32_t> pos(T);
  for (int64_t t = 0; t < T; ++t) pos[t] = static_cast<int32_t>(t);
  for (int64_t window : {int64_t{512}, int64_t{100}, int64_t{33}}) {
    const AttentionParams p{0, Hq, 0.125f, window, 0};
    for (int threads : {1, 2}) {
      INFO("window " << window << ", threads " << threads);
      ThreadPool pool(threads);
      KvCache decode({{Hkv, D, D}}, T), prefill({{Hkv, D, D}}, T);
      Mirror m(decode.n_cells(), Hkv, D);
      std::vector<float> got(Hq * D), batch(T * Hq * D);
      Attention(prefill, p, q.data(), k.data(), v.data(), pos.data(), T, batch.data(), &pool);
      int64_t skipped = 0;
      for (int64_t t = 0; t < T; ++t) {
        m.Write(t, &k[t * Hkv * D], &v[t * Hkv * D]);
        Attention(decode, p, &q[t * Hq * D], &k[t * Hkv * D], &v[t * Hkv * D], &pos[t], 1, got.data(), &pool);
        const std::vector<float> want = AllCellsDecodeRow(decode, m, &q[t * Hq * D], t, window, Hq, 0.125f);
        if (!SameBits(got.data(), want) || !SameBits(&batch[t * Hq * D], want)) {
          FAIL_CHECK("row " << t << " differs from the all-cells computation");
          break;
        }
        skipped += decode.AttendedCells(t, window).span[0].begin;
      }
      CHECK(skipped > 0);  // the window did hide whole blocks
    }
  }
}

// Under the resident window's ring (600 positions + 4 sinks + batches of 16: 640
// cells), over 2000 positions: before the ring wraps the sinks are hidden with the
// blocks after them; after it, a sliding layer's positions are a cyclic run of cells,
// one span or two. Decode (2 threads) and prefill in 16-row batches are bit-identical
// to dotting every cell in cell order, for sliding windows of 100 and 300 and for a
// global layer (window 0: every cell).
TEST_CASE("ops: under the resident window's ring the skip holds before and after the wrap") {
  const int64_t T = 2000, Hq = 4, Hkv = 1, D = 64, batch_rows = 16;
  std::vector<float> q(T * Hq * D), k(T * Hkv * D), v(T * Hkv * D);
  FillUniform(29, {&q, &k, &v});
  std::vector<int32_t> pos(T);
  for (int64_t t = 0; t < T; ++t) pos[t] = static_cast<int32_t>(t);
  ThreadPool pool(2);
  for (int64_t window : {int64_t{100}, int64_t{300}, int64_t{0}}) {
    INFO("window " << window);
    const AttentionParams p{0, Hq, 0.125f, window, 0};
    KvCache decode({{Hkv, D, D}}, 8192, 600, 4, batch_rows), prefill({{Hkv, D, D}}, 8192, 600, 4, batch_rows);
    REQUIRE(decode.window() == 600);
    REQUIRE(decode.n_cells() == 640);
    Mirror md(decode.n_cells(), Hkv, D), mp(prefill.n_cells(), Hkv, D);
    std::vector<float> got(Hq * D), batch(batch_rows * Hq * D);
    int64_t split = 0, narrowed = 0;
    bool same = true;
    for (int64_t t0 = 0; t0 < T && same; t0 += batch_rows) {
      Attention(prefill, p, &q[t0 * Hq * D], &k[t0 * Hkv * D], &v[t0 * Hkv * D], &pos[t0], batch_rows, batch.data(),
                &pool);
      for (int64_t t = t0; t < t0 + batch_rows; ++t) mp.Write(prefill.Cell(t), &k[t * Hkv * D], &v[t * Hkv * D]);
      for (int64_t t = t0; t < t0 + batch_rows && same; ++t) {
        md.Write(decode.Cell(t), &k[t * Hkv * D], &v[t * Hkv * D]);
        Attention(decode, p, &q[t * Hq * D], &k[t * Hkv * D], &v[t * Hkv * D], &pos[t], 1, got.data(), &pool);
        const float* qt = &q[t * Hq * D];
        same = SameBits(got.data(), AllCellsDecodeRow(decode, md, qt, t, window, Hq, 0.125f)) &&
               SameBits(&batch[(t - t0) * Hq * D], AllCellsDecodeRow(prefill, mp, qt, t, window, Hq, 0.125f));
        if (!same) FAIL_CHECK("row " << t << " differs from the all-cells computation");
        const KvCache::Attended a = decode.AttendedCells(t, window);
        split += a.count == 2;
        narrowed += a.cells() < decode.DecodeCells(t);
      }
    }
    if (window > 0) {
      CHECK(narrowed > T / 2);  // most rows read fewer cells than the decode's all
      CHECK(split > 0);         // and some of them through two spans (a wrapped run)
    } else {
      CHECK(narrowed == 0);
    }
  }
}

// The vector exp / SwiGLU (AVX2 lanes, exponent-bit 2^n) equal the scalar ExpGgml /
// Silu bit for bit, across the whole range: saturation, the |n| > 126 fallback,
// subnormal results, infinities and NaN.
TEST_CASE("ops: row exp and swiglu equal the scalar ExpGgml bit for bit") {
  std::vector<float> x;
  for (float v = -140.0f; v <= 140.0f; v += 0.0371f) x.push_back(v);
  for (float v : {-104.0f, -87.4f, -87.3f, 88.7f, 88.8f, -0.0f, 0.0f, 1e-30f, -1e-30f, INFINITY, -INFINITY, NAN})
    x.push_back(v);
  while (x.size() % 8 != 3) x.push_back(0.5f);  // a scalar tail too
  std::vector<float> y(x.size()), g(x.size(), 0.0f), up(x.size(), 1.5f), s(x.size());
  ExpGgmlRow(x.data(), y.data(), static_cast<int64_t>(x.size()));
  Swiglu(x.data(), up.data(), static_cast<int64_t>(x.size()), s.data());
  for (size_t i = 0; i < x.size(); ++i) {
    INFO("x = " << x[i]);
    const float ref = ExpGgml(x[i]), sref = Silu(x[i]) * 1.5f;
    CHECK(std::memcmp(&ref, &y[i], 4) == 0);
    CHECK(std::memcmp(&sref, &s[i], 4) == 0);
  }
}

// The vector softmax (AVX2 max, exp and group sums) equals the scalar ggml softmax bit
// for bit: masked (-inf) cells, spreads that send lanes to the scalar exp (below
// -87), lengths with and without a 16-group tail, an all-equal row.
TEST_CASE("ops: softmax equals the scalar ggml softmax bit for bit") {
  std::mt19937 rng(7);
  for (int64_t n : {1, 7, 15, 16, 17, 31, 33, 100, 576, 1000}) {
    for (float spread : {0.0f, 1.0f, 30.0f, 200.0f}) {
      std::uniform_real_distribution<float> dist(-spread, spread);
      std::vector<float> a(static_cast<size_t>(n));
      for (auto& x : a) x = dist(rng);
      for (int64_t i = 3; i < n; i += 7) a[static_cast<size_t>(i)] = -INFINITY;
      std::vector<float> b = a;
      SoftmaxGgml(a.data(), n);
      SoftmaxGgmlScalar(b.data(), n);
      INFO("n = " << n << " spread = " << spread);
      CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
    }
  }
}

// Geglu's vector path (F16C conversion + table gather) equals the scalar lookup for
// every half value of the gate, the +-10 short-cuts, NaN and a scalar tail.
TEST_CASE("ops: geglu equals the scalar f16-table gelu for every half") {
  std::vector<float> g;
  for (uint32_t h = 0; h < (1u << 16); ++h) g.push_back(uaii::Fp16ToFp32(static_cast<uint16_t>(h)));
  for (float v : {-10.0f, 10.0f, -9.999f, 9.999f, 1e30f, -1e30f, 3.14159f, NAN}) g.push_back(v);
  while (g.size() % 8 != 5) g.push_back(0.25f);
  std::vector<float> up(g.size()), y(g.size());
  for (size_t i = 0; i < g.size(); ++i) up[i] = 0.5f + static_cast<float>(i % 13) * 0.25f;
  Geglu(g.data(), up.data(), static_cast<int64_t>(g.size()), y.data());
  size_t bad = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const float ref = GeluF16Table(g[i]) * up[i];
    if (std::memcmp(&ref, &y[i], 4) != 0) ++bad;
  }
  CHECK(bad == 0);
}

// The KV cache's layers share one arena (huge pages where the kernel gives them):
// every layer's K and V^T rows start zeroed, do not overlap, and Clear zeroes the
// cells from a position on in each of them.
TEST_CASE("kv cache: layers' K and V are zeroed, disjoint, and cleared from a position") {
  const std::vector<KvLayerShape> shapes = {{2, 8, 8}, {1, 16, 4}, {3, 4, 12}};
  KvCache cache(shapes, 40);  // 64 cells
  REQUIRE(cache.n_cells() == 64);
  for (int l = 0; l < 3; ++l) {
    const auto& s = shapes[static_cast<size_t>(l)];
    for (int64_t c = 0; c < cache.n_cells(); ++c)
      for (int64_t i = 0; i < s.n_head_kv * s.head_dim_k; ++i) REQUIRE(cache.K(l, c)[i] == 0);
    for (int64_t h = 0; h < s.n_head_kv; ++h)
      for (int64_t d = 0; d < s.head_dim_v; ++d)
        for (int64_t c = 0; c < cache.n_cells(); ++c) REQUIRE(cache.Vt(l, h, d)[c] == 0);
  }
  // Each layer's K and V filled with its own value: none overwrites another's.
  for (int l = 0; l < 3; ++l) {
    const auto& s = shapes[static_cast<size_t>(l)];
    std::fill_n(cache.K(l, 0), cache.n_cells() * s.n_head_kv * s.head_dim_k, static_cast<uint16_t>(10 + l));
    std::fill_n(cache.Vt(l, 0, 0), cache.n_cells() * s.n_head_kv * s.head_dim_v, static_cast<uint16_t>(20 + l));
  }
  cache.Clear(5);
  for (int l = 0; l < 3; ++l) {
    const auto& s = shapes[static_cast<size_t>(l)];
    for (int64_t c = 0; c < cache.n_cells(); ++c) {
      const uint16_t k_want = c < 5 ? 10 + l : 0, v_want = c < 5 ? 20 + l : 0;
      for (int64_t i = 0; i < s.n_head_kv * s.head_dim_k; ++i) REQUIRE(cache.K(l, c)[i] == k_want);
      for (int64_t h = 0; h < s.n_head_kv; ++h)
        for (int64_t d = 0; d < s.head_dim_v; ++d) REQUIRE(cache.Vt(l, h, d)[c] == v_want);
    }
  }
}

// The step profile (UAII_PROFILE_STEPS) keeps decode steps and prefill batches apart
// and reports each kind's ms per token and share of its phase.
TEST_CASE("step profile: decode and prefill apart, ms per token and shares") {
  StepProfile prof;
  for (int t = 0; t < 2; ++t) {  // two decode tokens: 3 ms of matmul, 1 ms of attention each
    prof.AddRun(1);
    prof.AddStep("matmul", "blk.0.attn_out", 1, 0.002);
    prof.AddStep("matmul", "blk.1.attn_out", 1, 0.001);
    prof.AddStep("attention", "blk.0.attn", 1, 0.001);
  }
  prof.AddRun(8);  // one prefill batch of 8 tokens: 16 ms
  prof.AddStep("matmul", "output", 8, 0.016);
  const std::string r = prof.Report();
  INFO(r);
  CHECK(r.find("decode: 2 runs, 2 tokens, 4 ms per token in steps") != std::string::npos);
  CHECK(r.find("matmul             3.000 ms/token  75.0%      2.0 steps/run") != std::string::npos);
  CHECK(r.find("attention          1.000 ms/token  25.0%      1.0 steps/run") != std::string::npos);
  CHECK(r.find("prefill: 1 runs, 8 tokens, 2 ms per token in steps") != std::string::npos);
  CHECK(r.find("matmul             2.000 ms/token 100.0%      1.0 steps/run") != std::string::npos);
  CHECK(StepProfile().Report().empty());
  // By op: each layer's alike ops together.
  StepProfile ops(true);
  ops.AddRun(1);
  ops.AddStep("matmul", "blk.0.attn_out", 1, 0.002);
  ops.AddStep("matmul", "blk.11.attn_out", 1, 0.002);
  ops.AddStep("norm_linear", "output", 1, 0.004);
  const std::string o = ops.Report();
  INFO(o);
  CHECK(o.find("matmul blk.*.attn_out") != std::string::npos);
  CHECK(o.find("norm_linear output") != std::string::npos);
  CHECK(o.find("50.0%      2.0 steps/run") != std::string::npos);
}
