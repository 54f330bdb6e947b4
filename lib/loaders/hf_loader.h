// HfLoader: a Hugging Face model directory (config.json + safetensors weights, single
// or sharded through *.safetensors.index.json) -> HfModel (hf_model.h). Every file is
// memory-mapped and validated; no weight byte is copied or read.
#pragma once
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "loaders/hf_model.h"

namespace uaii::hf {

// True when `path` is a directory holding config.json.
bool IsHfDirectory(const std::string& path);

// The weight files of `dir`, in load order, and the index they came from ("" when a
// single file): model.safetensors.index.json, else the only *.safetensors.index.json,
// else model.safetensors, else the only *.safetensors. PyTorch .bin / .pt checkpoints
// are refused with the advice to convert.
struct WeightFiles {
  std::vector<std::string> files;  // absolute paths
  std::string index;               // absolute path of the index, or ""
};
absl::StatusOr<WeightFiles> FindWeightFiles(const std::string& dir);

// Loads and validates everything; see hf_family.h for the failure modes. The result
// may have arch.runnable == false (gpt_oss): inspect describes it, CheckRunnable refuses.
absl::StatusOr<HfModel> LoadHfModel(const std::string& dir);

}  // namespace uaii::hf
