// Kind (c) of uaii/drafter.h, `--draft auto`: a multi-token-prediction head inside the
// target's trunk (Qwen 3.5's MTP block reads the trunk's last hidden state and the
// pending token's embedding, runs one extra decoder layer with its own small KV cache,
// and shares the lm head). No architecture uaii reads carries one yet, so this names
// the architecture and fails; the issue that adds Qwen 3.5 adds its case here, as a
// Drafter whose needs_target_hidden() is true.
#include "uaii/drafter.h"
#include "util/str_cat.h"

namespace uaii {

absl::StatusOr<std::unique_ptr<Drafter>> MakeInTrunkDrafter(const Model& target) {
  return absl::InvalidArgumentError(
      StrCat("--draft auto: architecture '", target.info().architecture,
             "' has no in-trunk multi-token-prediction head to draft with (none of the architectures uaii "
             "reads has one yet); give a draft model instead (--draft PATH)"));
}

}  // namespace uaii
