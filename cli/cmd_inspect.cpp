// `uaii inspect [--model] PATH [--json]`: what a model file holds, without loading weights.
#include <cstdio>

#include "util/str_cat.h"
#include "args.h"
#include "commands.h"
#include "formats/gguf_file.h"
#include "loaders/gguf_summary.h"
#include "loaders/hf_loader.h"
#include "loaders/hf_summary.h"
#include "loaders/model_locator.h"
#include "util/json_writer.h"

namespace uaii::cli {
namespace {

void PrintText(const GgufSummary& s) {
  std::printf("file:          %s (%llu bytes)\n", s.path.c_str(), (unsigned long long)s.file_bytes);
  std::printf("format:        GGUF v%u, alignment %llu\n", s.gguf_version, (unsigned long long)s.alignment);
  std::printf("architecture:  %s%s%s\n", s.architecture.c_str(), s.name.empty() ? "" : "  name: ", s.name.c_str());
  std::printf("hyper-parameters:\n");
  for (const auto& [k, v] : s.hyperparameters_json) std::printf("  %-32s %s\n", k.c_str(), v.c_str());
  std::printf("tensors:       %llu, %llu bytes in all\n", (unsigned long long)s.tensor_count,
              (unsigned long long)s.total_tensor_bytes);
  for (const auto& [t, n] : s.tensors_by_type) std::printf("  %-8s %llu\n", t.c_str(), (unsigned long long)n);
  std::printf("  largest: %s (%llu bytes)\n", s.largest_tensor.c_str(), (unsigned long long)s.largest_tensor_bytes);
  std::printf("tokenizer:     model %s, pre-tokenizer %s, %lld tokens\n",
              s.tokenizer_model.empty() ? "(none)" : s.tokenizer_model.c_str(),
              s.tokenizer_pre.empty() ? "(none)" : s.tokenizer_pre.c_str(), (long long)s.vocab_size);
  std::printf("end of generation:");
  for (const auto& t : s.end_of_generation) std::printf(" %lld %s", (long long)t.id, t.piece.c_str());
  std::printf("\nchat template: %s", s.has_chat_template ? "yes" : "no");
  for (const auto& n : s.named_chat_templates) std::printf(", %s", n.c_str());
  std::printf("\n");
}

}  // namespace

int RunInspect(int argc, char** argv) {
  auto args = ParseArgs(argc, argv, {.valued = {"--model"}, .boolean = {"--json"}});
  if (!args.ok() || args->positional.size() > 1) {
    std::fprintf(stderr, "uaii inspect: %s\nusage: uaii inspect [--model] PATH [--json]\n",
                 args.ok() ? "too many arguments" : std::string(args.status().message()).c_str());
    return 2;
  }
  std::string flag = args->get("--model", args->positional.empty() ? "" : args->positional[0]);
  auto path = ResolveModelPath(flag);
  if (!path.ok()) {
    std::fprintf(stderr, "uaii inspect: %s\n", std::string(path.status().message()).c_str());
    return 1;
  }
  if (hf::IsHfDirectory(*path)) {  // a Hugging Face directory (config.json + safetensors)
    auto model = hf::LoadHfModel(*path);
    if (!model.ok()) {
      std::fprintf(stderr, "uaii inspect: %s\n", std::string(model.status().message()).c_str());
      return 1;
    }
    if (args->has("--json")) std::printf("%s\n", hf::SummaryJson(*model).c_str());
    else hf::PrintSummary(*model, stdout);
    return 0;
  }
  auto file = gguf::File::Open(*path);
  if (!file.ok()) {
    std::fprintf(stderr, "uaii inspect: %s\n", std::string(file.status().message()).c_str());
    return 1;
  }
  auto summary = SummarizeGguf(**file);
  if (!summary.ok()) {
    std::fprintf(stderr, "uaii inspect: %s: %s\n", path->c_str(), std::string(summary.status().message()).c_str());
    return 1;
  }
  if (args->has("--json")) {
    std::printf("%s\n", SummaryToJson(*summary).c_str());
  } else {
    PrintText(*summary);
  }
  return 0;
}

}  // namespace uaii::cli
