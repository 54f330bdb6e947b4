#include "backends/vulkan/vulkan_backend.h"

#include "backends/vulkan/vk_buffer.h"
#include "backends/vulkan/vulkan_program.h"
#include "util/str_cat.h"

namespace uaii::backends::vulkan {
namespace {

// A model's program as each session holds it: the one compiled program, shared.
class SharedProgram final : public Program {
 public:
  explicit SharedProgram(std::shared_ptr<VulkanProgram> p) : p_(std::move(p)) {}
  const std::vector<runtime::KvLayerShape>& kv_layers() const override { return p_->kv_layers(); }
  int64_t n_outputs_per_row() const override { return p_->n_outputs_per_row(); }
  std::unique_ptr<Workspace> NewWorkspace() const override { return p_->NewWorkspace(); }
  absl::Status ReserveWorkspace(Workspace& ws, int64_t tokens, int64_t rows) const override {
    return p_->ReserveWorkspace(ws, tokens, rows);
  }
  absl::Status Run(const int32_t* tokens, const int32_t* positions, int64_t T, const std::vector<int64_t>& rows,
                   runtime::KvCache& cache, const RunContext& ctx, std::vector<float>* out) const override {
    return p_->Run(tokens, positions, T, rows, cache, ctx, out);
  }

 private:
  std::shared_ptr<VulkanProgram> p_;
};

}  // namespace

std::string VulkanBackend::device() const { return StrCat("vulkan:", info_.index); }

Capabilities VulkanBackend::capabilities() const {
  Capabilities c;
  c.gpu = true;
  c.real_device = !info_.cpu_implementation;
  c.host_memory = true;  // the KV cache's arena is host-visible (vk_buffer.h)
  c.quantized_weights = true;
  return c;
}

bool VulkanBackend::SupportsOp(const std::string& op_type) const { return VulkanProgram::Supports(op_type); }

absl::StatusOr<std::shared_ptr<Device>> VulkanBackend::Open() const {
  std::lock_guard<std::mutex> lk(mu_);
  if (!device_) {
    auto d = Device::Open(info_.index);
    if (!d.ok()) return d.status();
    device_ = *std::move(d);
  }
  return device_;
}

absl::StatusOr<std::unique_ptr<DeviceBuffer>> VulkanBackend::Allocate(uint64_t bytes) const {
  auto dev = Open();
  if (!dev.ok()) return dev.status();
  auto b = Buffer::Create(*dev, bytes, Buffer::Kind::kHost);
  if (!b.ok()) return b.status();
  return std::unique_ptr<DeviceBuffer>(new VulkanDeviceBuffer(*std::move(b)));
}

absl::StatusOr<std::unique_ptr<Program>> VulkanBackend::Compile(const ir::Graph& g,
                                                               const runtime::WeightSet& weights) const {
  return Compile(g, weights, CompileOptions{});
}

absl::StatusOr<DevicePlacement> VulkanBackend::PlanPlacement(const ir::Graph& g, const runtime::WeightSet& weights,
                                                             const CompileOptions& options) const {
  return VulkanProgram::Place(info_, g, weights, options.device_memory_bytes);
}

absl::StatusOr<std::unique_ptr<Program>> VulkanBackend::Compile(const ir::Graph& g, const runtime::WeightSet& weights,
                                                               const CompileOptions& options) const {
  auto dev = Open();
  if (!dev.ok()) return dev.status();
  std::lock_guard<std::mutex> lk(mu_);  // one upload per model, even when sessions start at once
  for (auto it = compiled_.begin(); it != compiled_.end();) {
    if (it->program.expired()) {
      it = compiled_.erase(it);
      continue;
    }
    if (it->graph == &g && it->weights == &weights && it->budget == options.device_memory_bytes) return std::unique_ptr<Program>(new SharedProgram(it->program.lock()));
    ++it;
  }
  auto p = VulkanProgram::Create(*dev, g, weights, uint64_t{1} << 30, options.device_memory_bytes);
  if (!p.ok()) return p.status();
  std::shared_ptr<VulkanProgram> shared = *std::move(p);
  compiled_.push_back({&g, &weights, options.device_memory_bytes, shared});
  return std::unique_ptr<Program>(new SharedProgram(std::move(shared)));
}

const std::vector<std::unique_ptr<VulkanBackend>>& DeviceBackends(absl::Status* why) {
  static absl::Status status = absl::OkStatus();
  static const auto* backends = [] {
    auto* all = new std::vector<std::unique_ptr<VulkanBackend>>();
    auto devices = ListDevices();
    if (!devices.ok()) {
      status = devices.status();
      return all;
    }
    for (const DeviceInfo& d : **devices) all->push_back(std::make_unique<VulkanBackend>(d));
    return all;
  }();
  if (why) *why = status;
  return *backends;
}

}  // namespace uaii::backends::vulkan
