// The Vulkan backend's Program: a planned graph's ops as compute kernels recorded into
// one command buffer per forward pass, on f32 activations in the session's workspace
// (one device buffer laid out by the planner's memory plan, as the CPU's arena), with
// the weights uploaded once at compile (vk_weights.h) and the KV cache in the
// backend's memory (the session allocates it through VulkanBackend::Allocate).
// Inputs, output rows and the cells' positions travel in a small host-visible buffer;
// the logits are copied back at the end of the pass.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/backend.h"
#include "backends/vulkan/vk_kernels.h"
#include "backends/vulkan/vk_weights.h"
#include "ir/graph.h"

namespace uaii::backends::vulkan {

class VulkanProgram final : public Program {
 public:
  // Ops the program runs (every other fails Create, naming the op).
  static bool Supports(const std::string& op_type);
  // max_chunk_bytes: the largest weight chunk (tests pass a small one to split rows).
  // device_budget: the device memory the weights may take (0: 90% of the device's
  // largest heap); the weights past it, in graph order, go to host memory.
  static absl::StatusOr<std::unique_ptr<VulkanProgram>> Create(std::shared_ptr<Device> device, const ir::Graph& g,
                                                               const runtime::WeightSet& weights,
                                                               uint64_t max_chunk_bytes = uint64_t{1} << 30,
                                                               uint64_t device_budget = 0);
  // Where Create would put the weights (no upload).
  static absl::StatusOr<DevicePlacement> Place(const DeviceInfo& device, const ir::Graph& g,
                                               const runtime::WeightSet& weights, uint64_t device_budget);
  const DevicePlacement& placement() const { return placement_; }
  ~VulkanProgram() override;

  const std::vector<runtime::KvLayerShape>& kv_layers() const override { return kv_layers_; }
  int64_t n_outputs_per_row() const override { return out_cols_; }
  std::unique_ptr<Workspace> NewWorkspace() const override;
  absl::Status ReserveWorkspace(Workspace& ws, int64_t tokens, int64_t rows) const override;
  absl::Status Run(const int32_t* tokens, const int32_t* positions, int64_t T, const std::vector<int64_t>& rows,
                   runtime::KvCache& cache, const RunContext& ctx, std::vector<float>* out) const override;

  // Weights uploaded, and how many of them were requantized (no kernel for their type).
  uint64_t weight_bytes() const { return weight_bytes_; }
  int requantized_weights() const { return requantized_; }

  struct Step;  // one compiled op (vulkan_program.cpp)
  class DeviceWorkspace;

 private:
  VulkanProgram() = default;
  absl::Status Reserve(DeviceWorkspace& ws, int64_t T, int64_t R, int64_t cells) const;
  absl::Status Record(DeviceWorkspace& ws, const Step& s, int64_t T, int64_t R, runtime::KvCache& cache,
                      int64_t max_pos) const;

  std::shared_ptr<Device> device_;
  std::shared_ptr<Kernels> kernels_;
  ir::Graph graph_;
  std::vector<Step> steps_;
  std::vector<ir::Shape> shapes_;
  std::vector<std::unique_ptr<DeviceWeight>> weights_;  // per slot, null for activations
  int tokens_slot_ = -1, positions_slot_ = -1, logits_slot_ = -1;
  int64_t out_cols_ = 0;
  std::vector<runtime::KvLayerShape> kv_layers_;
  uint64_t weight_bytes_ = 0;
  int requantized_ = 0;
  uint64_t stage_bytes_ = 0;  // each workspace's staging buffer (its staged weights' largest chunk)
  DevicePlacement placement_;
};

}  // namespace uaii::backends::vulkan
