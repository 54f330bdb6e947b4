// The centroid-masked output head (IR op masked_head, docs/ir.md): the Gemma 4
// E2B/E4B assistants' sparse head, transformers' Gemma4AssistantMaskedEmbedder.
#pragma once
#include <cstdint>

#include "absl/status/status.h"
#include "backends/backend.h"
#include "runtime/weights.h"

namespace uaii::backends::cpu {

struct MaskedHeadShape {
  int64_t rows = 0;       // rows of x / scores / y
  int64_t n_embd = 0;     // E: x's and the head's width
  int64_t n_centroids = 0;  // C: scores' width; the vocabulary splits into C clusters
  int64_t n_vocab = 0;    // V: the head's rows (a multiple of C)
  int64_t top_k = 0;      // clusters scored per row, in [1, C]
};

// y [rows, V]: for each row, the top_k highest of its C centroid scores (ties to the
// lower index, as a stable sort) pick clusters c; ordering[c * V/C + j] are cluster c's
// token ids, whose logits are x · head[id] (head rows dequantized through ctx.weights,
// as EmbedRows; dots in double, rounded once). Every other token gets the lowest of the
// row's computed logits minus 1 (transformers takes that minimum over the whole call;
// a draft step is one row, where the two agree). Errors: a NaN score, an ordering id
// outside [0, V) (naming it).
absl::Status MaskedHeadRows(const RunContext& ctx, const float* x, const float* scores, const int32_t* ordering,
                            const runtime::BoundWeight& head, const MaskedHeadShape& shape, float* y);

}  // namespace uaii::backends::cpu
