// Kind (a) of uaii/drafter.h: a separate draft model with the target's vocabulary. Its
// own Session holds the conversation as far as it has seen it; each Propose brings that
// KV cache in step with the history (keeping the common prefix), then decodes one
// proposal after another.
#include <algorithm>

#include "uaii/drafter.h"
#include "util/str_cat.h"

namespace uaii {
namespace {

class ModelDrafter final : public Drafter {
 public:
  explicit ModelDrafter(std::unique_ptr<Session> s) : session_(std::move(s)) {}
  std::string_view kind() const override { return "model"; }

  absl::StatusOr<std::vector<DraftToken>> Propose(const DraftContext& ctx) override {
    std::vector<DraftToken> out;
    const std::span<const TokenId> prefix = ctx.history;
    // Past its own context the draft has nothing to say; decoding goes on without it.
    if (prefix.empty() || static_cast<int64_t>(prefix.size()) >= session_->max_context()) return out;
    size_t keep = 0;
    const size_t limit = std::min(history_.size(), prefix.size() - 1);
    while (keep < limit && history_[keep] == prefix[keep]) ++keep;
    session_->Truncate(static_cast<int64_t>(keep));
    history_.resize(keep);
    if (absl::Status st = session_->EvalInto(prefix.subspan(keep), &logits_); !st.ok()) {
      history_.resize(static_cast<size_t>(session_->n_past()));
      return st;
    }
    history_.assign(prefix.begin(), prefix.end());
    base_ = history_.size();
    while (static_cast<int>(out.size()) < ctx.max_len) {
      auto pick = ctx.picker->Pick(logits_);
      if (!pick.ok()) return pick.status();
      if (!*pick) break;
      out.push_back(**std::move(pick));
      // The last proposal needs no decode; nor one the draft's context cannot hold.
      if (static_cast<int>(out.size()) == ctx.max_len || session_->n_past() >= session_->max_context()) break;
      if (absl::Status st = session_->DecodeInto(out.back().token, &logits_); !st.ok()) return st;
      history_.push_back(out.back().token);
    }
    return out;
  }

  void Accept(int n_accepted) override {
    // Positions past the kept proposals hold rejected tokens: drop them now (the next
    // Propose would find the difference too, this just spares the comparison).
    const size_t keep = std::min(history_.size(), base_ + static_cast<size_t>(std::max(0, n_accepted)));
    session_->Truncate(static_cast<int64_t>(keep));
    history_.resize(keep);
  }

  void Rollback(int64_t n) override {
    const size_t keep = std::min(history_.size(), static_cast<size_t>(std::max<int64_t>(0, n)));
    session_->Truncate(static_cast<int64_t>(keep));
    history_.resize(keep);
    base_ = std::min(base_, keep);
  }

 private:
  std::unique_ptr<Session> session_;
  std::vector<TokenId> history_;  // what the draft's KV cache holds
  size_t base_ = 0;               // history_'s length before the last proposals
  std::vector<float> logits_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Drafter>> MakeModelDrafter(const Model& target, int64_t target_max_context,
                                                          std::shared_ptr<const Model> draft,
                                                          const SessionOptions& options) {
  if (!draft) return absl::InvalidArgumentError("the draft model is null");
  const Tokenizer& a = target.tokenizer();
  const Tokenizer& b = draft->tokenizer();
  if (a.vocab_size() != b.vocab_size())
    return absl::InvalidArgumentError(StrCat("the draft model's vocabulary has ", b.vocab_size(), " tokens, the model's ",
                                             a.vocab_size(), ": speculation needs the same vocabulary"));
  for (size_t id = 0; id < a.vocab_size(); ++id) {
    const TokenId t = static_cast<TokenId>(id);
    if (a.Piece(t) != b.Piece(t))
      return absl::InvalidArgumentError(StrCat("the draft model's token ", id, " is \"", b.Piece(t), "\", the model's \"",
                                               a.Piece(t), "\": speculation needs the same vocabulary"));
  }
  SessionOptions o = options;
  const int64_t train = draft->info().n_ctx_train;
  o.max_context = train > 0 ? std::min(target_max_context, train) : target_max_context;
  auto s = Session::Create(std::move(draft), o);
  if (!s.ok()) return s.status();
  return std::unique_ptr<Drafter>(new ModelDrafter(*std::move(s)));
}

}  // namespace uaii
