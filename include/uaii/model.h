// uaii::Model: a loaded model — its forward graph (IR), weights bound to the
// memory-mapped file, tokenizer and end-of-generation tokens. Immutable after Load
// and shareable by several Sessions (each Session owns its own KV cache).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "uaii/tokenizer.h"

namespace uaii {

struct ModelInfo {
  std::string path;
  std::string architecture;  // GGUF general.architecture
  std::string name;          // general.name, may be empty
  int64_t n_vocab = 0;
  int64_t n_embd = 0;
  int64_t n_layer = 0;
  int64_t n_ctx_train = 0;
};

class Model {
 public:
  // Opens a GGUF file, builds its family's graph, validates it and binds weights.
  // Fails with a message naming the file and cause: unsupported architecture, missing
  // tensor or key, a tensor type without a kernel, or a vocabulary without any
  // end-of-generation token.
  static absl::StatusOr<std::shared_ptr<const Model>> Load(const std::string& path);

  ~Model();
  const ModelInfo& info() const;
  const Tokenizer& tokenizer() const;
  // Sorted ids that end generation (EOS, EOT, EOM and known terminators); never empty.
  const std::vector<TokenId>& end_of_generation_ids() const;
  bool IsEndOfGeneration(TokenId id) const;
  // The forward graph in its readable FlatBuffers JSON form (.uaii.json).
  absl::StatusOr<std::string> GraphJson() const;

 private:
  struct Impl;
  friend struct ModelInternals;  // the library's own access (lib/runtime/model_impl.h)
  explicit Model(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace uaii
