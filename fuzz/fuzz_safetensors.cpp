// A safetensors file: the 8-byte header length, the JSON header (lib/loaders
// safetensors_file ParseHeaderLength / ParseHeader), then the mapped File and the f32
// view of its tensors (MaterializeF32, capped at 1 M elements per tensor to keep each
// run short). Input: a whole file.
#include <cstdint>
#include <optional>
#include <string>

#include "fuzz_util.h"
#include "loaders/safetensors_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace uaii;
  if (size >= 8) {
    auto n = safetensors::ParseHeaderLength(data, size, "fuzz");
    if (n.ok()) {
      // The dry run over HTTP sees only the header (no data section size).
      (void)safetensors::ParseHeader(fuzz::AsText(data + 8, *n), std::nullopt, "fuzz");
    }
  }
  const std::string path = fuzz::WriteScratch("model.safetensors", fuzz::AsText(data, size));
  auto file = safetensors::File::Open(path);
  if (!file.ok()) return 0;
  for (const auto& t : (*file)->header().tensors) {
    if (t.numel() > (1u << 20)) continue;
    (void)safetensors::MaterializeF32(**file, t);
  }
  return 0;
}
