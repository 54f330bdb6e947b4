#include "runtime/graph_model.h"

#include <charconv>
#include <filesystem>

#include "ir/serialize.h"
#include "runtime/assemble.h"
#include "runtime/model_impl.h"
#include "tokenizers/gguf_tokenizer.h"
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
  auto impl = std::make_unique<ModelInternals::Impl>();
  const std::string tok_path = Resolve(base, tok_meta);
  auto file = gguf::File::Open(tok_path);
  if (!file.ok())
    return absl::Status(file.status().code(), StrCat(path, ": tokenizer.gguf: ", std::string(file.status().message())));
  std::shared_ptr<const gguf::File> gguf_file(std::move(*file));
  impl->file = gguf_file;
  // What a graph states of the ModelSpec (session planning reads it); the rest stays 0.
  impl->spec.arch = std::string(graph->Meta("architecture"));
  impl->spec.file = tok_path;
  impl->spec.n_embd = MetaInt(*graph, "n_embd");
  impl->spec.n_ctx_train = MetaInt(*graph, "context_length");
  impl->info.name = std::string(graph->Meta("name"));
  ModelSource source;
  source.path = path;
  source.graph = std::move(*graph);
  // The graph's own identity is its content as written (hashed inside PlanKey), so
  // `uaii compile --plan` on this file and this load share a cache entry; paths are
  // resolved after planning.
  source.plan_identity = "graph-file";
  source.bind = [&](ir::Graph& planned) {
    for (auto& t : planned.tensors)
      if (t.weight) t.weight->file = Resolve(base, t.weight->file);
    return WeightSet::Bind(planned, {{tok_path, gguf_file}});
  };
  source.tokenizer = [&] { return TokenizerFromGguf(*gguf_file); };
  source.vocabulary_origin = StrCat(tok_path, " (tokenizer of ", path, ")");
  ModelInternals::Impl* raw = impl.get();
  auto model = Assemble(std::move(source), std::move(impl));
  if (!model.ok()) return model.status();
  // The vocabulary and layer count come from the program: the graph's output width and
  // its KV layers (a graph file need not state them).
  raw->spec.n_vocab = raw->info.n_vocab = raw->program->n_outputs_per_row();
  raw->spec.n_layer = raw->info.n_layer = static_cast<int64_t>(raw->program->kv_layers().size());
  return model;
}

}  // namespace uaii::runtime
