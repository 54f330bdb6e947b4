// What `uaii inspect` reports about a GGUF file, gathered without touching weights.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "formats/gguf_file.h"

namespace uaii {

struct GgufSummary {
  std::string path;
  uint32_t gguf_version = 0;
  uint64_t file_bytes = 0;
  uint64_t alignment = 0;
  std::string architecture;
  std::string name;                       // general.name, may be empty
  int64_t file_type = -1;                 // general.file_type, -1 when absent
  // Every `<architecture>.*` key, as rendered JSON scalars/arrays, key order of the file.
  std::vector<std::pair<std::string, std::string>> hyperparameters_json;
  uint64_t tensor_count = 0;
  std::map<std::string, uint64_t> tensors_by_type;
  uint64_t total_tensor_bytes = 0;
  std::string largest_tensor;
  uint64_t largest_tensor_bytes = 0;
  std::string tokenizer_model;            // tokenizer.ggml.model
  std::string tokenizer_pre;              // tokenizer.ggml.pre
  int64_t vocab_size = 0;
  bool has_chat_template = false;
  std::vector<std::string> named_chat_templates;
  struct Token { int64_t id; std::string piece; std::string source; };
  std::vector<Token> end_of_generation;  // metadata EOS/EOT/EOM + known terminators
};

// Checks the hyper-parameters every decoder needs: present, positive, within sane
// bounds, and consistent with each other and with token_embd.weight. Errors name the
// key and the value ("GGUF metadata llama.block_count: 0 ..."). The one GGUF
// validation: `inspect` (SummarizeGguf) and loading (models::SpecFromGguf) both run it.
absl::Status ValidateCoreHyperParameters(const gguf::File& file);

absl::StatusOr<GgufSummary> SummarizeGguf(const gguf::File& file);

// The `uaii inspect --json` document (docs/json/inspect.schema.json), indented.
std::string SummaryToJson(const GgufSummary& s);

// A metadata value as JSON (strings escaped, arrays nested; long arrays included whole).
std::string ValueToJson(const gguf::Value& v);

}  // namespace uaii
