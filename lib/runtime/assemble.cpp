#include "runtime/assemble.h"

#include "backends/registry.h"
#include "models/families.h"
#include "planner/content_hash.h"
#include "planner/plan_cache.h"
#include "util/str_cat.h"

namespace uaii::runtime {

absl::StatusOr<GgufModel> ReadGgufModel(const std::string& path) {
  auto file = gguf::File::Open(path);
  if (!file.ok()) return file.status();
  GgufModel m;
  m.file = std::shared_ptr<const gguf::File>(std::move(*file));
  auto spec = models::SpecFromGguf(*m.file);
  if (!spec.ok()) return spec.status();
  m.spec = std::move(*spec);
  auto graph = models::BuildGraph(m.spec);
  if (!graph.ok()) return graph.status();
  m.graph = std::move(*graph);
  m.plan_identity = planner::GgufContentHash(*m.file);
  if (m.file->Find("general.name"))
    if (auto n = m.file->GetString("general.name"); n.ok()) m.name = std::string(*n);
  return m;
}

absl::StatusOr<std::shared_ptr<const Model>> Assemble(ModelSource source, std::unique_ptr<ModelInternals::Impl> impl) {
  auto prefixed = [&](const absl::Status& st) {
    const std::string msg(st.message());
    return msg.rfind(source.path, 0) == 0 ? st : absl::Status(st.code(), StrCat(source.path, ": ", msg));
  };
  auto plan = planner::PlanWithCache(source.graph, source.plan_identity, planner::DefaultPlanOptions(),
                                     planner::DefaultPlanCacheDir());
  if (!plan.ok()) return prefixed(plan.status());
  impl->graph = std::move(plan->graph);
  auto weights = source.bind(impl->graph);
  if (!weights.ok()) return weights.status();
  impl->weights = std::move(*weights);
  // The model's own program is the CPU backend's; a session on another device
  // compiles its own (Session::Create).
  auto program = backends::Cpu().Compile(impl->graph, *impl->weights);
  if (!program.ok()) return prefixed(program.status());
  impl->program = std::move(*program);
  auto tok = source.tokenizer();
  if (!tok.ok()) return tok.status();
  impl->tokenizer = std::move(*tok);
  if (impl->tokenizer->end_of_generation_ids().empty())
    return absl::InvalidArgumentError(StrCat(source.vocabulary_origin, ": the vocabulary has no end-of-generation ",
                                             "token (no eos / eot / eom id, and none of the known terminators such ",
                                             "as <|eot_id|>, <|im_end|>, <end_of_turn>)"));
  const auto& s = impl->spec;
  impl->info = ModelInfo{source.path, s.arch, impl->info.name, s.n_vocab, s.n_embd, s.n_layer, s.n_ctx_train};
  return ModelInternals::Make(std::move(impl));
}

}  // namespace uaii::runtime
