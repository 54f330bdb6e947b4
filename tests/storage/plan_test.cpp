// The storage planner follows ARCHITECTURE.md's pin rules: element-wise weights and
// the final norm always pinned; embeddings, lm_head and the first layers while they
// fit; layers dropped first, then lm_head, then embeddings; fail closed below the
// minimum naming it. And the staging pipeline returns the right bytes in and out of
// sequence.
#include <catch2/catch.hpp>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "storage/plan.h"
#include "storage/staging.h"

using namespace uaii::storage;

namespace {
constexpr uint64_t kMiB = uint64_t{1} << 20;

// n_layers layers of 4 matmuls (each `layer_mib` / 4), embeddings and lm_head of
// `head_mib`, norms of 4 KiB.
PlanInputs Model(int n_layers, uint64_t layer_mib, uint64_t head_mib, bool tied = false) {
  PlanInputs in;
  auto add = [&](std::string name, uint64_t bytes, TensorRole role, int layer, bool matmul, bool embed) {
    PlanTensor t;
    t.name = std::move(name);
    t.bytes = bytes;
    t.rows = 1024;
    t.row_bytes = bytes / 1024;
    t.role = role;
    t.layer = layer;
    t.matmul = matmul;
    t.embed = embed;
    in.tensors.push_back(t);
  };
  add("token_embd.weight", head_mib * kMiB, TensorRole::kEmbedding, -1, tied, true);
  add("output_norm.weight", 4096, TensorRole::kElementwise, -1, false, false);
  if (!tied) add("output.weight", head_mib * kMiB, TensorRole::kLmHead, -1, true, false);
  for (int l = 0; l < n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    add(p + "attn_norm.weight", 4096, TensorRole::kElementwise, l, false, false);
    for (const char* m : {"attn_q", "attn_output", "ffn_up", "ffn_down"})
      add(p + m + ".weight", layer_mib * kMiB / 4, TensorRole::kLayer, l, true, false);
  }
  in.kv_bytes = 2 * kMiB;
  in.activation_bytes = 1 * kMiB;
  return in;
}

ResolvedPreset Budget(uint64_t bytes, int staging = 2, PinPolicy pin = PinPolicy::kAutoTrunk) {
  ResolvedPreset r;
  r.preset = Preset::kLaptop;
  r.budget_bytes = bytes;
  r.pin = pin;
  r.streaming = pin == PinPolicy::kNormsOnly ? StreamPolicy::kAlways : StreamPolicy::kWhenOverBudget;
  r.staging_buffers = staging;
  return r;
}

bool Pinned(const PlanInputs& in, const StoragePlan& p, const std::string& name) {
  for (size_t i = 0; i < in.tensors.size(); ++i)
    if (in.tensors[i].name == name) return p.residency[i] == Residency::kPinned;
  FAIL("no tensor " << name);
  return false;
}
}  // namespace

TEST_CASE("plan: everything pinned when it fits or without a budget", "[storage][plan]") {
  auto in = Model(8, 16, 32);
  auto none = PlanStorage(in, ResolvePreset(Preset::kNone, {uint64_t{64} << 30, uint64_t{32} << 30, 8}));
  REQUIRE(none.ok());
  CHECK(!none->streaming);
  CHECK(none->streamed_bytes == 0);
  auto big = PlanStorage(in, Budget(1024 * kMiB));
  REQUIRE(big.ok());
  CHECK(!big->streaming);
  CHECK(big->pinned_layers == 8);
  CHECK(big->expected_peak_bytes <= 1024 * kMiB);
}

TEST_CASE("plan: layers are dropped first, then lm_head, then embeddings", "[storage][plan]") {
  auto in = Model(8, 16, 32);  // 128 MiB of layers, 64 MiB of head + embeddings
  // Room for embeddings, lm_head and some layers.
  auto p = PlanStorage(in, Budget(150 * kMiB));
  REQUIRE(p.ok());
  CHECK(p->streaming);
  CHECK(p->embeddings_pinned);
  CHECK(p->lm_head_pinned);
  CHECK(p->pinned_layers > 0);
  CHECK(p->pinned_layers < 8);
  CHECK(Pinned(in, *p, "output_norm.weight"));
  CHECK(Pinned(in, *p, "blk.0.attn_q.weight"));
  CHECK(!Pinned(in, *p, "blk.7.attn_q.weight"));
  CHECK(Pinned(in, *p, "blk.7.attn_norm.weight"));  // element-wise weights always pinned
  CHECK(p->expected_peak_bytes <= 150 * kMiB);
  // Less: no layer, embeddings kept, lm_head dropped.
  auto q = PlanStorage(in, Budget(56 * kMiB));
  REQUIRE(q.ok());
  CHECK(q->pinned_layers == 0);
  CHECK(q->embeddings_pinned);
  CHECK(!q->lm_head_pinned);
  CHECK(q->expected_peak_bytes <= 56 * kMiB);
  // Less again: nothing but the norms.
  auto r = PlanStorage(in, Budget(12 * kMiB));
  REQUIRE(r.ok());
  CHECK(!r->embeddings_pinned);
  CHECK(!r->lm_head_pinned);
  CHECK(r->expected_peak_bytes <= 12 * kMiB);
  CHECK(r->streamed_bytes_per_token == 128 * kMiB + 32 * kMiB + 32 * kMiB / 1024);  // layers, head, one row
}

TEST_CASE("plan: streamed tensors larger than a staging buffer go in row slices", "[storage][plan]") {
  auto in = Model(2, 64, 32);
  auto p = PlanStorage(in, Budget(12 * kMiB));
  REQUIRE(p.ok());
  REQUIRE(p->staging_buffers == 2);
  for (size_t i = 0; i < in.tensors.size(); ++i) {
    if (p->residency[i] != Residency::kStreamed || !in.tensors[i].matmul) continue;
    CHECK(p->rows_per_slice[i] * in.tensors[i].row_bytes <= p->staging_bytes);
    CHECK(p->rows_per_slice[i] >= 1);
  }
  CHECK(p->rows_per_slice[2] < in.tensors[2].rows);  // lm_head: 32 MiB does not fit one buffer
}

TEST_CASE("plan: below the minimum it fails closed, stating the minimum and the advice", "[storage][plan]") {
  auto in = Model(4, 16, 32);
  auto p = PlanStorage(in, Budget(2 * kMiB));
  REQUIRE(!p.ok());
  CHECK(p.status().code() == absl::StatusCode::kResourceExhausted);
  const std::string msg(p.status().message());
  CHECK_THAT(msg, Catch::Contains("cannot hold this model's minimum of"));
  CHECK_THAT(msg, Catch::Contains("bigger preset"));
  CHECK_THAT(msg, Catch::Contains("smaller quantization"));
  // The stated minimum itself is accepted.
  const auto at = msg.find("MiB (") + 5;
  const uint64_t minimum = std::stoull(msg.substr(at));
  auto ok = PlanStorage(in, Budget(minimum));
  REQUIRE(ok.ok());
  CHECK(ok->minimum_bytes == minimum);
  CHECK(ok->expected_peak_bytes <= minimum);
}

TEST_CASE("plan: phone pins norms only (embeddings when they fit) with one staging buffer", "[storage][plan]") {
  auto in = Model(4, 16, 8);
  auto p = PlanStorage(in, Budget(64 * kMiB, 1, PinPolicy::kNormsOnly));
  REQUIRE(p.ok());
  CHECK(p->streaming);
  CHECK(p->staging_buffers == 1);
  CHECK(p->pinned_layers == 0);
  CHECK(p->embeddings_pinned);
  CHECK(p->lm_head_pinned);
}

TEST_CASE("plan: tied embeddings are one tensor for embed and lm_head", "[storage][plan]") {
  auto in = Model(2, 16, 32, /*tied=*/true);
  auto p = PlanStorage(in, Budget(20 * kMiB));
  REQUIRE(p.ok());
  CHECK(!p->embeddings_pinned);
  CHECK(p->lm_head_pinned == p->embeddings_pinned);
}

TEST_CASE("staging: chunks in sequence are prefetched, out of sequence read directly", "[storage][staging]") {
  std::filesystem::create_directories(UAII_FIXTURE_DIR);
  const std::string path = std::string(UAII_FIXTURE_DIR) + "/staging_test.bin";
  std::vector<uint8_t> data(1 << 16);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7 + (i >> 8));
  {
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(data.data()), data.size());
  }
  FileSet files;
  auto fi = files.Open(path);
  REQUIRE(fi.ok());
  std::vector<Chunk> seq;
  for (uint64_t off = 0; off < data.size(); off += 4096 + 512) seq.push_back({*fi, off, std::min<uint64_t>(4096, data.size() - off)});
  for (int buffers : {1, 2}) {
    StagingPipeline pipe(&files, seq, buffers, 4096);
    for (int round = 0; round < 3; ++round)
      for (size_t i : {0, 1, 2, 5, 6, 3, 4, 7, 8, 9, 10, 11, 12, 13}) {
        if (i >= seq.size()) continue;
        auto b = pipe.Acquire(i);
        REQUIRE(b.ok());
        CHECK(std::equal(*b, *b + seq[i].bytes, data.begin() + seq[i].offset));
      }
    auto st = pipe.stats();
    CHECK(st.hits + st.misses > 0);
    if (buffers == 2) CHECK(st.hits > 0);
    if (buffers == 2) CHECK(st.worker_reads > 0);  // page-cache bytes: the reader thread copies them
    CHECK(st.engine_reads == 0);
    std::vector<uint8_t> row(100);
    REQUIRE(pipe.ReadDirect(*fi, 1000, 100, row.data()).ok());
    CHECK(std::equal(row.begin(), row.end(), data.begin() + 1000));
  }
  auto bad = files.Open(path + ".missing");
  CHECK(!bad.ok());
  std::remove(path.c_str());
}

TEST_CASE("staging: a cold file's chunks are read by the engine's own direct reads, in and out of sequence",
          "[storage][staging]") {
  std::filesystem::create_directories(UAII_FIXTURE_DIR);
  const std::string path = std::string(UAII_FIXTURE_DIR) + "/staging_async_test.bin";
  std::vector<uint8_t> data(1 << 20);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 11 + (i >> 9));
  {
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(data.data()), data.size());
  }
  {
    const int fd = ::open(path.c_str(), O_RDONLY);
    ::fdatasync(fd);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }
  FileSet files;
  auto fi = files.Open(path);
  REQUIRE(fi.ok());
  std::vector<Chunk> seq;
  for (uint64_t off = 100; off + 50000 < data.size(); off += 61000) seq.push_back({*fi, off, 50000});
  {
    StagingPipeline pipe(&files, seq, 2, 50000 + kDirectIoSlack);
    for (int round = 0; round < 3; ++round)
      for (size_t i : {0, 1, 2, 5, 6, 3, 4, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}) {
        if (i >= seq.size()) continue;
        auto b = pipe.Acquire(i);
        REQUIRE(b.ok());
        CHECK(std::equal(*b, *b + seq[i].bytes, data.begin() + seq[i].offset));
      }
    CHECK(pipe.stats().hits > 0);
    if (files.direct(*fi) && files.uring()) CHECK(pipe.stats().engine_reads > 0);  // no hand-over
    // Destroyed with a read in flight: waited for first.
    REQUIRE(pipe.Acquire(0).ok());
  }
  if (files.direct(*fi) && files.uring()) CHECK(files.counters().direct_bytes > 0);
  std::remove(path.c_str());
}
