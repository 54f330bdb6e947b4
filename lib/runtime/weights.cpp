#include "runtime/weights.h"

#include "util/str_cat.h"

namespace uaii::runtime {

absl::StatusOr<std::unique_ptr<WeightSet>> WeightSet::Bind(
    const ir::Graph& g, std::map<std::string, std::shared_ptr<const gguf::File>> open) {
  auto ws = std::make_unique<WeightSet>();
  ws->files_ = std::move(open);
  for (const auto& t : g.tensors) {
    if (!t.weight) continue;
    const ir::TensorRef& ref = *t.weight;
    auto fit = ws->files_.find(ref.file);
    if (fit == ws->files_.end()) {
      auto f = gguf::File::Open(ref.file);
      if (!f.ok()) return f.status();
      fit = ws->files_.emplace(ref.file, std::shared_ptr<const gguf::File>(std::move(*f))).first;
    }
    const gguf::TensorInfo* info = fit->second->FindTensor(ref.tensor);
    if (!info) return absl::NotFoundError(StrCat(ref.ToString(), ": tensor not in file"));
    std::vector<int64_t> shape(info->dims.rbegin(), info->dims.rend());
    if (static_cast<uint32_t>(t.dtype) != info->type_id || shape != t.shape)
      return absl::InvalidArgumentError(StrCat(ref.ToString(), ": file has ", TensorTypeName(info->type_id), " ",
                                               ir::ShapeString(shape), ", graph expects ",
                                               TensorTypeName(static_cast<uint32_t>(t.dtype)), " ",
                                               ir::ShapeString(t.shape)));
    if (!info->traits || !info->traits->dequantize)
      return absl::UnimplementedError(StrCat(ref.ToString(), ": tensor type ", TensorTypeName(info->type_id),
                                             " has no kernel"));
    auto row = RowBytes(*info->traits, info->dims.empty() ? 1 : info->dims[0]);
    if (!row) return absl::InvalidArgumentError(StrCat(ref.ToString(), ": row length does not fit the block size"));
    ws->weights_[t.name] = BoundWeight{static_cast<TensorType>(info->type_id), shape, info->data, info->bytes, *row,
                                        ref.file, info->offset};
  }
  return ws;
}

std::unique_ptr<WeightSet> WeightSet::FromBound(std::map<std::string, BoundWeight> weights,
                                                std::vector<std::shared_ptr<const void>> owners) {
  auto ws = std::make_unique<WeightSet>();
  ws->weights_ = std::move(weights);
  ws->owners_ = std::move(owners);
  return ws;
}

const BoundWeight* WeightSet::Find(const std::string& name) const {
  auto it = weights_.find(name);
  return it == weights_.end() ? nullptr : &it->second;
}

}  // namespace uaii::runtime
