// uaii::hub::Pull: downloads a Hugging Face model repository into a directory; or,
// DryRun: reads only config.json and the safetensors headers (HTTP range requests)
// and says whether the model is supported and fits a memory preset. `uaii pull`.
//
// Safety: every listed file name must be a plain relative path (no absolute path, no
// ".." or "." component, no backslash); nothing is written through a symlink; files
// land as NAME.partial and are renamed only after their size and SHA-256 (the Hub's
// lfs.sha256 when listed) check out. A mismatch deletes the partial file.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace uaii::hub {

inline constexpr std::string_view kDefaultHubEndpoint = "https://huggingface.co";

struct PullOptions {
  std::string repo;                   // "org/name"
  std::string revision = "main";
  std::vector<std::string> includes;  // fnmatch patterns over rfilename; empty = default set
  std::string outdir;
  std::string endpoint = std::string(kDefaultHubEndpoint);  // HF_ENDPOINT
  std::string token;                  // HF_TOKEN
  std::string preset = "laptop";      // dry run only
  int max_attempts = 5;               // per file, resuming each time
  bool progress = true;               // progress bar on stderr
};

struct PulledFile {
  std::string path;   // relative to outdir
  uint64_t bytes = 0;
  std::string sha256; // verified digest ("" when the Hub lists none and the size was checked)
  bool already_present = false;
  int attempts = 0;
};

struct PullResult {
  std::string commit;  // the listing's sha
  std::vector<PulledFile> files;
};

absl::StatusOr<PullResult> Pull(const PullOptions& opts);

// Will a model fit a memory preset? Weights plus the KV cache of the preset's window,
// against the preset's resident target (an estimate before anything large is read).
struct FitEstimate {
  uint64_t weight_bytes = 0;  // as the runtime holds them (I8/U8 widened to f32)
  uint64_t kv_bytes = 0;      // f16 K and V over the window (sliding layers: their window)
  uint64_t total_bytes = 0;
  uint64_t budget_bytes = 0;  // 0 = unlimited
  int64_t kv_window = 0;
  bool fits = true;
};

struct DryRunReport {
  std::string commit;
  uint64_t files = 0;
  uint64_t download_bytes = 0;     // listed sizes of the selected files (known ones)
  uint64_t header_bytes_read = 0;  // what the dry run fetched from safetensors files
  std::vector<std::string> weight_files;
  bool supported = false;
  std::string family, variant;
  std::string reason;              // why not supported ("" when supported)
  std::string preset;
  FitEstimate fit;
};

absl::StatusOr<DryRunReport> DryRun(const PullOptions& opts);

}  // namespace uaii::hub
