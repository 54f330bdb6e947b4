#include "ir/view.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace uaii::ir {
namespace {

constexpr std::pair<std::string_view, int> kStored[] = {
    {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"F64", 8}, {"I8", 1},  {"U8", 1},
    {"I16", 2}, {"U16", 2}, {"I32", 4},  {"U32", 4}, {"BOOL", 1},
};

// Element counts a view may reach (2^50: far above any model, far below overflow).
constexpr int64_t kMaxElements = int64_t{1} << 50;

std::string Where(const TensorRef& r) { return r.file.empty() && r.tensor.empty() ? "" : r.ToString() + ": "; }

absl::StatusOr<ViewResult> ResolveStored(const TensorRef& r, const TensorView& v) {
  const std::string at = Where(r);
  if (!v.parts.empty() || !v.values.empty())
    return absl::InvalidArgumentError(absl::StrCat(at, "a stored view has no parts or values"));
  const int eb = StoredDtypeBytes(v.source_dtype);
  if (eb == 0) return absl::InvalidArgumentError(absl::StrCat(at, "source dtype \"", v.source_dtype, "\" is not readable"));
  int64_t n = 1;
  for (int64_t d : v.source_shape) {
    if (d <= 0 || d > kMaxElements / n)
      return absl::InvalidArgumentError(absl::StrCat(at, "source shape ", ShapeString(v.source_shape), " has dimension ", d));
    n *= d;
  }
  if (r.bytes != static_cast<uint64_t>(n) * eb)
    return absl::InvalidArgumentError(absl::StrCat(at, "declares ", r.bytes, " bytes; ", v.source_dtype, " ",
                                             ShapeString(v.source_shape), " is ", n * eb));
  ViewResult out;
  out.rows = v.source_shape.empty() ? 1 : v.source_shape[0];
  out.cols = out.rows > 0 ? n / out.rows : 0;
  const int64_t count = v.row_count < 0 ? out.rows - v.row_begin : v.row_count;
  if (v.row_begin < 0 || v.row_begin >= out.rows || v.row_count < -1 || count <= 0 || count > out.rows - v.row_begin)
    return absl::InvalidArgumentError(absl::StrCat(at, "row slice [", v.row_begin, ", +", v.row_count, ") outside the ",
                                             out.rows, " rows of ", ShapeString(v.source_shape)));
  out.rows = count;
  if (v.transpose) {
    if (v.source_shape.size() != 2)
      return absl::InvalidArgumentError(absl::StrCat(at, "transpose of the ", v.source_shape.size(), "-D source ",
                                               ShapeString(v.source_shape), " (only matrices transpose)"));
    std::swap(out.rows, out.cols);
  }
  out.elements = out.rows * out.cols;
  if (v.widen_f32) {
    out.dtype = TensorType::F32;
  } else if (v.source_dtype == "F32" || v.source_dtype == "F16" || v.source_dtype == "BF16") {
    out.dtype = v.source_dtype == "F32" ? TensorType::F32 : v.source_dtype == "F16" ? TensorType::F16 : TensorType::BF16;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(at, "stored ", v.source_dtype, " is read only widened (widen_f32)"));
  }
  if (v.add_one && out.dtype != TensorType::F32)
    return absl::InvalidArgumentError(absl::StrCat(at, "add_one needs an f32 result (set widen_f32)"));
  return out;
}

}  // namespace

int StoredDtypeBytes(std::string_view name) {
  for (const auto& [n, b] : kStored)
    if (n == name) return b;
  return 0;
}

absl::StatusOr<ViewResult> ResolveView(const TensorRef& r) {
  const TensorView& v = *r.view;
  if (!v.source_dtype.empty()) return ResolveStored(r, v);
  const bool ops = v.transpose || v.widen_f32 || v.add_one || v.row_begin != 0 || v.row_count != -1 ||
                   !v.source_shape.empty();
  if (!v.parts.empty()) {
    if (ops || !v.values.empty())
      return absl::InvalidArgumentError("a concat view has only parts (each part carries its own view)");
    ViewResult out;
    for (size_t i = 0; i < v.parts.size(); ++i) {
      const TensorRef& p = v.parts[i];
      if (!p.view) return absl::InvalidArgumentError(absl::StrCat("concat part ", i, " (", p.ToString(), ") has no view"));
      auto pr = ResolveView(p);
      if (!pr.ok())
        return absl::InvalidArgumentError(absl::StrCat("concat part ", i, ": ", std::string(pr.status().message())));
      if (i > 0 && pr->dtype != out.dtype)
        return absl::InvalidArgumentError(absl::StrCat("concat parts disagree: part ", i, " (", p.ToString(), ") yields ",
                                                 std::string(TensorTypeName(static_cast<uint32_t>(pr->dtype))), ", part 0 ",
                                                 std::string(TensorTypeName(static_cast<uint32_t>(out.dtype)))));
      out.dtype = pr->dtype;
      if (pr->elements > kMaxElements - out.elements)
        return absl::InvalidArgumentError(absl::StrCat("concat parts exceed ", kMaxElements, " elements"));
      out.elements += pr->elements;
      out.part_elements.push_back(pr->elements);
    }
    return out;
  }
  if (!v.values.empty()) {
    if (ops) return absl::InvalidArgumentError("a synthetic view has only values");
    ViewResult out;
    out.elements = out.rows = static_cast<int64_t>(v.values.size());
    return out;
  }
  return absl::InvalidArgumentError("the view declares no source_dtype, parts or values");
}

absl::Status CheckWeightView(const Tensor& t) {
  if (!t.weight || !t.weight->view) return absl::OkStatus();
  auto bad = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat("bad tensor: '", t.name, "' view: ", why));
  };
  auto r = ResolveView(*t.weight);
  if (!r.ok()) return bad(std::string(r.status().message()));
  int64_t n = 1;
  for (int64_t d : t.shape) {
    if (d <= 0 || d > kMaxElements / n)
      return bad(absl::StrCat("a weight has fixed dimensions of at most ", kMaxElements, " elements, not ",
                              ShapeString(t.shape)));
    n *= d;
  }
  if (r->dtype != t.dtype)
    return bad(absl::StrCat("yields ", std::string(TensorTypeName(static_cast<uint32_t>(r->dtype))), ", the tensor is ",
                      std::string(TensorTypeName(static_cast<uint32_t>(t.dtype)))));
  if (r->elements != n)
    return bad(absl::StrCat("yields ", r->elements, " elements, the tensor ", ShapeString(t.shape), " has ", n));
  const int64_t slice = t.shape.empty() ? 1 : n / t.shape[0];
  for (size_t i = 0; i < r->part_elements.size(); ++i)
    if (r->part_elements[i] % slice != 0)
      return bad(absl::StrCat("concat part ", i, " (", t.weight->view->parts[i].ToString(), ") has ", r->part_elements[i],
                        " elements, not whole leading slices of ", slice, " elements of ", ShapeString(t.shape)));
  return absl::OkStatus();
}

}  // namespace uaii::ir
