#include "runtime/streamed_weights.h"

#include <cstring>

#include "ir/validate.h"
#include "kernels/interleave.h"
#include "runtime/expert_storage.h"
#include "util/str_cat.h"

namespace uaii::runtime {

storage::PlanInputs PlanInputsFromGraph(const ir::Graph& g, const WeightSet& weights) {
  std::map<std::string, std::pair<bool, bool>> use;  // name -> (matmul, embed)
  std::map<std::string, bool> elementwise;
  for (const auto& op : g.ops)
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      const std::string& n = op.inputs[k];
      if (n.empty() || !weights.Find(n)) continue;
      if (IsMatmulWeightInput(op.type, k)) use[n].first = true;
      else if (op.type == "embed" && k == 0) use[n].second = true;
      else elementwise[n] = true;
    }
  storage::PlanInputs in;
  for (const auto& t : g.tensors) {
    if (!t.weight) continue;
    const BoundWeight* w = weights.Find(t.name);
    if (!w) continue;
    storage::PlanTensor p;
    p.name = t.name;
    p.bytes = w->bytes;
    p.row_bytes = w->row_bytes;
    p.rows = w->shape.size() >= 2 ? w->shape[0] : 1;
    // Weights that are not plain file bytes (converted by a loader in memory) stay resident.
    const bool ew = elementwise.count(t.name) > 0 || w->shape.size() < 2 || w->file.empty();
    p.matmul = !ew && use[t.name].first;
    p.embed = !ew && use[t.name].second;
    // A view's `tensor` is its source's name (an HF name); the graph name is GGUF-style.
    p.role = storage::RoleOf(t.weight->view ? t.name : t.weight->tensor, !(p.matmul || p.embed), &p.layer);
    in.tensors.push_back(std::move(p));
  }
  MarkExpertBanks(g, weights, &in);  // expert banks: the expert LRU, not pinned or staged
  return in;
}

absl::StatusOr<std::unique_ptr<StreamedWeights>> StreamedWeights::Create(const ir::Graph& g,
                                                                         const WeightSet& weights,
                                                                         const storage::PlanInputs& inputs,
                                                                         const storage::StoragePlan& plan,
                                                                         const std::function<void(uint64_t, uint64_t)>& progress) {
  auto sw = std::unique_ptr<StreamedWeights>(new StreamedWeights());
  // Load progress: the bytes the pinned weights read from the file (the slow part).
  uint64_t pin_total = 0, pin_done = 0;
  for (size_t i = 0; i < inputs.tensors.size(); ++i) {
    const BoundWeight* w = weights.Find(inputs.tensors[i].name);
    if (w && !w->file.empty() && plan.residency[i] == storage::Residency::kPinned) pin_total += w->bytes;
  }
  std::vector<std::vector<unsigned char>> cached_before;  // per file index
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < inputs.tensors.size(); ++i) index[inputs.tensors[i].name] = i;
  for (size_t i = 0; i < inputs.tensors.size(); ++i) {
    const BoundWeight* w = weights.Find(inputs.tensors[i].name);
    if (!w) return absl::FailedPreconditionError(StrCat("weight ", inputs.tensors[i].name, " is not bound"));
    if (w->file.empty()) {  // made at load, no file behind it (copied views: runtime/view_weights.h): resident
      Entry e;
      e.bytes = storage::AlignedBytes::Allocate(w->bytes);
      std::memcpy(e.bytes.data.get(), w->data, w->bytes);
      sw->entries_.emplace(w, std::move(e));
      continue;
    }
    Entry e;
    e.pinned = plan.residency[i] == storage::Residency::kPinned;
    e.rows_per_slice = plan.rows_per_slice[i];
    if (plan.residency[i] == storage::Residency::kExpertLru) {  // read slice by slice through experts_
      e.pinned = false;
      sw->entries_.emplace(w, std::move(e));
      continue;
    }
    if (w->file.empty()) {  // in-memory bytes (PlanInputsFromGraph pinned them): borrowed
      e.borrowed = w->data;
      sw->entries_.emplace(w, std::move(e));
      continue;
    }
    auto f = sw->files_.Open(w->file);
    if (!f.ok()) return f.status();
    e.file = *f;
    // What the page cache held before this session read anything of the file.
    if (static_cast<size_t>(*f) >= cached_before.size()) cached_before.push_back(sw->files_.PageCacheResidency(*f));
    if (e.pinned) {
      e.bytes = storage::AlignedBytes::Allocate(w->bytes);
      if (auto st = sw->files_.Read(e.file, w->offset, w->bytes, e.bytes.data.get()); !st.ok())
        return absl::Status(st.code(), StrCat("pinning ", inputs.tensors[i].name, ": ", std::string(st.message())));
      // Pinned matmul weights go to the group kernels' interleaved layout, in place
      // (same bytes, so the plan's figures hold; kernels/interleave.h).
      if (inputs.tensors[i].matmul && w->interleaved) {
        if (auto st = kernels::RepackInterleavedInPlace(w->type, e.bytes.data.get(), w->shape[0], w->shape[1]); !st.ok())
          return st;
        e.interleaved = true;
      }
      pin_done += w->bytes;
      if (progress) progress(pin_done, pin_total);
    }
    sw->entries_.emplace(w, std::move(e));
  }
  // The pinned reads' readahead runs into the streamed tensors around them (tens of
  // MiB after a large pinned tensor): dropped again, so a cold run reads every
  // streamed byte from the device, and never a page that was cached before.
  for (size_t i = 0; i < inputs.tensors.size(); ++i) {
    const BoundWeight* w = weights.Find(inputs.tensors[i].name);
    auto it = w ? sw->entries_.find(w) : sw->entries_.end();
    if (it == sw->entries_.end() || it->second.pinned || w->file.empty()) continue;
    const int file = it->second.file;
    if (static_cast<size_t>(file) < cached_before.size())
      sw->files_.DropReadahead(file, cached_before[file], w->offset, w->bytes);
  }
  // The staging sequence: streamed matmul weights in execution order, slice by slice.
  auto order = ir::Validate(g);
  if (!order.ok()) return order.status();
  std::vector<storage::Chunk> seq;
  for (size_t oi : *order) {
    const ir::Op& op = g.ops[oi];
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      if (!IsMatmulWeightInput(op.type, k)) continue;
      const BoundWeight* w = weights.Find(op.inputs[k]);
      if (!w || !sw->entries_.count(w)) continue;
      Entry& e = sw->entries_.at(w);
      if (e.pinned) continue;
      if (e.first_chunk < 0) e.first_chunk = static_cast<int64_t>(seq.size());
      const int64_t rows = w->shape[0];
      for (int64_t r0 = 0; r0 < rows; r0 += e.rows_per_slice) {
        const int64_t r1 = std::min(rows, r0 + e.rows_per_slice);
        seq.push_back({e.file, w->offset + r0 * w->row_bytes, static_cast<uint64_t>(r1 - r0) * w->row_bytes});
        sw->chunk_owner_.push_back(w);
      }
    }
  }
  if (plan.expert_cache_bytes > 0) {
    sw->experts_ = std::make_unique<ExpertCache>(plan.expert_cache_bytes);
    sw->experts_->EnablePrefetch(plan.expert_prefetch);
  }
  if (!seq.empty() || plan.streaming)
    sw->pipeline_ = std::make_unique<storage::StagingPipeline>(&sw->files_, std::move(seq),
                                                               std::max(1, plan.staging_buffers),
                                                               std::max<uint64_t>(plan.staging_bytes, 64));
  return sw;
}

const uint8_t* StreamedWeights::Resident(const BoundWeight& w) const {
  auto it = entries_.find(&w);
  if (it == entries_.end() || !it->second.pinned) return nullptr;
  return it->second.borrowed ? it->second.borrowed : it->second.bytes.data.get();
}

absl::StatusOr<WeightSource::Matrix> StreamedWeights::Held(const BoundWeight& w) const {
  auto it = entries_.find(&w);
  if (it == entries_.end()) return absl::InternalError("weight unknown to the storage plan");
  const Entry& e = it->second;
  if (!e.pinned) return Matrix{};
  return Matrix{e.borrowed ? e.borrowed : e.bytes.data.get(), e.interleaved};
}

absl::Status StreamedWeights::ForEachRowSlice(const BoundWeight& w, SliceFn fn) {
  auto it = entries_.find(&w);
  if (it == entries_.end()) return absl::InternalError("matmul weight unknown to the storage plan");
  Entry& e = it->second;
  if (e.pinned || e.first_chunk < 0) return absl::InternalError("streamed weight has no staging slices");
  const int64_t out = w.shape[0];
  // Continue the sequence when this weight is next in it (the usual case); else jump.
  size_t chunk = next_chunk_ < chunk_owner_.size() && chunk_owner_[next_chunk_] == &w ? next_chunk_
                                                                                      : static_cast<size_t>(e.first_chunk);
  for (int64_t r0 = 0; r0 < out; r0 += e.rows_per_slice, ++chunk) {
    const int64_t r1 = std::min(out, r0 + e.rows_per_slice);
    auto bytes = pipeline_->Acquire(chunk);
    if (!bytes.ok()) return bytes.status();
    if (auto st = fn(r0, r1, *bytes); !st.ok()) return st;
  }
  next_chunk_ = chunk % chunk_owner_.size();
  return absl::OkStatus();
}

absl::Status StreamedWeights::ReadRows(const BoundWeight& w, const int32_t* ids, int64_t n, uint8_t* dst) {
  auto it = entries_.find(&w);
  if (it == entries_.end()) return absl::InternalError("embedding weight unknown to the storage plan");
  const Entry& e = it->second;
  const int64_t rows = w.shape[0];
  for (int64_t i = 0; i < n; ++i) {
    if (ids[i] < 0 || ids[i] >= rows)
      return absl::OutOfRangeError(StrCat("token id ", ids[i], " outside the embedding's ", rows, " rows"));
    if (auto st = pipeline_->ReadDirect(e.file, w.offset + ids[i] * w.row_bytes, w.row_bytes, dst + i * w.row_bytes);
        !st.ok())
      return st;
  }
  return absl::OkStatus();
}

storage::StagingStats StreamedWeights::stats() const { return pipeline_ ? pipeline_->stats() : storage::StagingStats{}; }

}  // namespace uaii::runtime
