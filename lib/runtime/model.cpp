#include <algorithm>

#include "ir/serialize.h"
#include "loaders/hf_loader.h"
#include "runtime/assemble.h"
#include "runtime/graph_model.h"
#include "runtime/model_impl.h"
#include "tokenizers/gguf_tokenizer.h"

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
  auto read = runtime::ReadGgufModel(path);
  if (!read.ok()) return read.status();
  std::shared_ptr<const gguf::File> gguf_file = read->file;
  auto impl = std::make_unique<Impl>();
  impl->file = gguf_file;
  impl->spec = std::move(read->spec);
  impl->info.name = read->name;
  runtime::ModelSource source;
  source.path = path;
  source.graph = std::move(read->graph);
  source.plan_identity = read->plan_identity;
  source.bind = [&](ir::Graph& planned) { return runtime::WeightSet::Bind(planned, {{path, gguf_file}}); };
  source.tokenizer = [&] { return TokenizerFromGguf(*gguf_file); };
  source.vocabulary_origin = path;
  return runtime::Assemble(std::move(source), std::move(impl));
}

}  // namespace uaii
