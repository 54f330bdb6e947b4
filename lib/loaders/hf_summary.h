// What `uaii inspect` reports about a Hugging Face directory (the HF counterpart of
// gguf_summary.h): the same top-level fields as the GGUF report, `format` "huggingface",
// plus family / variant / runnable and the weight files.
#pragma once
#include <cstdio>
#include <string>

#include "loaders/hf_model.h"

namespace uaii::hf {

// What the model's family reads from config.json beyond the weight layout (the caller
// supplies it from lib/models' ReadHfFamily: the loaders hold no family math).
struct FamilyFacts {
  bool norm_plus_one = false;  // RMSNorm multiplies by 1 + w
  Activation activation = Activation::kSilu;
  int64_t sliding_layers = 0;  // layers that attend within sliding_window
};

// The JSON document of docs/json/inspect.schema.json (format "huggingface").
std::string SummaryJson(const HfModel& m, const FamilyFacts& f);
// The human-readable report.
void PrintSummary(const HfModel& m, const FamilyFacts& f, std::FILE* out);

}  // namespace uaii::hf
