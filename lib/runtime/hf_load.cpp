// Model::Load for a Hugging Face directory: loader (hf::LoadHfModel) -> graph
// (models::BuildHfGraph) -> weights (BindHfWeights) -> CPU program, tokenizer from
// tokenizer.json / tokenizer.model (+ tokenizer_config.json) in the same directory.
#include "backends/registry.h"
#include "loaders/hf_loader.h"
#include "models/hf_graph.h"
#include "planner/content_hash.h"
#include "planner/plan_cache.h"
#include "runtime/hf_weights.h"
#include "runtime/model_impl.h"
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
  return planner::Sha256Hex(s);
}

}  // namespace

absl::StatusOr<std::shared_ptr<const Model>> LoadHfDirectory(const std::string& dir) {
  auto loaded = hf::LoadHfModel(dir);
  if (!loaded.ok()) return loaded.status();
  auto m = std::make_shared<hf::HfModel>(std::move(*loaded));
  // Known layouts the runtime cannot run (gpt-oss) are "unsupported" to callers (the
  // C ABI's UAII_ERR_UNSUPPORTED), not a state error.
  if (auto st = hf::CheckRunnable(*m); !st.ok())
    return absl::UnimplementedError(StrCat(dir, ": ", std::string(st.message())));
  auto g = models::BuildHfGraph(*m);
  if (!g.ok()) return g.status();
  auto impl = std::make_unique<Model::Impl>();
  // Fusions and memory plan, or the cached plan (lib/planner), as for GGUF files.
  auto plan = planner::PlanWithCache(g->graph, HfContentHash(*m), planner::DefaultPlanOptions(),
                                     planner::DefaultPlanCacheDir());
  if (!plan.ok()) return plan.status();
  g->graph = std::move(plan->graph);
  auto weights = BindHfWeights(*m, *g);
  if (!weights.ok()) return weights.status();
  impl->weights = std::move(*weights);
  impl->spec = std::move(g->spec);
  impl->graph = std::move(g->graph);
  auto program = backends::Cpu().Compile(impl->graph, *impl->weights);
  if (!program.ok()) return program.status();
  impl->program = std::move(*program);
  auto tok = Tokenizer::Load(dir);
  if (!tok.ok())
    return absl::Status(tok.status().code(), StrCat(dir, ": tokenizer: ", std::string(tok.status().message())));
  impl->tokenizer = std::move(*tok);
  if (impl->tokenizer->end_of_generation_ids().empty())
    return absl::InvalidArgumentError(StrCat(dir, ": the tokenizer has no end-of-generation token (no eos_token in ",
                                             "tokenizer_config.json / config.json and no known terminator)"));
  const auto& s = impl->spec;
  impl->info = ModelInfo{dir, s.arch, "", s.n_vocab, s.n_embd, s.n_layer, s.n_ctx_train};
  impl->hf = std::move(m);
  return std::shared_ptr<const Model>(new Model(std::move(impl)));
}

}  // namespace uaii::runtime
