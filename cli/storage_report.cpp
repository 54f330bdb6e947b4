#include "storage_report.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>

#include "uaii/model_locator.h"
#include "uaii/plan.h"
#include "uaii/str_cat.h"

namespace uaii::cli {

absl::Status MemoryOptionsFromArgs(const Args& a, SessionOptions* so) {
  auto preset = ParsePreset(a.get("--preset", "laptop"));
  if (!preset.ok()) return preset.status();
  so->preset = *preset;
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
    if (!ParseNumber(v, &n) || n < 0)
      return absl::InvalidArgumentError(
          StrCat("--kv-window takes a non-negative integer (0: unbounded up to --max-context), got \"", v, "\""));
    so->kv_window = n;
  }
  if (a.has("--moe-top-k")) {  // fewer experts per token: an explicit approximation (docs/moe.md)
    const std::string v = a.get("--moe-top-k");
    int64_t k = 0;
    if (!ParseNumber(v, &k) || k < 1)
      return absl::InvalidArgumentError(StrCat("--moe-top-k takes a positive integer (experts per token), got \"", v, "\""));
    so->moe_top_k = k;
  }
  // auto: the first real GPU, else the CPU (backends/registry.h); `uaii devices` lists them.
  so->device = a.get("--device", "auto");
  if (so->device.empty()) return absl::InvalidArgumentError("--device takes auto, cpu or vulkan[:N]");
  if (a.has("--vram-gb")) {  // the GPU's memory for the weights; the rest stays in host memory
    const std::string v = a.get("--vram-gb");
    char* end = nullptr;
    const double gb = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !(gb > 0) || gb > 1e6)
      return absl::InvalidArgumentError(StrCat("--vram-gb takes a positive number of GiB, got \"", v, "\""));
    so->device_memory_bytes = static_cast<uint64_t>(gb * double(uint64_t{1} << 30));
  }
  if (a.has("--moe-prefetch")) {
    const std::string v = a.get("--moe-prefetch");
    if (v != "on" && v != "off")
      return absl::InvalidArgumentError(StrCat("--moe-prefetch takes on or off, got \"", v, "\""));
    so->moe_prefetch = v == "on";
  }
  return absl::OkStatus();
}

int PrintDryRun(const std::string& command, const Model& model, const SessionOptions& so, bool json) {
  auto dry = PlanDryRun(model, so);
  if (!dry.ok()) {
    std::fprintf(stderr, "uaii %s: %s\n", command.c_str(), std::string(dry.status().message()).c_str());
    return 1;
  }
  if (!dry->note.empty()) std::fprintf(stderr, "uaii %s: calibration: %s\n", command.c_str(), dry->note.c_str());
  if (json)
    std::printf("%s\n", dry->json.c_str());
  else
    std::fputs(dry->text.c_str(), stdout);
  return 0;
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
                                 const StorageStats& st, const DecodeTimings& decode, const std::string& device) {
  // The figures are the CPU kernels' and the storage engine's: a GPU run teaches them nothing.
  if (device != "cpu") return "";
  return LearnFromGeneration(CacheDir(), model_path, model, so, st, decode);
}

}  // namespace uaii::cli
