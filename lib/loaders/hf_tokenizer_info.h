// The tokenizer side of a Hugging Face directory: which tokenizer files are present,
// the chat template and where it came from, and the special / end-of-generation tokens
// resolved to ids through tokenizer.json. Building the tokenizer itself is the
// tokenizers module's job; this only describes what is there.
#pragma once
#include <string>

#include "absl/status/statusor.h"
#include "loaders/hf_config.h"
#include "loaders/hf_model.h"

namespace uaii::hf {

// Reads tokenizer.json, tokenizer_config.json, generation_config.json, chat_template.jinja
// / chat_template.json when present (none is required). Invalid JSON in any of them is
// an error naming the file.
absl::StatusOr<HfTokenizerInfo> ReadTokenizerInfo(const std::string& dir, const HfConfig& cfg);

}  // namespace uaii::hf
