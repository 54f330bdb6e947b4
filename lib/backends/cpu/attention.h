// Causal self-attention over the f16 KV cache, as llama.cpp computes it without flash
// attention:
//   1. K, V rows of the batch are rounded to f16 and written at their positions.
//   2. Per query row t (position p) and head h (kv head h / (Hq/Hkv)):
//        s_j = dot_f16(K_j, f16(q_t,h))            (kernels' F16 vec_dot, f32 accum)
//        s_j = s_j * scale  [softcap: cap * tanh(s_j / cap)], masked to -inf when
//              pos_j > p or (window > 0 and p - pos_j >= window)
//        w = softmax(s) in float with the sum in double, then w *= 1/sum
//        out[d] = dot_f16(Vt[d], f16(w))           over cells
//      Dot products run over a fixed cell count (a multiple of 32, covering p), so a
//      row's result does not depend on how the prompt was chunked. Under a sliding
//      window they run over the 32-cell blocks the window shows, one span or two
//      (KvCache::AttendedCells): the hidden cells' products were exact zeros in the
//      same lanes, so the results are the same bits, and a long context costs the
//      window's cells on sliding layers (Gemma 2 and 3, Mistral), not the context's.
// q [T, Hq, D], k [T, Hkv, D], v [T, Hkv, Dv] -> out [T, Hq*Dv].
#pragma once
#include <cstdint>

#include "kernels/thread_pool.h"
#include "runtime/kv_cache.h"

namespace uaii::backends::cpu {

using runtime::KvCache;
using runtime::KvLayerShape;

struct AttentionParams {
  int layer = 0;
  int64_t n_head = 0;
  float scale = 1.0f;
  int64_t window = 0;
  float softcap = 0.0f;
};

void Attention(KvCache& cache, const AttentionParams& p, const float* q, const float* k, const float* v,
               const int32_t* pos, int64_t T, float* out, ThreadPool* pool);

}  // namespace uaii::backends::cpu
