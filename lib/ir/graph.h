// In-memory IR graph: named tensors, typed ops with attributes. Weights are
// `file#tensor` references resolved by the runtime's binder (never copied here).
// Serialized form: schemas/uaii_ir.fbs (serialize.h).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "formats/tensor_type.h"

namespace uaii::ir {

// Symbolic dimensions, bound per forward call.
inline constexpr int64_t kDimTokens = -1;  // T: tokens in the batch
inline constexpr int64_t kDimRows = -2;    // R: rows whose output the caller wants

using Shape = std::vector<int64_t>;
std::string ShapeString(const Shape& s);  // "[T,640]"

// A weight in a model file, printed `file#tensor`.
struct TensorRef {
  std::string file;
  std::string tensor;
  uint64_t offset = 0;
  uint64_t bytes = 0;
  std::string ToString() const { return file + "#" + tensor; }
};

struct Tensor {
  std::string name;
  TensorType dtype = TensorType::F32;
  Shape shape;
  std::optional<TensorRef> weight;  // set for weights
};

using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>>;

struct Op {
  std::string name;  // for messages
  std::string type;  // registry name
  std::vector<std::string> inputs;  // "" = absent optional input
  std::vector<std::string> outputs;
  std::map<std::string, AttrValue> attrs;

  bool Has(std::string_view a) const { return attrs.count(std::string(a)) > 0; }
  // Typed reads; callers run after validation, so a missing attribute gives `dflt`.
  int64_t Int(std::string_view a, int64_t dflt = 0) const;
  double Float(std::string_view a, double dflt = 0) const;
  std::string Str(std::string_view a, std::string dflt = "") const;
  std::vector<int64_t> Ints(std::string_view a) const;
};

struct Graph {
  std::string name;
  std::vector<Tensor> tensors;
  std::vector<Op> ops;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<std::pair<std::string, std::string>> metadata;

  const Tensor* FindTensor(std::string_view name) const;
  Tensor* FindTensor(std::string_view name);
  std::string_view Meta(std::string_view key) const;  // "" when absent
};

}  // namespace uaii::ir
