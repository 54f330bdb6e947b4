#include "runtime/graph_model.h"

#include <charconv>
#include <filesystem>

#include "ir/serialize.h"
#include "runtime/assemble.h"
#include "runtime/model_impl.h"
#include "runtime/view_weights.h"
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

// Resolves a weight reference's files (its own and its view's parts') against `base`.
void ResolveRef(const fs::path& base, ir::TensorRef& r) {
  if (!r.file.empty()) r.file = Resolve(base, r.file);
  if (r.view)
    for (auto& p : r.view->parts) ResolveRef(base, p);
}

}  // namespace

absl::StatusOr<std::shared_ptr<const Model>> LoadGraphModel(const std::string& path) {
  auto graph = ir::ReadGraphFile(path);
  if (!graph.ok()) return graph.status();
  const fs::path base = fs::absolute(fs::path(path)).parent_path();
  const std::string tok_gguf(graph->Meta("tokenizer.gguf")), tok_dir(graph->Meta("tokenizer.dir"));
  if (tok_gguf.empty() == tok_dir.empty())
    return absl::InvalidArgumentError(StrCat(path, ": graph metadata needs one of \"tokenizer.gguf\" (the GGUF file ",
                                             "to read the vocabulary and end-of-generation ids from) or ",
                                             "\"tokenizer.dir\" (a Hugging Face directory)"));
  auto impl = std::make_unique<ModelInternals::Impl>();
  const std::string tok_path = Resolve(base, tok_gguf.empty() ? tok_dir : tok_gguf);
  std::map<std::string, std::shared_ptr<const gguf::File>> gguf_files;
  if (!tok_gguf.empty()) {
    auto file = gguf::File::Open(tok_path);
    if (!file.ok())
      return absl::Status(file.status().code(), StrCat(path, ": tokenizer.gguf: ", std::string(file.status().message())));
    impl->file = std::shared_ptr<const gguf::File>(std::move(*file));
    gguf_files.emplace(tok_path, impl->file);
  }
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
      if (t.weight) ResolveRef(base, *t.weight);
    return BindGraphWeights(planned, gguf_files);
  };
  source.tokenizer = [&]() -> absl::StatusOr<std::unique_ptr<Tokenizer>> {
    if (!tok_gguf.empty()) return TokenizerFromGguf(*gguf_files.begin()->second);
    auto tok = Tokenizer::Load(tok_path);
    if (!tok.ok())
      return absl::Status(tok.status().code(),
                          StrCat(path, ": tokenizer.dir ", tok_path, ": ", std::string(tok.status().message())));
    return tok;
  };
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
