#include "runtime/assistant_runner.h"

#include "backends/registry.h"
#include "formats/gguf_file.h"
#include "models/families.h"
#include "models/gemma4.h"
#include "models/spec.h"
#include "runtime/model_impl.h"
#include "runtime/session_internals.h"
#include "runtime/weights.h"
#include "util/str_cat.h"

namespace uaii::runtime {

struct AssistantRunner::Impl {
  std::shared_ptr<const Model> target;
  std::shared_ptr<const gguf::File> file;
  ir::Graph graph;
  std::unique_ptr<WeightSet> weights;
  std::unique_ptr<backends::Program> program;
  int64_t n_hidden = 0, n_vocab = 0;
};

AssistantRunner::AssistantRunner(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
AssistantRunner::~AssistantRunner() = default;
int64_t AssistantRunner::n_hidden() const { return impl_->n_hidden; }
int64_t AssistantRunner::n_vocab() const { return impl_->n_vocab; }

absl::StatusOr<std::unique_ptr<AssistantRunner>> AssistantRunner::Load(const std::string& path,
                                                                       std::shared_ptr<const Model> target) {
  if (!target) return absl::InvalidArgumentError("AssistantRunner::Load: null target model");
  const auto& t = ModelInternals::Of(*target);
  auto impl = std::make_unique<Impl>();
  impl->target = target;
  auto file = gguf::File::Open(path);
  if (!file.ok()) return file.status();
  impl->file = std::shared_ptr<const gguf::File>(std::move(*file));
  auto spec = models::SpecFromGguf(*impl->file);
  if (!spec.ok()) return spec.status();
  if (spec->arch != "gemma4-assistant")
    return absl::InvalidArgumentError(StrCat(path, ": architecture ", spec->arch, " is not gemma4-assistant"));
  auto graph = models::BuildGemma4AssistantGraph(*spec, t.spec);
  if (!graph.ok()) return graph.status();
  if (auto st = models::CheckEveryTensorRead(*spec, *graph); !st.ok()) return st;
  impl->graph = *std::move(graph);
  std::map<std::string, std::shared_ptr<const gguf::File>> open = {{path, impl->file}};
  if (t.file) open.emplace(t.spec.file, t.file);
  auto weights = WeightSet::Bind(impl->graph, open);
  if (!weights.ok()) return weights.status();
  impl->weights = *std::move(weights);
  auto program = backends::Cpu().Compile(impl->graph, *impl->weights);
  if (!program.ok()) return program.status();
  impl->program = *std::move(program);
  impl->n_hidden = t.spec.n_embd;
  impl->n_vocab = spec->n_vocab;
  return std::unique_ptr<AssistantRunner>(new AssistantRunner(std::move(impl)));
}

absl::Status AssistantRunner::Run(const Session& target, std::span<const TokenId> tokens,
                                  std::span<const int32_t> positions, std::span<const float> hidden_in,
                                  std::vector<float>* logits, std::vector<float>* hidden) const {
  const int64_t T = static_cast<int64_t>(tokens.size());
  if (&target.model() != impl_->target.get())
    return absl::InvalidArgumentError("AssistantRunner::Run: the session is not of the assistant's target model");
  if (target.device() != "cpu")
    return absl::UnimplementedError(StrCat("the gemma4 assistant runs on the CPU; its target session is on ",
                                           target.device()));
  if (T == 0 || static_cast<int64_t>(positions.size()) != T ||
      static_cast<int64_t>(hidden_in.size()) != T * impl_->n_hidden)
    return absl::InvalidArgumentError(StrCat("AssistantRunner::Run: ", T, " tokens, ", positions.size(),
                                             " positions and ", hidden_in.size(), " hidden values (want ",
                                             T * impl_->n_hidden, ")"));
  std::vector<int64_t> rows(static_cast<size_t>(T));
  for (int64_t r = 0; r < T; ++r) rows[r] = r;
  backends::RunContext ctx;
  ctx.pool = SessionInternals::Pool(target);
  ctx.hidden = hidden;
  ctx.hidden_in = hidden_in.data();
  return impl_->program->Run(tokens.data(), positions.data(), T, rows, SessionInternals::Cache(target), ctx, logits);
}

}  // namespace uaii::runtime
