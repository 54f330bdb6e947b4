#include "generation/target_rollback.h"

namespace uaii {
namespace {

class KvTruncation final : public TargetRollback {
 public:
  absl::Status BeforeBatch(Session&) override { return absl::OkStatus(); }
  absl::Status KeepPrefix(Session& target, int64_t n) override {
    target.Truncate(n);
    return absl::OkStatus();
  }
};

}  // namespace

std::unique_ptr<TargetRollback> MakeTargetRollback(const Model&) { return std::make_unique<KvTruncation>(); }

}  // namespace uaii
