// Gemma 4's per-layer shapes as llama.cpp reads them (gemma4.cpp), shared by the
// gemma4 graph and its assistant's (gemma4_assistant.cpp), which views the target's
// cache with them.
#pragma once
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "models/spec.h"

namespace uaii::models {

struct Gemma4Layer {
  bool swa = false;
  int64_t n_head = 0, n_head_kv = 0, head_dim = 0, n_rot = 0, n_ff = 0;
  int kv_layer = 0;  // the layer whose K/V cache it attends over (itself unless shared)
};

// Sliding pattern, head counts and sizes, rotary dims, FFN widths and the shared-KV
// map of every layer; errors name the key.
absl::StatusOr<std::vector<Gemma4Layer>> ReadGemma4Layers(const ModelSpec& s);

// The gemma4-assistant drafter's graph for `target` (a gemma4 spec): inputs tokens,
// positions and hidden_in [T, target n_embd]; outputs logits and hidden (its next h).
// Its layers read the target's KV cache (q-only attention on the target's layers,
// declared in the graph's metadata "kv_external"). Errors name both files and what
// does not pair (architecture, vocabulary, width, a cache layer's heads).
absl::StatusOr<ir::Graph> BuildGemma4AssistantGraph(const ModelSpec& assistant, const ModelSpec& target);

}  // namespace uaii::models
