// GGUF: the reader (lib/formats gguf_file), the summary `uaii inspect` prints
// (lib/loaders gguf_summary), the model spec and forward graph (lib/models SpecFromGguf,
// BuildGraph), the tokenizer and chat templates the file carries. Input: a whole file.
#include <cstdint>
#include <string>

#include "chat/chat_template.h"
#include "formats/gguf_file.h"
#include "fuzz_util.h"
#include "loaders/gguf_summary.h"
#include "models/families.h"
#include "models/spec.h"
#include "tokenizers/gguf_tokenizer.h"
#include "uaii/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace uaii;
  const std::string path = fuzz::WriteScratch("model.gguf", fuzz::AsText(data, size));
  auto file = gguf::File::Open(path);
  if (!file.ok()) return 0;
  const gguf::File& f = **file;
  for (const auto& kv : f.metadata()) (void)ValueToJson(kv.value);
  if (auto summary = SummarizeGguf(f); summary.ok()) (void)SummaryToJson(*summary);
  if (auto spec = models::SpecFromGguf(f); spec.ok()) (void)models::BuildGraph(*spec);
  if (auto tok = TokenizerFromGguf(f); tok.ok()) {
    auto ids = (*tok)->Encode("Hello <s> wörld\n\t 123 ", {.parse_special = true});
    if (ids.ok()) (void)(*tok)->Decode(*ids);
  }
  (void)chat::LoadModelTemplates(path);
  return 0;
}
