#include "ir/graph.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace uaii::ir {

std::string ShapeString(const Shape& s) {
  return absl::StrCat("[", absl::StrJoin(s, ",", [](std::string* out, int64_t d) {
    if (d == kDimTokens) out->append("T");
    else if (d == kDimRows) out->append("R");
    else absl::StrAppend(out, d);
  }), "]");
}

bool TensorView::operator==(const TensorView& o) const {
  return source_dtype == o.source_dtype && source_shape == o.source_shape && row_begin == o.row_begin &&
         row_count == o.row_count && transpose == o.transpose && widen_f32 == o.widen_f32 && add_one == o.add_one &&
         parts == o.parts && values == o.values;
}

bool TensorRef::operator==(const TensorRef& o) const {
  return file == o.file && tensor == o.tensor && offset == o.offset && bytes == o.bytes && view == o.view;
}

int64_t Op::Int(std::string_view a, int64_t dflt) const {
  auto it = attrs.find(std::string(a));
  if (it == attrs.end()) return dflt;
  if (auto* v = std::get_if<int64_t>(&it->second)) return *v;
  if (auto* v = std::get_if<double>(&it->second)) return static_cast<int64_t>(*v);
  return dflt;
}

double Op::Float(std::string_view a, double dflt) const {
  auto it = attrs.find(std::string(a));
  if (it == attrs.end()) return dflt;
  if (auto* v = std::get_if<double>(&it->second)) return *v;
  if (auto* v = std::get_if<int64_t>(&it->second)) return static_cast<double>(*v);
  return dflt;
}

std::string Op::Str(std::string_view a, std::string dflt) const {
  auto it = attrs.find(std::string(a));
  if (it == attrs.end()) return dflt;
  if (auto* v = std::get_if<std::string>(&it->second)) return *v;
  return dflt;
}

std::vector<int64_t> Op::Ints(std::string_view a) const {
  auto it = attrs.find(std::string(a));
  if (it == attrs.end()) return {};
  if (auto* v = std::get_if<std::vector<int64_t>>(&it->second)) return *v;
  return {};
}

const Tensor* Graph::FindTensor(std::string_view n) const {
  for (const auto& t : tensors)
    if (t.name == n) return &t;
  return nullptr;
}

Tensor* Graph::FindTensor(std::string_view n) {
  for (auto& t : tensors)
    if (t.name == n) return &t;
  return nullptr;
}

std::string_view Graph::Meta(std::string_view key) const {
  for (const auto& [k, v] : metadata)
    if (k == key) return v;
  return {};
}

}  // namespace uaii::ir
