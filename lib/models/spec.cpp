#include "models/spec.h"

#include <algorithm>
#include <cmath>

#include "loaders/gguf_summary.h"
#include "util/str_cat.h"

namespace uaii::models {
namespace {

// An integer key, or a per-layer array's first element (llama.cpp's n_ff(), n_head(),
// n_head_kv() for layer 0; families with per-layer values, gemma4, read the array from
// hparams). An error when present with a wrong type or as an empty array.
absl::StatusOr<int64_t> IntOrFirst(const gguf::File& f, const std::string& key) {
  const gguf::Value* v = f.Find(key);
  if (v && v->type == gguf::ValueType::ARRAY) {
    if (v->elems.empty() || !v->elems[0].is_integer())
      return absl::InvalidArgumentError(StrCat(f.path(), ": GGUF metadata ", key, " is not an array of integers"));
    return v->elems[0].as_int();
  }
  return f.GetInt(key);
}

// Optional integer key: `dflt` when absent, an error when present with a wrong type.
absl::StatusOr<int64_t> OptInt(const gguf::File& f, const std::string& key, int64_t dflt) {
  if (!f.Find(key)) return dflt;
  return IntOrFirst(f, key);
}
absl::StatusOr<double> OptFloat(const gguf::File& f, const std::string& key, double dflt) {
  if (!f.Find(key)) return dflt;
  return f.GetFloat(key);
}

// Numbers, bools and strings (and arrays of numbers or bools) under `<arch>.`.
HParams HParamsFromGguf(const gguf::File& f, const std::string& prefix) {
  HParams h(StrCat(f.path(), ": GGUF metadata ", prefix));
  using VT = gguf::ValueType;
  for (const auto& kv : f.metadata()) {
    if (kv.key.size() <= prefix.size() || kv.key.compare(0, prefix.size(), prefix) != 0) continue;
    const gguf::Value& v = kv.value;
    HParams::Value out;
    if (v.type == VT::STRING) {
      out.is_string = true;
      out.str = std::string(v.str);
    } else if (v.type == VT::ARRAY) {
      if (v.elem_type == VT::STRING || v.elem_type == VT::ARRAY) continue;
      out.is_array = true;
      for (const auto& e : v.elems) out.nums.push_back(e.as_double());
    } else {
      out.nums.push_back(v.as_double());
    }
    h.Set(kv.key.substr(prefix.size()), std::move(out));
  }
  return h;
}

}  // namespace

const SpecTensor* ModelSpec::Find(const std::string& name) const {
  auto it = tensors.find(name);
  return it == tensors.end() ? nullptr : &it->second;
}

absl::StatusOr<ModelSpec> SpecFromGguf(const gguf::File& f) {
  // The checks `inspect` applies (loaders/gguf_summary.h): one validation for both.
  if (auto st = ValidateCoreHyperParameters(f); !st.ok())
    return absl::Status(st.code(), StrCat(f.path(), ": ", std::string(st.message())));
  ModelSpec s;
  auto arch = f.GetString("general.architecture");
  if (!arch.ok()) return arch.status();
  s.arch = std::string(*arch);
  s.file = f.path();
  const std::string a = s.arch + ".";
  s.hparams = HParamsFromGguf(f, a);

#define UAII_REQ_INT(field, key)                                            \
  {                                                                         \
    auto v = IntOrFirst(f, a + key);                                        \
    if (!v.ok()) return v.status();                                         \
    if (*v <= 0)                                                            \
      return absl::InvalidArgumentError(                                    \
          StrCat(f.path(), ": GGUF metadata ", a, key, " = ", *v, " must be positive")); \
    s.field = *v;                                                           \
  }
  UAII_REQ_INT(n_embd, "embedding_length");
  UAII_REQ_INT(n_layer, "block_count");
  UAII_REQ_INT(n_ff, "feed_forward_length");
  UAII_REQ_INT(n_head, "attention.head_count");
#undef UAII_REQ_INT
#define UAII_OPT(field, fn, key, dflt)         \
  {                                            \
    auto v = fn(f, a + key, dflt);             \
    if (!v.ok()) return v.status();            \
    s.field = *v;                              \
  }
  UAII_OPT(n_head_kv, OptInt, "attention.head_count_kv", s.n_head);
  UAII_OPT(head_dim_k, OptInt, "attention.key_length", s.n_embd / s.n_head);
  UAII_OPT(head_dim_v, OptInt, "attention.value_length", s.head_dim_k);
  UAII_OPT(n_rot, OptInt, "rope.dimension_count", s.head_dim_k);
  UAII_OPT(n_ctx_train, OptInt, "context_length", 2048);
  UAII_OPT(rms_eps, OptFloat, "attention.layer_norm_rms_epsilon", 1e-5);
  UAII_OPT(rope_freq_base, OptFloat, "rope.freq_base", 10000.0);
  UAII_OPT(sliding_window, OptInt, "attention.sliding_window", 0);
  UAII_OPT(norm_eps, OptFloat, "attention.layer_norm_epsilon", 1e-5);
  UAII_OPT(n_ctx_orig, OptInt, "rope.scaling.original_context_length", s.n_ctx_train);
  UAII_OPT(yarn_attn_factor, OptFloat, "rope.scaling.attn_factor", 1.0);
  UAII_OPT(yarn_beta_fast, OptFloat, "rope.scaling.yarn_beta_fast", 32.0);
  UAII_OPT(yarn_beta_slow, OptFloat, "rope.scaling.yarn_beta_slow", 1.0);
  UAII_OPT(n_expert, OptInt, "expert_count", 0);
  UAII_OPT(n_expert_used, OptInt, "expert_used_count", 0);
  UAII_OPT(n_ff_exp, OptInt, "expert_feed_forward_length", 0);
  UAII_OPT(n_ff_shexp, OptInt, "expert_shared_feed_forward_length", 0);
#undef UAII_OPT
  if (s.n_head_kv <= 0 || s.n_head % s.n_head_kv)
    return absl::InvalidArgumentError(StrCat(f.path(), ": GGUF metadata ", a, "attention.head_count_kv = ",
                                             s.n_head_kv, " does not divide head_count ", s.n_head));
  if (f.Find(a + "rope.scaling.type")) {
    auto type = f.GetString(a + "rope.scaling.type");
    if (!type.ok()) return type.status();
    s.rope_scaling = std::string(*type);
    if (*type == "linear" || *type == "yarn") {
      auto factor = f.GetFloat(a + "rope.scaling.factor");
      if (!factor.ok()) return factor.status();
      if (*factor > 0) s.rope_freq_scale = 1.0 / *factor;
      if (*type == "yarn" && *factor > 0) {
        // As llama.cpp's llama_context: ggml multiplies cos/sin by 1 + 0.1 ln(factor)
        // itself; with rope.scaling.yarn_log_multiplier m the net scale becomes
        // mscale(factor, 1) / mscale(factor, m), mscale(s, m) = s <= 1 ? 1 : 1 + 0.1 m ln s.
        s.yarn_ext_factor = 1.0;
        auto log_mul = OptFloat(f, a + "rope.scaling.yarn_log_multiplier", 0.0);
        if (!log_mul.ok()) return log_mul.status();
        if (*log_mul != 0 && *factor > 1) {
          const float fs = static_cast<float>(*factor), m = static_cast<float>(*log_mul);
          const float base = 1.0f + 0.1f * std::log(fs);
          float af = base / (0.1f * m * std::log(fs) + 1.0f);
          af *= 1.0f / base;
          s.yarn_attn_factor *= af;
        }
      }
    } else if (*type != "none" && *type != "longrope") {
      return absl::UnimplementedError(StrCat(f.path(), ": GGUF metadata ", a, "rope.scaling.type = '",
                                             std::string(*type), "' is not supported yet"));
    }
  }
  for (const auto& t : f.tensors()) {
    SpecTensor st;
    st.dtype = static_cast<TensorType>(t.type_id);
    for (auto it = t.dims.rbegin(); it != t.dims.rend(); ++it) st.shape.push_back(static_cast<int64_t>(*it));
    st.offset = t.offset;
    st.bytes = t.bytes;
    s.tensors[t.name] = std::move(st);
  }
  const SpecTensor* embd = s.Find("token_embd.weight");
  if (!embd || embd->shape.size() != 2)
    return absl::InvalidArgumentError(StrCat(f.path(), ": tensor token_embd.weight is missing or not 2-D"));
  s.n_vocab = embd->shape[0];
  return s;
}

}  // namespace uaii::models
