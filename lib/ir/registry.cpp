#include "ir/registry.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"

namespace uaii::ir {
namespace {

using Shapes = std::vector<Shape>;
using In = std::vector<const Shape*>;

absl::Status Mismatch(const Op& op, const std::string& what) {
  return absl::InvalidArgumentError(
      absl::StrCat("shape mismatch: op '", op.name, "' (", op.type, "): ", what));
}

absl::Status NeedRank(const Op& op, const Shape& s, size_t rank, const std::string& which) {
  if (s.size() == rank) return absl::OkStatus();
  return Mismatch(op, absl::StrCat(which, " has shape ", ShapeString(s), ", expected rank ", rank));
}

absl::StatusOr<Shapes> SameAsFirst(const Op&, const In& in) { return Shapes{*in[0]}; }

// Elementwise binary: b equals a, is a vector over a's last dimension, or is one
// element ([1], a scalar: Gemma 4's per-layer output scale).
absl::StatusOr<Shapes> Binary(const Op& op, const In& in) {
  const Shape &a = *in[0], &b = *in[1];
  if (a == b) return Shapes{a};
  if (b.size() == 1 && !a.empty() && (b[0] == a.back() || b[0] == 1)) return Shapes{a};
  return Mismatch(op, absl::StrCat("operands ", ShapeString(a), " and ", ShapeString(b),
                                   " do not broadcast"));
}

absl::StatusOr<Shapes> Gated(const Op& op, const In& in) {
  if (*in[0] != *in[1])
    return Mismatch(op, absl::StrCat("gate ", ShapeString(*in[0]), " != up ", ShapeString(*in[1])));
  return Shapes{*in[0]};
}

absl::StatusOr<Shapes> Embed(const Op& op, const In& in) {
  const Shape &table = *in[0], &ids = *in[1];
  if (auto s = NeedRank(op, table, 2, "table"); !s.ok()) return s;
  if (auto s = NeedRank(op, ids, 1, "ids"); !s.ok()) return s;
  return Shapes{{ids[0], table[1]}};
}

absl::StatusOr<Shapes> RmsNorm(const Op& op, const In& in) {
  const Shape& x = *in[0];
  if (x.empty()) return Mismatch(op, "input is a scalar");
  if (in[1] && (in[1]->size() != 1 || (*in[1])[0] != x.back()))
    return Mismatch(op, absl::StrCat("weight ", ShapeString(*in[1]), " does not match last dim of ",
                                     ShapeString(x)));
  return Shapes{x};
}

// LayerNorm: weight and bias (both optional) are vectors over the last dimension.
absl::StatusOr<Shapes> LayerNorm(const Op& op, const In& in) {
  const Shape& x = *in[0];
  if (x.empty()) return Mismatch(op, "input is a scalar");
  for (int k = 1; k <= 2; ++k)
    if (in[k] && (in[k]->size() != 1 || (*in[k])[0] != x.back()))
      return Mismatch(op, absl::StrCat(k == 1 ? "weight " : "bias ", ShapeString(*in[k]),
                                       " does not match last dim of ", ShapeString(x)));
  return Shapes{x};
}

// Slice of the last dimension: [..., n] -> [..., size] from column `begin`.
absl::StatusOr<Shapes> Slice(const Op& op, const In& in) {
  const Shape& x = *in[0];
  const int64_t begin = op.Int("begin", -1), size = op.Int("size", -1);
  if (x.empty() || begin < 0 || size <= 0 || begin + size > x.back())
    return Mismatch(op, absl::StrCat("columns [", begin, ", ", begin + size, ") outside ", ShapeString(x)));
  Shape y = x;
  y.back() = size;
  return Shapes{y};
}

// Concatenation along the last dimension: [..., n1] ++ [..., n2] -> [..., n1 + n2]
// (the gemma4 assistant's [target embedding, hidden] input).
absl::StatusOr<Shapes> Concat(const Op& op, const In& in) {
  const Shape &a = *in[0], &b = *in[1];
  if (a.empty() || a.size() != b.size() || !std::equal(a.begin(), a.end() - 1, b.begin()))
    return Mismatch(op, absl::StrCat("operands ", ShapeString(a), " and ", ShapeString(b),
                                     " differ outside their last dimension"));
  Shape y = a;
  y.back() += b.back();
  return Shapes{y};
}

// The centroid-masked output head (the Gemma 4 E2B/E4B assistants' sparse head,
// transformers' Gemma4AssistantMaskedEmbedder): x [..., E], the centroids' scores
// [..., C], the vocabulary ordered by cluster [V] and the head [V, E] -> logits [..., V].
// Each row scores only the V/C tokens of each of its top_k clusters; the rest get the
// row's lowest such score minus 1.
absl::StatusOr<Shapes> MaskedHead(const Op& op, const In& in) {
  const Shape &x = *in[0], &scores = *in[1], &ordering = *in[2], &head = *in[3];
  if (auto s = NeedRank(op, head, 2, "head"); !s.ok()) return s;
  if (auto s = NeedRank(op, ordering, 1, "ordering"); !s.ok()) return s;
  if (x.empty() || x.back() != head[1])
    return Mismatch(op, absl::StrCat("x ", ShapeString(x), " against head ", ShapeString(head), ": widths differ"));
  if (scores.size() != x.size() || !std::equal(x.begin(), x.end() - 1, scores.begin()))
    return Mismatch(op, absl::StrCat("centroid scores ", ShapeString(scores), " are not one row per row of x ",
                                     ShapeString(x)));
  const int64_t n_vocab = head[0], n_centroids = scores.back(), top_k = op.Int("top_k");
  if (ordering[0] != n_vocab)
    return Mismatch(op, absl::StrCat("ordering ", ShapeString(ordering), " does not cover the head's ", n_vocab,
                                     " tokens"));
  if (n_centroids <= 0 || n_vocab % n_centroids != 0)
    return Mismatch(op, absl::StrCat(n_vocab, " tokens do not split into ", n_centroids, " equal clusters"));
  if (top_k < 1 || top_k > n_centroids)
    return absl::InvalidArgumentError(absl::StrCat("bad attribute: op '", op.name, "' (masked_head): top_k ", top_k,
                                                   " is not in [1, ", n_centroids, "]"));
  Shape y = x;
  y.back() = n_vocab;
  return Shapes{y};
}

// Fused gated unit on one input: [..., 2n] -> [..., n], act(first half) * second half.
absl::StatusOr<Shapes> GatedFused(const Op& op, const In& in) {
  const Shape& x = *in[0];
  if (x.empty() || x.back() % 2) return Mismatch(op, absl::StrCat("input ", ShapeString(x), " has an odd last dim"));
  Shape y = x;
  y.back() /= 2;
  return Shapes{y};
}

absl::StatusOr<Shapes> MatMul(const Op& op, const In& in) {
  const Shape &x = *in[0], &w = *in[1];
  if (auto s = NeedRank(op, w, 2, "weight"); !s.ok()) return s;
  if (x.empty() || x.back() != w[1])
    return Mismatch(op, absl::StrCat("x ", ShapeString(x), " times weight ", ShapeString(w),
                                     " [out,in]: inner dims differ"));
  Shape y = x;
  y.back() = w[0];
  return Shapes{y};
}

// Element count as (concrete product, multiset of symbolic dims); nullopt when the
// product overflows int64 (a crafted graph: fuzz_ir_graph found the overflow).
std::optional<std::pair<int64_t, std::vector<int64_t>>> Count(const Shape& s) {
  int64_t n = 1;
  std::vector<int64_t> sym;
  for (int64_t d : s) {
    if (d < 0) sym.push_back(d);
    else if (__builtin_mul_overflow(n, d, &n)) return std::nullopt;
  }
  std::sort(sym.begin(), sym.end());
  return std::make_pair(n, sym);
}

absl::StatusOr<Shapes> Reshape(const Op& op, const In& in) {
  Shape to = op.Ints("shape");
  const auto from_count = Count(*in[0]), to_count = Count(to);
  if (!from_count || !to_count)
    return Mismatch(op, absl::StrCat("element count of ", ShapeString(from_count ? to : *in[0]), " overflows int64"));
  if (*to_count != *from_count)
    return Mismatch(op, absl::StrCat("cannot reshape ", ShapeString(*in[0]), " to ", ShapeString(to)));
  return Shapes{to};
}

absl::StatusOr<Shapes> Rope(const Op& op, const In& in) {
  const Shape &x = *in[0], &pos = *in[1];
  if (auto s = NeedRank(op, x, 3, "x [T,heads,dim]"); !s.ok()) return s;
  if (auto s = NeedRank(op, pos, 1, "positions"); !s.ok()) return s;
  if (pos[0] != x[0]) return Mismatch(op, "positions and x disagree on T");
  int64_t n_dims = op.Int("n_dims");
  if (n_dims <= 0 || n_dims > x[2] || n_dims % 2)
    return absl::InvalidArgumentError(absl::StrCat("bad attribute: op '", op.name, "' (rope): n_dims ",
                                                   n_dims, " must be even and in (0, ", x[2], "]"));
  std::string mode = op.Str("mode");
  if (mode != "norm" && mode != "neox")
    return absl::InvalidArgumentError(absl::StrCat("bad attribute: op '", op.name,
                                                   "' (rope): mode '", mode, "' is not norm or neox"));
  // LongRoPE: input 3 holds the long factors, used when the context exceeds
  // `long_factors_ctx` (input 2 then holds the short ones).
  if (in.size() > 3 && in[3] && (in[3]->size() != 1 || (*in[3])[0] != n_dims / 2))
    return Mismatch(op, absl::StrCat("long freq_factors ", ShapeString(*in[3]), " expected [", n_dims / 2, "]"));
  if (in[2] && (in[2]->size() != 1 || (*in[2])[0] != n_dims / 2))
    return Mismatch(op, absl::StrCat("freq_factors ", ShapeString(*in[2]), " expected [", n_dims / 2, "]"));
  return Shapes{x};
}

// attention(q, k, v) writes the batch's K and V into the cache of `layer` and attends
// over it; attention(q) only reads that layer's cache, written earlier in the same
// pass by the op that owns it (Gemma 4's shared-KV layers). Without K and V the value
// head size is taken to be q's (the backends check it against the cache).
absl::StatusOr<Shapes> Attention(const Op& op, const In& in) {
  if (auto st = NeedRank(op, *in[0], 3, "q"); !st.ok()) return st;
  const bool has_k = in.size() > 1 && in[1], has_v = in.size() > 2 && in[2];
  if (has_k != has_v) return Mismatch(op, "k and v must be given together (or both omitted: a shared-KV read)");
  if (op.Int("layer", -1) < 0 || op.Int("window", 0) < 0)
    return absl::InvalidArgumentError(absl::StrCat("bad attribute: op '", op.name,
                                                   "' (attention): layer and window must be >= 0"));
  if (!has_k) return Shapes{{(*in[0])[0], (*in[0])[1] * (*in[0])[2]}};
  const Shape &q = *in[0], &k = *in[1], &v = *in[2];
  for (auto [s, n] : {std::pair{&k, "k"}, {&v, "v"}})
    if (auto st = NeedRank(op, *s, 3, n); !st.ok()) return st;
  if (q[0] != k[0] || k[0] != v[0]) return Mismatch(op, "q, k, v disagree on T");
  if (q[2] != k[2]) return Mismatch(op, "q and k head dims differ");
  if (k[1] != v[1]) return Mismatch(op, "k and v head counts differ");
  if (k[1] <= 0 || q[1] % k[1])
    return Mismatch(op, absl::StrCat("query heads ", q[1], " not a multiple of kv heads ", k[1]));
  return Shapes{{q[0], q[1] * v[2]}};
}

absl::StatusOr<Shapes> OutputRows(const Op& op, const In& in) {
  if (auto s = NeedRank(op, *in[0], 2, "x"); !s.ok()) return s;
  return Shapes{{kDimRows, (*in[0])[1]}};
}

// Planner fusion (lib/planner/fusion.cpp): rms_norm(x, norm_w) feeding matmuls by
// W1..Wn. Outputs one [...,N_i] per weight, or with `act` (swiglu / geglu, exactly
// two weights: gate, up) the single act(gate) * up.
absl::StatusOr<Shapes> NormLinear(const Op& op, const In& in) {
  const Shape& x = *in[0];
  if (x.empty()) return Mismatch(op, "input is a scalar");
  if (in[1]->size() != 1 || (*in[1])[0] != x.back())
    return Mismatch(op, absl::StrCat("norm weight ", ShapeString(*in[1]), " does not match last dim of ",
                                     ShapeString(x)));
  Shapes out;
  for (size_t k = 2; k < in.size() && in[k]; ++k) {
    const Shape& w = *in[k];
    if (auto s = NeedRank(op, w, 2, absl::StrCat("weight ", k - 1)); !s.ok()) return s;
    if (w[1] != x.back())
      return Mismatch(op, absl::StrCat("x ", ShapeString(x), " times weight ", k - 1, " ", ShapeString(w),
                                       " [out,in]: inner dims differ"));
    Shape y = x;
    y.back() = w[0];
    out.push_back(y);
  }
  if (op.Has("act")) {
    std::string act = op.Str("act");
    if (act != "swiglu" && act != "geglu")
      return absl::InvalidArgumentError(absl::StrCat("bad attribute: op '", op.name, "' (norm_linear): act '", act,
                                                     "' is not swiglu or geglu"));
    if (out.size() != 2 || out[0] != out[1])
      return Mismatch(op, "act needs exactly two weights (gate, up) of the same shape");
    out.resize(1);
  }
  return out;
}

// moe_ffn (runtime/moe.h): x [..., E], router [n_expert, E], expert banks up/gate
// [n_expert, F, E] (or, with fused_gate_up, one gate|up bank [n_expert, 2F, E] in
// up's slot and no gate) and down [n_expert, E, F], optional selection bias [n_expert],
// optional shared expert up/gate [Fs, E], down [E, Fs] and its gate [E]. y = x's shape.
absl::StatusOr<Shapes> MoeFfn(const Op& op, const In& in) {
  const Shape& x = *in[0];
  if (x.empty()) return Mismatch(op, "input is a scalar");
  const int64_t E = x.back();
  if (auto s = NeedRank(op, *in[1], 2, "router"); !s.ok()) return s;
  const int64_t n = (*in[1])[0];
  if ((*in[1])[1] != E) return Mismatch(op, absl::StrCat("router ", ShapeString(*in[1]), " vs x ", ShapeString(x)));
  const Shape& up = *in[2];
  if (!in[4]) return Mismatch(op, "down_exps is missing");
  if (op.Int("fused_gate_up", 0) != 0) {
    // One bank [n, 2F, E]: each expert's gate rows, then its up rows (llama.cpp's
    // ffn_gate_up_exps, split after one product); no separate gate bank.
    if (auto s = NeedRank(op, up, 3, "gate_up_exps"); !s.ok()) return s;
    if (in[3]) return Mismatch(op, "a fused gate|up bank takes no separate gate_exps");
    const int64_t F = up[1] / 2;
    if (up != Shape{n, 2 * F, E} || F < 1 || *in[4] != Shape{n, E, F})
      return Mismatch(op, absl::StrCat("expert banks gate|up ", ShapeString(up), " down ", ShapeString(*in[4]),
                                       " do not match [", n, ", 2F, ", E, "] / [", n, ", ", E, ", F]"));
  } else {
    if (auto s = NeedRank(op, up, 3, "up_exps"); !s.ok()) return s;
    if (!in[3]) return Mismatch(op, "gate_exps is missing");
    const int64_t F = up[1];
    const Shape want_up = {n, F, E}, want_down = {n, E, F};
    if (up != want_up || *in[3] != want_up || *in[4] != want_down)
      return Mismatch(op, absl::StrCat("expert banks up ", ShapeString(up), " gate ", ShapeString(*in[3]), " down ",
                                       ShapeString(*in[4]), " do not match [", n, ", F, ", E, "] / [", n, ", ", E,
                                       ", F]"));
  }
  if (in.size() > 5 && in[5] && *in[5] != Shape{n}) return Mismatch(op, "selection bias is not [n_expert]");
  if (in.size() > 8 && in[6]) {
    if (!in[7] || !in[8]) return Mismatch(op, "shared expert needs up, gate and down");
    const int64_t Fs = (*in[6])[0];
    if (*in[6] != Shape{Fs, E} || *in[7] != Shape{Fs, E} || *in[8] != Shape{E, Fs})
      return Mismatch(op, "shared expert weights do not match [Fs, E] / [E, Fs]");
  }
  if (in.size() > 9 && in[9] && *in[9] != Shape{E}) return Mismatch(op, "shared expert gate is not [E]");
  // Gemma 4: the router reads its own input (router_x, x's shape) and each expert's
  // output is scaled by down_scale[e].
  if (in.size() > 10 && in[10] && *in[10] != x) return Mismatch(op, "router input is not x's shape");
  if (in.size() > 11 && in[11] && *in[11] != Shape{n}) return Mismatch(op, "down_scale is not [n_expert]");
  const std::string act = op.Str("act", "silu");
  if (act != "silu" && act != "gelu")
    return absl::InvalidArgumentError(absl::StrCat("bad attribute: op '", op.name, "' (moe_ffn): act '", act,
                                                   "' is not silu or gelu"));
  const int64_t k = op.Int("n_expert_used");
  if (k < 1 || k > n) return Mismatch(op, absl::StrCat("n_expert_used ", k, " outside 1..", n));
  const std::string g = op.Str("gating");
  if (g != "softmax" && g != "sigmoid")
    return absl::InvalidArgumentError(absl::StrCat("bad attribute: op '", op.name, "' (moe_ffn): gating '", g,
                                                   "' is not softmax or sigmoid"));
  return Shapes{x};
}

const std::vector<OpSchema>& Table() {
  using K = AttrKind;
  static const std::vector<OpSchema> kOps = {
      // type          in  in  out  attributes                                     shape rule
      {"embed",        2,  2,  1,  {},                                             Embed},
      {"rms_norm",     1,  2,  1,  {{"eps", K::kFloat, true}},                     RmsNorm},
      {"layer_norm",   1,  3,  1,  {{"eps", K::kFloat, true}},                     LayerNorm},
      {"slice",        1,  1,  1,  {{"begin", K::kInt, true}, {"size", K::kInt, true}}, Slice},
      {"concat",       2,  2,  1,  {},                                             Concat},
      {"masked_head",  4,  4,  1,  {{"top_k", K::kInt, true}},                     MaskedHead},
      {"swiglu_fused", 1,  1,  1,  {},                                             GatedFused},
      {"matmul",       2,  2,  1,  {},                                             MatMul},
      {"add",          2,  2,  1,  {},                                             Binary},
      {"mul",          2,  2,  1,  {},                                             Binary},
      {"scale",        1,  1,  1,  {{"scale", K::kFloat, true}},                   SameAsFirst},
      {"softcap",      1,  1,  1,  {{"cap", K::kFloat, true}},                     SameAsFirst},
      {"silu",         1,  1,  1,  {},                                             SameAsFirst},
      {"gelu",         1,  1,  1,  {},                                             SameAsFirst},
      {"swiglu",       2,  2,  1,  {},                                             Gated},
      {"geglu",        2,  2,  1,  {},                                             Gated},
      {"reshape",      1,  1,  1,  {{"shape", K::kInts, true}},                    Reshape},
      {"rope",         2,  4,  1,  {{"mode", K::kString, true}, {"n_dims", K::kInt, true},
                                    {"freq_base", K::kFloat, true}, {"freq_scale", K::kFloat, false},
                                    {"ext_factor", K::kFloat, false}, {"attn_factor", K::kFloat, false},
                                    {"beta_fast", K::kFloat, false}, {"beta_slow", K::kFloat, false},
                                    {"n_ctx_orig", K::kInt, false}, {"long_factors_ctx", K::kInt, false}},
                                                                                   Rope},
      {"attention",    1,  3,  1,  {{"layer", K::kInt, true}, {"scale", K::kFloat, true},
                                    {"window", K::kInt, false}, {"softcap", K::kFloat, false}},
                                                                                   Attention},
      {"output_rows",  1,  1,  1,  {},                                             OutputRows},
      {"norm_linear",  3,  10, -8, {{"eps", K::kFloat, true}, {"act", K::kString, false}},
                                                                                   NormLinear},
      {"moe_ffn",      3,  12, 1,  {{"n_expert_used", K::kInt, true}, {"gating", K::kString, true},
                                    {"norm_w", K::kInt, false}, {"w_scale", K::kFloat, false},
                                    {"act", K::kString, false}, {"fused_gate_up", K::kInt, false}},
                                                                                   MoeFfn},
  };
  return kOps;
}

}  // namespace

const std::vector<OpSchema>& AllOps() { return Table(); }

const OpSchema* FindOp(std::string_view type) {
  for (const auto& s : Table())
    if (s.type == type) return &s;
  return nullptr;
}

}  // namespace uaii::ir
