// Graph files (lib/ir serialize.h, validate.h): a `.uaii` FlatBuffer (FromBinary: the
// verifier, then the conversion) and a `.uaii.json` (FromJson), each accepted graph
// validated and written back (ToBinary / ToJson) as `uaii compile` would. Input: byte 0
// picks the form, the rest is the file.
#include <cstdint>

#include "fuzz_util.h"
#include "ir/serialize.h"
#include "ir/validate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace uaii;
  if (size < 1) return 0;
  const auto bytes = fuzz::AsText(data + 1, size - 1);
  auto graph = (data[0] & 1) ? ir::FromJson(bytes) : ir::FromBinary(bytes);
  if (!graph.ok()) return 0;
  if (!ir::Validate(*graph).ok()) return 0;
  (void)ir::ToBinary(*graph);
  (void)ir::ToJson(*graph);
  return 0;
}
