// The gemma4-assistant drafter (llama.cpp src/models/gemma4-assistant.cpp), built for
// one gemma4 target:
//   x    = target.token_embd[t] * sqrtf(n_out)           (n_out = embedding_length_out,
//                                                         the target's n_embd)
//   cur  = nextn.pre_projection . concat(x, h)            (h: the target's hidden row,
//                                                         or the previous step's output)
//   each layer: Q only (RMSNorm per head, NEOX RoPE with the assistant's bases and
//     rope_freqs on full layers), attention with scale 1 over the TARGET's cache — a
//     sliding layer over the cache target layer n_layer-2 reads, a full one over
//     n_layer-1's (after the target's own shared-KV map), the sliding ones masked by the
//     assistant's window — then post-attention norm, residual, GeGLU FFN with its
//     post-norm, residual, times layer_output_scale;
//   logits = token_embd . rms_norm(cur)  (its own table tied as the head, no soft-cap)
//   hidden = nextn.post_projection . rms_norm(cur)   (the next step's h)
// The assistant stores nothing in the cache: every draft step sees the verified prompt.
// The E2B/E4B assistants' sparse head: with real-shaped masked_embd_centroids.weight
// [C, n_embd] and masked_embd_ordering [n_vocab] (I32), the logits are the IR's
// masked_head (transformers' Gemma4AssistantMaskedEmbedder, use_ordered_embeddings):
// only the tokens of the top_k best-scoring of C clusters get a dot with the head.
// top_k is the file's gemma4-assistant.centroid_intermediate_top_k (transformers'
// config name), else its default 32. llama.cpp 0.3.36 loads only 1-element
// placeholders under these names (its converter drops the tables): those stay ignored.
#include <cmath>

#include "formats/tensor_type.h"
#include "models/decoder.h"
#include "models/gemma4.h"
#include "models/graph_builder.h"
#include "util/str_cat.h"

namespace uaii::models {
namespace {

std::string P(int il, const std::string& n) { return StrCat("blk.", il, ".", n); }

absl::Status Mismatch(const ModelSpec& a, const ModelSpec& t, const std::string& what) {
  return absl::InvalidArgumentError(
      StrCat("the gemma4-assistant ", a.file, " does not pair with the ", t.arch, " model ", t.file, ": ", what));
}

struct MaskedHead {
  int64_t n_centroids = 0;  // 0: a dense head
  int64_t top_k = 0;
};

// The sparse head's tables, checked: both real-shaped or neither (a 1-element tensor
// is llama.cpp's placeholder), C clusters of equal size, top_k in [1, C].
absl::StatusOr<MaskedHead> MaskedHeadTables(const ModelSpec& a) {
  const SpecTensor* centroids = a.Find("masked_embd_centroids.weight");
  const SpecTensor* ordering = a.Find("masked_embd_ordering");
  auto placeholder = [](const SpecTensor* t) { return t == nullptr || (t->shape.size() == 1 && t->shape[0] == 1); };
  if (placeholder(centroids) && placeholder(ordering)) return MaskedHead{};  // Unused by the graph
  if (placeholder(centroids) || placeholder(ordering))
    return absl::InvalidArgumentError(StrCat(a.file, ": the centroid-masked head needs both masked_embd_centroids.weight",
                                             " and masked_embd_ordering; the file has only ",
                                             placeholder(centroids) ? "masked_embd_ordering" : "the centroids"));
  if (centroids->shape.size() != 2)
    return absl::InvalidArgumentError(StrCat(a.file, ": masked_embd_centroids.weight must be [n_centroids, ", a.n_embd,
                                             "], not ", centroids->shape.size(), "-dimensional"));
  if (ordering->dtype != TensorType::I32)
    return absl::InvalidArgumentError(StrCat(a.file, ": masked_embd_ordering holds token ids and must be I32, not ",
                                             TensorTypeName(static_cast<uint32_t>(ordering->dtype))));
  MaskedHead m{centroids->shape[0], 0};
  if (m.n_centroids <= 0 || a.n_vocab % m.n_centroids != 0)
    return absl::InvalidArgumentError(StrCat(a.file, ": ", a.n_vocab, " tokens do not split into ", m.n_centroids,
                                             " equal centroid clusters"));
  auto top_k = a.hparams.Int("centroid_intermediate_top_k", 32);
  if (!top_k.ok()) return top_k.status();
  if (*top_k < 1 || *top_k > m.n_centroids)
    return absl::InvalidArgumentError(StrCat(a.file, ": centroid_intermediate_top_k ", *top_k, " is not in [1, ",
                                             m.n_centroids, "] (the file's centroid count)"));
  m.top_k = *top_k;
  return m;
}

}  // namespace

absl::StatusOr<ir::Graph> BuildGemma4AssistantGraph(const ModelSpec& a, const ModelSpec& t) {
  if (t.arch != "gemma4") return Mismatch(a, t, StrCat("its target must be a gemma4 model, not ", t.arch));
  if (a.n_vocab != t.n_vocab)
    return Mismatch(a, t, StrCat("vocabularies of ", a.n_vocab, " and ", t.n_vocab, " tokens"));
  auto width = a.hparams.Int("embedding_length_out", 0);
  if (!width.ok()) return width.status();
  if (*width != t.n_embd)
    return Mismatch(a, t, StrCat("embedding_length_out ", *width, " is not the target's hidden width ", t.n_embd));
  if (*width == a.n_embd)
    return absl::InvalidArgumentError(StrCat(a.file, ": a gemma4-assistant needs embedding_length_out (", *width,
                                             ") to differ from its own width"));
  auto layers = ReadGemma4Layers(a);
  if (!layers.ok()) return layers.status();
  auto target_layers = ReadGemma4Layers(t);
  if (!target_layers.ok()) return target_layers.status();
  if (t.n_layer < 2) return Mismatch(a, t, "the target has fewer than two layers");
  // The target caches each assistant layer reads, and their shapes in the graph's
  // metadata (the assistant's program attends over the target session's cache).
  std::string external;
  for (int il = 0; il < a.n_layer; ++il) {
    Gemma4Layer& l = (*layers)[il];
    const Gemma4Layer& src = (*target_layers)[t.n_layer - (l.swa ? 2 : 1)];
    const Gemma4Layer& owner = (*target_layers)[src.kv_layer];
    if (owner.head_dim != l.head_dim || owner.n_head_kv != l.n_head_kv || l.n_head % l.n_head_kv != 0)
      return Mismatch(a, t, StrCat("layer ", il, " (", l.swa ? "sliding" : "full", ") views the target's layer ",
                                   src.kv_layer, " cache as ", l.n_head_kv, " heads of ", l.head_dim, ", but it holds ",
                                   owner.n_head_kv, " of ", owner.head_dim));
    l.kv_layer = src.kv_layer;
    external += StrCat(external.empty() ? "" : ";", l.kv_layer, ":", owner.n_head_kv, ":", owner.head_dim, ":",
                       owner.head_dim);
  }
  auto window = a.hparams.Int("attention.sliding_window", 0);
  if (!window.ok()) return window.status();
  auto swa_base = a.hparams.Float("rope.freq_base_swa", 10000.0);
  if (!swa_base.ok()) return swa_base.status();

  GraphBuilder b(a);
  const int64_t E = a.n_embd, W = *width;
  const std::string tokens = b.Input("tokens", TensorType::I32, {ir::kDimTokens});
  const std::string positions = b.Input("positions", TensorType::I32, {ir::kDimTokens});
  const std::string h_in = b.Input("hidden_in", TensorType::F32, {ir::kDimTokens, W});
  // The target's embedding table: a weight of the target's file.
  if (!t.Find("token_embd.weight")) return Mismatch(a, t, "the target has no token_embd.weight");
  std::string x = b.Op("embed", {b.ExternalWeight(t, "token_embd.weight", {t.n_vocab, W}), tokens}, "inp_embd_target");
  x = b.Op("scale", {x}, "inp_embd_scaled", {{"scale", static_cast<double>(std::sqrt(static_cast<float>(W)))}});
  std::string cur = b.Op("concat", {x, h_in}, "inp_xh");
  cur = b.Op("matmul", {cur, b.Weight("nextn.pre_projection.weight", {E, 2 * W})}, "pre_proj");
  auto norm = [&](const std::string& in, const std::string& w, const std::string& out, int64_t n) {
    return b.Op("rms_norm", {in, b.Weight(w, {n})}, out, {{"eps", a.rms_eps}});
  };
  for (int il = 0; il < a.n_layer; ++il) {
    const Gemma4Layer& l = (*layers)[il];
    const int64_t nq = l.n_head * l.head_dim;
    std::string h = norm(cur, P(il, "attn_norm.weight"), P(il, "attn_in"), E);
    std::string q = b.Op("matmul", {h, b.Weight(P(il, "attn_q.weight"), {nq, E})}, P(il, "q"));
    q = b.Op("reshape", {q}, P(il, "q_heads"), {{"shape", std::vector<int64_t>{ir::kDimTokens, l.n_head, l.head_dim}}});
    q = norm(q, P(il, "attn_q_norm.weight"), P(il, "q_normed"), l.head_dim);
    auto rope = l.swa ? RopeAttrs(a, "neox", *swa_base, 1.0) : RopeAttrs(a, "neox", a.rope_freq_base, a.rope_freq_scale);
    rope["n_dims"] = l.n_rot;
    const std::string factors = l.swa ? "" : b.Weight("rope_freqs.weight", {l.n_rot / 2});
    q = b.Op("rope", {q, positions, factors}, P(il, "q_rope"), rope);
    std::map<std::string, ir::AttrValue> attn = {{"layer", int64_t{l.kv_layer}}, {"scale", 1.0}};
    if (l.swa && *window > 0) attn["window"] = *window;
    std::string o = b.Op("attention", {q}, P(il, "attn"), attn);
    o = b.Op("matmul", {o, b.Weight(P(il, "attn_output.weight"), {E, nq})}, P(il, "attn_out"));
    o = norm(o, P(il, "post_attention_norm.weight"), P(il, "attn_post"), E);
    const std::string attn_out = b.Op("add", {o, cur}, P(il, "ffn_inp"));
    h = norm(attn_out, P(il, "ffn_norm.weight"), P(il, "ffn_in"), E);
    std::string gate = b.Op("matmul", {h, b.Weight(P(il, "ffn_gate.weight"), {l.n_ff, E})}, P(il, "ffn_gate"));
    std::string up = b.Op("matmul", {h, b.Weight(P(il, "ffn_up.weight"), {l.n_ff, E})}, P(il, "ffn_up"));
    h = b.Op("geglu", {gate, up}, P(il, "ffn_act"));
    h = b.Op("matmul", {h, b.Weight(P(il, "ffn_down.weight"), {E, l.n_ff})}, P(il, "ffn_out"));
    h = norm(h, P(il, "post_ffw_norm.weight"), P(il, "ffn_post"), E);
    std::string out = b.Op("add", {h, attn_out}, P(il, "ffn_res"));
    cur = b.Op("mul", {out, b.Weight(P(il, "layer_output_scale.weight"), {1})}, P(il, "out_scaled"));
  }
  std::string rows = b.Op("output_rows", {cur}, "result_rows");
  std::string xn = norm(rows, "output_norm.weight", "result_norm", E);
  auto masked = MaskedHeadTables(a);
  if (!masked.ok()) return masked.status();
  const std::string head = b.Weight("token_embd.weight", {a.n_vocab, E});
  if (masked->n_centroids > 0) {
    const std::string scores = b.Op(
        "matmul", {xn, b.Weight("masked_embd_centroids.weight", {masked->n_centroids, E})}, "centroid_scores");
    b.Op("masked_head", {xn, scores, b.Weight("masked_embd_ordering", {a.n_vocab}), head}, "logits",
         {{"top_k", masked->top_k}});
  } else {
    b.Op("matmul", {xn, head}, "logits");
    // llama.cpp 0.3.36's 1-element placeholders under the sparse head's names.
    for (const char* n : {"masked_embd_centroids.weight", "masked_embd_ordering"})
      b.Unused(n, {1}, "llama.cpp's placeholder for the sparse head's table");
  }
  b.Op("matmul", {xn, b.Weight("nextn.post_projection.weight", {W, E})}, "hidden");
  b.Meta("architecture", a.arch);
  b.Meta("kv_external", external);
  return b.Finish({"logits", "hidden"});
}

}  // namespace uaii::models
