// The storage cost model's arithmetic (storage/cost_model.h): one staging buffer sums
// reads and compute; two overlap them slice by slice (the slower of the next read and
// this compute, not their sum); resident weights compute while the next slice is
// read; page-cache copies share the cores with the compute threads; and
// PredictDecode turns a plan and machine rates into those steps; observed figures
// replace the probes' terms, and FitObservedRate inverts the model for one figure.
#include <catch2/catch.hpp>

#include <string>
#include <tuple>

#include "storage/cost_model.h"

using namespace uaii::storage;
using uaii::TensorType;

namespace {
CostStep S(double read, double compute) { return {read, compute, true}; }
CostStep R(double compute) { return {0, compute, false}; }
const CpuShare kNoShare{1, 8, false};
}  // namespace

TEST_CASE("cost model: one staging buffer reads then computes", "[storage][cost]") {
  CHECK(SimulatePass({S(2, 1), S(2, 1), R(0.5)}, 1, kNoShare) == Approx(6.5));
}

TEST_CASE("cost model: two buffers overlap reads and compute", "[storage][cost]") {
  // Disk-bound: every step waits for its read.
  CHECK(SimulatePass({S(2, 1), S(2, 1), S(2, 1), S(2, 1)}, 2, kNoShare) == Approx(8));
  // Compute-bound: reads hide behind compute.
  CHECK(SimulatePass({S(1, 3), S(1, 3), S(1, 3), S(1, 3)}, 2, kNoShare) == Approx(12));
  // Uneven: per step the slower of the next slice's read and this compute.
  // acquire(a) = t; read(b) ends t+4; compute a ends t+1 -> b waits to t+4;
  // read(a') ends t+5; compute b ends t+5 -> period 5 (sum would be 4+1+1+1 = 7).
  CHECK(SimulatePass({S(1, 1), S(4, 1)}, 2, kNoShare) == Approx(5));
}

TEST_CASE("cost model: resident weights compute while the next slice is read", "[storage][cost]") {
  // acquire s1 at t: read s2 until t+2; compute s1 to t+1, resident to t+2.5;
  // acquire s2 at t+2.5: read s1' until t+4.5; compute s2 to t+3.5; wait to t+4.5.
  CHECK(SimulatePass({S(2, 1), R(1.5), S(2, 1)}, 2, kNoShare) == Approx(4.5));
  // Nothing streamed: the sum of compute.
  CHECK(SimulatePass({R(1), R(2)}, 2, kNoShare) == Approx(3));
}

TEST_CASE("cost model: page-cache copies share the cores with compute", "[storage][cost]") {
  // 2 compute threads + the copying reader on 2 cores: a step takes at least
  // (2 * 1 + 1) / 2 = 1.5 instead of max(1, 1) = 1.
  CHECK(SimulatePass({S(1, 1), S(1, 1)}, 2, {2, 2, true}) == Approx(3));
  // Enough cores, or direct reads (no CPU): no penalty.
  CHECK(SimulatePass({S(1, 1), S(1, 1)}, 2, {2, 4, true}) == Approx(2));
  CHECK(SimulatePass({S(1, 1), S(1, 1)}, 2, {2, 2, false}) == Approx(2));
  // A measured overlap floor (MatMul while the next slice is copied) bounds each step.
  CostStep slow = S(1, 1);
  slow.overlap_seconds = 2.5;
  CHECK(SimulatePass({slow, slow}, 2, kNoShare) == Approx(5));
}

TEST_CASE("cost model: PredictDecode from a plan and machine rates", "[storage][cost]") {
  PlanInputs in;
  auto add = [&](const char* name, uint64_t bytes, int64_t rows, bool matmul) {
    PlanTensor t;
    t.name = name;
    t.bytes = bytes;
    t.rows = rows;
    t.row_bytes = bytes / rows;
    t.matmul = matmul;
    in.tensors.push_back(t);
  };
  add("blk.0.ffn_up.weight", 400, 4, true);    // streamed in 2 slices
  add("blk.0.ffn_down.weight", 200, 2, true);  // resident
  add("blk.0.attn_norm.weight", 16, 1, false); // element-wise: no matmul, no cost
  StoragePlan plan;
  plan.streaming = true;
  plan.staging_buffers = 2;
  plan.residency = {Residency::kStreamed, Residency::kPinned, Residency::kPinned};
  plan.rows_per_slice = {2, 2, 1};
  MachineRates rates;
  rates.disk_bytes_per_s = 100;     // 400 bytes: 4 s
  rates.cached_bytes_per_s = 400;   // 1 s
  rates.memory_bytes_per_s = 1000;  // resident floor 0.2 s
  rates.matmul_bytes_per_s[TensorType::Q4_0] = 200;  // ffn_up 2 s, ffn_down 1 s
  rates.matmul_bytes_per_s[TensorType::Q6_K] = 100;
  rates.threads = 1;
  rates.cores = 4;
  const std::vector<TensorType> types = {TensorType::Q4_0, TensorType::Q4_0, TensorType::F32};
  const auto p = PredictDecode(in, types, plan, rates);
  CHECK(p.io_seconds == Approx(4));
  CHECK(p.io_cached_seconds == Approx(1));
  CHECK(p.compute_seconds == Approx(3));
  CHECK(p.resident_seconds == Approx(0.2));
  // Cold: steps S(2,1) S(2,1) R(1); reads dominate: 2 + 2 per pass.
  CHECK(p.token_seconds_cold == Approx(SimulatePass({S(2, 1), S(2, 1), R(1)}, 2, kNoShare)));
  CHECK(p.token_seconds_cold == Approx(4));
  // Warm: S(0.5,1) S(0.5,1) R(1): compute dominates: 3.
  CHECK(p.token_seconds_warm == Approx(3));
  CHECK(p.tokens_per_s_cold == Approx(0.25));
  // A type without a measurement uses the slowest measured (Q6_K here: 100 B/s).
  const auto q = PredictDecode(in, {TensorType::Q8_0, TensorType::Q8_0, TensorType::F32}, plan, rates);
  CHECK(q.compute_seconds == Approx(6));
  // One buffer: sum of reads and compute.
  plan.staging_buffers = 1;
  CHECK(PredictDecode(in, types, plan, rates).token_seconds_cold == Approx(2 + 1 + 2 + 1 + 1));
}

TEST_CASE("cost model: the simulated pass reports its I/O wait", "[storage][cost]") {
  double wait = -1;
  // Disk-bound (see above): each acquire waits read - compute = 1 per slice.
  CHECK(SimulatePass({S(2, 1), S(2, 1), S(2, 1), S(2, 1)}, 2, kNoShare, &wait) == Approx(8));
  CHECK(wait == Approx(4));
  CHECK(SimulatePass({S(1, 3), S(1, 3)}, 2, kNoShare, &wait) == Approx(6));
  CHECK(wait == Approx(0));
  CHECK(SimulatePass({S(2, 1), R(0.5)}, 1, kNoShare, &wait) == Approx(3.5));
  CHECK(wait == Approx(2));  // one buffer: every read is waited for
  // An observed step already includes its contention: no sharing penalty on top.
  CostStep observed = S(1, 1);
  observed.contention_included = true;
  CHECK(SimulatePass({observed, observed}, 2, {2, 2, true}) == Approx(2));
}

namespace {
// ffn_up streamed in two slices, ffn_down resident (as in the PredictDecode test).
struct SmallPlan {
  PlanInputs in;
  StoragePlan plan;
  MachineRates rates;
  std::vector<TensorType> types = {TensorType::Q4_0, TensorType::Q4_0};
  SmallPlan() {
    for (auto [name, bytes, rows] : {std::tuple{"blk.0.ffn_up.weight", 400, 4}, {"blk.0.ffn_down.weight", 200, 2}}) {
      PlanTensor t;
      t.name = name;
      t.bytes = bytes;
      t.rows = rows;
      t.row_bytes = bytes / rows;
      t.matmul = true;
      in.tensors.push_back(t);
    }
    plan.streaming = true;
    plan.staging_buffers = 2;
    plan.residency = {Residency::kStreamed, Residency::kPinned};
    plan.rows_per_slice = {2, 2};
    rates.disk_bytes_per_s = 100;
    rates.cached_bytes_per_s = 400;
    rates.memory_bytes_per_s = 1000;
    rates.matmul_bytes_per_s[TensorType::Q4_0] = 200;
    rates.cores = 4;
  }
};
}  // namespace

TEST_CASE("cost model: observed figures replace the probes' terms", "[storage][cost]") {
  SmallPlan s;
  s.rates.observed_resident_bytes_per_s = 50;       // ffn_down: 4 s, no memory floor
  s.rates.observed_warm_stream_bytes_per_s = 100;   // each 200-byte slice: 2 s, its copy included
  const auto p = PredictDecode(s.in, s.types, s.plan, s.rates);
  CHECK(p.token_seconds_warm == Approx(2 + 2 + 4));
  CHECK(p.io_wait_seconds_warm == Approx(0));
  // Cold: slices read 2 s and compute 1 s; ffn_down (4 s) hides the next read.
  // acquire a at t, read b to t+2, compute a to t+1 -> wait to t+2; read a' to t+4,
  // compute b to t+3, ffn_down to t+7; acquire a' at t+7: period 7, waits 1 per pass.
  CHECK(p.token_seconds_cold == Approx(7));
  CHECK(p.io_wait_seconds_cold == Approx(1));
}

TEST_CASE("cost model: a fitted figure reproduces the measured decode time", "[storage][cost]") {
  SmallPlan s;
  for (auto [figure, target] : {std::pair{ObservedFigure::kDisk, 9.0}, {ObservedFigure::kWarmStream, 6.0}}) {
    auto rate = FitObservedRate(s.in, s.types, s.plan, s.rates, false, figure, target);
    REQUIRE(rate.ok());
    MachineRates r = s.rates;
    (figure == ObservedFigure::kDisk ? r.disk_bytes_per_s : r.observed_warm_stream_bytes_per_s) = *rate;
    const auto p = PredictDecode(s.in, s.types, s.plan, r);
    CHECK((figure == ObservedFigure::kDisk ? p.token_seconds_cold : p.token_seconds_warm) == Approx(target));
  }
  // Cold compute: the pass's time not waiting (3 s with the probe's rates) to 5 s:
  // the streamed slices' 2 s of compute become 4 s -> 100 B/s; the disk then fits the rest.
  auto compute = FitObservedRate(s.in, s.types, s.plan, s.rates, false, ObservedFigure::kColdCompute, 5.0);
  REQUIRE(compute.ok());
  CHECK(*compute == Approx(100).epsilon(1e-6));
  MachineRates c = s.rates;
  c.observed_cold_compute_bytes_per_s = *compute;
  auto disk = FitObservedRate(s.in, s.types, s.plan, c, false, ObservedFigure::kDisk, 9.0);
  REQUIRE(disk.ok());
  c.disk_bytes_per_s = *disk;
  const auto split = PredictDecode(s.in, s.types, s.plan, c);
  CHECK(split.token_seconds_cold == Approx(9));
  CHECK(split.token_seconds_cold - split.io_wait_seconds_cold == Approx(5));  // the engine's compute
  // Disk-bound at 9 s: the two 200-byte reads take the whole pass (the 3 s of compute
  // hide under them), 4.5 s each -> 44.4 B/s.
  CHECK(*FitObservedRate(s.in, s.types, s.plan, s.rates, false, ObservedFigure::kDisk, 9.0) ==
        Approx(200 / 4.5).epsilon(1e-6));
  // Nothing streamed: the resident rate is the matmul bytes per second of the pass.
  s.plan.streaming = false;
  s.plan.residency = {Residency::kPinned, Residency::kPinned};
  auto resident = FitObservedRate(s.in, s.types, s.plan, s.rates, false, ObservedFigure::kResident, 2.0);
  REQUIRE(resident.ok());
  CHECK(*resident == Approx(300));  // 600 bytes in 2 s
}

TEST_CASE("cost model: a figure that did not limit the run is not fitted", "[storage][cost]") {
  SmallPlan s;
  // Cold with infinitely fast reads still takes 3 s of compute: 3.1 s says nothing
  // about the disk, and neither does a time below what compute alone takes.
  for (double t : {3.1, 1.0}) {
    auto r = FitObservedRate(s.in, s.types, s.plan, s.rates, false, ObservedFigure::kDisk, t);
    CHECK(!r.ok());
    CHECK(std::string(r.status().message()).find("did not limit") != std::string::npos);
  }
  CHECK(!FitObservedRate(s.in, s.types, s.plan, s.rates, false, ObservedFigure::kDisk, 0).ok());
  CHECK(!FitObservedRate(s.in, s.types, s.plan, s.rates, false, ObservedFigure::kDisk, -1).ok());
  // A plan without resident matmuls has nothing the resident rate governs.
  s.plan.residency = {Residency::kStreamed, Residency::kStreamed};
  auto none = FitObservedRate(s.in, s.types, s.plan, s.rates, false, ObservedFigure::kResident, 10);
  CHECK(!none.ok());
  CHECK(std::string(none.status().message()).find("nothing the resident rate governs") != std::string::npos);
}

TEST_CASE("cost model: what a run teaches", "[storage][cost]") {
  SmallPlan s;
  auto figures = [](const std::vector<std::pair<ObservedFigure, double>>& l) {
    std::vector<ObservedFigure> f;
    for (const auto& [fig, rate] : l) f.push_back(fig);
    return f;
  };
  // Cold and waiting: compute first (5 s of the 9 not waiting), then the disk with it.
  auto cold = LearnFromRun(s.in, s.types, s.plan, s.rates, false, {true, 9.0, 4.0});
  REQUIRE(figures(cold) == std::vector{ObservedFigure::kColdCompute, ObservedFigure::kDisk});
  MachineRates r = s.rates;
  r.observed_cold_compute_bytes_per_s = cold[0].second;
  r.disk_bytes_per_s = cold[1].second;
  const auto p = PredictDecode(s.in, s.types, s.plan, r);
  CHECK(p.token_seconds_cold == Approx(9));
  CHECK(p.io_wait_seconds_cold == Approx(4));
  // Warm: the warm streaming rate alone.
  CHECK(figures(LearnFromRun(s.in, s.types, s.plan, s.rates, false, {false, 6.0, 0.1})) ==
        std::vector{ObservedFigure::kWarmStream});
  // Cold without waiting (3.05 s, all of it compute): the disk is at least fast enough
  // to add no more than 10%, so a slow probe (100 B/s: 4 s per pass) is raised...
  auto fast = LearnFromRun(s.in, s.types, s.plan, s.rates, false, {true, 3.05, 0.0});
  REQUIRE(figures(fast) == std::vector{ObservedFigure::kColdCompute, ObservedFigure::kDisk});
  r = s.rates;
  r.observed_cold_compute_bytes_per_s = fast[0].second;
  r.disk_bytes_per_s = fast[1].second;
  CHECK(PredictDecode(s.in, s.types, s.plan, r).token_seconds_cold == Approx(3.05 * 1.1));
  // ... and a figure already above the bound is left alone.
  s.rates.disk_bytes_per_s = 1e6;
  CHECK(figures(LearnFromRun(s.in, s.types, s.plan, s.rates, false, {true, 3.05, 0.0})) ==
        std::vector{ObservedFigure::kColdCompute});
  // Nothing streamed: the resident rate.
  s.plan.streaming = false;
  s.plan.residency = {Residency::kPinned, Residency::kPinned};
  auto resident = LearnFromRun(s.in, s.types, s.plan, s.rates, false, {true, 2.0, 0.0});
  REQUIRE(figures(resident) == std::vector{ObservedFigure::kResident});
  CHECK(resident[0].second == Approx(300));
}
