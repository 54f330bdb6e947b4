// runtime::AssistantRunner: the gemma4-assistant drafter's forward pass against a target
// session (lib/models/gemma4_assistant.cpp builds its graph): each call runs rows of
// (token, the target's or the previous step's hidden row) at given positions over the
// target session's KV cache, which it only reads, and returns the rows' logits and next
// hidden rows. CPU backend only.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "uaii/model.h"
#include "uaii/session.h"

namespace uaii::runtime {

class AssistantRunner {
 public:
  // Loads `path` (a gemma4-assistant GGUF) for `target` (a gemma4 model): errors name
  // both files and what does not pair (architecture, vocabulary, width, cache heads).
  static absl::StatusOr<std::unique_ptr<AssistantRunner>> Load(const std::string& path,
                                                               std::shared_ptr<const Model> target);
  ~AssistantRunner();

  // Rows t: tokens[t] at positions[t] with hidden_in[t] ([T, n_hidden]) over `target`'s
  // cache (a session of the target model, on the CPU). logits [T, n_vocab], hidden
  // [T, n_hidden].
  absl::Status Run(const Session& target, std::span<const TokenId> tokens, std::span<const int32_t> positions,
                   std::span<const float> hidden_in, std::vector<float>* logits, std::vector<float>* hidden) const;
  int64_t n_hidden() const;
  int64_t n_vocab() const;

 private:
  struct Impl;
  explicit AssistantRunner(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace uaii::runtime
