#include "storage/cost_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "util/str_cat.h"

namespace uaii::storage {

double SimulatePass(const std::vector<CostStep>& steps, int staging_buffers, const CpuShare& cpu,
                    double* wait_seconds) {
  double waited = 0;
  if (staging_buffers <= 1) {  // every read synchronous, then its compute
    double t = 0;
    for (const auto& s : steps) {
      t += s.read_seconds + s.compute_seconds;
      waited += s.read_seconds;
    }
    if (wait_seconds) *wait_seconds = waited;
    return t;
  }
  std::vector<size_t> streamed;
  for (size_t i = 0; i < steps.size(); ++i)
    if (steps[i].streamed) streamed.push_back(i);
  const bool share = cpu.reads_use_cpu && cpu.threads + 1 > cpu.cores && cpu.cores > 0;
  // Three passes from an empty pipeline; the third is the steady state (the first
  // slice was prefetched during the previous pass's last).
  double now = 0, ready = 0, pass = 0;
  bool prefetched = false;
  for (int round = 0; round < 3; ++round) {
    const double start = now;
    waited = 0;
    size_t k = 0;  // index into streamed
    for (const auto& s : steps) {
      if (!s.streamed) {
        now += s.compute_seconds;
        continue;
      }
      // Acquire: the prefetched slice when it is done, else a synchronous read.
      const double acquired = prefetched ? std::max(now, ready) : now + s.read_seconds;
      waited += acquired - now;
      now = acquired;
      const double next_read = steps[streamed[(k + 1) % streamed.size()]].read_seconds;
      ready = now + next_read;  // the worker starts the next slice now
      prefetched = true;
      double c = s.compute_seconds;
      if (share && !s.contention_included) c = std::max(c, (cpu.threads * c + next_read) / cpu.cores);
      c = std::max(c, s.overlap_seconds);
      now += c;
      ++k;
    }
    pass = now - start;
  }
  if (wait_seconds) *wait_seconds = waited;
  return pass;
}

CostPrediction PredictDecode(const PlanInputs& in, const std::vector<TensorType>& types, const StoragePlan& plan,
                             const MachineRates& rates, bool resident_interleaved) {
  CostPrediction p;
  double slowest = std::numeric_limits<double>::infinity();
  for (const auto& [t, r] : rates.matmul_bytes_per_s)
    if (r > 0) slowest = std::min(slowest, r);
  if (!(slowest < std::numeric_limits<double>::infinity())) slowest = rates.memory_bytes_per_s;
  auto rate_of = [&](size_t i) {
    auto it = i < types.size() ? rates.matmul_bytes_per_s.find(types[i]) : rates.matmul_bytes_per_s.end();
    return it != rates.matmul_bytes_per_s.end() && it->second > 0 ? it->second : slowest;
  };
  auto secs = [](double bytes, double rate) { return rate > 0 ? bytes / rate : 0.0; };
  std::vector<CostStep> cold, warm;
  double embed_cold = 0, embed_warm = 0;  // looked-up rows of a streamed table: synchronous
  for (size_t i = 0; i < in.tensors.size(); ++i) {
    const PlanTensor& t = in.tensors[i];
    const bool streamed = i < plan.residency.size() && plan.residency[i] == Residency::kStreamed;
    if (t.embed && !t.matmul) {
      if (streamed) {
        embed_cold += secs(t.row_bytes, rates.disk_bytes_per_s);
        embed_warm += secs(t.row_bytes, rates.cached_bytes_per_s);
        p.io_seconds += secs(t.row_bytes, rates.disk_bytes_per_s);
        p.io_cached_seconds += secs(t.row_bytes, rates.cached_bytes_per_s);
      }
      continue;
    }
    if (!t.matmul) continue;
    double rate = rate_of(i);
    if (!streamed && resident_interleaved && i < types.size()) {
      auto il = rates.interleaved_bytes_per_s.find(types[i]);
      if (il != rates.interleaved_bytes_per_s.end() && il->second > 0) rate = il->second;
    }
    double compute = secs(static_cast<double>(t.bytes), rate);
    if (!streamed && rates.observed_resident_bytes_per_s > 0)  // the whole pass, observed: no floor
      compute = secs(static_cast<double>(t.bytes), rates.observed_resident_bytes_per_s);
    p.compute_seconds += compute;
    if (!streamed) {
      const double floor = secs(static_cast<double>(t.bytes), rates.memory_bytes_per_s);
      p.resident_seconds += floor;
      const CostStep s{0, rates.observed_resident_bytes_per_s > 0 ? compute : std::max(compute, floor), false};
      cold.push_back(s);
      warm.push_back(s);
      continue;
    }
    p.io_seconds += secs(static_cast<double>(t.bytes), rates.disk_bytes_per_s);
    p.io_cached_seconds += secs(static_cast<double>(t.bytes), rates.cached_bytes_per_s);
    // The engine reads and computes slice by slice (rows_per_slice rows each).
    const int64_t per = i < plan.rows_per_slice.size() && plan.rows_per_slice[i] > 0 ? plan.rows_per_slice[i] : t.rows;
    for (int64_t r0 = 0; r0 < t.rows; r0 += per) {
      const double frac = static_cast<double>(std::min(t.rows, r0 + per) - r0) / static_cast<double>(t.rows);
      const double b = frac * static_cast<double>(t.bytes);
      const double cold_compute = rates.observed_cold_compute_bytes_per_s > 0
                                      ? secs(b, rates.observed_cold_compute_bytes_per_s)
                                      : frac * compute;
      cold.push_back({secs(b, rates.disk_bytes_per_s), cold_compute, true});
      if (rates.observed_warm_stream_bytes_per_s > 0) {
        // Observed: the step's compute, its copy from the page cache and what they cost
        // each other, as the run measured them together.
        warm.push_back({0, secs(b, rates.observed_warm_stream_bytes_per_s), true, 0, true});
        continue;
      }
      double overlap = 0;
      if (i < types.size())
        if (auto ws = rates.warm_stream_bytes_per_s.find(types[i]); ws != rates.warm_stream_bytes_per_s.end())
          overlap = secs(b, ws->second);
      warm.push_back({secs(b, rates.cached_bytes_per_s), frac * compute, true, overlap});
    }
  }
  const int buffers = plan.streaming ? std::max(1, plan.staging_buffers) : 2;
  p.token_seconds_cold =
      SimulatePass(cold, buffers, {rates.threads, rates.cores, false}, &p.io_wait_seconds_cold) + embed_cold;
  p.token_seconds_warm =
      SimulatePass(warm, buffers, {rates.threads, rates.cores, true}, &p.io_wait_seconds_warm) + embed_warm;
  p.io_wait_seconds_cold += embed_cold;
  p.io_wait_seconds_warm += embed_warm;
  p.tokens_per_s_cold = p.token_seconds_cold > 0 ? 1.0 / p.token_seconds_cold : 0;
  p.tokens_per_s_warm = p.token_seconds_warm > 0 ? 1.0 / p.token_seconds_warm : 0;
  return p;
}

const char* ObservedFigureName(ObservedFigure f) {
  switch (f) {
    case ObservedFigure::kDisk: return "disk";
    case ObservedFigure::kColdCompute: return "cold_compute";
    case ObservedFigure::kWarmStream: return "warm_stream";
    case ObservedFigure::kResident: return "resident";
  }
  return "unknown";
}

absl::StatusOr<double> FitObservedRate(const PlanInputs& in, const std::vector<TensorType>& types,
                                       const StoragePlan& plan, MachineRates rates, bool resident_interleaved,
                                       ObservedFigure figure, double token_seconds) {
  const char* name = ObservedFigureName(figure);
  if (!(token_seconds > 0) || !std::isfinite(token_seconds))
    return absl::InvalidArgumentError(StrCat("cannot fit the ", name, " rate to a decode time of ", token_seconds, " s"));
  auto seconds = [&](double x) {
    switch (figure) {
      case ObservedFigure::kDisk: rates.disk_bytes_per_s = x; break;
      case ObservedFigure::kColdCompute: rates.observed_cold_compute_bytes_per_s = x; break;
      case ObservedFigure::kWarmStream: rates.observed_warm_stream_bytes_per_s = x; break;
      case ObservedFigure::kResident: rates.observed_resident_bytes_per_s = x; break;
    }
    const CostPrediction p = PredictDecode(in, types, plan, rates, resident_interleaved);
    switch (figure) {
      case ObservedFigure::kDisk: return p.token_seconds_cold;
      case ObservedFigure::kColdCompute: return p.token_seconds_cold - p.io_wait_seconds_cold;
      default: return p.token_seconds_warm;
    }
  };
  // The token time falls as the rate grows; bisect on log(rate) between 1 mB/s and
  // 1 PB/s (beyond any device or memory; the low end slow for any plan's bytes).
  double lo = std::log(1e-3), hi = std::log(1e15);
  const double slowest = seconds(std::exp(lo)), fastest = seconds(std::exp(hi));
  if (!(slowest > fastest * 1.5))
    return absl::FailedPreconditionError(StrCat("the plan has nothing the ", name, " rate governs"));
  if (token_seconds < fastest * 1.1)
    return absl::FailedPreconditionError(
        StrCat("the ", name, " rate did not limit this run: its decode time ", token_seconds,
               " s is within 10% of what the other terms alone take (", fastest, " s)"));
  if (token_seconds > slowest) return std::exp(lo);
  for (int i = 0; i < 100 && hi - lo > 1e-9; ++i) {
    const double mid = 0.5 * (lo + hi);
    (seconds(std::exp(mid)) > token_seconds ? lo : hi) = mid;
  }
  return std::exp(0.5 * (lo + hi));
}

std::vector<std::pair<ObservedFigure, double>> LearnFromRun(const PlanInputs& in, const std::vector<TensorType>& types,
                                                            const StoragePlan& plan, MachineRates rates,
                                                            bool resident_interleaved, const RunTimings& run) {
  using F = ObservedFigure;
  std::vector<std::pair<F, double>> learned;
  bool streamed = false;
  for (size_t i = 0; i < in.tensors.size() && i < plan.residency.size(); ++i)
    streamed |= in.tensors[i].matmul && plan.residency[i] == Residency::kStreamed;
  auto fit = [&](F f, double seconds) {
    auto r = FitObservedRate(in, types, plan, rates, resident_interleaved, f, seconds);
    if (r.ok()) learned.emplace_back(f, *r);
    return r;
  };
  if (!streamed) {
    fit(F::kResident, run.token_seconds);
    return learned;
  }
  if (!run.cold) {
    fit(F::kWarmStream, run.token_seconds);
    return learned;
  }
  // Cold: first the compute the engine did between its waits, then the disk rate
  // that, with that compute, gives the decode time (so the simulated pass splits a
  // token into compute and I/O wait as the engine did).
  const double computing = run.token_seconds - std::max(0.0, run.io_wait_seconds);
  if (computing > 0)
    if (auto c = fit(F::kColdCompute, computing); c.ok()) rates.observed_cold_compute_bytes_per_s = *c;
  if (fit(F::kDisk, run.token_seconds).ok()) return learned;
  // The device never held this run up: its rate is at least the one at which reads
  // would add 10% to the compute-bound pass. A figure below that bound is raised (a
  // pessimistic probe would otherwise keep predicting waits that did not happen).
  MachineRates unlimited = rates;
  unlimited.disk_bytes_per_s = 1e15;
  const double fastest = PredictDecode(in, types, plan, unlimited, resident_interleaved).token_seconds_cold;
  auto bound = FitObservedRate(in, types, plan, rates, resident_interleaved, F::kDisk, fastest * 1.1);
  if (bound.ok() && *bound > rates.disk_bytes_per_s) learned.emplace_back(F::kDisk, *bound);
  return learned;
}

}  // namespace uaii::storage
