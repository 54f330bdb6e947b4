// Operator registry: every op type the IR knows, its inputs, attributes and shape
// rule. The table (registry.cpp) is the single list; the validator and the runtime
// both consult it. Op semantics are in docs/ir.md.
#pragma once
#include <functional>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"

namespace uaii::ir {

enum class AttrKind { kInt, kFloat, kString, kInts };

struct AttrSpec {
  std::string_view name;
  AttrKind kind;
  bool required;
};

// Input shapes in op order; nullptr for an absent optional input.
using ShapeFn = std::function<absl::StatusOr<std::vector<Shape>>(
    const Op& op, const std::vector<const Shape*>& inputs)>;

struct OpSchema {
  std::string_view type;
  int min_inputs;
  int max_inputs;
  int num_outputs;  // < 0: 1 .. -num_outputs (variadic; the shape rule fixes the count)
  std::vector<AttrSpec> attrs;
  ShapeFn infer;
};

// nullptr for an unknown type.
const OpSchema* FindOp(std::string_view type);
const std::vector<OpSchema>& AllOps();

}  // namespace uaii::ir
