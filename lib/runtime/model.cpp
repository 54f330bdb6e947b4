#include <algorithm>

#include "backends/registry.h"
#include "ir/serialize.h"
#include "loaders/hf_loader.h"
#include "models/families.h"
#include "planner/content_hash.h"
#include "planner/plan_cache.h"
#include "runtime/graph_model.h"
#include "runtime/model_impl.h"
#include "util/str_cat.h"

namespace uaii {

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::~Model() = default;

const ModelInfo& Model::info() const { return impl_->info; }
const Tokenizer& Model::tokenizer() const { return *impl_->tokenizer; }
const std::vector<TokenId>& Model::end_of_generation_ids() const { return impl_->tokenizer->end_of_generation_ids(); }
bool Model::IsEndOfGeneration(TokenId id) const { return impl_->tokenizer->IsEndOfGeneration(id); }
absl::StatusOr<std::string> Model::GraphJson() const { return ir::ToJson(impl_->graph); }

absl::StatusOr<std::shared_ptr<const Model>> Model::Load(const std::string& path) {
  if (ir::IsGraphPath(path)) return runtime::LoadGraphModel(path);  // .uaii / .uaii.json (graph_model.h)
  if (hf::IsHfDirectory(path)) return runtime::LoadHfDirectory(path);
  auto impl = std::make_unique<Impl>();
  auto file = gguf::File::Open(path);
  if (!file.ok()) return file.status();
  impl->file = std::shared_ptr<const gguf::File>(std::move(*file));
  auto spec = models::SpecFromGguf(*impl->file);
  if (!spec.ok()) return spec.status();
  impl->spec = std::move(*spec);
  auto graph = models::BuildGraph(impl->spec);
  if (!graph.ok()) return graph.status();
  // Fusions and memory plan, or the cached plan of this file + options (lib/planner).
  auto plan = planner::PlanWithCache(*graph, planner::GgufContentHash(*impl->file), planner::DefaultPlanOptions(),
                                     planner::DefaultPlanCacheDir());
  if (!plan.ok()) return plan.status();
  impl->graph = std::move(plan->graph);
  auto weights = runtime::WeightSet::Bind(impl->graph, {{path, impl->file}});
  if (!weights.ok()) return weights.status();
  impl->weights = std::move(*weights);
  auto program = backends::Cpu().Compile(impl->graph, *impl->weights);
  if (!program.ok()) return program.status();
  impl->program = std::move(*program);
  auto tok = Tokenizer::FromGguf(*impl->file);
  if (!tok.ok()) return tok.status();
  impl->tokenizer = std::move(*tok);
  if (impl->tokenizer->end_of_generation_ids().empty())
    return absl::InvalidArgumentError(StrCat(path, ": the vocabulary has no end-of-generation token (no ",
                                             "tokenizer.ggml.eos_token_id / eot / eom, and none of the known ",
                                             "terminators such as <|eot_id|>, <|im_end|>, <end_of_turn>)"));
  const auto& s = impl->spec;
  impl->info = ModelInfo{path, s.arch, "", s.n_vocab, s.n_embd, s.n_layer, s.n_ctx_train};
  if (impl->file->Find("general.name"))
    if (auto n = impl->file->GetString("general.name"); n.ok()) impl->info.name = std::string(*n);
  return std::shared_ptr<const Model>(new Model(std::move(impl)));
}

}  // namespace uaii
