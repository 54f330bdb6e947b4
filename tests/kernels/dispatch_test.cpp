// Every kernel level (kernels/dispatch.h) this CPU has, forced through KernelImpl,
// against the scalar reference bit for bit: all MatMul types, awkward lengths, rows
// around the register-tile edges, batches 1..9, 1-4 threads, misaligned pointers,
// every finite half, subnormal BF16 products. On x86 that is scalar/sse42/avx2/avx512
// (as far as the CPU has them); built for aarch64 by scripts/test_neon.sh, scalar/neon.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "formats/fp16.h"
#include "formats/quant_blocks.h"
#include "kernels/dispatch.h"
#include "kernels/kquant_scales.h"
#include "kernels/matmul.h"
#include "kernels/quantize_act.h"
#include "kernels/thread_pool.h"
#include "kernels/vec_dot.h"
#include "kernel_test_util.h"

using uaii::KernelImpl;
using uaii::TensorType;
using uaii::kernels::IsaLevel;
using uaii::test::NameOf;
using uaii::test::RandomActs;
using uaii::test::RandomWeights;
using uaii::test::Run;
using uaii::test::SameBits;
using uaii::test::Traits;

namespace {

const std::pair<IsaLevel, KernelImpl> kLevels[] = {
    {IsaLevel::kScalar, KernelImpl::kScalar}, {IsaLevel::kSse42, KernelImpl::kSse42},
    {IsaLevel::kAvx2, KernelImpl::kAvx2},     {IsaLevel::kAvx512, KernelImpl::kAvx512},
    {IsaLevel::kNeon, KernelImpl::kNeon}};

// The non-scalar levels this CPU runs.
std::vector<std::pair<IsaLevel, KernelImpl>> FastLevels() {
  std::vector<std::pair<IsaLevel, KernelImpl>> v;
  for (const auto& l : kLevels)
    if (l.first != IsaLevel::kScalar && uaii::kernels::CpuSupports(l.first)) v.push_back(l);
  return v;
}

std::string LevelName(IsaLevel l) { return std::string(uaii::kernels::IsaLevelName(l)); }


// One activation row in the weight type's vec_dot format (matmul.cpp's PrepareRow).
std::vector<uint8_t> PrepareActs(TensorType t, const float* x, int64_t n) {
  namespace q = uaii::quant;
  std::vector<uint8_t> a;
  switch (t) {
    case TensorType::F32:
      a.resize(n * 4);
      std::memcpy(a.data(), x, n * 4);
      break;
    case TensorType::F16:
      a.resize(n * 2);
      uaii::kernels::ConvertRowF16(x, reinterpret_cast<uint16_t*>(a.data()), n);
      break;
    case TensorType::BF16:
      a.resize(n * 2);
      uaii::kernels::ConvertRowBF16(x, reinterpret_cast<uint16_t*>(a.data()), n);
      break;
    case TensorType::Q4_0: case TensorType::Q5_0: case TensorType::Q8_0:
      a.resize(n / 32 * sizeof(q::BlockQ8_0));
      uaii::kernels::QuantizeRowQ8_0(x, reinterpret_cast<q::BlockQ8_0*>(a.data()), n);
      break;
    case TensorType::Q4_1: case TensorType::Q5_1:
      a.resize(n / 32 * sizeof(q::BlockQ8_1));
      uaii::kernels::QuantizeRowQ8_1(x, reinterpret_cast<q::BlockQ8_1*>(a.data()), n);
      break;
    default:
      a.resize(n / 256 * sizeof(q::BlockQ8_K));
      uaii::kernels::QuantizeRowQ8_K(x, reinterpret_cast<q::BlockQ8_K*>(a.data()), n);
      break;
  }
  return a;
}

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

}  // namespace

TEST_CASE("dispatch: level names, CPU support and the automatic choice", "[dispatch]") {
  using namespace uaii::kernels;
  for (const auto& l : kLevels) {
    const auto parsed = ParseIsaLevel(IsaLevelName(l.first));
    REQUIRE(parsed.has_value());
    CHECK(*parsed == l.first);
  }
  CHECK(!ParseIsaLevel("avx3").has_value());
  CHECK(CpuSupports(IsaLevel::kScalar));
  CHECK(CpuSupports(BestIsaLevel()));
  const char* env = std::getenv("UAII_KERNELS");
  const auto k = ChooseKernels(TensorType::Q8_0, KernelImpl::kAuto);
  REQUIRE(k.ok());
  if (env == nullptr || *env == '\0') {
    if (std::getenv("UAII_NO_AVX512") == nullptr) CHECK(k->level == BestIsaLevel());
  } else {
    CHECK(LevelName(k->level) == env);
  }
  std::string levels;
  for (const auto& l : kLevels)
    if (CpuSupports(l.first)) {
      levels += ' ';
      levels += IsaLevelName(l.first);
    }
  WARN("kernel levels on this CPU:" << levels << (Cpu().avx512bf16 ? " (+avx512_bf16, unused)" : ""));
#if defined(__x86_64__)
  CHECK(!CpuSupports(IsaLevel::kNeon));
#elif defined(__aarch64__)
  CHECK(CpuSupports(IsaLevel::kNeon));
  CHECK(!CpuSupports(IsaLevel::kSse42));
#endif
}

TEST_CASE("dispatch: a level the CPU lacks is an error naming it", "[dispatch]") {
  std::vector<uint8_t> w(34, 0);
  float x[32] = {}, y[1];
  for (const auto& [level, impl] : kLevels) {
    if (uaii::kernels::CpuSupports(level)) continue;
    const absl::Status s = uaii::MatMul(TensorType::Q8_0, w.data(), 1, 32, x, 1, y, nullptr, impl);
    INFO(std::string(s.message()));
    CHECK(s.code() == absl::StatusCode::kFailedPrecondition);
    CHECK(std::string(s.message()).find(LevelName(level) + " kernels requested on a CPU without") !=
          std::string::npos);
  }
}

TEST_CASE("dispatch: each level runs its own kernels", "[dispatch]") {
  using namespace uaii::kernels;
  for (TensorType t : uaii::test::kMatMulTypes) {
    INFO(NameOf(t));
    CHECK(KernelsAt(t, IsaLevel::kScalar).dot == VecDotRef(t));
    CHECK(KernelsAt(t, IsaLevel::kScalar).tile == nullptr);
    if (CpuSupports(IsaLevel::kSse42)) {
      const VecDotFn own = VecDotSse42(t);
      CHECK(KernelsAt(t, IsaLevel::kSse42).dot == (own ? own : VecDotRef(t)));
      CHECK(KernelsAt(t, IsaLevel::kSse42).tile == nullptr);
    }
    if (CpuSupports(IsaLevel::kAvx2)) CHECK(KernelsAt(t, IsaLevel::kAvx2).dot == VecDotAvx2(t));
    if (CpuSupports(IsaLevel::kAvx512)) {
      const VecDotFn own = VecDotAvx512(t);
      CHECK(KernelsAt(t, IsaLevel::kAvx512).dot == (own ? own : VecDotAvx2(t)));
    }
    if (CpuSupports(IsaLevel::kNeon)) {
      const VecDotFn own = VecDotNeon(t);
      CHECK(KernelsAt(t, IsaLevel::kNeon).dot == (own ? own : VecDotRef(t)));
      CHECK(KernelsAt(t, IsaLevel::kNeon).tile == TileNeon(t));
    }
  }
  // The kernel sets each level promises.
  if (CpuSupports(IsaLevel::kSse42))
    for (TensorType t : {TensorType::F16, TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0,
                         TensorType::Q5_1, TensorType::Q8_0, TensorType::Q2_K, TensorType::Q3_K,
                         TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K})
      CHECK(VecDotSse42(t) != nullptr);
  if (CpuSupports(IsaLevel::kAvx512)) CHECK(VecDotAvx512(TensorType::BF16) != nullptr);
  // Float weights' prefill GEMM goes through tiles (gemm_float_avx2.cpp / _avx512.cpp).
  for (IsaLevel level : {IsaLevel::kAvx2, IsaLevel::kAvx512})
    if (CpuSupports(level))
      for (TensorType t : {TensorType::F32, TensorType::F16, TensorType::BF16})
        CHECK(KernelsAt(t, level).tile != nullptr);
  if (CpuSupports(IsaLevel::kNeon))
    for (TensorType t : {TensorType::F32, TensorType::F16, TensorType::BF16, TensorType::Q4_0,
                         TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1, TensorType::Q8_0,
                         TensorType::Q2_K, TensorType::Q3_K, TensorType::Q4_K, TensorType::Q5_K,
                         TensorType::Q6_K}) {
      CHECK(VecDotNeon(t) != nullptr);
      if (t != TensorType::F32 && t != TensorType::F16 && t != TensorType::BF16 &&
          t != TensorType::Q2_K && t != TensorType::Q3_K)
        CHECK(TileNeon(t) != nullptr);
    }
}

TEST_CASE("dispatch: every level equals the scalar reference over awkward lengths", "[dispatch]") {
  std::mt19937 rng(2024);
  for (const auto& [level, impl] : FastLevels()) {
    for (TensorType t : uaii::test::kMatMulTypes) {
      for (int64_t in : uaii::test::AwkwardLengths(t)) {
        for (int64_t out : {1, 3, 7, 17, 33}) {
          const int64_t batch = 5;
          INFO(LevelName(level) << " " << NameOf(t) << " in=" << in << " out=" << out);
          const auto w = RandomWeights(t, out, in, rng);
          const auto x = RandomActs(in * batch, rng);
          const auto ref = Run(t, w.data(), out, in, x.data(), batch, nullptr, KernelImpl::kScalar);
          CHECK(SameBits(ref, Run(t, w.data(), out, in, x.data(), batch, nullptr, impl)));
        }
      }
    }
  }
}

// Rows around the 4-row tile edges, every batch 1..9 (tiles take 1..4 activation
// rows), 1-4 threads.
TEST_CASE("dispatch: every level, tile edges, batches 1..9 and 1-4 threads", "[dispatch]") {
  std::mt19937 rng(77);
  uaii::ThreadPool pool2(2), pool3(3), pool4(4);
  uaii::ThreadPool* pools[] = {nullptr, &pool2, &pool3, &pool4};
  for (const auto& [level, impl] : FastLevels()) {
    for (TensorType t : uaii::test::kMatMulTypes) {
      const int64_t in = Traits(t).block_size == 256 ? 512 : Traits(t).block_size == 32 ? 160 : 67;
      for (int64_t out : {1, 4, 5, 8, 13, 70}) {
        for (int64_t batch = 1; batch <= 9; ++batch) {
          uaii::ThreadPool* pool = pools[(batch + out) % 4];
          INFO(LevelName(level) << " " << NameOf(t) << " out=" << out << " batch=" << batch
                                << " threads=" << (pool ? pool->num_threads() : 1));
          const auto w = RandomWeights(t, out, in, rng);
          const auto x = RandomActs(in * batch, rng);
          const auto ref = Run(t, w.data(), out, in, x.data(), batch, nullptr, KernelImpl::kScalar);
          CHECK(SameBits(ref, Run(t, w.data(), out, in, x.data(), batch, pool, impl)));
        }
      }
      // Every thread count on one prefill-shaped case.
      const int64_t out = 37, batch = 6;
      const auto w = RandomWeights(t, out, in, rng);
      const auto x = RandomActs(in * batch, rng);
      const auto ref = Run(t, w.data(), out, in, x.data(), batch, nullptr, KernelImpl::kScalar);
      for (uaii::ThreadPool* pool : pools) {
        INFO(LevelName(level) << " " << NameOf(t) << " threads=" << (pool ? pool->num_threads() : 1));
        CHECK(SameBits(ref, Run(t, w.data(), out, in, x.data(), batch, pool, impl)));
      }
    }
  }
}

TEST_CASE("dispatch: every level, weights and activations at odd addresses", "[dispatch]") {
  std::mt19937 rng(31337);
  uaii::ThreadPool pool2(2);
  for (const auto& [level, impl] : FastLevels()) {
    for (TensorType t : uaii::test::kMatMulTypes) {
      const int64_t in = Traits(t).block_size == 256 ? 512 : 96, out = 9, batch = 3;
      const auto w = RandomWeights(t, out, in, rng);
      const auto x = RandomActs(in * batch, rng);
      const auto ref = Run(t, w.data(), out, in, x.data(), batch, nullptr, KernelImpl::kScalar);
      for (int off = 1; off < 4; ++off) {
        INFO(LevelName(level) << " " << NameOf(t) << " offset=" << off);
        std::vector<uint8_t> wmis(w.size() + off);
        std::memcpy(wmis.data() + off, w.data(), w.size());
        std::vector<float> xmis(x.size() + 1);
        std::memcpy(xmis.data() + 1, x.data(), x.size() * 4);
        CHECK(SameBits(ref, Run(t, wmis.data() + off, out, in, xmis.data() + 1, batch, &pool2, impl)));
      }
      // The row kernel itself on activation rows at odd byte addresses (MatMul's
      // prepared activations are always aligned).
      const auto acts = PrepareActs(t, x.data(), in);
      const uaii::kernels::VecDotFn dot = uaii::kernels::KernelsAt(t, level).dot;
      const uaii::kernels::VecDotFn ref_dot = uaii::kernels::VecDotRef(t);
      for (int off = 1; off < 4; ++off) {
        std::vector<uint8_t> amis(acts.size() + off), wrow(w.size() / out + off);
        std::memcpy(amis.data() + off, acts.data(), acts.size());
        std::memcpy(wrow.data() + off, w.data(), w.size() / out);
        INFO(LevelName(level) << " " << NameOf(t) << " row kernel offset=" << off);
        CHECK(Bits(dot(wrow.data() + off, amis.data() + off, in)) == Bits(ref_dot(w.data(), acts.data(), in)));
      }
    }
  }
}

// F16 conversion exactness: every finite half (subnormals and zeros included) as a
// weight, against activations spanning the half range.
TEST_CASE("dispatch: F16 row kernels exact for every finite half", "[dispatch]") {
  std::vector<uint16_t> w;
  for (uint32_t h = 0; h < 0x10000; ++h)
    if ((h & 0x7C00) != 0x7C00) w.push_back(static_cast<uint16_t>(h));
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> pick(0, static_cast<int>(w.size()) - 1);
  const int64_t n = 2048 + 13;  // rows of 2061: whole 32-steps and a tail
  for (const auto& [level, impl] : FastLevels()) {
    const uaii::kernels::VecDotFn dot = uaii::kernels::KernelsAt(TensorType::F16, level).dot;
    for (size_t r = 0; r + n <= w.size(); r += n) {
      std::vector<uint16_t> x(n);
      for (auto& v : x) v = w[pick(rng)];
      INFO(LevelName(level) << " row at " << r);
      CHECK(Bits(dot(w.data() + r, x.data(), n)) ==
            Bits(uaii::kernels::VecDotRef(TensorType::F16)(w.data() + r, x.data(), n)));
    }
    // The same halves through MatMul: 4-row tiles (where the level has them) against 2
    // activation rows, each row's dot equal to the reference's.
    const int64_t rows = static_cast<int64_t>(w.size()) / n / 4 * 4;
    std::vector<float> xf(2 * n);
    for (auto& v : xf) v = uaii::Fp16ToFp32(w[pick(rng)]);
    INFO(LevelName(level) << " MatMul over " << rows << " rows");
    CHECK(SameBits(Run(TensorType::F16, w.data(), rows, n, xf.data(), 2, nullptr, KernelImpl::kScalar),
                   Run(TensorType::F16, w.data(), rows, n, xf.data(), 2, nullptr, impl)));
  }
}

// BF16 products below 2^-126 (subnormal) must not be flushed: this is where
// AVX512_BF16's vdpbf16ps would differ (vec_dot_avx512.cpp).
TEST_CASE("dispatch: float kernels keep subnormal products", "[dispatch]") {
  std::mt19937 rng(5);
  for (const auto& [level, impl] : FastLevels()) {
    for (TensorType t : {TensorType::F32, TensorType::BF16}) {
      const int64_t in = 100, out = 6, batch = 2;
      const auto w = RandomWeights(t, out, in, rng, 1e-20f);
      const auto x = RandomActs(in * batch, rng, 1e-19f);
      INFO(LevelName(level) << " " << NameOf(t));
      const auto ref = Run(t, w.data(), out, in, x.data(), batch, nullptr, KernelImpl::kScalar);
      bool any_subnormal = false;
      for (float v : ref) any_subnormal |= v != 0 && std::fabs(v) < 1.1754944e-38f;
      CHECK(any_subnormal);
      CHECK(SameBits(ref, Run(t, w.data(), out, in, x.data(), batch, nullptr, impl)));
    }
  }
}

// The SIMD kernels unpack K-quant scales word-wise (kquant_scales.h); the reference
// byte-wise (quant_blocks.h). Every byte value at every position, plus random blocks.
TEST_CASE("dispatch: word-wise K-quant scale unpacking equals the byte-wise helpers", "[dispatch]") {
  std::mt19937 rng(12);
  std::uniform_int_distribution<int> byte(0, 255);
  int bad = 0;
  for (int trial = 0; trial < 12 * 256 + 20000; ++trial) {
    uint8_t s[12];
    for (auto& b : s) b = static_cast<uint8_t>(byte(rng));
    if (trial < 12 * 256) s[trial / 256] = static_cast<uint8_t>(trial % 256);
    uint8_t sm[16], q3[16];
    uaii::kernels::UnpackScalesMinsK4(s, sm);
    uaii::kernels::UnpackScalesQ3K(s, q3);
    for (int j = 0; j < 8; ++j) {
      uint8_t sc, m;
      uaii::quant::ScaleMinK4(j, s, &sc, &m);
      bad += sm[j] != sc || sm[8 + j] != m;
    }
    for (int j = 0; j < 16; ++j) bad += q3[j] - 32 != uaii::quant::ScaleQ3K(j, s);
  }
  CHECK(bad == 0);
}
