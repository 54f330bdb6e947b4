#include "runtime/hf_weights.h"

#include <cstring>

#include "util/str_cat.h"

namespace uaii::runtime {
namespace {

int ElementBytes(TensorType t) { return t == TensorType::F32 ? 4 : 2; }

absl::StatusOr<const uint8_t*> TensorData(const hf::HfModel& m, const hf::HfTensor& t) {
  for (const auto& f : m.files)
    if (f->path() == t.file) {
      if (t.offset + t.bytes > f->file_bytes())
        return absl::OutOfRangeError(StrCat(t.file, "#", t.name, ": bytes [", t.offset, ", ", t.offset + t.bytes,
                                            ") outside the file of ", f->file_bytes()));
      return f->mapping()->data() + t.offset;
    }
  return absl::NotFoundError(StrCat(t.file, "#", t.name, ": the weight file is not mapped"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<WeightSet>> BindHfWeights(const hf::HfModel& m, const models::HfGraph& g) {
  std::map<std::string, BoundWeight> bound;
  std::vector<std::shared_ptr<const void>> owned;
  for (const auto& t : g.graph.tensors) {
    if (!t.weight) continue;
    auto it = g.views.find(t.name);
    if (it == g.views.end()) return absl::InternalError(StrCat("HF graph weight ", t.name, " has no view"));
    const models::HfWeightView& v = it->second;
    BoundWeight w;
    w.type = v.dtype;
    w.shape = v.shape;
    if (w.shape != t.shape || w.type != t.dtype)
      return absl::InternalError(StrCat("HF graph weight ", t.name, ": view and graph disagree"));
    int64_t numel = 1;
    for (int64_t d : w.shape) numel *= d;
    const int64_t cols = w.shape.empty() ? 1 : w.shape.back();
    w.row_bytes = static_cast<uint64_t>(cols) * ElementBytes(w.type);
    w.bytes = static_cast<uint64_t>(numel) * ElementBytes(w.type);
    if (!v.src && v.experts.empty()) {  // synthetic
      if (static_cast<int64_t>(v.values.size()) != numel)
        return absl::InternalError(StrCat("HF graph weight ", t.name, ": synthetic size mismatch"));
      auto buf = std::make_shared<std::vector<float>>(v.values);
      w.data = reinterpret_cast<const uint8_t*>(buf->data());
      owned.push_back(buf);
      bound[t.name] = std::move(w);
      continue;
    }
    if (!v.experts.empty()) {  // MoE bank: experts stacked in order (owned)
      auto buf = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(w.bytes));
      const uint64_t slice = w.bytes / v.experts.size();
      for (size_t e = 0; e < v.experts.size(); ++e) {
        const hf::HfTensor& x = *v.experts[e];
        uint8_t* dst = buf->data() + e * slice;
        if (v.to_f32) {
          auto f = hf::MaterializeF32(m, x);
          if (!f.ok()) return f.status();
          if (f->size() * 4 != slice) return absl::InvalidArgumentError(StrCat(x.file, "#", x.name, ": expert size differs"));
          std::memcpy(dst, f->data(), slice);
        } else {
          if (x.dtype != w.type || x.bytes != slice)
            return absl::InvalidArgumentError(StrCat(x.file, "#", x.name, ": expert type or size differs from expert 0"));
          auto data = TensorData(m, x);
          if (!data.ok()) return data.status();
          std::memcpy(dst, *data, slice);
        }
      }
      w.data = buf->data();
      owned.push_back(buf);
      bound[t.name] = std::move(w);
      continue;
    }
    const hf::HfTensor& src = *v.src;
    auto data = TensorData(m, src);
    if (!data.ok()) return data.status();
    const std::string where = StrCat(src.file, "#", src.name);
    // Source geometry after the optional transpose: [rows, cols] (1-D: [n, 1]).
    std::vector<int64_t> s = src.shape;
    if (s.empty()) s = {1};
    const int64_t a = s[0], b = s.size() > 1 ? s[1] : 1;
    const int64_t src_cols = v.transpose ? a : b;
    const int64_t src_rows = v.transpose ? b : a;
    const int64_t rows = src_rows;
    if (src_cols * rows != numel)
      return absl::InvalidArgumentError(StrCat(where, ": ", numel, " elements do not fit shape ", src.shape.size(),
                                               "-D [", a, ", ", b, "]"));
    const bool widen = v.plus_one || src.promote_to_f32 || (v.to_f32 && src.dtype != TensorType::F32);
    if (!widen && !v.transpose && src.dtype == w.type) {
      // Zero-copy: the mapped tensor itself.
      w.data = *data;
      w.file = src.file;
      w.offset = src.offset;
      bound[t.name] = std::move(w);
      continue;
    }
    // Copy: widen (whole tensor to f32 first) and/or transpose.
    const int eb_src = widen ? 4 : ElementBytes(src.dtype);
    std::vector<uint8_t> full;
    const uint8_t* base = *data;
    if (widen) {
      std::vector<float> f;
      if (src.promote_to_f32) {
        auto mf = hf::MaterializeF32(m, src);
        if (!mf.ok()) return mf.status();
        f = std::move(*mf);
      } else {
        f.resize(static_cast<size_t>(a * b));
        if (auto st = safetensors::ConvertToF32(src.stored, *data, f.size(), f.data(), src.name); !st.ok()) return st;
      }
      if (v.plus_one)
        for (float& x : f) x += 1.0f;
      full.resize(f.size() * 4);
      std::memcpy(full.data(), f.data(), full.size());
      base = full.data();
    }
    auto buf = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(numel) * eb_src);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < src_cols; ++c) {
        const int64_t idx = v.transpose ? c * b + r : r * b + c;  // element in the [a, b] source
        std::memcpy(buf->data() + (r * src_cols + c) * eb_src, base + idx * eb_src, eb_src);
      }
    if (eb_src != ElementBytes(w.type))
      return absl::InternalError(StrCat(where, ": copied element size does not match the graph type"));
    w.data = buf->data();
    owned.push_back(buf);
    bound[t.name] = std::move(w);
  }
  return WeightSet::FromBound(std::move(bound), std::move(owned));
}

}  // namespace uaii::runtime
