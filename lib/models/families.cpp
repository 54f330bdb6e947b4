#include "models/families.h"

#include "util/str_cat.h"

namespace uaii::models {
namespace {

constexpr Family kFamilies[] = {
    // arch       builder      what it adds
    {"llama",   BuildLlama,  "RMSNorm, RoPE norm (+rope_freqs), GQA, SwiGLU; optional output.weight "
                             "(Mistral GGUFs use this architecture too)"},
    {"gemma3",  BuildGemma3, "sqrt(n_embd) embed scale, QK-norm, post-norms, GeGLU, RoPE neox, "
                             "5 sliding : 1 global layers (local rope base 10000), tied head"},
};

}  // namespace

const Family* FindFamily(std::string_view arch) {
  for (const auto& f : kFamilies)
    if (f.arch == arch) return &f;
  return nullptr;
}

absl::StatusOr<ir::Graph> BuildGraph(const ModelSpec& spec) {
  const Family* f = FindFamily(spec.arch);
  if (!f) {
    std::string known;
    for (const auto& x : kFamilies) known += StrCat(known.empty() ? "" : ", ", x.arch);
    return absl::UnimplementedError(
        StrCat(spec.file, ": architecture '", spec.arch, "' is not supported (supported: ", known, ")"));
  }
  return f->build(spec);
}

}  // namespace uaii::models
