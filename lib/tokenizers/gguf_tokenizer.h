// The tokenizer of an open GGUF file (tokenizer.ggml.* metadata). Internal: the public
// Tokenizer::Load opens the file itself; the loaders, which hold the file already,
// build the model's tokenizer from it without reading the header twice.
#pragma once
#include <memory>

#include "absl/status/statusor.h"
#include "formats/gguf_file.h"
#include "uaii/tokenizer.h"

namespace uaii {

absl::StatusOr<std::unique_ptr<Tokenizer>> TokenizerFromGguf(const gguf::File& file);

}  // namespace uaii
