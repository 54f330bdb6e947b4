#include "models/blocks.h"

#include "util/str_cat.h"

namespace uaii::models {
namespace {
std::string L(int layer, const std::string& name) { return StrCat("blk.", layer, ".", name); }
}  // namespace

std::string EmbedTokens(GraphBuilder& b, const std::string& tokens) {
  const ModelSpec& s = b.spec();
  return b.Op("embed", {b.Weight("token_embd.weight", {s.n_vocab, s.n_embd}), tokens}, "inp_embd");
}

std::string RmsNorm(GraphBuilder& b, const std::string& x, const std::string& weight, const std::string& out) {
  return b.Op("rms_norm", {x, weight}, out, {{"eps", b.spec().rms_eps}});
}

std::map<std::string, ir::AttrValue> RopeAttrs(const ModelSpec& s, const std::string& mode, double base,
                                               double scale, bool yarn) {
  std::map<std::string, ir::AttrValue> rope = {
      {"mode", mode}, {"n_dims", s.n_rot}, {"freq_base", base}, {"freq_scale", scale}};
  if (yarn && (s.yarn_ext_factor != 0 || s.yarn_attn_factor != 1)) {
    rope["ext_factor"] = s.yarn_ext_factor;
    rope["attn_factor"] = s.yarn_attn_factor;
    rope["beta_fast"] = s.yarn_beta_fast;
    rope["beta_slow"] = s.yarn_beta_slow;
    rope["n_ctx_orig"] = s.n_ctx_orig;
  }
  return rope;
}

std::string SelfAttention(GraphBuilder& b, int layer, const std::string& x, const std::string& positions,
                          const AttentionConfig& cfg) {
  const ModelSpec& s = b.spec();
  const int64_t T = ir::kDimTokens;
  // Shapes as llama.cpp's create_tensor: a mismatch names the tensor and both shapes.
  const int64_t nq = s.n_head * s.head_dim_k, nk = s.n_head_kv * s.head_dim_k, nv = s.n_head_kv * s.head_dim_v;
  std::string q = b.Op("matmul", {x, b.Weight(L(layer, "attn_q.weight"), {nq, s.n_embd})}, L(layer, "q"));
  std::string k = b.Op("matmul", {x, b.Weight(L(layer, "attn_k.weight"), {nk, s.n_embd})}, L(layer, "k"));
  std::string v = b.Op("matmul", {x, b.Weight(L(layer, "attn_v.weight"), {nv, s.n_embd})}, L(layer, "v"));
  q = b.Op("reshape", {q}, L(layer, "q_heads"), {{"shape", std::vector<int64_t>{T, s.n_head, s.head_dim_k}}});
  k = b.Op("reshape", {k}, L(layer, "k_heads"), {{"shape", std::vector<int64_t>{T, s.n_head_kv, s.head_dim_k}}});
  v = b.Op("reshape", {v}, L(layer, "v_heads"), {{"shape", std::vector<int64_t>{T, s.n_head_kv, s.head_dim_v}}});
  if (cfg.qk_norm) {
    q = RmsNorm(b, q, b.Weight(L(layer, "attn_q_norm.weight"), {s.head_dim_k}), L(layer, "q_normed"));
    k = RmsNorm(b, k, b.Weight(L(layer, "attn_k_norm.weight"), {s.head_dim_k}), L(layer, "k_normed"));
  }
  std::map<std::string, ir::AttrValue> rope = RopeAttrs(s, cfg.rope_mode, cfg.rope_base, cfg.rope_scale, cfg.yarn);
  // Llama 3 style per-frequency factors, when the file carries them.
  std::string factors = b.OptionalWeight("rope_freqs.weight");
  q = b.Op("rope", {q, positions, factors}, L(layer, "q_rope"), rope);
  k = b.Op("rope", {k, positions, factors}, L(layer, "k_rope"), rope);
  if (cfg.q_prescale != 0) q = b.Op("scale", {q}, L(layer, "q_scaled"), {{"scale", cfg.q_prescale}});
  std::map<std::string, ir::AttrValue> attn = {{"layer", int64_t{layer}}, {"scale", cfg.kq_scale}};
  if (cfg.window > 0) attn["window"] = cfg.window;
  if (s.attn_logit_softcap > 0) attn["softcap"] = s.attn_logit_softcap;
  std::string o = b.Op("attention", {q, k, v}, L(layer, "attn"), attn);
  return b.Op("matmul", {o, b.Weight(L(layer, "attn_output.weight"), {s.n_embd, s.n_head * s.head_dim_v})},
              L(layer, "attn_out"));
}

std::string GatedFfn(GraphBuilder& b, int layer, const std::string& x, const std::string& act) {
  const ModelSpec& s = b.spec();
  std::string gate = b.Op("matmul", {x, b.Weight(L(layer, "ffn_gate.weight"), {s.n_ff, s.n_embd})}, L(layer, "ffn_gate"));
  std::string up = b.Op("matmul", {x, b.Weight(L(layer, "ffn_up.weight"), {s.n_ff, s.n_embd})}, L(layer, "ffn_up"));
  std::string h = b.Op(act, {gate, up}, L(layer, "ffn_act"));
  return b.Op("matmul", {h, b.Weight(L(layer, "ffn_down.weight"), {s.n_embd, s.n_ff})}, L(layer, "ffn_out"));
}

std::string OutputHead(GraphBuilder& b, const std::string& x, double softcap) {
  std::string rows = b.Op("output_rows", {x}, "result_rows");
  const ModelSpec& s = b.spec();
  std::string h = RmsNorm(b, rows, b.Weight("output_norm.weight", {s.n_embd}), "result_norm");
  std::string head = b.OptionalWeight("output.weight", {s.n_vocab, s.n_embd});
  if (head.empty()) head = b.Weight("token_embd.weight");
  if (softcap <= 0) return b.Op("matmul", {h, head}, "logits");
  std::string raw = b.Op("matmul", {h, head}, "logits_raw");
  return b.Op("softcap", {raw}, "logits", {{"cap", softcap}});
}

}  // namespace uaii::models
