#include "runtime/graph_model.h"

#include <charconv>
#include <filesystem>

#include "backends/registry.h"
#include "ir/serialize.h"
#include "planner/content_hash.h"
#include "planner/plan_cache.h"
#include "runtime/model_impl.h"
#include "util/str_cat.h"

namespace uaii::runtime {
namespace {

namespace fs = std::filesystem;

std::string Resolve(const fs::path& base, const std::string& p) {
  fs::path q(p);
  return q.is_absolute() ? q.string() : (base / q).lexically_normal().string();
}

int64_t MetaInt(const ir::Graph& g, std::string_view key) {
  std::string_view v = g.Meta(key);
  int64_t out = 0;
  auto r = std::from_chars(v.data(), v.data() + v.size(), out);
  return r.ec == std::errc() ? out : 0;
}

}  // namespace

absl::StatusOr<std::shared_ptr<const Model>> LoadGraphModel(const std::string& path) {
  auto graph = ir::ReadGraphFile(path);
  if (!graph.ok()) return graph.status();
  const fs::path base = fs::absolute(fs::path(path)).parent_path();
  const std::string tok_meta(graph->Meta("tokenizer.gguf"));
  if (tok_meta.empty())
    return absl::InvalidArgumentError(StrCat(path, ": graph metadata lacks \"tokenizer.gguf\" (the GGUF file to ",
                                             "read the vocabulary and end-of-generation ids from)"));
  auto impl = std::make_unique<Model::Impl>();
  const std::string tok_path = Resolve(base, tok_meta);
  auto file = gguf::File::Open(tok_path);
  if (!file.ok())
    return absl::Status(file.status().code(), StrCat(path, ": tokenizer.gguf: ", std::string(file.status().message())));
  impl->file = std::shared_ptr<const gguf::File>(std::move(*file));

  // The graph's own identity is its content as written (hashed inside PlanKey), so
  // `uaii compile --plan` on this file and this load share a cache entry; paths are
  // resolved after planning.
  auto plan = planner::PlanWithCache(*graph, "graph-file", planner::DefaultPlanOptions(),
                                     planner::DefaultPlanCacheDir());
  if (!plan.ok()) return absl::Status(plan.status().code(), StrCat(path, ": ", std::string(plan.status().message())));
  impl->graph = std::move(plan->graph);
  for (auto& t : impl->graph.tensors)
    if (t.weight) t.weight->file = Resolve(base, t.weight->file);
  auto weights = WeightSet::Bind(impl->graph, {{tok_path, impl->file}});
  if (!weights.ok()) return weights.status();
  impl->weights = std::move(*weights);
  auto program = backends::Cpu().Compile(impl->graph, *impl->weights);
  if (!program.ok())
    return absl::Status(program.status().code(), StrCat(path, ": ", std::string(program.status().message())));
  impl->program = std::move(*program);
  auto tok = Tokenizer::FromGguf(*impl->file);
  if (!tok.ok()) return tok.status();
  impl->tokenizer = std::move(*tok);
  if (impl->tokenizer->end_of_generation_ids().empty())
    return absl::InvalidArgumentError(StrCat(tok_path, " (tokenizer of ", path,
                                             "): the vocabulary has no end-of-generation token"));
  const ir::Graph& g = impl->graph;
  impl->info = ModelInfo{path, std::string(g.Meta("architecture")), std::string(g.Meta("name")),
                         impl->program->n_outputs_per_row(), MetaInt(g, "n_embd"),
                         static_cast<int64_t>(impl->program->kv_layers().size()), MetaInt(g, "context_length")};
  // What a graph states of the ModelSpec (session planning reads it); the rest stays 0.
  impl->spec.arch = impl->info.architecture;
  impl->spec.file = tok_path;
  impl->spec.n_vocab = impl->info.n_vocab;
  impl->spec.n_embd = impl->info.n_embd;
  impl->spec.n_layer = impl->info.n_layer;
  impl->spec.n_ctx_train = impl->info.n_ctx_train;
  return std::shared_ptr<const Model>(new Model(std::move(impl)));
}

}  // namespace uaii::runtime
