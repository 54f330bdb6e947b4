#include "runtime/view_weights.h"

#include <cstring>
#include <unordered_map>
#include <vector>

#include "ir/view.h"
#include "util/str_cat.h"

namespace uaii::runtime {
namespace {

int ElementBytes(TensorType t) { return t == TensorType::F32 ? 4 : 2; }

// out [rows, cols] = the transpose of `in` [cols, rows], elements of `eb` bytes.
void Transpose(const uint8_t* in, int64_t rows, int64_t cols, int eb, uint8_t* out) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) std::memcpy(out + (r * cols + c) * eb, in + (c * rows + r) * eb, eb);
}

class ViewBinder {
 public:
  explicit ViewBinder(SafetensorsFiles files) : files_(std::move(files)) {}

  absl::Status Bind(const ir::Tensor& t);

  std::map<std::string, BoundWeight> bound;
  std::vector<std::shared_ptr<const void>> Owners() {
    for (auto& [path, f] : files_) owned_.push_back(f);  // the mappings zero-copy weights point into
    return std::move(owned_);
  }

 private:
  absl::StatusOr<const uint8_t*> Source(const ir::TensorRef& r, const std::string& weight);
  absl::Status Write(const ir::TensorRef& r, const ir::ViewResult& res, uint8_t* dst, const std::string& weight);

  SafetensorsFiles files_;
  // Per file, its header's tensors by name (MoE checkpoints hold tens of thousands).
  std::map<std::string, std::unordered_map<std::string, const safetensors::TensorInfo*>> index_;
  std::vector<std::shared_ptr<const void>> owned_;
};

// The stored bytes of a view's source, after checking that the file's header says
// what the reference declares (a graph file may be stale or hand-edited).
absl::StatusOr<const uint8_t*> ViewBinder::Source(const ir::TensorRef& r, const std::string& weight) {
  const std::string at = StrCat("weight '", weight, "' view source ", r.ToString());
  auto it = files_.find(r.file);
  if (it == files_.end()) {
    auto f = safetensors::File::Open(r.file);
    if (!f.ok()) return absl::Status(f.status().code(), StrCat(at, ": ", std::string(f.status().message())));
    it = files_.emplace(r.file, std::shared_ptr<const safetensors::File>(std::move(*f))).first;
  }
  const safetensors::File& f = *it->second;
  if (r.offset > f.file_bytes() || r.bytes > f.file_bytes() - r.offset)
    return absl::OutOfRangeError(StrCat(at, ": bytes [", r.offset, ", ", r.offset + r.bytes, ") outside the file of ",
                                        f.file_bytes(), " bytes"));
  auto [index, fresh] = index_.try_emplace(r.file);
  if (fresh)
    for (const auto& t : f.header().tensors) index->second.emplace(t.name, &t);
  auto found = index->second.find(r.tensor);
  if (found == index->second.end()) return absl::NotFoundError(StrCat(at, ": tensor not in the file"));
  const safetensors::TensorInfo* info = found->second;
  const ir::TensorView& v = *r.view;
  if (safetensors::DtypeName(info->dtype) != v.source_dtype || info->shape != v.source_shape ||
      f.FileOffset(*info) != r.offset || info->bytes() != r.bytes)
    return absl::InvalidArgumentError(StrCat(at, ": the file has ", std::string(safetensors::DtypeName(info->dtype)),
                                             " ", ir::ShapeString(info->shape), " at bytes [", f.FileOffset(*info), ", ",
                                             f.FileOffset(*info) + info->bytes(), "), the view declares ",
                                             v.source_dtype, " ", ir::ShapeString(v.source_shape), " at [", r.offset,
                                             ", ", r.offset + r.bytes, ")"));
  return f.Data(*info);
}

// Writes the elements `r`'s view yields (`res`, from ir::ResolveView) to `dst`.
absl::Status ViewBinder::Write(const ir::TensorRef& r, const ir::ViewResult& res, uint8_t* dst,
                               const std::string& weight) {
  const ir::TensorView& v = *r.view;
  if (!v.values.empty()) {
    std::memcpy(dst, v.values.data(), v.values.size() * sizeof(float));
    return absl::OkStatus();
  }
  if (!v.parts.empty()) {
    for (const auto& p : v.parts) {
      auto pr = ir::ResolveView(p);
      if (!pr.ok()) return pr.status();
      if (auto st = Write(p, *pr, dst, weight); !st.ok()) return st;
      dst += pr->elements * ElementBytes(pr->dtype);
    }
    return absl::OkStatus();
  }
  auto src = Source(r, weight);
  if (!src.ok()) return src.status();
  const int sb = ir::StoredDtypeBytes(v.source_dtype);
  const int64_t src_cols = v.transpose ? res.rows : res.cols;  // the sliced source is [n / src_cols, src_cols]
  const uint8_t* s = *src + v.row_begin * src_cols * sb;
  const auto n = static_cast<size_t>(res.elements);
  if (v.widen_f32) {
    std::vector<float> tmp(v.transpose ? n : 0);
    float* f = v.transpose ? tmp.data() : reinterpret_cast<float*>(dst);
    const safetensors::DtypeInfo* d = safetensors::FindDtype(v.source_dtype);
    if (auto st = safetensors::ConvertToF32(d->dtype, s, n, f, r.tensor); !st.ok())
      return absl::Status(st.code(), StrCat("weight '", weight, "': ", std::string(st.message())));
    if (v.transpose) Transpose(reinterpret_cast<const uint8_t*>(tmp.data()), res.rows, res.cols, 4, dst);
  } else if (v.transpose) {
    Transpose(s, res.rows, res.cols, sb, dst);
  } else {
    std::memcpy(dst, s, n * sb);
  }
  if (v.add_one)
    for (float* f = reinterpret_cast<float*>(dst); f != reinterpret_cast<float*>(dst) + n; ++f) *f += 1.0f;
  return absl::OkStatus();
}

absl::Status ViewBinder::Bind(const ir::Tensor& t) {
  if (auto st = ir::CheckWeightView(t); !st.ok()) return st;
  const ir::TensorRef& r = *t.weight;
  const ir::TensorView& v = *r.view;
  auto res = ir::ResolveView(r);
  if (!res.ok()) return res.status();
  BoundWeight w;
  w.type = t.dtype;
  w.shape = t.shape;
  const int eb = ElementBytes(w.type);
  w.bytes = static_cast<uint64_t>(res->elements) * eb;
  w.row_bytes = static_cast<uint64_t>(t.shape.empty() ? 1 : t.shape.back()) * eb;
  if (!v.source_dtype.empty() && !v.widen_f32 && !v.transpose && !v.add_one) {
    // Zero-copy: the (row-sliced) stored tensor in the mapping.
    auto src = Source(r, t.name);
    if (!src.ok()) return src.status();
    const uint64_t skip = static_cast<uint64_t>(v.row_begin * res->cols) * eb;
    w.data = *src + skip;
    w.file = r.file;
    w.offset = r.offset + skip;
  } else {
    auto buf = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(w.bytes));
    if (auto st = Write(r, *res, buf->data(), t.name); !st.ok()) return st;
    w.data = buf->data();
    owned_.push_back(std::move(buf));
  }
  bound[t.name] = std::move(w);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<WeightSet>> BindGraphWeights(
    const ir::Graph& g, std::map<std::string, std::shared_ptr<const gguf::File>> gguf_files,
    SafetensorsFiles safetensors_files) {
  auto ws = WeightSet::Bind(g, std::move(gguf_files));
  if (!ws.ok()) return ws.status();
  ViewBinder views(std::move(safetensors_files));
  for (const auto& t : g.tensors)
    if (t.weight && t.weight->view)
      if (auto st = views.Bind(t); !st.ok()) return st;
  (*ws)->Adopt(std::move(views.bound), views.Owners());
  return ws;
}

}  // namespace uaii::runtime
