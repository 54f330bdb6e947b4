// uaii::InspectJson / InspectText: what a model holds — format, hyper-parameters,
// tensors, tokenizer, chat templates — read without loading weights. A GGUF file or a
// Hugging Face directory (config.json + safetensors). `uaii inspect` prints them; the
// C ABI's uaii_model_inspect_json returns the JSON.
#pragma once
#include <string>

#include "absl/status/statusor.h"

namespace uaii {

// The document of docs/json/inspect.schema.json.
absl::StatusOr<std::string> InspectJson(const std::string& path);
// The human-readable report `uaii inspect PATH` prints.
absl::StatusOr<std::string> InspectText(const std::string& path);

}  // namespace uaii
