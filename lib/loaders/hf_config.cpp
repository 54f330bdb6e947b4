#include "loaders/hf_config.h"

#include <cstdint>

#include <cmath>
#include <initializer_list>

#include "loaders/hf_json.h"
#include "simdjson.h"
#include "util/str_cat.h"

namespace uaii::hf {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;
using simdjson::dom::object;

absl::Status Bad(std::string_view origin, std::string_view key, std::string_view what) {
  return absl::InvalidArgumentError(StrCat(origin, ": ", key, ": ", what));
}
// A value uaii does not implement (the config itself is well-formed).
absl::Status Unsupported(std::string_view origin, std::string_view key, std::string_view what) {
  return absl::UnimplementedError(StrCat(origin, ": ", key, ": ", what));
}

// Looks up the first present, non-null key among `names` (aliases). Returns the key used.
std::optional<std::pair<std::string_view, element>> Get(object obj, std::initializer_list<std::string_view> names) {
  for (std::string_view n : names) {
    element e;
    if (!obj.at_key(n).get(e) && e.type() != element_type::NULL_VALUE) return std::make_pair(n, e);
  }
  return std::nullopt;
}

// Integer-valued fields; a float with an integral value (1024.0) is accepted.
absl::Status ReadInt(std::string_view origin, object obj, std::initializer_list<std::string_view> names, int64_t& out,
                     int64_t min_value = 0, int64_t max_value = INT64_MAX) {
  auto got = Get(obj, names);
  if (!got) return absl::OkStatus();
  auto [key, e] = *got;
  int64_t v;
  double d;
  if (!e.get_int64().get(v)) {
  } else if (!e.get_double().get(d) && std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e15) {
    v = static_cast<int64_t>(d);
  } else {
    return Bad(origin, key, StrCat("expected an integer, got ", simdjson::to_string(e)));
  }
  if (v < min_value) return Bad(origin, key, StrCat("must be >= ", min_value, ", got ", v));
  if (v > max_value) return Bad(origin, key, StrCat(v, " is not plausible (at most ", max_value, ")"));
  out = v;
  return absl::OkStatus();
}

absl::Status ReadDouble(std::string_view origin, object obj, std::initializer_list<std::string_view> names,
                        double& out, bool* given = nullptr) {
  auto got = Get(obj, names);
  if (!got) return absl::OkStatus();
  auto [key, e] = *got;
  double d;
  if (e.get_double().get(d) || !std::isfinite(d))
    return Bad(origin, key, StrCat("expected a number, got ", simdjson::to_string(e)));
  out = d;
  if (given) *given = true;
  return absl::OkStatus();
}

absl::Status ReadBool(std::string_view origin, object obj, std::initializer_list<std::string_view> names, bool& out,
                      bool* given = nullptr) {
  auto got = Get(obj, names);
  if (!got) return absl::OkStatus();
  bool b;
  if (got->second.get_bool().get(b))
    return Bad(origin, got->first, StrCat("expected true/false, got ", simdjson::to_string(got->second)));
  out = b;
  if (given) *given = true;
  return absl::OkStatus();
}

absl::Status ReadString(std::string_view origin, object obj, std::initializer_list<std::string_view> names,
                        std::string& out) {
  auto got = Get(obj, names);
  if (!got) return absl::OkStatus();
  std::string_view s;
  if (got->second.get_string().get(s))
    return Bad(origin, got->first, StrCat("expected a string, got ", simdjson::to_string(got->second)));
  out = std::string(s);
  return absl::OkStatus();
}

absl::Status ReadDoubles(std::string_view origin, std::string_view key, element e, std::vector<double>& out) {
  simdjson::dom::array arr;
  if (e.get_array().get(arr)) return Bad(origin, key, "expected an array of numbers");
  out.clear();
  for (element x : arr) {
    double d;
    if (x.get_double().get(d) || !std::isfinite(d) || d <= 0)
      return Bad(origin, key, StrCat("expected positive numbers, got ", simdjson::to_string(x)));
    out.push_back(d);
  }
  if (out.empty()) return Bad(origin, key, "empty array");
  return absl::OkStatus();
}

// Every key a RoPE block (rope_scaling, rope_parameters or one of its per-layer-type
// blocks) may hold that the reader understands; any other fails closed (it might
// change the rotation).
constexpr std::string_view kRopeKeys[] = {
    "rope_type", "type", "rope_theta", "partial_rotary_factor", "factor", "low_freq_factor", "high_freq_factor",
    "original_max_position_embeddings", "beta_fast", "beta_slow", "mscale", "mscale_all_dim", "attention_factor",
    "truncate", "short_factor", "long_factor",
};

// transformers 5's rope_parameters per layer type: an object whose keys are layer types.
bool IsPerLayerType(object o) {
  for (auto [k, v] : o)
    if ((k == "full_attention" || k == "sliding_attention") && v.type() == element_type::OBJECT) return true;
  return false;
}

absl::Status ParseRopeScaling(std::string_view origin, std::string_view key, object rs, RopeScaling& r);

// One RoPE block: its base and partial rotary factor (when it states them: transformers
// 5 puts both inside) and its scaling; a key outside kRopeKeys fails naming it.
absl::Status ParseRopeBlock(std::string_view origin, std::string_view key, object o, RopeScaling& scaling,
                            double& theta, double& partial_rotary_factor) {
  for (auto [k, v] : o) {
    bool known = false;
    for (auto r : kRopeKeys) known |= k == r;
    if (!known)
      return Unsupported(origin, StrCat(key, ".", k),
                         "is not a RoPE parameter uaii understands (it could change the rotation)");
  }
  double partial = partial_rotary_factor;
  bool partial_given = false;
  if (auto st = ReadDouble(origin, o, {"rope_theta"}, theta); !st.ok()) return st;
  if (auto st = ReadDouble(origin, o, {"partial_rotary_factor"}, partial, &partial_given); !st.ok()) return st;
  if (partial_given) partial_rotary_factor = partial;
  return ParseRopeScaling(origin, key, o, scaling);
}

struct ActivationName_ { std::string_view name; Activation act; };
// transformers' ACT2FN names that map to what uaii's kernels compute.
constexpr ActivationName_ kActivations[] = {
    {"silu", Activation::kSilu},           {"swish", Activation::kSilu},
    {"gelu", Activation::kGeluErf},        {"gelu_new", Activation::kGeluTanh},
    {"gelu_pytorch_tanh", Activation::kGeluTanh}, {"gelu_fast", Activation::kGeluTanh},
    {"gelu_python", Activation::kGeluErf}, {"relu", Activation::kRelu},
};

absl::Status ParseRopeScaling(std::string_view origin, std::string_view key, object rs, RopeScaling& r) {
  std::string type;
  if (auto st = ReadString(origin, rs, {"rope_type", "type"}, type); !st.ok()) return st;
  const std::string where = StrCat(key, ".");
  auto need = [&](std::string_view field) -> absl::Status {
    element e;
    if (rs.at_key(field).get(e) || e.type() == element_type::NULL_VALUE)
      return Bad(origin, StrCat(where, field), StrCat("required for rope type ", type));
    return absl::OkStatus();
  };
  auto num = [&](std::string_view field, double& out) {
    return ReadDouble(origin, rs, {field}, out);
  };
  absl::Status st;
  if (type.empty() || type == "default") {
    r.kind = RopeScaling::Kind::kNone;
    return absl::OkStatus();
  } else if (type == "linear" || type == "dynamic") {
    r.kind = type == "linear" ? RopeScaling::Kind::kLinear : RopeScaling::Kind::kDynamicNtk;
    if (!(st = need("factor")).ok() || !(st = num("factor", r.factor)).ok()) return st;
  } else if (type == "llama3") {
    r.kind = RopeScaling::Kind::kLlama3;
    for (auto f : {"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"})
      if (!(st = need(f)).ok()) return st;
    if (!(st = num("factor", r.factor)).ok() || !(st = num("low_freq_factor", r.low_freq_factor)).ok() ||
        !(st = num("high_freq_factor", r.high_freq_factor)).ok())
      return st;
    if (!(st = ReadInt(origin, rs, {"original_max_position_embeddings"}, r.original_max_position_embeddings, 1)).ok())
      return st;
  } else if (type == "yarn") {
    r.kind = RopeScaling::Kind::kYarn;
    if (!(st = need("factor")).ok() || !(st = num("factor", r.factor)).ok()) return st;
    if (!(st = ReadBool(origin, rs, {"truncate"}, r.truncate)).ok()) return st;
    double af = 0;
    bool af_given = false;
    if (!(st = num("beta_fast", r.beta_fast)).ok() || !(st = num("beta_slow", r.beta_slow)).ok() ||
        !(st = num("mscale", r.mscale)).ok() || !(st = num("mscale_all_dim", r.mscale_all_dim)).ok() ||
        !(st = ReadDouble(origin, rs, {"attention_factor"}, af, &af_given)).ok())
      return st;
    if (af_given) r.attention_factor = af;
    if (!(st = ReadInt(origin, rs, {"original_max_position_embeddings"}, r.original_max_position_embeddings, 1)).ok())
      return st;
  } else if (type == "longrope" || type == "su") {
    r.kind = RopeScaling::Kind::kLongRope;
    for (auto f : {"short_factor", "long_factor"}) {
      if (!(st = need(f)).ok()) return st;
      element e;
      if (rs.at_key(f).get(e)) continue;
      if (!(st = ReadDoubles(origin, StrCat(where, f), e, f == std::string_view("short_factor") ? r.short_factor
                                                                                                 : r.long_factor))
               .ok())
        return st;
    }
    if (r.short_factor.size() != r.long_factor.size())
      return Bad(origin, key, StrCat("short_factor has ", r.short_factor.size(), " entries, long_factor ",
                                     r.long_factor.size()));
    double af = 0;
    bool af_given = false;
    if (!(st = num("factor", r.factor)).ok() || !(st = ReadDouble(origin, rs, {"attention_factor"}, af, &af_given)).ok())
      return st;
    if (af_given) r.attention_factor = af;
    if (!(st = ReadInt(origin, rs, {"original_max_position_embeddings"}, r.original_max_position_embeddings, 1)).ok())
      return st;
  } else {
    return Bad(origin, StrCat(key, ".type"),
               StrCat("rope scaling \"", type, "\" is not supported (supported: linear, dynamic, llama3, yarn, longrope)"));
  }
  if (!(r.factor > 0)) return Bad(origin, StrCat(where, "factor"), StrCat("must be > 0, got ", r.factor));
  return absl::OkStatus();
}

}  // namespace

std::string_view ActivationName(Activation a) {
  switch (a) {
    case Activation::kSilu: return "silu";
    case Activation::kGeluErf: return "gelu";
    case Activation::kGeluTanh: return "gelu_tanh";
    case Activation::kRelu: return "relu";
  }
  return "?";
}

std::string_view RopeScalingName(RopeScaling::Kind k) {
  switch (k) {
    case RopeScaling::Kind::kNone: return "none";
    case RopeScaling::Kind::kLinear: return "linear";
    case RopeScaling::Kind::kDynamicNtk: return "dynamic";
    case RopeScaling::Kind::kLlama3: return "llama3";
    case RopeScaling::Kind::kYarn: return "yarn";
    case RopeScaling::Kind::kLongRope: return "longrope";
  }
  return "?";
}

int64_t HfConfig::RotaryDims() const {
  int64_t d = static_cast<int64_t>(std::floor(static_cast<double>(head_dim) * partial_rotary_factor));
  return d - d % 2;
}

absl::StatusOr<HfConfig> ParseHfConfig(std::string_view json, std::string_view origin) {
  simdjson::dom::parser parser;
  element root;
  const std::string text = WidenBigIntegers(json);
  if (auto err = parser.parse(text).get(root))
    return absl::InvalidArgumentError(StrCat(origin, ": invalid JSON: ", simdjson::error_message(err)));
  object obj;
  if (root.get_object().get(obj)) return absl::InvalidArgumentError(StrCat(origin, ": not a JSON object"));
  HfConfig c;
  for (auto f : obj) {
    std::string key(f.key.data(), f.key.size());
    c.raw.emplace_back(key, simdjson::to_string(f.value));
    for (std::string_view sub : {"vision_config", "audio_config", "text_config", "encoder", "decoder",
                                 "speech_config", "vision_tower", "mm_vision_tower"})
      if (key == sub && f.value.type() != element_type::NULL_VALUE) c.sub_configs.push_back(key);
  }
  absl::Status st;
#define UAII_TRY(expr) \
  if (!(st = (expr)).ok()) return st
  UAII_TRY(ReadString(origin, obj, {"model_type"}, c.model_type));
  if (auto a = Get(obj, {"architectures"})) {
    simdjson::dom::array arr;
    if (!a->second.get_array().get(arr))
      for (element x : arr) {
        std::string_view s;
        if (!x.get_string().get(s)) c.architectures.emplace_back(s);
      }
  }
  UAII_TRY(ReadInt(origin, obj, {"vocab_size"}, c.vocab_size, 1));
  UAII_TRY(ReadInt(origin, obj, {"hidden_size", "n_embd", "d_model"}, c.hidden_size, 1));
  // Bounded here, where every reader of a config.json passes (pull, inspect, graph
  // building): per-layer tables are sized from it. The GGUF block_count's bound.
  UAII_TRY(ReadInt(origin, obj, {"num_hidden_layers", "n_layer", "num_layers"}, c.num_hidden_layers, 1,
                   kMaxHfLayers));
  UAII_TRY(ReadInt(origin, obj, {"num_attention_heads", "n_head"}, c.num_attention_heads, 1));
  UAII_TRY(ReadInt(origin, obj, {"num_key_value_heads", "n_head_kv", "num_kv_heads"}, c.num_key_value_heads, 1));
  UAII_TRY(ReadInt(origin, obj, {"head_dim"}, c.head_dim, 1));
  UAII_TRY(ReadInt(origin, obj, {"intermediate_size", "n_inner", "ffn_dim"}, c.intermediate_size, 1));
  UAII_TRY(ReadInt(origin, obj, {"max_position_embeddings", "n_positions", "n_ctx", "seq_length"},
                   c.max_position_embeddings, 1));
  UAII_TRY(ReadDouble(origin, obj, {"rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon", "norm_epsilon"},
                      c.norm_eps, &c.norm_eps_given));
  if (!(c.norm_eps > 0) || c.norm_eps > 1) return Bad(origin, "rms_norm_eps", StrCat("out of range: ", c.norm_eps));
  UAII_TRY(ReadDouble(origin, obj, {"rope_theta", "rotary_emb_base"}, c.rope_theta));
  UAII_TRY(ReadDouble(origin, obj, {"partial_rotary_factor"}, c.partial_rotary_factor));
  UAII_TRY(ReadBool(origin, obj, {"tie_word_embeddings"}, c.tie_word_embeddings, &c.tie_word_embeddings_given));
  UAII_TRY(ReadBool(origin, obj, {"attention_bias"}, c.attention_bias));
  UAII_TRY(ReadBool(origin, obj, {"mlp_bias"}, c.mlp_bias));
  UAII_TRY(ReadInt(origin, obj, {"sliding_window"}, c.sliding_window));
  UAII_TRY(ReadBool(origin, obj, {"use_sliding_window"}, c.use_sliding_window));
  UAII_TRY(ReadInt(origin, obj, {"max_window_layers"}, c.max_window_layers));
  UAII_TRY(ReadInt(origin, obj, {"sliding_window_pattern"}, c.sliding_window_pattern));
  if (auto lt = Get(obj, {"layer_types"})) {
    simdjson::dom::array arr;
    if (lt->second.get_array().get(arr)) return Bad(origin, "layer_types", "expected an array of strings");
    for (element x : arr) {
      std::string_view s;
      if (x.get_string().get(s) || (s != "sliding_attention" && s != "full_attention"))
        return Unsupported(origin, "layer_types",
                           StrCat("unsupported entry ", simdjson::to_string(x), " (expected sliding_attention / full_attention)"));
      c.layer_types.emplace_back(s);
    }
  }
  UAII_TRY(ReadDouble(origin, obj, {"rope_local_base_freq"}, c.rope_local_base_freq));
  UAII_TRY(ReadDouble(origin, obj, {"query_pre_attn_scalar"}, c.query_pre_attn_scalar));
  UAII_TRY(ReadDouble(origin, obj, {"final_logit_softcapping"}, c.final_logit_softcapping));
  UAII_TRY(ReadDouble(origin, obj, {"attn_logit_softcapping"}, c.attn_logit_softcapping));
  UAII_TRY(ReadInt(origin, obj, {"num_local_experts", "num_experts", "n_routed_experts"}, c.num_experts));
  UAII_TRY(ReadInt(origin, obj, {"num_experts_per_tok", "num_experts_per_token", "moe_top_k"}, c.num_experts_per_tok));
  UAII_TRY(ReadInt(origin, obj, {"moe_intermediate_size"}, c.moe_intermediate_size));
  UAII_TRY(ReadInt(origin, obj, {"shared_expert_intermediate_size"}, c.shared_expert_intermediate_size));
  UAII_TRY(ReadBool(origin, obj, {"norm_topk_prob"}, c.norm_topk_prob));
  if (c.num_experts > 0 && (c.num_experts_per_tok < 1 || c.num_experts_per_tok > c.num_experts))
    return Bad(origin, "num_experts_per_tok",
               StrCat("must be in [1, ", c.num_experts, "] for ", c.num_experts, " experts, got ", c.num_experts_per_tok));
  UAII_TRY(ReadString(origin, obj, {"torch_dtype", "dtype"}, c.torch_dtype));
  UAII_TRY(ReadBool(origin, obj, {"is_encoder_decoder"}, c.is_encoder_decoder));
  UAII_TRY(ReadInt(origin, obj, {"bos_token_id"}, c.bos_token_id));
  UAII_TRY(ReadInt(origin, obj, {"pad_token_id"}, c.pad_token_id));
  if (auto eos = Get(obj, {"eos_token_id"})) {
    simdjson::dom::array arr;
    int64_t v;
    if (!eos->second.get_int64().get(v)) {
      c.eos_token_ids.push_back(v);
    } else if (!eos->second.get_array().get(arr)) {
      for (element x : arr) {
        if (x.get_int64().get(v) || v < 0) return Bad(origin, "eos_token_id", "expected non-negative integers");
        c.eos_token_ids.push_back(v);
      }
    } else {
      return Bad(origin, "eos_token_id", StrCat("expected an integer or a list, got ", simdjson::to_string(eos->second)));
    }
  }

  // Activations, each from its own key: hidden_act (activation_function in GPT-2
  // configs) and hidden_activation (Gemma's). Which one a family's MLP applies is the
  // family's reading (lib/models).
  auto read_activation = [&](std::initializer_list<std::string_view> keys, Activation& out,
                             std::string& name) -> absl::Status {
    auto act = Get(obj, keys);
    if (!act) return absl::OkStatus();
    std::string_view s;
    if (act->second.get_string().get(s)) return Bad(origin, act->first, "expected a string");
    name = std::string(s);
    for (const auto& a : kActivations)
      if (a.name == s) {
        out = a.act;
        return absl::OkStatus();
      }
    return Unsupported(origin, act->first,
                       StrCat("unsupported activation \"", s, "\" (supported: silu, swish, gelu, gelu_new, ",
                              "gelu_pytorch_tanh, gelu_fast, gelu_python, relu)"));
  };
  UAII_TRY(read_activation({"hidden_act", "activation_function"}, c.activation, c.activation_name));
  Activation hidden_activation = Activation::kSilu;
  UAII_TRY(read_activation({"hidden_activation"}, hidden_activation, c.hidden_activation_name));
  if (!c.hidden_activation_name.empty()) c.hidden_activation = hidden_activation;
  // ALiBi positions (BLOOM, MPT, Falcon-alibi) are not implemented.
  if (auto pe = Get(obj, {"position_embedding_type"})) {
    std::string_view s;
    if (!pe->second.get_string().get(s) && s == "alibi")
      return Bad(origin, "position_embedding_type", "\"alibi\" is not supported (uaii implements RoPE and learned positions)");
  }
  bool alibi = false;
  UAII_TRY(ReadBool(origin, obj, {"alibi"}, alibi));
  if (alibi) return Bad(origin, "alibi", "ALiBi attention is not supported");

  // transformers 4 writes rope_scaling beside a top-level rope_theta; transformers 5 one
  // rope_parameters block, or one per layer type (Gemma 3: full_attention and
  // sliding_attention, the latter transformers 4's rope_local_base_freq).
  if (auto rs = Get(obj, {"rope_scaling"})) {
    object o;
    if (rs->second.get_object().get(o)) return Bad(origin, "rope_scaling", "expected an object or null");
    UAII_TRY(ParseRopeBlock(origin, "rope_scaling", o, c.rope_scaling, c.rope_theta, c.partial_rotary_factor));
  }
  if (auto rp = Get(obj, {"rope_parameters"})) {
    object o;
    if (rp->second.get_object().get(o)) return Bad(origin, "rope_parameters", "expected an object");
    if (IsPerLayerType(o)) {
      for (auto [k, v] : o) {
        object block;
        const std::string where = StrCat("rope_parameters.", k);
        if (v.get_object().get(block)) return Bad(origin, where, "expected an object");
        if (k == "full_attention") {
          UAII_TRY(ParseRopeBlock(origin, where, block, c.rope_scaling, c.rope_theta, c.partial_rotary_factor));
        } else if (k == "sliding_attention") {
          RopeScaling local;
          double partial = c.partial_rotary_factor;
          UAII_TRY(ParseRopeBlock(origin, where, block, local, c.rope_local_base_freq, partial));
          if (local.kind != RopeScaling::Kind::kNone)
            return Unsupported(origin, StrCat(where, ".rope_type"),
                               StrCat("\"", RopeScalingName(local.kind), "\" on the sliding layers is not supported ",
                                      "(they rotate unscaled)"));
          if (partial != c.partial_rotary_factor)
            return Unsupported(origin, StrCat(where, ".partial_rotary_factor"),
                               "differs from the full-attention layers' (not supported)");
        } else {
          return Unsupported(origin, where, "RoPE parameters for this layer type are not understood");
        }
      }
    } else {
      UAII_TRY(ParseRopeBlock(origin, "rope_parameters", o, c.rope_scaling, c.rope_theta, c.partial_rotary_factor));
    }
  }
  if (!(c.partial_rotary_factor > 0 && c.partial_rotary_factor <= 1))
    return Bad(origin, "partial_rotary_factor", StrCat("must be in (0, 1], got ", c.partial_rotary_factor));
  bool bidirectional = false;
  UAII_TRY(ReadBool(origin, obj, {"use_bidirectional_attention"}, bidirectional));
  if (bidirectional)
    return Unsupported(origin, "use_bidirectional_attention", "true (bidirectional attention) is not supported");
  if (!(c.rope_theta > 0)) return Bad(origin, "rope_theta", StrCat("must be > 0, got ", c.rope_theta));
  if (c.rope_scaling.kind == RopeScaling::Kind::kLongRope && c.rope_scaling.original_max_position_embeddings == 0)
    UAII_TRY(ReadInt(origin, obj, {"original_max_position_embeddings"}, c.rope_scaling.original_max_position_embeddings, 1));

  if (auto q = Get(obj, {"quantization_config"})) {
    object o;
    if (!q->second.get_object().get(o)) {
      UAII_TRY(ReadString(origin, o, {"quant_method"}, c.quant_method));
      if (c.quant_method.empty()) {
        // bitsandbytes configs written by older transformers carry only load_in_4bit / load_in_8bit.
        bool b4 = false, b8 = false;
        (void)ReadBool(origin, o, {"load_in_4bit"}, b4);
        (void)ReadBool(origin, o, {"load_in_8bit"}, b8);
        c.quant_method = (b4 || b8) ? "bitsandbytes" : "unknown";
      }
    }
  }
#undef UAII_TRY

  // Defaults that depend on other keys.
  if (c.num_key_value_heads == 0) c.num_key_value_heads = c.num_attention_heads;
  if (c.head_dim == 0 && c.num_attention_heads > 0 && c.hidden_size > 0) {
    if (c.hidden_size % c.num_attention_heads != 0)
      return Bad(origin, "head_dim",
                 StrCat("absent and hidden_size ", c.hidden_size, " is not a multiple of num_attention_heads ",
                        c.num_attention_heads));
    c.head_dim = c.hidden_size / c.num_attention_heads;
  }
  if (c.num_attention_heads > 0 && c.num_attention_heads % c.num_key_value_heads != 0)
    return Bad(origin, "num_key_value_heads",
               StrCat(c.num_key_value_heads, " does not divide num_attention_heads ", c.num_attention_heads));
  if (c.rope_scaling.kind == RopeScaling::Kind::kLongRope && c.head_dim > 0 &&
      static_cast<int64_t>(c.rope_scaling.short_factor.size()) * 2 != c.RotaryDims())
    return Bad(origin, "rope_scaling.short_factor",
               StrCat(c.rope_scaling.short_factor.size(), " entries, expected rotary dims / 2 = ", c.RotaryDims() / 2));
  return c;
}

}  // namespace uaii::hf
