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

struct TensorRef;

// How a weight's stored bytes become the graph tensor (docs/ir.md, "Views"; checked by
// ir/view.h, bound by runtime/view_weights.h). A TensorRef without a view is a GGUF
// tensor read as stored. With one, it is exactly one of:
//   * a stored tensor (`source_dtype` non-empty): the safetensors tensor `file#tensor`
//     of `source_dtype` and `source_shape`, taken through, in this order, the row
//     slice, the transpose, the widening to f32 and the add-one;
//   * a concat (`parts` non-empty): each part's elements back to back along the
//     tensor's leading dimension (each part a whole number of leading slices; parts
//     one rank below the tensor are stacked, as MoE expert banks are);
//   * synthetic f32 `values` (computed at build time, e.g. RoPE frequency factors).
// The result's elements, row-major, are the tensor's: its shape may differ by a
// reshape (same element count), never its dtype.
struct TensorView {
  std::string source_dtype;  // as stored, the safetensors name ("BF16", "F32", "U8", ...)
  Shape source_shape;        // as stored, outermost first
  int64_t row_begin = 0;     // row slice of the source's dimension 0:
  int64_t row_count = -1;    //   rows [row_begin, row_begin + row_count); -1 = to the end
  bool transpose = false;    // 2-D [a, b] read as [b, a] (GPT-2 Conv1D)
  bool widen_f32 = false;    // convert the stored elements to f32
  bool add_one = false;      // f32 value + 1 (Gemma RMSNorm weights store w - 1)
  std::vector<TensorRef> parts;  // concat along the leading dimension
  std::vector<float> values;     // synthetic f32 elements
  bool operator==(const TensorView&) const;
};

// A weight in a model file, printed `file#tensor`. `offset` (absolute, in the file)
// and `bytes` are what the binder reads; for a view they are the stored tensor's.
struct TensorRef {
  std::string file;
  std::string tensor;
  uint64_t offset = 0;
  uint64_t bytes = 0;
  std::optional<TensorView> view = std::nullopt;  // absent: the GGUF tensor as stored
  std::string ToString() const { return file + "#" + tensor; }
  bool operator==(const TensorRef&) const;
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
