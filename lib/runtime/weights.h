// Binds a graph's GGUF weight TensorRefs (`file#tensor`, no view) to bytes in
// memory-mapped GGUF files (references with a declared view: runtime/view_weights.h).
// Nothing is copied: a BoundWeight points into the mapping, which the WeightSet keeps
// alive. Each reference is re-checked against the file it names
// (type, shape, size), so a graph that disagrees with its file fails to bind.
// Binding touches no tensor bytes: under a memory budget the storage engine
// (runtime/streamed_weights.h) reads them from `file` at `offset` instead.
#pragma once
#include <functional>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "formats/gguf_file.h"
#include "ir/graph.h"
#include "kernels/thread_pool.h"

namespace uaii::runtime {

// A resident copy of a matmul weight in the kernels' 16-row interleaved layout
// (kernels/interleave.h), made once by WeightSet::PrepareInterleaved and shared by
// every copy of the BoundWeight; `data` stays null until it is complete.
struct InterleavedCopy {
  std::once_flag once;
  std::shared_ptr<uint8_t> bytes;  // a piece of the WeightSet's huge-page arena
  std::atomic<const uint8_t*> data{nullptr};
};

struct BoundWeight {
  TensorType type = TensorType::F32;
  std::vector<int64_t> shape;   // outermost first
  const uint8_t* data = nullptr;
  uint64_t bytes = 0;
  uint64_t row_bytes = 0;       // bytes of one innermost row
  std::string file;             // where the bytes live on disk (storage streams from here)
  uint64_t offset = 0;          // absolute offset of the data in `file`
  // Set at bind for matrices of a type with interleaved kernels on this CPU; filled
  // (for matmul weights) by PrepareInterleaved. Storage-planned sessions ignore it.
  std::shared_ptr<InterleavedCopy> interleaved;
  uint64_t interleaved_offset = 0;  // an expert's slice of an interleaved bank (runtime/moe.h)
};

// The interleaved copy of `w` when one has been made, else null.
inline const uint8_t* InterleavedData(const BoundWeight& w) {
  const uint8_t* d = w.interleaved ? w.interleaved->data.load(std::memory_order_acquire) : nullptr;
  return d ? d + w.interleaved_offset : nullptr;
}

class WeightSet {
 public:
  // `open` holds files already opened by the caller (keyed by path); others are opened.
  static absl::StatusOr<std::unique_ptr<WeightSet>> Bind(
      const ir::Graph& g, std::map<std::string, std::shared_ptr<const gguf::File>> open = {});
  const BoundWeight* Find(const std::string& tensor_name) const;
  // Makes the interleaved copies of g's matmul weights (once; later calls return at
  // once) and releases the mapped pages they were read from, so resident memory
  // stays one copy of the weights. For sessions that read weights through the
  // mapping (no storage plan): llama.cpp's CPU backend repacks at load the same way.
  // progress (may be empty): bytes copied of the total, after each weight, serialized.
  absl::Status PrepareInterleaved(const ir::Graph& g, ThreadPool* pool,
                                  const std::function<void(uint64_t, uint64_t)>& progress = nullptr) const;
  // Adds weights bound elsewhere (declared views, runtime/view_weights.h); `owners`
  // keep their bytes (mappings, converted copies) alive as long as the set.
  void Adopt(std::map<std::string, BoundWeight> weights, std::vector<std::shared_ptr<const void>> owners);

 private:
  std::vector<std::shared_ptr<const void>> owners_;
  std::map<std::string, std::shared_ptr<const gguf::File>> files_;
  std::map<std::string, BoundWeight> weights_;
};

}  // namespace uaii::runtime
