// Rewinding the target after a speculative verification batch: the rows after the
// last kept proposal must leave no trace, so what follows is bit for bit what decoding
// without speculation gives.
//
// Every family uaii runs today is attention-only: a KV position depends only on its
// token and the ones before it, so dropping positions (Session::Truncate) is an exact
// rollback. A family with recurrent state (linear-attention or SSM layers, as Qwen 3.5's
// gated delta-net) cannot drop positions from a running state: its rollback snapshots
// the state before the batch (BeforeBatch) and, in KeepPrefix, restores it and replays
// the kept rows. MakeTargetRollback is where such a family plugs its own in.
#pragma once
#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "uaii/session.h"

namespace uaii {

class TargetRollback {
 public:
  virtual ~TargetRollback() = default;
  // Before a verification batch is evaluated at position target.n_past().
  virtual absl::Status BeforeBatch(Session& target) = 0;
  // After it: keep positions < n (the batch's start < n <= its end).
  virtual absl::Status KeepPrefix(Session& target, int64_t n) = 0;
};

// The rollback `target`'s family needs: KV truncation for every family today.
std::unique_ptr<TargetRollback> MakeTargetRollback(const Model& target);

}  // namespace uaii
