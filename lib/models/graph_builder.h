// GraphBuilder: the small vocabulary family builders compose graphs with. It declares
// weights from the ModelSpec's tensor table (as `file#tensor` references), declares
// each op's output with the shape the registry infers, and remembers the first error
// (a missing tensor names itself) so builders read top to bottom without checks.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "models/spec.h"

namespace uaii::models {

// The metadata key prefix of a tensor the file may carry and the graph does not read.
inline constexpr char kUnusedTensorMeta[] = "unused_tensor:";

class GraphBuilder {
 public:
  explicit GraphBuilder(const ModelSpec& spec);

  const ModelSpec& spec() const { return spec_; }
  // A required weight; records "tensor NAME missing" when the file lacks it.
  std::string Weight(const std::string& name);
  // An optional weight: "" when the file lacks it.
  std::string OptionalWeight(const std::string& name);
  // Same, checked against the shape the family expects (outermost first, [out, in]
  // for matmul weights): a mismatch names the tensor, the expected and the actual shape.
  std::string Weight(const std::string& name, const ir::Shape& shape);
  std::string OptionalWeight(const std::string& name, const ir::Shape& shape);
  std::string Input(const std::string& name, TensorType dtype, ir::Shape shape);
  // A tensor llama.cpp creates as optional (TENSOR_NOT_REQUIRED) but does not use in
  // this configuration (a shared-KV layer's own K/V): accepted when present, checked
  // against `shape` as llama.cpp's create_tensor checks it, never loaded. Recorded as
  // graph metadata "unused_tensor:<name>" = `why`, which BuildGraph's unread-tensor
  // check honours.
  void Unused(const std::string& name, const ir::Shape& shape, const std::string& why);
  // A weight of another model's file (a drafter reading its target's embeddings),
  // named "<other.arch>:<name>" in this graph; checked like Weight.
  std::string ExternalWeight(const ModelSpec& other, const std::string& name, const ir::Shape& shape);

  // Appends an op; its output is named `out` and gets the inferred shape.
  std::string Op(const std::string& type, std::vector<std::string> inputs, const std::string& out,
                 std::map<std::string, ir::AttrValue> attrs = {});
  const ir::Shape& ShapeOf(const std::string& tensor) const;

  void Meta(const std::string& key, const std::string& value) { graph_.metadata.emplace_back(key, value); }
  // Validates and returns the graph, or the first error.
  absl::StatusOr<ir::Graph> Finish(std::vector<std::string> outputs);

 private:
  const ModelSpec& spec_;
  ir::Graph graph_;
  std::map<std::string, size_t> index_;
  absl::Status status_;
};

}  // namespace uaii::models
