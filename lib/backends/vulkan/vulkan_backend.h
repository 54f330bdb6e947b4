// The Vulkan backend: one Backend per physical device the loader lists, named
// "vulkan:N" ("vulkan" is vulkan:0). A GPU that reports a real device counts for
// "auto"; a CPU implementation (lavapipe) only when named. Programs are compiled once
// per model's weights and shared by its sessions (the weights go to the device once).
#pragma once
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/backend.h"
#include "backends/vulkan/vk_device.h"

namespace uaii::backends::vulkan {

class VulkanProgram;

class VulkanBackend final : public Backend {
 public:
  explicit VulkanBackend(const DeviceInfo& info) : info_(info) {}
  std::string name() const override { return "vulkan"; }
  std::string device() const override;
  Capabilities capabilities() const override;
  bool SupportsOp(const std::string& op_type) const override;
  absl::StatusOr<std::unique_ptr<DeviceBuffer>> Allocate(uint64_t bytes) const override;
  absl::StatusOr<std::unique_ptr<Program>> Compile(const ir::Graph& g,
                                                   const runtime::WeightSet& weights) const override;
  absl::StatusOr<std::unique_ptr<Program>> Compile(const ir::Graph& g, const runtime::WeightSet& weights,
                                                   const CompileOptions& options) const override;
  absl::StatusOr<DevicePlacement> PlanPlacement(const ir::Graph& g, const runtime::WeightSet& weights,
                                                const CompileOptions& options) const override;
  const DeviceInfo& info() const { return info_; }

 private:
  absl::StatusOr<std::shared_ptr<Device>> Open() const;
  DeviceInfo info_;
  mutable std::mutex mu_;
  mutable std::shared_ptr<Device> device_;
  struct Compiled {
    const ir::Graph* graph;
    const runtime::WeightSet* weights;
    uint64_t budget;
    std::weak_ptr<VulkanProgram> program;
  };
  mutable std::vector<Compiled> compiled_;
};

// Every device's backend (made once); `why` says why there are none.
const std::vector<std::unique_ptr<VulkanBackend>>& DeviceBackends(absl::Status* why = nullptr);

}  // namespace uaii::backends::vulkan
