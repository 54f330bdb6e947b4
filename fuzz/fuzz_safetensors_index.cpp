// A sharded checkpoint's model.safetensors.index.json (lib/loaders safetensors_index
// ParseIndex), with its shard names checked as safe relative paths. Input: the JSON.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "fuzz_util.h"
#include "loaders/safetensors_index.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace uaii;
  auto index = safetensors::ParseIndex(fuzz::AsText(data, size), "fuzz/model.safetensors.index.json");
  if (!index.ok()) return 0;
  // Contract: every shard an accepted index names stays inside the model directory.
  for (const auto& shard : index->shards) {
    if (!safetensors::IsSafeRelativePath(shard)) {
      std::fprintf(stderr, "accepted index names an unsafe shard path\n");
      std::abort();
    }
  }
  return 0;
}
