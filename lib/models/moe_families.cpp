// Mixture-of-experts GGUF families: the configurable decoder with its feed-forward
// block replaced by one "moe_ffn" op (runtime/moe.h) over the packed expert banks
// blk.N.ffn_{gate,up,down}_exps [n_expert, F, E] / [n_expert, E, F] and the router
// blk.N.ffn_gate_inp [n_expert, E]. Routing per family follows llama.cpp's
// build_moe_ffn calls (src/models/<arch>.cpp):
//   llama (Mixtral, llama.expert_count > 0): softmax, top-k, renormalised; F = n_ff.
//   qwen2moe: softmax, top-k, NOT renormalised;
//             F = expert_feed_forward_length (else n_ff / k); shared expert
//             ffn_*_shexp (F = expert_shared_feed_forward_length, else n_ff) times
//             sigmoid(ffn_gate_inp_shexp . x).
//   qwen3moe: qwen3 attention, softmax, top-k, renormalised; F = expert_feed_forward_length.
//   granitemoe: granite scales, softmax, top-k, renormalised,
//             F = n_ff; ungated shared expert when
//             expert_shared_feed_forward_length > 0.
// <arch>.expert_weights_scale is ignored, as llama.cpp does for these families (their
// load_arch_hparams never read it, so build_moe_ffn gets w_scale 0); the fixture
// granitemoe-shexp-q6_k carries the key to keep it that way.
// Top-k is always the file's expert_used_count: never reduced (exact by default).
// Hugging Face Qwen-MoE checkpoints renormalise the top-k weights when config.json's
// norm_topk_prob says so (key expert_weights_norm); their sliding layers are qwen's.
#include <cmath>

#include "models/decoder.h"
#include "models/families.h"
#include "models/graph_builder.h"
#include "util/str_cat.h"

namespace uaii::models {
namespace {

struct MoeStyle {
  bool norm_w = true;
  double w_scale = 0;
  int64_t n_ff_exp = 0;      // expert rows F
  int64_t n_ff_shexp = 0;    // shared expert rows, 0 = no shared expert
  bool shexp_gate = false;   // sigmoid gate ffn_gate_inp_shexp
};

absl::Status CheckExperts(const ModelSpec& s) {
  if (s.n_expert <= 0)
    return absl::InvalidArgumentError(StrCat(s.file, ": GGUF metadata ", s.arch, ".expert_count is missing or 0"));
  if (s.n_expert_used <= 0 || s.n_expert_used > s.n_expert)
    return absl::InvalidArgumentError(StrCat(s.file, ": GGUF metadata ", s.arch, ".expert_used_count = ",
                                             s.n_expert_used, " must be in 1..expert_count (", s.n_expert, ")"));
  if (s.Find("blk.0.ffn_gate_inp.weight") && !s.Find("blk.0.ffn_up_exps.weight"))
    return absl::UnimplementedError(StrCat(s.file, ": experts stored one tensor per expert (blk.N.ffn_up.E.weight, "
                                           "pre-2024 Mixtral GGUF) are not supported; re-convert with a current "
                                           "llama.cpp convert_hf_to_gguf.py (packed ffn_*_exps banks)"));
  return absl::OkStatus();
}

std::function<std::string(GraphBuilder&, int, const std::string&)> MoeBlock(const ModelSpec& s, MoeStyle st) {
  return [&s, st](GraphBuilder& b, int il, const std::string& x) -> std::string {
    const int64_t E = s.n_embd, N = s.n_expert, F = st.n_ff_exp;
    auto P = [il](const std::string& n) { return StrCat("blk.", il, ".", n); };
    // Hugging Face Qwen2-MoE's mlp_only_layers have no router: a dense FFN (GGUF
    // files have experts in every layer, a missing router there is an error).
    if (s.source != "gguf" && !s.Find(P("ffn_gate_inp.weight"))) return "";
    std::vector<std::string> in = {x,
                                   b.Weight(P("ffn_gate_inp.weight"), {N, E}),
                                   b.Weight(P("ffn_up_exps.weight"), {N, F, E}),
                                   b.Weight(P("ffn_gate_exps.weight"), {N, F, E}),
                                   b.Weight(P("ffn_down_exps.weight"), {N, E, F}),
                                   b.OptionalWeight(P("exp_probs_b.bias"), {N})};
    if (st.n_ff_shexp > 0) {
      const int64_t Fs = st.n_ff_shexp;
      in.push_back(b.Weight(P("ffn_up_shexp.weight"), {Fs, E}));
      in.push_back(b.Weight(P("ffn_gate_shexp.weight"), {Fs, E}));
      in.push_back(b.Weight(P("ffn_down_shexp.weight"), {E, Fs}));
      in.push_back(st.shexp_gate ? b.Weight(P("ffn_gate_inp_shexp.weight"), {E}) : "");
    }
    while (!in.empty() && in.back().empty()) in.pop_back();
    std::map<std::string, ir::AttrValue> attrs = {{"n_expert_used", s.n_expert_used},
                                                  {"gating", std::string("softmax")},
                                                  {"norm_w", int64_t{st.norm_w ? 1 : 0}}};
    if (st.w_scale != 0 && st.w_scale != 1) attrs["w_scale"] = st.w_scale;
    return b.Op("moe_ffn", in, P("ffn_out"), attrs);
  };
}

// Whether the top-k routing weights are renormalised: llama.cpp's fixed choice for the
// family (`gguf_default`) for GGUF files; a Hugging Face config's norm_topk_prob
// (expert_weights_norm in the description, hf_graph.cpp) otherwise.
absl::StatusOr<bool> RenormaliseTopK(const ModelSpec& s, bool gguf_default) {
  if (s.source == "gguf") return gguf_default;
  auto v = s.hparams.Int("expert_weights_norm", gguf_default ? 1 : 0);
  if (!v.ok()) return v.status();
  return *v != 0;
}

}  // namespace

absl::StatusOr<ir::Graph> BuildLlamaMoe(const ModelSpec& s) {
  if (auto st = CheckExperts(s); !st.ok()) return st;
  DecoderConfig c;
  auto scale = s.hparams.Float("attention.scale", 0.0);
  if (!scale.ok()) return scale.status();
  if (*scale != 0) c.kq_scale = *scale;
  c.ffn_block = MoeBlock(s, {.norm_w = true, .n_ff_exp = s.n_ff});
  return BuildDecoder(s, c);
}

absl::StatusOr<ir::Graph> BuildQwen2Moe(const ModelSpec& s) {
  if (auto st = CheckExperts(s); !st.ok()) return st;
  DecoderConfig c;
  c.rope_mode = "neox";
  // llama.cpp never renormalises qwen2moe's top-k weights; a Hugging Face config
  // does when norm_topk_prob.
  auto norm = RenormaliseTopK(s, false);
  if (!norm.ok()) return norm.status();
  c.ffn_block = MoeBlock(s, {.norm_w = *norm,
                             .n_ff_exp = s.n_ff_exp ? s.n_ff_exp : s.n_ff / s.n_expert_used,
                             .n_ff_shexp = s.n_ff_shexp ? s.n_ff_shexp : s.n_ff,
                             .shexp_gate = true});
  return BuildDecoder(s, c);
}

absl::StatusOr<ir::Graph> BuildQwen3Moe(const ModelSpec& s) {
  if (auto st = CheckExperts(s); !st.ok()) return st;
  // llama.cpp's default when expert_feed_forward_length is absent: n_ff / n_expert_used.
  const int64_t n_ff_exp = s.n_ff_exp > 0 ? s.n_ff_exp : s.n_ff / s.n_expert_used;
  if (n_ff_exp <= 0)
    return absl::InvalidArgumentError(StrCat(s.file, ": qwen3moe.expert_feed_forward_length is missing and ",
                                             "feed_forward_length ", s.n_ff, " / expert_used_count ",
                                             s.n_expert_used, " gives no expert width"));
  // llama.cpp always renormalises qwen3moe's; a Hugging Face config when norm_topk_prob.
  auto norm = RenormaliseTopK(s, true);
  if (!norm.ok()) return norm.status();
  DecoderConfig c;
  c.rope_mode = "neox";
  c.qk_norm = DecoderConfig::QkNorm::kPerHead;
  c.ffn_block = MoeBlock(s, {.norm_w = *norm, .n_ff_exp = n_ff_exp});
  return BuildDecoder(s, c);
}

absl::Status ReadQwenMoeHf(const hf::HfConfig& c, ModelSpec& s, HfReading& r) {
  if (auto st = ReadQwenHf(c, s, r); !st.ok()) return st;
  s.hparams.SetNumber("expert_weights_norm", c.norm_topk_prob ? 1 : 0);
  return absl::OkStatus();
}

absl::StatusOr<ir::Graph> BuildGraniteMoe(const ModelSpec& s) {
  if (auto st = CheckExperts(s); !st.ok()) return st;
  DecoderConfig c;
  if (auto st = ReadGraniteScales(s, c); !st.ok()) return st;
  c.ffn_block = MoeBlock(s, {.norm_w = true, .n_ff_exp = s.n_ff,
                             .n_ff_shexp = s.n_ff_shexp});
  return BuildDecoder(s, c);
}

}  // namespace uaii::models
