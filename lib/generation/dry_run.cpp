// PlanDryRun (uaii/plan.h): the session plan (runtime/session_plan.h), the storage
// cost model's predictions from the calibration cache, and the plan as JSON
// (docs/json/dry_run.schema.json) and as the text `uaii generate --dry-run` prints.
#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <map>
#include <vector>

#include "backends/registry.h"
#include "generation/run_observation.h"
#include "runtime/model_impl.h"
#include "runtime/session_plan.h"
#include "storage/calibration.h"
#include "storage/plan.h"
#include "uaii/json_writer.h"
#include "uaii/model_locator.h"
#include "uaii/plan.h"
#include "uaii/str_cat.h"

namespace uaii {
namespace {

// printf into a string: the text report is built as `uaii generate --dry-run` prints it.
[[gnu::format(printf, 2, 3)]] void Appendf(std::string& out, const char* fmt, ...) {
  va_list ap, again;
  va_start(ap, fmt);
  va_copy(again, ap);
  const int n = std::vsnprintf(nullptr, 0, fmt, ap);
  va_end(ap);
  if (n > 0) {
    const size_t at = out.size();
    out.resize(at + static_cast<size_t>(n) + 1);
    std::vsnprintf(out.data() + at, static_cast<size_t>(n) + 1, fmt, again);
    out.resize(at + static_cast<size_t>(n));
  }
  va_end(again);
}

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

// The dry run's `expert_cache` (null without expert banks).
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

}  // namespace

absl::StatusOr<DryRun> PlanDryRun(const Model& model, const SessionOptions& so) {
  auto sp = runtime::PlanSession(model, so);
  if (!sp.ok()) return sp.status();
  const std::string& model_path = model.info().path;
  DryRun out;
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
    out.note = cal->note;
  }
  // A GPU device: where its weights go under the device budget (no upload).
  std::string device_name = "cpu";
  backends::DevicePlacement placed;
  if (auto backend = backends::SelectBackend(so.device); backend.ok() && *backend != &backends::Cpu()) {
    device_name = (*backend)->device();
    backends::CompileOptions copts;
    copts.device_memory_bytes = so.device_memory_bytes;
    const auto& internals = ModelInternals::Of(model);
    auto pl = (*backend)->PlanPlacement(internals.graph, *internals.weights, copts);
    if (!pl.ok()) return pl.status();
    placed = *pl;
  }
  const FigureUse use = UseOf(*sp);
  const TensorType main_type = types.empty() ? TensorType::Q4_0 : types[0];
  int pinned_tensors = 0, streamed_tensors = 0;
  for (auto r : p.residency) (r == storage::Residency::kPinned ? pinned_tensors : streamed_tensors)++;
  MemoryPlan& m = out.plan;
  m.preset = so.preset;
  m.budget_bytes = p.budget_bytes;
  m.streaming = p.streaming;
  m.threads = sp->threads;
  m.weights_bytes = p.pinned_bytes + p.streamed_bytes;
  m.pinned_bytes = p.pinned_bytes;
  m.streamed_bytes = p.streamed_bytes;
  m.streamed_bytes_per_token = p.streamed_bytes_per_token;
  m.staging_buffers = p.staging_buffers;
  m.staging_bytes_each = p.staging_bytes;
  m.kv_bytes = p.kv_bytes;
  m.kv_window = sp->kv_window;
  m.kv_sinks = sp->kv_sinks;
  m.max_context = sp->max_context;
  m.activation_bytes = p.activation_bytes;
  m.expert_cache_bytes = p.expert_cache_bytes;
  m.minimum_bytes = p.minimum_bytes;
  m.expected_peak_bytes = p.expected_peak_bytes;
  m.calibrated = cal.ok();
  m.decode_tokens_per_s_cold = pred.tokens_per_s_cold;
  m.decode_tokens_per_s_warm = pred.tokens_per_s_warm;
  {
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
    w.Key("device").BeginObject().Key("name").String(device_name);
    if (device_name != "cpu") {
      w.Key("budget_bytes").Uint(placed.budget_bytes).Key("resident_bytes").Uint(placed.resident_bytes);
      w.Key("host_bytes").Uint(placed.host_bytes).Key("host_weights").Int(placed.host_weights);
      w.Key("staging_bytes").Uint(placed.staging_bytes);
      w.Key("requantized_weights").Int(placed.requantized_weights);
    }
    w.EndObject();
    w.EndObject();
    out.json = w.str();
  }
  using storage::FormatBytes;
  std::string& t = out.text;
  Appendf(t, "model:          %s\n", model_path.c_str());
  Appendf(t, "preset:         %s, budget %s%s\n", std::string(storage::PresetName(sp->preset.preset)).c_str(),
              p.budget_bytes ? FormatBytes(p.budget_bytes).c_str() : "unlimited",
              p.streaming ? ", streaming" : ", everything resident");
  Appendf(t, "pinned:         %s in %d tensors (layers %d of %d, embeddings %s, lm_head %s)\n",
              FormatBytes(p.pinned_bytes).c_str(), pinned_tensors, p.pinned_layers, p.n_layers,
              p.embeddings_pinned ? "yes" : "no", p.lm_head_pinned ? "yes" : "no");
  Appendf(t, "streamed:       %s in %d tensors, %s read per token\n", FormatBytes(p.streamed_bytes).c_str(),
              streamed_tensors, FormatBytes(p.streamed_bytes_per_token).c_str());
  Appendf(t, "staging:        %d x %s\n", p.staging_buffers, FormatBytes(p.staging_bytes).c_str());
  Appendf(t, "KV cache:       %s (%s, max context %lld)\n", FormatBytes(p.kv_bytes).c_str(),
              sp->kv_window ? StrCat("window ", sp->kv_window, " + ", sp->kv_sinks, " sinks").c_str() : "unbounded",
              (long long)sp->max_context);
  Appendf(t, "activations:    %s\n", FormatBytes(p.activation_bytes).c_str());
  if (device_name != "cpu")
    Appendf(t, "device:         %s: %s of weights in its memory (budget %s), %s in %d weights in host memory "
                "%s%s\n",
                device_name.c_str(), FormatBytes(placed.resident_bytes).c_str(), FormatBytes(placed.budget_bytes).c_str(),
                FormatBytes(placed.host_bytes).c_str(), placed.host_weights,
                placed.staging_bytes
                    ? StrCat("(products' weights streamed per use through a ", FormatBytes(placed.staging_bytes),
                             " staging buffer, the rest read across the bus)").c_str()
                    : "read across the bus",
                placed.requantized_weights ? StrCat(", ", placed.requantized_weights, " requantized to Q8_0").c_str() : "");
  if (p.expert_bytes > 0) {
    Appendf(t, "experts:        %s in banks; %s, top-%lld of the file's %lld per token: %s read per token "
                "when every expert misses",
                FormatBytes(p.expert_bytes).c_str(),
                p.expert_cache_bytes ? StrCat("LRU of ", FormatBytes(p.expert_cache_bytes)).c_str()
                                     : "read through the mapping",
                (long long)p.moe_top_k, (long long)p.moe_top_k_file, FormatBytes(p.expert_bytes_per_token).c_str());
    if (p.moe_top_k < p.moe_top_k_file)
      Appendf(t, " (APPROXIMATE: --moe-top-k; %s at the file's top-%lld)", FormatBytes(p.expert_bytes_per_token_file_k).c_str(),
                  (long long)p.moe_top_k_file);
    Appendf(t, "\n");
  }
  Appendf(t, "expected peak:  %s (minimum %s) plus the process's fixed overhead\n",
              FormatBytes(p.expected_peak_bytes).c_str(), FormatBytes(p.minimum_bytes).c_str());
  if (cal.ok()) {
    Appendf(t, "predicted:      %.2f tok/s decode cold, %.2f warm (disk %.0f MB/s, page cache %.0f MB/s, "
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
      Appendf(t, "                from the probes alone (this model's runs refine them)\n");
    } else {
      Appendf(t, "                range from the observed runs' spread: %.2f-%.2f cold, %.2f-%.2f warm\n",
                  low_pred.tokens_per_s_cold, high_pred.tokens_per_s_cold, low_pred.tokens_per_s_warm,
                  high_pred.tokens_per_s_warm);
      Appendf(t, "                observed on this model's runs: %s; probes alone: %.2f cold, %.2f warm\n",
                  learned.c_str(), probe_pred.tokens_per_s_cold, probe_pred.tokens_per_s_warm);
    }
  } else
    Appendf(t, "predicted:      no calibration (%s)\n", std::string(cal.status().message()).c_str());
  return out;
}

}  // namespace uaii
