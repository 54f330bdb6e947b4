#include "storage/plan.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "storage/expert_plan.h"
#include "storage/file_set.h"
#include "util/str_cat.h"

namespace uaii::storage {

TensorRole RoleOf(const std::string& name, bool elementwise, int* layer) {
  *layer = -1;
  if (name.rfind("blk.", 0) == 0) *layer = std::atoi(name.c_str() + 4);
  if (elementwise) return TensorRole::kElementwise;
  if (name == "token_embd.weight") return TensorRole::kEmbedding;
  if (name == "per_layer_token_embd.weight") return TensorRole::kPerLayerEmbedding;
  if (name == "output.weight") return TensorRole::kLmHead;
  if (*layer >= 0) return TensorRole::kLayer;
  return TensorRole::kOther;
}

std::string FormatBytes(uint64_t b) {
  char buf[64];
  if (b >= (uint64_t{1} << 30)) std::snprintf(buf, sizeof buf, "%.2f GiB", b / double(uint64_t{1} << 30));
  else if (b >= (uint64_t{1} << 20)) std::snprintf(buf, sizeof buf, "%.1f MiB", b / double(uint64_t{1} << 20));
  else if (b >= 1024) std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024.0);
  else std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(b));
  return buf;
}

absl::StatusOr<StoragePlan> PlanStorage(const PlanInputs& in, const ResolvedPreset& preset) {
  StoragePlan p;
  p.preset = preset.preset;
  p.budget_bytes = preset.budget_bytes;
  p.kv_bytes = in.kv_bytes;
  p.activation_bytes = in.activation_bytes;
  const size_t n = in.tensors.size();
  const ExpertNeeds experts = MeasureExperts(in);  // expert banks: the LRU, storage/expert_plan.h
  p.residency.assign(n, Residency::kPinned);
  p.rows_per_slice.resize(n);
  uint64_t total = 0, always = 0, largest = 0, widest_row = 0;
  int n_layers = 0;
  std::map<int, uint64_t> layer_bytes;  // streamable bytes per layer
  for (size_t i = 0; i < n; ++i) {
    const PlanTensor& t = in.tensors[i];
    p.rows_per_slice[i] = t.rows;
    if (t.n_expert > 0) continue;  // the expert LRU (PlaceExperts)
    total += t.bytes;
    if (t.layer >= 0) n_layers = std::max(n_layers, t.layer + 1);
    if (!t.matmul && !t.embed) {
      always += t.bytes;
      continue;
    }
    if (t.role == TensorRole::kLayer) layer_bytes[t.layer] += t.bytes;
    if (t.matmul) {
      largest = std::max(largest, t.bytes);
      widest_row = std::max(widest_row, t.row_bytes);
    }
  }
  p.n_layers = n_layers;
  auto all_pinned = [&] {
    p.pinned_bytes = total;
    p.pinned_layers = n_layers;
    p.minimum_bytes = total + in.kv_bytes + in.activation_bytes;
    p.expected_peak_bytes = p.minimum_bytes;
    PlaceExperts(in, preset, experts, &p);
    return p;
  };
  // The LRU's minimum (one layer's top-k experts) is reserved like the KV cache.
  const uint64_t fixed = in.kv_bytes + in.activation_bytes + experts.step_bytes;
  if (preset.streaming == StreamPolicy::kOff || preset.budget_bytes == 0) return all_pinned();
  if (preset.streaming != StreamPolicy::kAlways && total + fixed <= preset.budget_bytes) return all_pinned();

  // Streaming: the minimum is the always-pinned weights, the staging buffers at one
  // minimal slice each, the KV cache and the activations.
  const int n_buf = std::max(1, preset.staging_buffers);
  // A staging buffer holds its slice plus kDirectIoSlack, the alignment room of a
  // direct read (storage/file_set.h): the plan counts every byte the engine allocates.
  const uint64_t min_slice = std::min(largest, widest_row * static_cast<uint64_t>(kMinSliceRows)) + kDirectIoSlack;
  p.minimum_bytes = always + n_buf * min_slice + fixed;
  if (preset.budget_bytes < p.minimum_bytes)
    return absl::ResourceExhaustedError(StrCat(
        "memory budget ", FormatBytes(preset.budget_bytes), " cannot hold this model's minimum of ",
        FormatBytes(p.minimum_bytes), " (", p.minimum_bytes, " bytes: always-pinned norms ", FormatBytes(always), ", ",
        n_buf, " staging slice(s) of ", FormatBytes(min_slice), ", KV cache ", FormatBytes(in.kv_bytes),
        ", activations ", FormatBytes(in.activation_bytes),
        experts.step_bytes ? StrCat(", one layer's top-", experts.top_k, " experts ", FormatBytes(experts.step_bytes))
                           : std::string(),
        "); use a bigger preset or --ram-gb, a smaller ",
        "--kv-window / --max-context, or a smaller quantization of the model"));
  const uint64_t avail = preset.budget_bytes - always - fixed;
  uint64_t staging = std::max(min_slice, std::min({kMaxStagingBytes, largest + kDirectIoSlack, avail / (4 * n_buf)}));
  uint64_t room = avail - n_buf * staging;  // >= 0: staging <= avail / n_buf by the minimum check

  std::vector<bool> pin(n, false);
  auto try_pin = [&](auto pred) {  // pins every streamable tensor matching pred, or none
    uint64_t bytes = 0;
    for (size_t i = 0; i < n; ++i)
      if ((in.tensors[i].matmul || in.tensors[i].embed) && !pin[i] && pred(in.tensors[i])) bytes += in.tensors[i].bytes;
    if (bytes > room) return false;
    room -= bytes;
    for (size_t i = 0; i < n; ++i)
      if ((in.tensors[i].matmul || in.tensors[i].embed) && pred(in.tensors[i])) pin[i] = true;
    return true;
  };
  p.embeddings_pinned = try_pin([](const PlanTensor& t) { return t.role == TensorRole::kEmbedding; });
  p.lm_head_pinned = try_pin([](const PlanTensor& t) { return t.role == TensorRole::kLmHead; });
  bool tied = true;
  for (const auto& t : in.tensors) tied = tied && t.role != TensorRole::kLmHead;
  if (tied) p.lm_head_pinned = p.embeddings_pinned;  // the head is the embedding matrix
  try_pin([](const PlanTensor& t) { return t.role == TensorRole::kOther; });
  int max_layers = preset.pin == PinPolicy::kNormsOnly ? 0
                   : preset.pin == PinPolicy::kFirstLayers ? preset.pin_layers
                                                          : n_layers;
  for (int l = 0; l < max_layers; ++l) {
    if (!try_pin([l](const PlanTensor& t) { return t.role == TensorRole::kLayer && t.layer == l; })) break;
    p.pinned_layers = l + 1;
  }

  uint64_t largest_streamed = 0;
  for (size_t i = 0; i < n; ++i) {
    const PlanTensor& t = in.tensors[i];
    if (t.n_expert > 0) continue;  // the expert LRU (PlaceExperts)
    if (!(t.matmul || t.embed) || pin[i]) {
      p.pinned_bytes += t.bytes;
      continue;
    }
    p.residency[i] = Residency::kStreamed;
    p.streamed_bytes += t.bytes;
    if (t.matmul) {
      largest_streamed = std::max(largest_streamed, t.bytes);
      p.streamed_bytes_per_token += t.bytes;
    } else {
      p.streamed_bytes_per_token += t.row_bytes;  // one looked-up row per token
    }
  }
  if (p.streamed_bytes == 0) return all_pinned();
  p.streaming = true;
  p.staging_buffers = n_buf;
  p.staging_bytes = largest_streamed > 0 ? std::min(staging, largest_streamed + kDirectIoSlack) : 0;
  for (size_t i = 0; i < n; ++i) {
    const PlanTensor& t = in.tensors[i];
    if (p.residency[i] == Residency::kStreamed && t.matmul && t.row_bytes > 0)
      p.rows_per_slice[i] = std::clamp<int64_t>(static_cast<int64_t>((p.staging_bytes - kDirectIoSlack) / t.row_bytes), 1, t.rows);
  }
  p.expected_peak_bytes = p.pinned_bytes + n_buf * p.staging_bytes + fixed;
  PlaceExperts(in, preset, experts, &p);
  return p;
}

}  // namespace uaii::storage
