// Sharded checkpoints: `model.safetensors.index.json` (or any `*.safetensors.index.json`)
//   {"metadata": {"total_size": N}, "weight_map": {"tensor name": "model-00001-of-00002.safetensors"}}
// Shard names are validated as plain relative paths inside the model directory.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace uaii::safetensors {

struct Index {
  uint64_t total_size = 0;                                      // metadata.total_size, 0 if absent
  std::vector<std::pair<std::string, std::string>> weight_map;  // tensor -> shard, file order
  std::vector<std::string> shards;                              // distinct shard names, sorted
};

// True for a relative path with no "..", ".", empty or absolute component and no
// backslash: safe to join to a directory. (Also used by `uaii pull` for Hub file names.)
bool IsSafeRelativePath(std::string_view p);

absl::StatusOr<Index> ParseIndex(std::string_view json, std::string_view origin);

}  // namespace uaii::safetensors
