// Binds a graph's weight TensorRefs (`file#tensor`) to bytes in memory-mapped GGUF
// files. Nothing is copied: a BoundWeight points into the mapping, which the
// WeightSet keeps alive. Each reference is re-checked against the file it names
// (type, shape, size), so a graph that disagrees with its file fails to bind.
// Binding touches no tensor bytes: under a memory budget the storage engine
// (runtime/streamed_weights.h) reads them from `file` at `offset` instead.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "formats/gguf_file.h"
#include "ir/graph.h"

namespace uaii::runtime {

struct BoundWeight {
  TensorType type = TensorType::F32;
  std::vector<int64_t> shape;   // outermost first
  const uint8_t* data = nullptr;
  uint64_t bytes = 0;
  uint64_t row_bytes = 0;       // bytes of one innermost row
  std::string file;             // where the bytes live on disk (storage streams from here)
  uint64_t offset = 0;          // absolute offset of the data in `file`
};

class WeightSet {
 public:
  // `open` holds files already opened by the caller (keyed by path); others are opened.
  static absl::StatusOr<std::unique_ptr<WeightSet>> Bind(
      const ir::Graph& g, std::map<std::string, std::shared_ptr<const gguf::File>> open = {});
  const BoundWeight* Find(const std::string& tensor_name) const;
  // Weights bound elsewhere (Hugging Face views, runtime/hf_weights.h); `owners` keep
  // their bytes (mappings, converted copies) alive as long as the set.
  static std::unique_ptr<WeightSet> FromBound(std::map<std::string, BoundWeight> weights,
                                              std::vector<std::shared_ptr<const void>> owners);

 private:
  std::vector<std::shared_ptr<const void>> owners_;
  std::map<std::string, std::shared_ptr<const gguf::File>> files_;
  std::map<std::string, BoundWeight> weights_;
};

}  // namespace uaii::runtime
