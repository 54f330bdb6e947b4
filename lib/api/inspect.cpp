// InspectJson / InspectText (uaii/inspect.h) over the loaders' summaries.
#include "uaii/inspect.h"

#include <cstdio>
#include <cstdlib>

#include "formats/gguf_file.h"
#include "loaders/gguf_summary.h"
#include "loaders/hf_loader.h"
#include "loaders/hf_summary.h"
#include "models/hf_graph.h"
#include "uaii/str_cat.h"

namespace uaii {
namespace {

absl::StatusOr<GgufSummary> Summarize(const std::string& path) {
  auto file = gguf::File::Open(path);
  if (!file.ok()) return file.status();
  auto summary = SummarizeGguf(**file);
  if (!summary.ok()) return absl::Status(summary.status().code(), StrCat(path, ": ", std::string(summary.status().message())));
  return summary;
}

// What the family reads from config.json; a model_type uaii does not build (or whose
// reading fails: loading says why) reports the layout with the config's hidden_act.
hf::FamilyFacts HfFacts(const hf::HfModel& m) {
  hf::FamilyFacts f;
  f.activation = m.config.activation;
  auto r = models::ReadHfFamily(m.config);
  if (!r.ok()) return f;
  f.norm_plus_one = r->reading.norm_plus_one;
  f.activation = r->reading.activation;
  for (bool s : r->sliding_layers) f.sliding_layers += s;
  return f;
}

// hf::PrintSummary writes to a FILE; the report is its text.
std::string HfText(const hf::HfModel& m) {
  char* buf = nullptr;
  size_t len = 0;
  std::FILE* f = open_memstream(&buf, &len);
  if (f == nullptr) return {};
  hf::PrintSummary(m, HfFacts(m), f);
  std::fclose(f);
  std::string text(buf, len);
  std::free(buf);
  return text;
}

std::string GgufText(const GgufSummary& s) {
  std::string t;
  auto line = [&t](auto&&... parts) { t += StrCat(parts...); };
  line("file:          ", s.path, " (", s.file_bytes, " bytes)\n");
  line("format:        GGUF v", s.gguf_version, ", alignment ", s.alignment, "\n");
  line("architecture:  ", s.architecture, s.name.empty() ? "" : "  name: ", s.name, "\n");
  line("hyper-parameters:\n");
  for (const auto& [k, v] : s.hyperparameters_json) {
    std::string key = k;
    if (key.size() < 32) key.append(32 - key.size(), ' ');
    line("  ", key, " ", v, "\n");
  }
  line("tensors:       ", s.tensor_count, ", ", s.total_tensor_bytes, " bytes in all\n");
  for (const auto& [type, n] : s.tensors_by_type) {
    std::string name = type;
    if (name.size() < 8) name.append(8 - name.size(), ' ');
    line("  ", name, " ", n, "\n");
  }
  line("  largest: ", s.largest_tensor, " (", s.largest_tensor_bytes, " bytes)\n");
  line("tokenizer:     model ", s.tokenizer_model.empty() ? "(none)" : s.tokenizer_model, ", pre-tokenizer ",
       s.tokenizer_pre.empty() ? "(none)" : s.tokenizer_pre, ", ", s.vocab_size, " tokens\n");
  line("end of generation:");
  for (const auto& tok : s.end_of_generation) line(" ", tok.id, " ", tok.piece);
  line("\nchat template: ", s.has_chat_template ? "yes" : "no");
  for (const auto& n : s.named_chat_templates) line(", ", n);
  line("\n");
  return t;
}

}  // namespace

absl::StatusOr<std::string> InspectJson(const std::string& path) {
  if (hf::IsHfDirectory(path)) {
    auto model = hf::LoadHfModel(path);
    if (!model.ok()) return model.status();
    return hf::SummaryJson(*model, HfFacts(*model));
  }
  auto s = Summarize(path);
  if (!s.ok()) return s.status();
  return SummaryToJson(*s);
}

absl::StatusOr<std::string> InspectText(const std::string& path) {
  if (hf::IsHfDirectory(path)) {
    auto model = hf::LoadHfModel(path);
    if (!model.ok()) return model.status();
    return HfText(*model);
  }
  auto s = Summarize(path);
  if (!s.ok()) return s.status();
  return GgufText(*s);
}

}  // namespace uaii
