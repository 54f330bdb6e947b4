#include "storage_report.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>
#include <vector>
#include <cstdio>

#include "generation/run_observation.h"
#include "loaders/model_locator.h"
#include "runtime/session_plan.h"
#include "storage/calibration.h"
#include "util/str_cat.h"

namespace uaii::cli {

absl::Status MemoryOptionsFromArgs(const Args& a, SessionOptions* so) {
  so->preset = a.get("--preset", "laptop");
  if (auto p = storage::ParsePreset(so->preset); !p.ok()) return p.status();
  if (a.has("--ram-gb")) {
    const std::string v = a.get("--ram-gb");
    char* end = nullptr;
    const double gb = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !(gb > 0) || gb > 1e6)
      return absl::InvalidArgumentError(StrCat("--ram-gb takes a positive number of GiB, got \"", v, "\""));
    so->ram_budget_bytes = static_cast<uint64_t>(gb * double(uint64_t{1} << 30));
  }
  if (a.has("--kv-window")) {
    const std::string v = a.get("--kv-window");
    int64_t n = 0;
    auto r = std::from_chars(v.data(), v.data() + v.size(), n);
    if (r.ec != std::errc() || r.ptr != v.data() + v.size() || n < 0)
      return absl::InvalidArgumentError(
          StrCat("--kv-window takes a non-negative integer (0: unbounded up to --max-context), got \"", v, "\""));
    so->kv_window = n;
  }
  if (a.has("--moe-top-k")) {  // fewer experts per token: an explicit approximation (docs/moe.md)
    const std::string v = a.get("--moe-top-k");
    int64_t k = 0;
    auto r = std::from_chars(v.data(), v.data() + v.size(), k);
    if (r.ec != std::errc() || r.ptr != v.data() + v.size() || k < 1)
      return absl::InvalidArgumentError(StrCat("--moe-top-k takes a positive integer (experts per token), got \"", v, "\""));
    so->moe_top_k = k;
  }
  if (a.has("--moe-prefetch")) {
    const std::string v = a.get("--moe-prefetch");
    if (v != "on" && v != "off")
      return absl::InvalidArgumentError(StrCat("--moe-prefetch takes on or off, got \"", v, "\""));
    so->moe_prefetch = v == "on";
  }
  return absl::OkStatus();
}

namespace {

bool Observed(const storage::Calibration& c, storage::ObservedFigure f) {
  auto it = c.observed.find(f);
  return it != c.observed.end() && it->second.bytes_per_s > 0;
}

// "observed", "probe" or "observed+probe": where a prediction's figures came from
// (cold streaming: the disk and cold compute; warm: the warm streaming rate; and the
// resident rate when some matmul weights stay resident).
std::string SourceOf(const storage::Calibration& c, const FigureUse& use, bool cold) {
  using F = storage::ObservedFigure;
  std::vector<F> figures;
  if (use.streamed && cold) figures = {F::kDisk, F::kColdCompute};
  if (use.streamed && !cold) figures = {F::kWarmStream};
  if (use.resident) figures.push_back(F::kResident);
  int observed = 0, probe = 0;
  for (F f : figures) (Observed(c, f) ? observed : probe)++;
  return observed && probe ? "observed+probe" : observed ? "observed" : "probe";
}

// The probe's stand-in for each observed figure (what the cost model uses without one).
double ProbeFigure(const storage::Calibration& c, storage::ObservedFigure f, TensorType main) {
  auto get = [&](const std::map<TensorType, double>& m) {
    auto it = m.find(main);
    return it != m.end() ? it->second : 0.0;
  };
  switch (f) {
    case storage::ObservedFigure::kDisk: return c.disk_read_bytes_per_s;
    case storage::ObservedFigure::kColdCompute: return get(c.matmul_bytes_per_s);
    case storage::ObservedFigure::kWarmStream: return get(c.warm_stream_bytes_per_s);
    case storage::ObservedFigure::kResident: {
      double r = get(c.interleaved_bytes_per_s) > 0 ? get(c.interleaved_bytes_per_s) : get(c.matmul_bytes_per_s);
      return c.memory_bytes_per_s > 0 && r > 0 ? std::min(r, c.memory_bytes_per_s) : r;
    }
  }
  return 0;
}

void WriteFigures(JsonWriter& w, const storage::Calibration& c, TensorType main) {
  w.Key("figures").BeginObject();
  for (auto f : {storage::ObservedFigure::kDisk, storage::ObservedFigure::kColdCompute,
                 storage::ObservedFigure::kWarmStream, storage::ObservedFigure::kResident}) {
    const double probe = ProbeFigure(c, f, main);
    w.Key(storage::ObservedFigureName(f)).BeginObject();
    if (Observed(c, f)) {
      const auto& o = c.observed.at(f);
      w.Key("bytes_per_s").Double(o.bytes_per_s);
      w.Key("source").String("observed");
      w.Key("samples").Int(o.samples);
      w.Key("updated_at").String(o.updated_at);
      w.Key("low_bytes_per_s").Double(o.low());
      w.Key("high_bytes_per_s").Double(o.high());
      w.Key("recent").BeginArray();
      for (double x : o.recent) w.Double(x);
      w.EndArray();
    } else {
      w.Key("bytes_per_s").Double(probe);
      w.Key("source").String("probe");
      w.Key("samples").Int(0);
      w.Key("low_bytes_per_s").Double(probe);
      w.Key("high_bytes_per_s").Double(probe);
    }
    w.Key("probe_bytes_per_s").Double(probe);
    w.EndObject();
  }
  w.EndObject();
}

}  // namespace

int PrintDryRun(const std::string& command, const std::string& model_path, const Model& model,
                const SessionOptions& so, bool json) {
  auto sp = runtime::PlanSession(model, so);
  if (!sp.ok()) {
    std::fprintf(stderr, "uaii %s: %s\n", command.c_str(), std::string(sp.status().message()).c_str());
    return 1;
  }
  const storage::StoragePlan& p = sp->storage;
  const std::vector<TensorType> types = MatMulTypes(*sp);
  std::error_code ec;
  const std::string probe = std::filesystem::is_regular_file(model_path, ec) ? model_path : std::string();
  auto cal = storage::LoadOrMeasureCalibration(CacheDir(), sp->threads, types, probe,
                                               storage::ModelCalibrationKey(model_path));
  storage::CostPrediction pred, probe_pred, low_pred, high_pred;
  // Resident matmul weights run the interleaved group kernels where their type has
  // them (repacked at load: runtime/session.cpp through the mapping, in place when
  // pinned: runtime/streamed_weights.cpp); streamed slices run row-major MatMul.
  // `pred` uses what this model's earlier runs observed where there is something,
  // `probe_pred` the probes alone (what a first run is told).
  if (cal.ok()) {
    pred = storage::PredictDecode(sp->inputs, sp->tensor_types, p, storage::RatesOf(*cal),
                                  /*resident_interleaved=*/true);
    probe_pred = storage::PredictDecode(sp->inputs, sp->tensor_types, p, storage::RatesOf(*cal, false),
                                        /*resident_interleaved=*/true);
    // The range: every observed figure at the slowest, then the fastest, of its
    // recent runs (a figure from a probe has no spread).
    low_pred = storage::PredictDecode(sp->inputs, sp->tensor_types, p,
                                      storage::RatesOf(*cal, true, storage::Spread::kLow), true);
    high_pred = storage::PredictDecode(sp->inputs, sp->tensor_types, p,
                                       storage::RatesOf(*cal, true, storage::Spread::kHigh), true);
    if (!cal->note.empty()) std::fprintf(stderr, "uaii %s: calibration: %s\n", command.c_str(), cal->note.c_str());
  }
  const FigureUse use = UseOf(*sp);
  const TensorType main_type = types.empty() ? TensorType::Q4_0 : types[0];
  int pinned_tensors = 0, streamed_tensors = 0;
  for (auto r : p.residency) (r == storage::Residency::kPinned ? pinned_tensors : streamed_tensors)++;
  if (json) {
    JsonWriter w(2);
    w.BeginObject();
    w.Key("model").String(model_path);
    w.Key("preset").String(storage::PresetName(sp->preset.preset));
    w.Key("budget_bytes").Uint(p.budget_bytes);
    w.Key("streaming").Bool(p.streaming);
    w.Key("threads").Int(sp->threads);
    w.Key("weights_bytes").Uint(p.pinned_bytes + p.streamed_bytes);
    w.Key("pinned").BeginObject();
    w.Key("bytes").Uint(p.pinned_bytes);
    w.Key("layers").Int(p.pinned_layers);
    w.Key("n_layers").Int(p.n_layers);
    w.Key("embeddings").Bool(p.embeddings_pinned);
    w.Key("lm_head").Bool(p.lm_head_pinned);
    w.Key("tensors").BeginArray();
    for (size_t i = 0; i < p.residency.size(); ++i)
      if (p.residency[i] == storage::Residency::kPinned) w.String(sp->inputs.tensors[i].name);
    w.EndArray();
    w.EndObject();
    w.Key("streamed").BeginObject();
    w.Key("bytes").Uint(p.streamed_bytes);
    w.Key("bytes_per_token").Uint(p.streamed_bytes_per_token);
    w.Key("tensors").Int(streamed_tensors);
    w.EndObject();
    w.Key("staging").BeginObject();
    w.Key("buffers").Int(p.staging_buffers);
    w.Key("bytes_each").Uint(p.staging_bytes);
    w.EndObject();
    w.Key("kv").BeginObject();
    w.Key("bytes").Uint(p.kv_bytes);
    w.Key("window").Int(sp->kv_window);
    w.Key("sinks").Int(sp->kv_sinks);
    w.Key("cells").Int(sp->kv_cells);
    w.Key("max_context").Int(sp->max_context);
    w.EndObject();
    w.Key("activation_bytes").Uint(p.activation_bytes);
    w.Key("minimum_bytes").Uint(p.minimum_bytes);
    w.Key("expected_peak_bytes").Uint(p.expected_peak_bytes);
    WriteExpertPlan(w, p);
    w.Key("calibration");
    if (cal.ok()) {
      w.BeginObject();
      w.Key("disk_read_bytes_per_s").Double(cal->disk_read_bytes_per_s);
      w.Key("cached_read_bytes_per_s").Double(cal->cached_read_bytes_per_s);
      w.Key("memory_bytes_per_s").Double(cal->memory_bytes_per_s);
      w.Key("matmul_bytes_per_s").Double(cal->main_matmul_bytes_per_s);
      w.Key("matmul").BeginObject();
      for (const auto& [t, r] : cal->matmul_bytes_per_s) w.Key(TensorTypeName(static_cast<uint32_t>(t))).Double(r);
      w.EndObject();
      w.Key("matmul_interleaved").BeginObject();
      for (const auto& [t, r] : cal->interleaved_bytes_per_s)
        w.Key(TensorTypeName(static_cast<uint32_t>(t))).Double(r);
      w.EndObject();
      w.Key("matmul_key").String(cal->matmul_key);
      w.Key("threads").Int(cal->threads);
      w.Key("cores").Int(cal->cores);
      w.Key("measured_at").String(cal->measured_at);
      w.Key("cached").Bool(cal->from_cache);
      w.Key("observed_key").String(cal->observed_key);
      WriteFigures(w, *cal, main_type);
      if (!cal->note.empty()) w.Key("note").String(cal->note);
      w.EndObject();
    } else {
      w.Null();
    }
    w.Key("prediction").BeginObject();
    w.Key("decode_tokens_per_s_cold").Double(pred.tokens_per_s_cold);
    w.Key("decode_tokens_per_s_warm").Double(pred.tokens_per_s_warm);
    w.Key("io_seconds_per_token").Double(pred.io_seconds);
    w.Key("io_cached_seconds_per_token").Double(pred.io_cached_seconds);
    w.Key("compute_seconds_per_token").Double(pred.compute_seconds);
    w.Key("resident_seconds_per_token").Double(pred.resident_seconds);
    w.Key("token_seconds_cold").Double(pred.token_seconds_cold);
    w.Key("token_seconds_warm").Double(pred.token_seconds_warm);
    w.Key("io_wait_seconds_cold").Double(pred.io_wait_seconds_cold);
    w.Key("io_wait_seconds_warm").Double(pred.io_wait_seconds_warm);
    if (cal.ok()) {
      w.Key("source_cold").String(SourceOf(*cal, use, /*cold=*/true));
      w.Key("source_warm").String(SourceOf(*cal, use, /*cold=*/false));
    }
    w.Key("range").BeginObject();
    w.Key("decode_tokens_per_s_cold_low").Double(low_pred.tokens_per_s_cold);
    w.Key("decode_tokens_per_s_cold_high").Double(high_pred.tokens_per_s_cold);
    w.Key("decode_tokens_per_s_warm_low").Double(low_pred.tokens_per_s_warm);
    w.Key("decode_tokens_per_s_warm_high").Double(high_pred.tokens_per_s_warm);
    w.EndObject();
    w.Key("probe").BeginObject();
    w.Key("decode_tokens_per_s_cold").Double(probe_pred.tokens_per_s_cold);
    w.Key("decode_tokens_per_s_warm").Double(probe_pred.tokens_per_s_warm);
    w.Key("token_seconds_cold").Double(probe_pred.token_seconds_cold);
    w.Key("token_seconds_warm").Double(probe_pred.token_seconds_warm);
    w.EndObject();
    w.EndObject();
    w.EndObject();
    std::printf("%s\n", w.str().c_str());
    return 0;
  }
  using storage::FormatBytes;
  std::printf("model:          %s\n", model_path.c_str());
  std::printf("preset:         %s, budget %s%s\n", std::string(storage::PresetName(sp->preset.preset)).c_str(),
              p.budget_bytes ? FormatBytes(p.budget_bytes).c_str() : "unlimited",
              p.streaming ? ", streaming" : ", everything resident");
  std::printf("pinned:         %s in %d tensors (layers %d of %d, embeddings %s, lm_head %s)\n",
              FormatBytes(p.pinned_bytes).c_str(), pinned_tensors, p.pinned_layers, p.n_layers,
              p.embeddings_pinned ? "yes" : "no", p.lm_head_pinned ? "yes" : "no");
  std::printf("streamed:       %s in %d tensors, %s read per token\n", FormatBytes(p.streamed_bytes).c_str(),
              streamed_tensors, FormatBytes(p.streamed_bytes_per_token).c_str());
  std::printf("staging:        %d x %s\n", p.staging_buffers, FormatBytes(p.staging_bytes).c_str());
  std::printf("KV cache:       %s (%s, max context %lld)\n", FormatBytes(p.kv_bytes).c_str(),
              sp->kv_window ? StrCat("window ", sp->kv_window, " + ", sp->kv_sinks, " sinks").c_str() : "unbounded",
              (long long)sp->max_context);
  std::printf("activations:    %s\n", FormatBytes(p.activation_bytes).c_str());
  if (p.expert_bytes > 0) {
    std::printf("experts:        %s in banks; %s, top-%lld of the file's %lld per token: %s read per token "
                "when every expert misses",
                FormatBytes(p.expert_bytes).c_str(),
                p.expert_cache_bytes ? StrCat("LRU of ", FormatBytes(p.expert_cache_bytes)).c_str()
                                     : "read through the mapping",
                (long long)p.moe_top_k, (long long)p.moe_top_k_file, FormatBytes(p.expert_bytes_per_token).c_str());
    if (p.moe_top_k < p.moe_top_k_file)
      std::printf(" (APPROXIMATE: --moe-top-k; %s at the file's top-%lld)", FormatBytes(p.expert_bytes_per_token_file_k).c_str(),
                  (long long)p.moe_top_k_file);
    std::printf("\n");
  }
  std::printf("expected peak:  %s (minimum %s) plus the process's fixed overhead\n",
              FormatBytes(p.expected_peak_bytes).c_str(), FormatBytes(p.minimum_bytes).c_str());
  if (cal.ok()) {
    std::printf("predicted:      %.2f tok/s decode cold, %.2f warm (disk %.0f MB/s, page cache %.0f MB/s, "
                "matmul %.0f MB/s%s)\n",
                pred.tokens_per_s_cold, pred.tokens_per_s_warm, storage::RatesOf(*cal).disk_bytes_per_s / 1e6,
                cal->cached_read_bytes_per_s / 1e6, cal->main_matmul_bytes_per_s / 1e6,
                cal->from_cache ? ", cached calibration" : "");
    std::string learned;
    for (const auto& [f, o] : cal->observed) {
      learned += StrCat(learned.empty() ? "" : ", ", storage::ObservedFigureName(f), " ",
                        static_cast<int64_t>(o.bytes_per_s / 1e6), " MB/s");
      if (o.recent.size() > 1)
        learned += StrCat(" (", static_cast<int64_t>(o.low() / 1e6), "-", static_cast<int64_t>(o.high() / 1e6),
                          " over the last ", o.recent.size(), " of ", o.samples, " runs)");
      else
        learned += StrCat(" (", o.samples, " run", o.samples == 1 ? "" : "s", ")");
    }
    if (learned.empty()) {
      std::printf("                from the probes alone (this model's runs refine them)\n");
    } else {
      std::printf("                range from the observed runs' spread: %.2f-%.2f cold, %.2f-%.2f warm\n",
                  low_pred.tokens_per_s_cold, high_pred.tokens_per_s_cold, low_pred.tokens_per_s_warm,
                  high_pred.tokens_per_s_warm);
      std::printf("                observed on this model's runs: %s; probes alone: %.2f cold, %.2f warm\n",
                  learned.c_str(), probe_pred.tokens_per_s_cold, probe_pred.tokens_per_s_warm);
    }
  } else
    std::printf("predicted:      no calibration (%s)\n", std::string(cal.status().message()).c_str());
  return 0;
}

void WriteExpertPlan(JsonWriter& w, const storage::StoragePlan& p) {
  w.Key("expert_cache");
  if (p.expert_bytes == 0) {
    w.Null();
    return;
  }
  w.BeginObject();
  w.Key("capacity_bytes").Uint(p.expert_cache_bytes);
  w.Key("expert_bytes").Uint(p.expert_bytes);
  w.Key("step_bytes").Uint(p.expert_step_bytes);
  w.Key("top_k").Int(p.moe_top_k);
  w.Key("top_k_file").Int(p.moe_top_k_file);
  w.Key("exact").Bool(p.moe_top_k == p.moe_top_k_file);
  w.Key("bytes_per_token_max").Uint(p.expert_bytes_per_token);
  w.Key("bytes_per_token_max_file_k").Uint(p.expert_bytes_per_token_file_k);
  w.Key("prefetch").Bool(p.expert_prefetch);
  w.EndObject();
}

void WriteStorageMemory(JsonWriter& w, const StorageStats& s) {
  w.Key("budget_bytes").Uint(s.budget_bytes);
  w.Key("pinned_bytes").Uint(s.pinned_bytes);
  w.Key("streamed_bytes").Uint(s.streamed_bytes);
  w.Key("staging_bytes").Uint(s.staging_bytes);
  w.Key("kv_bytes").Uint(s.kv_bytes);
  w.Key("kv_window").Int(s.kv_window);
  w.Key("bytes_read").Uint(s.bytes_read);
  w.Key("io_wait_seconds").Double(s.io_wait_seconds);
  w.Key("compute_seconds").Double(s.compute_seconds);
  w.Key("staging_hits").Uint(s.staging_hits);
  w.Key("staging_misses").Uint(s.staging_misses);
  w.Key("read_seconds").Double(s.read_seconds);
  w.Key("direct_bytes").Uint(s.direct_bytes);
  w.Key("cached_bytes").Uint(s.cached_bytes);
  if (s.expert_cache_bytes > 0) {  // the expert LRU of a MoE model under a budget (docs/moe.md)
    const uint64_t lookups = s.expert_hits + s.expert_misses;
    w.Key("expert_cache").BeginObject();
    w.Key("capacity_bytes").Uint(s.expert_cache_bytes);
    w.Key("hit_rate").Double(lookups ? double(s.expert_hits) / double(lookups) : 0.0);
    w.Key("hits").Uint(s.expert_hits);
    w.Key("misses").Uint(s.expert_misses);
    w.Key("bytes_read").Uint(s.expert_bytes_read);
    w.Key("bytes_read_per_token").Double(s.decode_tokens ? double(s.expert_decode_bytes_read) / double(s.decode_tokens)
                                                         : 0.0);
    w.Key("io_wait_s").Double(s.expert_io_wait_seconds);
    w.Key("io").String(s.expert_io_uring ? "io_uring" : "pread");
    w.Key("prefetch").BeginObject();
    w.Key("enabled").Bool(s.expert_prefetch);
    w.Key("reads").Uint(s.expert_prefetch_reads);
    w.Key("hits").Uint(s.expert_prefetch_hits);
    w.Key("wasted").Uint(s.expert_prefetch_wasted);
    w.EndObject();
    w.EndObject();
  }
}

std::string RecordRunObservation(const std::string& model_path, const Model& model, const SessionOptions& so,
                                 const StorageStats& st, const DecodeTimings& decode) {
  return LearnFromGeneration(CacheDir(), model_path, model, so, st, decode);
}

}  // namespace uaii::cli
