#include "runtime/weights.h"

#include <mutex>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>

#include "kernels/interleave.h"
#include "runtime/weight_source.h"
#include "util/huge_pages.h"
#include "util/str_cat.h"

namespace uaii::runtime {
namespace {
// Each copy starts on a cache line (the group kernels load whole lines).
constexpr size_t kArenaAlign = 64;
}  // namespace

absl::StatusOr<std::unique_ptr<WeightSet>> WeightSet::Bind(
    const ir::Graph& g, std::map<std::string, std::shared_ptr<const gguf::File>> open) {
  auto ws = std::make_unique<WeightSet>();
  ws->files_ = std::move(open);
  for (const auto& t : g.tensors) {
    if (!t.weight || t.weight->view) continue;  // views: runtime/view_weights.h
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
    // I32 tensors are token ids (masked_head's ordering): bound as bytes; the op that
    // reads one checks its type, and every other op refuses a non-F32 element-wise weight.
    const bool ids = info->type_id == static_cast<uint32_t>(TensorType::I32);
    if (!info->traits || (!info->traits->dequantize && !ids))
      return absl::UnimplementedError(StrCat(ref.ToString(), ": tensor type ", TensorTypeName(info->type_id),
                                             " has no kernel"));
    auto row = RowBytes(*info->traits, info->dims.empty() ? 1 : info->dims[0]);
    if (!row) return absl::InvalidArgumentError(StrCat(ref.ToString(), ": row length does not fit the block size"));
    BoundWeight bw{static_cast<TensorType>(info->type_id), shape, info->data, info->bytes, *row,
                   ref.file, info->offset, nullptr};
    // Matrices, and expert banks [experts, rows, cols] whose experts are whole 16-row
    // groups (an expert's slice of the interleaved bank is then its own matrix).
    const bool bank_ok = shape.size() == 3 && shape[1] % kernels::kInterleaveRows == 0;
    if ((shape.size() == 2 || bank_ok) && kernels::HasInterleavedKernel(bw.type))
      bw.interleaved = std::make_shared<InterleavedCopy>();
    ws->weights_[t.name] = std::move(bw);
  }
  return ws;
}

void WeightSet::Adopt(std::map<std::string, BoundWeight> weights, std::vector<std::shared_ptr<const void>> owners) {
  weights_.merge(weights);
  owners_.insert(owners_.end(), std::make_move_iterator(owners.begin()), std::make_move_iterator(owners.end()));
}

absl::Status WeightSet::PrepareInterleaved(const ir::Graph& g, ThreadPool* pool,
                                           const std::function<void(uint64_t, uint64_t)>& progress) const {
  // Weights some matmul reads and no op reads element-wise (an embedding lookup on
  // the same table, as with tied heads, reads the interleaved copy too).
  std::map<std::string, std::pair<bool, bool>> use;  // name -> (matmul, element-wise)
  std::map<std::string, size_t> first_use;            // name -> first op reading it
  for (const auto& op : g.ops)
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      first_use.emplace(op.inputs[k], first_use.size());
      // moe_ffn's expert banks and shared-expert matrices are matmul weights too
      // (runtime/moe.cpp; its router and shared gate stay row-major).
      const bool moe_matmul = op.type == "moe_ffn" && (k == 2 || k == 3 || k == 4 || k == 6 || k == 7 || k == 8);
      if (IsMatmulWeightInput(op.type, k) || moe_matmul) use[op.inputs[k]].first = true;
      else if (!(op.type == "embed" && k == 0)) use[op.inputs[k]].second = true;
    }
  std::vector<std::pair<size_t, const BoundWeight*>> order;  // (first use, weight)
  for (const auto& [name, u] : use) {
    auto it = weights_.find(name);
    if (it == weights_.end() || !it->second.interleaved || !u.first || u.second) continue;
    if (!InterleavedData(it->second)) order.emplace_back(first_use.at(name), &it->second);
  }
  // One huge-page arena for all the copies, laid out in the order the graph reads
  // them: decode streams it front to back once per token (util/huge_pages.h).
  std::sort(order.begin(), order.end());
  std::vector<const BoundWeight*> todo;
  for (const auto& [first, w] : order) todo.push_back(w);
  std::vector<size_t> offset(todo.size());
  size_t total = 0;
  for (size_t i = 0; i < todo.size(); ++i) {
    offset[i] = total;
    total += (todo[i]->bytes + kArenaAlign - 1) / kArenaAlign * kArenaAlign;
  }
  std::shared_ptr<uint8_t> arena = total ? AllocateHugePageBuffer(total) : nullptr;
  if (total && !arena)
    return absl::ResourceExhaustedError(StrCat("cannot map ", total, " bytes for the interleaved weight copies"));
  std::vector<absl::Status> status(todo.size());
  std::mutex progress_mu;
  uint64_t done_bytes = 0, total_bytes = 0;
  for (const BoundWeight* w : todo) total_bytes += w->bytes;
  auto run = [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const BoundWeight& w = *todo[static_cast<size_t>(i)];
      std::call_once(w.interleaved->once, [&] {
        std::shared_ptr<uint8_t> bytes(arena, arena.get() + offset[static_cast<size_t>(i)]);
        const int64_t cols = w.shape.back(), rows = static_cast<int64_t>(w.bytes / w.row_bytes);  // banks: all experts' rows
        status[static_cast<size_t>(i)] = kernels::RepackInterleaved(w.type, w.data, rows, cols, bytes.get());
        if (!status[static_cast<size_t>(i)].ok()) return;
        if (!w.file.empty()) {  // drop the mapped pages: the copy replaces them
          const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
          const auto b = (reinterpret_cast<uintptr_t>(w.data) + page - 1) / page * page;
          const auto e = (reinterpret_cast<uintptr_t>(w.data) + w.bytes) / page * page;
          if (e > b) madvise(reinterpret_cast<void*>(b), e - b, MADV_DONTNEED);
        }
        w.interleaved->bytes = std::move(bytes);
        w.interleaved->data.store(w.interleaved->bytes.get(), std::memory_order_release);
      });
      if (progress) {
        std::lock_guard<std::mutex> lock(progress_mu);
        done_bytes += w.bytes;
        progress(done_bytes, total_bytes);
      }
    }
  };
  if (pool != nullptr && pool->num_threads() > 1) pool->ParallelFor(static_cast<int64_t>(todo.size()), run, 1);
  else run(0, static_cast<int64_t>(todo.size()));
  for (size_t i = 0; i < todo.size(); ++i)
    if (!status[i].ok()) return status[i];
  return absl::OkStatus();
}

const BoundWeight* WeightSet::Find(const std::string& name) const {
  auto it = weights_.find(name);
  return it == weights_.end() ? nullptr : &it->second;
}

}  // namespace uaii::runtime
