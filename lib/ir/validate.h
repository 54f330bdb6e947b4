// Graph validation. Every error message starts with its kind, then names the op and
// tensor involved:
//   "unknown op: ..."        op type not in the registry
//   "bad arity: ..."         wrong number of inputs or outputs
//   "bad attribute: ..."     missing, unknown, wrongly typed or out-of-range attribute
//   "dangling tensor: ..."   a name that is not declared, or read but never produced
//   "duplicate tensor: ..."  a tensor declared twice or produced by two ops
//   "cycle: ..."             ops that depend on each other
//   "bad tensor: ..."        unknown dtype id, a dimension that is not positive / T / R, or
//                            a weight view whose arithmetic does not fit the tensor (ir/view.h)
//   "shape mismatch: ..."    inferred shape differs from the declared one, or operands
//                            that do not fit the op
#pragma once
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"

namespace uaii::ir {

// Validates the graph and returns op indices in an execution order (inputs before
// users; ties keep the file order).
absl::StatusOr<std::vector<size_t>> Validate(const Graph& g);

}  // namespace uaii::ir
