// Model::Load for a Hugging Face directory: loader (hf::LoadHfModel) -> the model
// description and its family's graph (models::BuildHfGraph, weights as declared views)
// -> the one assembly (assemble.h) with the weights bound through their views
// (view_weights.h) and the tokenizer from tokenizer.json / tokenizer.model
// (+ tokenizer_config.json).
#include "loaders/hf_loader.h"
#include "models/hf_graph.h"
#include "planner/content_hash.h"
#include "runtime/assemble.h"
#include "runtime/view_weights.h"
#include "util/str_cat.h"

namespace uaii::runtime {
namespace {

// The plan cache's model identity for a directory (what the plan can depend on):
// config.json's keys and values and the tensor table (name, dtype, shape, file, offset).
std::string HfContentHash(const hf::HfModel& m) {
  std::string s = "hf\n";
  for (const auto& [k, v] : m.config.raw) s += StrCat(k, "=", v, "\n");
  for (const auto& t : m.tensors) {
    s += StrCat(t.name, " ", static_cast<int>(t.dtype), " ", t.file, " ", t.offset, " ", t.bytes);
    for (int64_t d : t.shape) s += StrCat(" ", d);
    s += "\n";
  }
  return Sha256Hex(s);
}

}  // namespace

absl::StatusOr<HfDirectoryModel> ReadHfDirectory(const std::string& dir) {
  auto loaded = hf::LoadHfModel(dir);
  if (!loaded.ok()) return loaded.status();
  auto m = std::make_shared<hf::HfModel>(std::move(*loaded));
  // Known layouts the runtime cannot run (gpt-oss) are "unsupported" to callers (the
  // C ABI's UAII_ERR_UNSUPPORTED), not a state error.
  if (auto st = hf::CheckRunnable(*m); !st.ok())
    return absl::UnimplementedError(StrCat(dir, ": ", std::string(st.message())));
  auto g = models::BuildHfGraph(*m);
  if (!g.ok()) return g.status();
  return HfDirectoryModel{m, std::move(g->spec), std::move(g->graph), HfContentHash(*m)};
}

absl::StatusOr<std::shared_ptr<const Model>> LoadHfDirectory(const std::string& dir) {
  auto read = ReadHfDirectory(dir);
  if (!read.ok()) return read.status();
  auto impl = std::make_unique<ModelInternals::Impl>();
  impl->spec = read->spec;
  impl->hf = read->model;
  SafetensorsFiles files;
  for (const auto& f : read->model->files) files.emplace(f->path(), f);
  ModelSource source;
  source.path = dir;
  source.graph = std::move(read->graph);
  source.plan_identity = read->plan_identity;
  source.bind = [&](ir::Graph& planned) { return BindGraphWeights(planned, {}, files); };
  source.tokenizer = [&]() -> absl::StatusOr<std::unique_ptr<Tokenizer>> {
    auto tok = Tokenizer::Load(dir);
    if (!tok.ok())
      return absl::Status(tok.status().code(), StrCat(dir, ": tokenizer: ", std::string(tok.status().message())));
    return tok;
  };
  source.vocabulary_origin = StrCat(dir, " (tokenizer_config.json / config.json)");
  return Assemble(std::move(source), std::move(impl));
}

}  // namespace uaii::runtime
