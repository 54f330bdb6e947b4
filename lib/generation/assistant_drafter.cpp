// Kind (b) of uaii/drafter.h: the gemma4 assistant (runtime/assistant_runner.h). It has
// no KV cache and no state of its own: every proposal of a step is one row at the
// pending token's position over the target's cache, fed the target's hidden row (the
// one whose logits chose the pending token) and then its own next hidden row, as
// llama.cpp's MTP driver runs it (common/speculative.cpp: the same position for every
// draft step).
#include "formats/gguf_file.h"
#include "runtime/assistant_runner.h"
#include "uaii/drafter.h"
#include "util/str_cat.h"

namespace uaii {
namespace {

class AssistantDrafter final : public Drafter {
 public:
  explicit AssistantDrafter(std::unique_ptr<runtime::AssistantRunner> runner) : runner_(std::move(runner)) {}
  std::string_view kind() const override { return "assistant"; }
  bool needs_target_hidden() const override { return true; }

  absl::StatusOr<std::vector<DraftToken>> Propose(const DraftContext& ctx) override {
    std::vector<DraftToken> out;
    const int64_t width = runner_->n_hidden();
    if (ctx.target == nullptr || ctx.history.empty() || static_cast<int64_t>(ctx.target_hidden.size()) < width)
      return out;
    const int32_t pos0 = static_cast<int32_t>(ctx.history.size() - 1);  // the pending token's
    h_.assign(ctx.target_hidden.end() - width, ctx.target_hidden.end());
    TokenId token = ctx.history.back();
    for (int i = 0; i < ctx.max_len; ++i) {
      const TokenId tokens[1] = {token};
      const int32_t positions[1] = {pos0};
      if (absl::Status st = runner_->Run(*ctx.target, tokens, positions, h_, &logits_, &next_); !st.ok()) return st;
      auto pick = ctx.picker->Pick(logits_);
      if (!pick.ok()) return pick.status();
      if (!*pick) break;
      token = (*pick)->token;
      out.push_back(**std::move(pick));
      h_.swap(next_);
    }
    return out;
  }
  void Accept(int) override {}
  void Rollback(int64_t) override {}

 private:
  std::unique_ptr<runtime::AssistantRunner> runner_;
  std::vector<float> h_, next_, logits_;
};

}  // namespace

bool IsAssistantDrafterFile(const std::string& path) {
  auto f = gguf::File::Open(path);
  if (!f.ok()) return false;
  auto arch = (*f)->GetString("general.architecture");
  return arch.ok() && *arch == "gemma4-assistant";
}

absl::StatusOr<std::unique_ptr<Drafter>> MakeAssistantDrafter(std::shared_ptr<const Model> target,
                                                              const std::string& path) {
  auto runner = runtime::AssistantRunner::Load(path, std::move(target));
  if (!runner.ok()) return runner.status();
  return std::unique_ptr<Drafter>(new AssistantDrafter(*std::move(runner)));
}

}  // namespace uaii
