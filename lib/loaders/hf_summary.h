// What `uaii inspect` reports about a Hugging Face directory (the HF counterpart of
// gguf_summary.h): the same top-level fields as the GGUF report, `format` "huggingface",
// plus family / variant / runnable and the weight files.
#pragma once
#include <cstdio>
#include <string>

#include "loaders/hf_model.h"

namespace uaii::hf {

// The JSON document of docs/json/inspect.schema.json (format "huggingface").
std::string SummaryJson(const HfModel& m);
// The human-readable report.
void PrintSummary(const HfModel& m, std::FILE* out);

}  // namespace uaii::hf
