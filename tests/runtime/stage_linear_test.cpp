// A decode stage as one pool job (runtime/stage_linear.h) gives exactly what one
// MatMul per matrix gives: every type of the usual GGUF mixes, interleaved and
// row-major, row counts around the 16-row groups, stages large enough to be cut into
// many grains, 1-3 and 8 threads.
#include <catch2/catch.hpp>

#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "formats/fp16.h"
#include "kernels/interleave.h"
#include "kernels/matmul.h"
#include "backends/cpu/cpu_ops.h"
#include "backends/cpu/linear.h"
#include "backends/cpu/stage_linear.h"

using namespace uaii;
using namespace uaii::runtime;
using namespace uaii::backends::cpu;

namespace {

// Where a block's f16 scales sit (byte offsets in the block), so that random blocks
// get finite ones.
struct Layout {
  TensorType type;
  int block_bytes;
  std::vector<int> halves;
};
const Layout kLayouts[] = {
    {TensorType::Q4_0, 18, {0}},  {TensorType::Q5_0, 22, {0}}, {TensorType::Q8_0, 34, {0}},
    {TensorType::Q4_K, 144, {0, 2}}, {TensorType::Q6_K, 210, {208}}, {TensorType::F32, 4, {}},
};

// A [out, in] matrix with random quants and small finite scales, bound as the
// runtime binds it: row-major bytes, plus an interleaved copy when asked and the CPU
// has kernels for the type.
struct TestWeight {
  std::vector<uint8_t> bytes;
  BoundWeight w;
};

std::unique_ptr<TestWeight> MakeWeight(const Layout& l, int64_t out, int64_t in, bool interleave, uint32_t seed) {
  auto t = std::make_unique<TestWeight>();
  const auto row_bytes = *RowBytes(*FindTensorType(static_cast<uint32_t>(l.type)), static_cast<uint64_t>(in));
  t->bytes.resize(row_bytes * out);
  std::mt19937 rng(seed);
  for (auto& b : t->bytes) b = static_cast<uint8_t>(rng());
  for (size_t blk = 0; blk + l.block_bytes <= t->bytes.size(); blk += l.block_bytes) {
    if (l.type == TensorType::F32) {
      const float v = 0.01f * static_cast<float>(static_cast<int>(rng() % 200) - 100);
      std::memcpy(&t->bytes[blk], &v, 4);
    }
    for (int off : l.halves) {
      const uint16_t h = Fp32ToFp16(0.001f * static_cast<float>(1 + rng() % 100));
      std::memcpy(&t->bytes[blk + off], &h, 2);
    }
  }
  t->w.type = l.type;
  t->w.shape = {out, in};
  t->w.data = t->bytes.data();
  t->w.bytes = t->bytes.size();
  t->w.row_bytes = row_bytes;
  if (interleave && kernels::HasInterleavedKernel(l.type)) {
    auto copy = std::make_shared<InterleavedCopy>();
    copy->bytes = std::shared_ptr<uint8_t>(new uint8_t[t->bytes.size()], std::default_delete<uint8_t[]>());
    REQUIRE(kernels::RepackInterleaved(l.type, t->bytes.data(), out, in, copy->bytes.get()).ok());
    copy->data.store(copy->bytes.get());
    t->w.interleaved = copy;
  }
  return t;
}

std::vector<float> Input(int64_t in) {
  std::vector<float> x(in);
  for (int64_t i = 0; i < in; ++i) x[i] = 0.013f * static_cast<float>((i * 37) % 101) - 0.6f;
  return x;
}

// What the executor computed before stages: one whole-matrix matmul (the
// interleaved copy's when there is one).
std::vector<float> Reference(const TestWeight& t, const std::vector<float>& x) {
  std::vector<float> y(t.w.shape[0]);
  REQUIRE(ResidentLinear(t.w, x.data(), 1, y.data(), nullptr).ok());
  return y;
}

}  // namespace

TEST_CASE("stage: one job over several matrices equals one matmul each") {
  const int64_t in = 512;  // a multiple of 256, so K-quants fit too
  const std::vector<float> x = Input(in);
  for (bool interleave : {false, true}) {
    // Row counts around the 16-row groups, and one matrix big enough (about 1.5 MB)
    // to be cut into many grains.
    const int64_t rows[] = {1, 15, 17, 70, 2900};
    std::vector<std::unique_ptr<TestWeight>> ws;
    uint32_t seed = 1;
    for (const Layout& l : kLayouts)
      for (int64_t r : rows)
        if (l.type != TensorType::F32 || r < 1000) ws.push_back(MakeWeight(l, r, in, interleave, seed++));
    std::vector<std::vector<float>> want;
    for (const auto& t : ws) want.push_back(Reference(*t, x));
    // 8 threads on a 2-core machine: workers start late, and the others claim the
    // rest of their runs of grains (RunGrains' stealing path).
    for (int threads : {1, 2, 3, 8}) {
      ThreadPool pool(threads);
      // Stages of 1..3 consecutive matrices, mixing types and sizes.
      for (size_t first = 0; first < ws.size(); ++first)
        for (int n = 1; n <= 3 && first + n <= ws.size(); ++n) {
          std::vector<std::vector<float>> got(n);
          std::vector<StageMatmul> parts;
          for (int k = 0; k < n; ++k) {
            got[k].assign(ws[first + k]->w.shape[0], -1.0f);
            parts.push_back({&ws[first + k]->w, got[k].data()});
          }
          REQUIRE(CanRunStage(parts.data(), n));
          REQUIRE(StageLinear(parts.data(), n, x.data(), &pool).ok());
          for (int k = 0; k < n; ++k) {
            INFO("interleave " << interleave << " threads " << threads << " matrix " << first + k << " of stage "
                               << first << "+" << n);
            CHECK(std::memcmp(got[k].data(), want[first + k].data(), got[k].size() * sizeof(float)) == 0);
          }
        }
    }
  }
}

TEST_CASE("stage: gated stage equals gate, up and the activation") {
  const int64_t in = 640;
  const std::vector<float> x = Input(in);
  for (const Layout& l : kLayouts) {
    if (l.type == TensorType::Q4_K || l.type == TensorType::Q6_K) continue;  // 640 is not a multiple of 256
    for (int64_t rows : {int64_t{33}, int64_t{2048}}) {
      auto gate = MakeWeight(l, rows, in, true, 7);
      auto up = MakeWeight(l, rows, in, true, 8);
      const std::vector<float> g = Reference(*gate, x), u = Reference(*up, x);
      for (StageAct act : {StageAct::kSwiglu, StageAct::kGeglu}) {
        std::vector<float> want(rows);
        (act == StageAct::kSwiglu ? Swiglu : Geglu)(g.data(), u.data(), rows, want.data());
        for (int threads : {1, 2, 3}) {
          ThreadPool pool(threads);
          std::vector<float> y(rows, -1.0f), scratch(rows);
          REQUIRE(StageGated(gate->w, up->w, act, x.data(), y.data(), scratch.data(), &pool).ok());
          INFO(TensorTypeName(static_cast<uint32_t>(l.type)) << " rows " << rows << " threads " << threads);
          CHECK(std::memcmp(y.data(), want.data(), rows * sizeof(float)) == 0);
        }
      }
    }
  }
}

TEST_CASE("stage: matrices of different widths are not a stage") {
  auto a = MakeWeight(kLayouts[2], 16, 64, false, 1);
  auto b = MakeWeight(kLayouts[2], 16, 128, false, 2);
  std::vector<float> ya(16), yb(16);
  const StageMatmul parts[2] = {{&a->w, ya.data()}, {&b->w, yb.data()}};
  CHECK(CanRunStage(parts, 1));
  CHECK_FALSE(CanRunStage(parts, 2));
}
