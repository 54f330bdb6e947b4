#include "loaders/hf_summary.h"

#include <map>

#include "util/json_writer.h"
#include "util/str_cat.h"

namespace uaii::hf {
namespace {

std::string_view QkvName(QkvLayout q) {
  switch (q) {
    case QkvLayout::kSeparate: return "separate";
    case QkvLayout::kConcat: return "fused_concat";
    case QkvLayout::kGroupedHeads: return "fused_grouped_heads";
    case QkvLayout::kGpt2Conv1D: return "gpt2_conv1d";
  }
  return "?";
}
std::string_view FfnName(FfnKind f) {
  switch (f) {
    case FfnKind::kGated: return "gated";
    case FfnKind::kGatedFused: return "gated_fused";
    case FfnKind::kMlp: return "mlp";
    case FfnKind::kMoe: return "moe";
  }
  return "?";
}
std::string_view NormName(NormKind n, const FamilyFacts& f) {
  switch (n) {
    case NormKind::kRms: return f.norm_plus_one ? "rms_plus_one" : "rms";
    case NormKind::kLayerNorm: return "layer_norm";
  }
  return "?";
}

struct Totals {
  std::map<std::string, uint64_t> by_type;
  uint64_t bytes = 0;
  const HfTensor* largest = nullptr;
};
Totals Count(const HfModel& m) {
  Totals t;
  for (const auto& x : m.tensors) {
    ++t.by_type[std::string(safetensors::DtypeName(x.stored))];
    t.bytes += x.bytes;
    if (t.largest == nullptr || x.bytes > t.largest->bytes) t.largest = &x;
  }
  return t;
}

uint64_t FileBytes(const HfModel& m) {
  uint64_t n = 0;
  for (const auto& f : m.files) n += f->file_bytes();
  return n;
}

// Typed hyper-parameters, one JSON scalar each, in a fixed order.
void Hyper(JsonWriter& w, const HfModel& m, const FamilyFacts& f) {
  const HfConfig& c = m.config;
  w.Key("vocab_size").Int(c.vocab_size);
  w.Key("hidden_size").Int(c.hidden_size);
  w.Key("num_hidden_layers").Int(c.num_hidden_layers);
  w.Key("num_attention_heads").Int(c.num_attention_heads);
  w.Key("num_key_value_heads").Int(c.num_key_value_heads);
  w.Key("head_dim").Int(c.head_dim);
  w.Key("intermediate_size").Int(m.arch.n_ff);
  w.Key("max_position_embeddings").Int(c.max_position_embeddings);
  w.Key("norm_eps").Double(c.norm_eps);
  w.Key("hidden_act").String(ActivationName(f.activation));
  if (m.arch.rope) {
    w.Key("rope_theta").Double(c.rope_theta);
    w.Key("rotary_dims").Int(m.arch.rotary_dims);
    w.Key("rope_scaling").String(RopeScalingName(c.rope_scaling.kind));
    if (c.rope_scaling.kind != RopeScaling::Kind::kNone) w.Key("rope_scaling_factor").Double(c.rope_scaling.factor);
  }
  if (c.sliding_window > 0) w.Key("sliding_window").Int(c.sliding_window);
  if (c.num_experts > 0) {
    w.Key("num_experts").Int(c.num_experts);
    w.Key("num_experts_per_tok").Int(c.num_experts_per_tok);
  }
  if (c.final_logit_softcapping > 0) w.Key("final_logit_softcapping").Double(c.final_logit_softcapping);
  if (c.attn_logit_softcapping > 0) w.Key("attn_logit_softcapping").Double(c.attn_logit_softcapping);
  w.Key("tie_word_embeddings").Bool(m.arch.tied_embeddings);
  if (!c.torch_dtype.empty()) w.Key("torch_dtype").String(c.torch_dtype);
}

}  // namespace

std::string SummaryJson(const HfModel& m, const FamilyFacts& f) {
  const Totals t = Count(m);
  JsonWriter w(2);
  w.BeginObject();
  w.Key("path").String(m.dir);
  w.Key("format").String("huggingface");
  w.Key("file_bytes").Uint(FileBytes(m));
  w.Key("architecture").String(m.arch.family);
  w.Key("name").String(m.config.architectures.empty() ? "" : m.config.architectures[0]);
  w.Key("family").String(m.arch.family);
  w.Key("variant").String(m.arch.variant);
  w.Key("runnable").Bool(m.arch.runnable);
  if (!m.arch.runnable) w.Key("not_runnable_reason").String(m.arch.not_runnable_reason);
  if (m.arch.family != "gpt_oss") {
    w.Key("features").BeginObject();
    w.Key("qkv").String(QkvName(m.arch.qkv));
    w.Key("ffn").String(FfnName(m.arch.ffn));
    w.Key("norm").String(NormName(m.arch.norm, f));
    w.Key("qkv_bias").Bool(m.arch.qkv_bias);
    w.Key("qk_norm").Bool(m.arch.qk_norm);
    w.Key("sandwich_norms").Bool(m.arch.sandwich_norms);
    w.Key("learned_positions").Bool(m.arch.learned_positions);
    w.Key("sliding_layers").Int(f.sliding_layers);
    w.EndObject();
  }
  w.Key("hyperparameters").BeginObject();
  if (m.arch.family != "gpt_oss") {
    Hyper(w, m, f);
  } else {
    for (const auto& [k, v] : m.config.raw)
      if (!v.empty() && v[0] != '{' && v != "null") w.Key(k).Raw(v);
  }
  w.EndObject();
  w.Key("files").BeginArray();
  for (const auto& f : m.files) {
    std::string name = f->path();
    if (name.rfind(m.dir + "/", 0) == 0) name = name.substr(m.dir.size() + 1);
    w.BeginObject().Key("name").String(name).Key("bytes").Uint(f->file_bytes());
    w.Key("tensors").Uint(f->header().tensors.size()).EndObject();
  }
  w.EndArray();
  w.Key("tensors").BeginObject();
  w.Key("count").Uint(m.tensors.size());
  w.Key("by_type").BeginObject();
  for (const auto& [k, n] : t.by_type) w.Key(k).Uint(n);
  w.EndObject();
  w.Key("total_bytes").Uint(t.bytes);
  w.Key("largest").BeginObject();
  w.Key("name").String(t.largest ? t.largest->name : "").Key("bytes").Uint(t.largest ? t.largest->bytes : 0);
  w.EndObject();
  w.EndObject();
  const HfTokenizerInfo& tok = m.tokenizer;
  w.Key("tokenizer").BeginObject();
  w.Key("model").String(tok.model);
  w.Key("pre").String(tok.pre);
  w.Key("vocab_size").Int(tok.vocab_size);
  w.Key("files").BeginArray();
  for (const auto& f : tok.files) w.String(f);
  w.EndArray();
  w.Key("special").BeginArray();
  for (const auto& s : tok.special) {
    w.BeginObject().Key("kind").String(s.kind).Key("id").Int(s.id).Key("piece").String(s.content);
    w.Key("source").String(s.source).EndObject();
  }
  w.EndArray();
  w.Key("end_of_generation").BeginArray();
  for (const auto& s : tok.end_of_generation)
    if (s.id >= 0)
      w.BeginObject().Key("id").Int(s.id).Key("piece").String(s.content).Key("source").String(s.source).EndObject();
  w.EndArray();
  w.EndObject();
  w.Key("chat_template").BeginObject();
  w.Key("present").Bool(!tok.chat_template.empty());
  w.Key("source").String(tok.chat_template_source);
  w.Key("named").BeginArray();
  for (const auto& n : tok.named_chat_templates) w.String(n);
  w.EndArray();
  w.EndObject();
  w.EndObject();
  return w.str();
}

void PrintSummary(const HfModel& m, const FamilyFacts& f, std::FILE* out) {
  const Totals t = Count(m);
  std::fprintf(out, "directory:     %s (%llu bytes of weights in %zu file%s)\n", m.dir.c_str(),
               (unsigned long long)FileBytes(m), m.files.size(), m.files.size() == 1 ? "" : "s");
  std::fprintf(out, "format:        Hugging Face (safetensors%s)\n", m.files.size() > 1 ? ", sharded" : "");
  std::fprintf(out, "architecture:  %s  variant: %s%s%s\n", m.arch.family.c_str(),
               m.arch.variant.empty() ? "(none)" : m.arch.variant.c_str(),
               m.config.architectures.empty() ? "" : "  class: ",
               m.config.architectures.empty() ? "" : m.config.architectures[0].c_str());
  if (!m.arch.runnable) std::fprintf(out, "runnable:      no: %s\n", m.arch.not_runnable_reason.c_str());
  if (m.arch.family != "gpt_oss") {
    std::fprintf(out, "features:      qkv %s, ffn %s, norm %s%s%s%s\n", std::string(QkvName(m.arch.qkv)).c_str(),
                 std::string(FfnName(m.arch.ffn)).c_str(), std::string(NormName(m.arch.norm, f)).c_str(),
                 m.arch.qkv_bias ? ", qkv bias" : "", m.arch.qk_norm ? ", qk-norm" : "",
                 m.arch.sandwich_norms ? ", sandwich norms" : "");
    JsonWriter w;
    w.BeginObject();
    Hyper(w, m, f);
    w.EndObject();
    std::fprintf(out, "hyper-parameters: %s\n", w.str().c_str());
  }
  std::fprintf(out, "tensors:       %zu, %llu bytes in all\n", m.tensors.size(), (unsigned long long)t.bytes);
  for (const auto& [k, n] : t.by_type) std::fprintf(out, "  %-8s %llu\n", k.c_str(), (unsigned long long)n);
  if (t.largest)
    std::fprintf(out, "  largest: %s (%llu bytes)\n", t.largest->name.c_str(), (unsigned long long)t.largest->bytes);
  const HfTokenizerInfo& tok = m.tokenizer;
  std::fprintf(out, "tokenizer:     model %s, pre-tokenizer %s, %lld tokens\n", tok.model.empty() ? "(none)" : tok.model.c_str(),
               tok.pre.empty() ? "(none)" : tok.pre.c_str(), (long long)tok.vocab_size);
  std::fprintf(out, "end of generation:");
  for (const auto& s : tok.end_of_generation) std::fprintf(out, " %lld %s", (long long)s.id, s.content.c_str());
  std::fprintf(out, "\nchat template: %s\n",
               tok.chat_template.empty() ? "no" : StrCat("yes (", tok.chat_template_source, ")").c_str());
}

}  // namespace uaii::hf
