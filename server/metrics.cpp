#include "metrics.h"

#include <unistd.h>

#include <cstdio>

#include "uaii/str_cat.h"

namespace uaii::server {
namespace {

// One metric: its HELP and TYPE lines, then the sample.
void Metric(std::string& out, std::string_view name, std::string_view type, std::string_view help, double value,
            std::string_view labels = "") {
  out += StrCat("# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n", name, labels, " ", value, "\n");
}

// A label value, escaped as the text format asks (backslash, quote, newline).
std::string LabelValue(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') { out += "\\n"; continue; }
    out += c;
  }
  return out;
}

}  // namespace

void Metrics::CountRequest(std::string_view route, int status) {
  std::lock_guard<std::mutex> l(mu_);
  ++requests_[{std::string(route), status}];
}

void Metrics::CountTokens(int64_t prompt, int64_t cached, int64_t generated, int64_t reasoning) {
  std::lock_guard<std::mutex> l(mu_);
  prompt_ += prompt;
  cached_ += cached;
  generated_ += generated;
  reasoning_ += reasoning;
}

void Metrics::TokenGenerated() {
  const int64_t sec = std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - start_).count();
  std::lock_guard<std::mutex> l(mu_);
  auto& bucket = per_second_[sec % per_second_.size()];
  if (bucket.first != sec) bucket = {sec, 0};
  ++bucket.second;
}

double Metrics::RecentTokensPerSecond() const {
  const double now = std::chrono::duration<double>(Clock::now() - start_).count();
  const int64_t sec = static_cast<int64_t>(now);
  std::lock_guard<std::mutex> l(mu_);
  // The last kWindowSeconds whole seconds, and the current one's share; a server
  // younger than the window divides by its age.
  int64_t tokens = 0;
  for (const auto& [s, n] : per_second_)
    if (s <= sec && s > sec - kWindowSeconds - 1) tokens += n;
  const double span = std::min(now, kWindowSeconds + (now - sec));
  return span > 0 ? tokens / span : 0;
}

std::string Metrics::Prometheus(const Gauges& g) const {
  std::string out;
  {
    std::lock_guard<std::mutex> l(mu_);
    out += "# HELP uaii_requests_total Requests answered, by route and HTTP status (499: the client left).\n"
           "# TYPE uaii_requests_total counter\n";
    for (const auto& [key, n] : requests_)
      out += StrCat("uaii_requests_total{route=\"", LabelValue(key.first), "\",code=\"", key.second, "\"} ", n, "\n");
    Metric(out, "uaii_prompt_tokens_total", "counter", "Prompt tokens of finished generations.", prompt_);
    Metric(out, "uaii_cached_prompt_tokens_total", "counter", "Of those, tokens reused from a slot's KV cache.", cached_);
    Metric(out, "uaii_generated_tokens_total", "counter", "Tokens generated.", generated_);
    Metric(out, "uaii_reasoning_tokens_total", "counter", "Of those, tokens inside reasoning blocks.", reasoning_);
  }
  Metric(out, "uaii_generation_tokens_per_second", "gauge",
         "Tokens generated per second over the last seconds, all slots together.", RecentTokensPerSecond());
  Metric(out, "uaii_model_loaded", "gauge", "1 once the model is loaded and the server answers.", g.loaded ? 1 : 0);
  Metric(out, "uaii_model_info", "gauge", "The model served and its device (labels).", 1,
         StrCat("{model=\"", LabelValue(g.model), "\",device=\"", LabelValue(g.device), "\"}"));
  Metric(out, "uaii_slots", "gauge", "Slots (concurrent generations).", g.slots);
  Metric(out, "uaii_requests_active", "gauge", "Requests generating now.", g.busy);
  Metric(out, "uaii_requests_queued", "gauge", "Requests waiting for a slot.", g.queued);
  Metric(out, "uaii_process_resident_memory_bytes", "gauge", "Resident set of the server process.",
         static_cast<double>(g.rss_bytes));
  Metric(out, "uaii_forward_passes_total", "counter", "Batched forward passes run over the slots' steps.",
         static_cast<double>(g.batch.passes));
  Metric(out, "uaii_batched_steps_total", "counter",
         "Slot steps (decode tokens, prefill chunks) those passes held: steps / passes is the mean batch.",
         static_cast<double>(g.batch.steps));
  Metric(out, "uaii_batch_max", "gauge", "The most slot steps one pass has held.", static_cast<double>(g.batch.max_batch));
  const StorageStats& s = g.storage;
  Metric(out, "uaii_memory_budget_bytes", "gauge", "The memory budget (0: none).", static_cast<double>(s.budget_bytes));
  Metric(out, "uaii_weights_pinned_bytes", "gauge", "Weights held in memory.", static_cast<double>(s.pinned_bytes));
  Metric(out, "uaii_weights_streamed_bytes", "gauge", "Weights left on disk, streamed per pass.",
         static_cast<double>(s.streamed_bytes));
  Metric(out, "uaii_kv_cache_bytes", "gauge", "KV caches of all slots, as allocated.", static_cast<double>(s.kv_bytes));
  Metric(out, "uaii_kv_window", "gauge", "Resident KV positions per slot (0: unbounded).", static_cast<double>(s.kv_window));
  Metric(out, "uaii_weight_bytes_read_total", "counter", "Weight bytes streamed from disk.",
         static_cast<double>(s.bytes_read));
  Metric(out, "uaii_expert_cache_hits_total", "counter", "Expert slices found in the expert cache.",
         static_cast<double>(s.expert_hits));
  Metric(out, "uaii_expert_cache_misses_total", "counter", "Expert slices read from disk.",
         static_cast<double>(s.expert_misses));
  return out;
}

int64_t CurrentRssBytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  long long pages = 0, resident = 0;
  const int n = std::fscanf(f, "%lld %lld", &pages, &resident);
  std::fclose(f);
  return n == 2 ? resident * static_cast<int64_t>(sysconf(_SC_PAGESIZE)) : 0;
}

}  // namespace uaii::server
