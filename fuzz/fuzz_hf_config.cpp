// A Hugging Face config.json (lib/loaders hf_config ParseHfConfig) and the family
// reading of it that graph building starts from (lib/models ReadHfFamily). Input: the JSON.
#include <cstdint>

#include "fuzz_util.h"
#include "loaders/hf_config.h"
#include "models/hf_graph.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace uaii;
  auto cfg = hf::ParseHfConfig(fuzz::AsText(data, size), "fuzz/config.json");
  if (!cfg.ok()) return 0;
  (void)models::ReadHfFamily(*cfg);
  return 0;
}
