// The arithmetic of weight views (ir::TensorView, graph.h): what dtype and how many
// elements a view yields, checked without opening a file. The validator (validate.h)
// and the binder (runtime/view_weights.h) both go through it, so a graph that
// validates binds to exactly the bytes its views describe.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"

namespace uaii::ir {

// Bytes per element of a stored dtype a view may read (the safetensors names the
// binder converts: F32 F16 BF16 F64 I8 U8 I16 U16 I32 U32 BOOL); 0 for others.
int StoredDtypeBytes(std::string_view safetensors_dtype);

struct ViewResult {
  TensorType dtype = TensorType::F32;  // F32, F16 or BF16
  int64_t elements = 0;
  int64_t rows = 1, cols = 1;          // a stored view after slice and transpose (2-D; 1-D: [n, 1])
  std::vector<int64_t> part_elements;  // a concat: each part's element count
};

// What `r`'s view yields. InvalidArgument naming what does not fit (the source bytes,
// the row slice, a transpose of a non-matrix, a stored type read without widening,
// add-one on a non-f32 result, parts that disagree on their type). `r` must have a view.
absl::StatusOr<ViewResult> ResolveView(const TensorRef& r);

// Ok when t's weight has no view, or its view yields t's dtype and element count with
// concat parts that are whole leading slices of t; else "bad tensor: '<name>' view: ...".
absl::Status CheckWeightView(const Tensor& t);

}  // namespace uaii::ir
