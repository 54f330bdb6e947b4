// `uaii pull`: downloads a Hugging Face model repository into a directory, or, with
// dry_run, reads only config.json and the safetensors headers (HTTP range requests)
// and says whether the model is supported and fits a memory preset.
//
// Safety: every listed file name must be a plain relative path (no absolute path, no
// ".." or "." component, no backslash); nothing is written through a symlink; files
// land as NAME.partial and are renamed only after their size and SHA-256 (the Hub's
// lfs.sha256 when listed) check out. A mismatch deletes the partial file.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hub/fit.h"
#include "hub/hub_api.h"

namespace uaii::hub {

struct PullOptions {
  std::string repo;                   // "org/name"
  std::string revision = "main";
  std::vector<std::string> includes;  // fnmatch patterns over rfilename; empty = default set
  std::string outdir;
  std::string endpoint = std::string(kDefaultEndpoint);  // HF_ENDPOINT
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

// Without --include: every file except weights in other formats when safetensors are
// present (*.bin, *.pth, *.pt, *.h5, *.msgpack, *.onnx, *.gguf, *.ot, original/*).
std::vector<HubFile> SelectFiles(const std::vector<HubFile>& all, const std::vector<std::string>& includes);

// Checks every listed name (the whole listing, before any download).
absl::Status ValidateListing(const RepoListing& listing);

absl::StatusOr<PullResult> Pull(const PullOptions& opts);

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
