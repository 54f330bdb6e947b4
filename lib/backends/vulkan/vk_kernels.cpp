#include "backends/vulkan/vk_kernels.h"

#include <algorithm>
#include <cstring>

#include "util/str_cat.h"

namespace uaii::backends::vulkan {
namespace {

constexpr uint32_t kSetsPerPool = 256;
constexpr uint32_t kPushBytes = (kBindings + kParams) * 4;

}  // namespace

uint32_t Word(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

void Grid(uint64_t n, uint64_t per_group, uint32_t max_x, uint32_t* gx, uint32_t* gy) {
  const uint64_t groups = std::max<uint64_t>(1, (n + per_group - 1) / per_group);
  *gx = static_cast<uint32_t>(std::min<uint64_t>(groups, max_x));
  *gy = static_cast<uint32_t>((groups + *gx - 1) / *gx);
}

absl::StatusOr<std::shared_ptr<Kernels>> Kernels::Get(const std::shared_ptr<Device>& device) {
  static std::mutex mu;
  static std::map<const Device*, std::weak_ptr<Kernels>> made;
  std::lock_guard<std::mutex> lk(mu);
  if (auto k = made[device.get()].lock()) return k;
  std::shared_ptr<Kernels> k(new Kernels());
  k->device_ = device;
  const vk::Device dev = device->handle();
  try {
    std::vector<vk::DescriptorSetLayoutBinding> bindings;
    for (uint32_t i = 0; i < kBindings; ++i)
      bindings.emplace_back(i, vk::DescriptorType::eStorageBuffer, 1, vk::ShaderStageFlagBits::eCompute);
    k->set_layout_ = dev.createDescriptorSetLayout(vk::DescriptorSetLayoutCreateInfo({}, bindings));
    vk::PushConstantRange push(vk::ShaderStageFlagBits::eCompute, 0, kPushBytes);
    k->layout_ = dev.createPipelineLayout(vk::PipelineLayoutCreateInfo({}, k->set_layout_, push));
  } catch (const std::exception& e) {
    return VkError("vkCreatePipelineLayout", e);
  }
  auto dummy = Buffer::Create(device, 16, Buffer::Kind::kHost);
  if (!dummy.ok()) return dummy.status();
  k->dummy_ = *std::move(dummy);
  made[device.get()] = k;
  return k;
}

Kernels::~Kernels() {
  const vk::Device dev = device_->handle();
  for (auto& [name, p] : pipelines_) dev.destroyPipeline(p);
  dev.destroyPipelineLayout(layout_);
  dev.destroyDescriptorSetLayout(set_layout_);
}

absl::StatusOr<vk::Pipeline> Kernels::Pipeline(const std::string& name) {
  std::lock_guard<std::mutex> lk(mu_);
  if (auto it = pipelines_.find(name); it != pipelines_.end()) return it->second;
  const auto& shaders = EmbeddedShaders();
  auto it = shaders.find(name);
  if (it == shaders.end()) return absl::InternalError(StrCat("no Vulkan kernel '", name, "' in this build"));
  const vk::Device dev = device_->handle();
  try {
    vk::ShaderModule module =
        dev.createShaderModule(vk::ShaderModuleCreateInfo({}, it->second.count * 4, it->second.words));
    vk::PipelineShaderStageCreateInfo stage({}, vk::ShaderStageFlagBits::eCompute, module, "main");
    auto made = dev.createComputePipeline(nullptr, vk::ComputePipelineCreateInfo({}, stage, layout_));
    dev.destroyShaderModule(module);
    if (made.result != vk::Result::eSuccess) return absl::InternalError(StrCat("Vulkan kernel '", name, "' failed"));
    pipelines_[name] = made.value;
    return made.value;
  } catch (const std::exception& e) {
    return VkError(StrCat("creating the Vulkan kernel '", name, "'").c_str(), e);
  }
}

absl::StatusOr<std::unique_ptr<Recorder>> Recorder::Create(std::shared_ptr<Kernels> kernels) {
  std::unique_ptr<Recorder> r(new Recorder());
  r->kernels_ = std::move(kernels);
  const vk::Device dev = r->kernels_->device()->handle();
  try {
    r->pool_ = dev.createCommandPool(vk::CommandPoolCreateInfo(vk::CommandPoolCreateFlagBits::eResetCommandBuffer,
                                                               r->kernels_->device()->queue_family()));
    r->cmd_ = dev.allocateCommandBuffers(vk::CommandBufferAllocateInfo(r->pool_, vk::CommandBufferLevel::ePrimary, 1))[0];
    r->fence_ = dev.createFence({});
  } catch (const std::exception& e) {
    return VkError("vkCreateCommandPool", e);
  }
  return r;
}

Recorder::~Recorder() {
  const vk::Device dev = kernels_->device()->handle();
  for (auto p : set_pools_) dev.destroyDescriptorPool(p);
  dev.destroyFence(fence_);
  dev.destroyCommandPool(pool_);
}

absl::Status Recorder::Begin() {
  const vk::Device dev = kernels_->device()->handle();
  try {
    for (auto p : set_pools_) dev.resetDescriptorPool(p);
    pool_in_use_ = 0;
    sets_left_ = set_pools_.empty() ? 0 : kSetsPerPool;
    cmd_.reset();
    cmd_.begin(vk::CommandBufferBeginInfo(vk::CommandBufferUsageFlagBits::eOneTimeSubmit));
  } catch (const std::exception& e) {
    return VkError("vkBeginCommandBuffer", e);
  }
  return absl::OkStatus();
}

absl::StatusOr<vk::DescriptorSet> Recorder::NewSet() {
  const vk::Device dev = kernels_->device()->handle();
  try {
    if (sets_left_ == 0) {
      if (!set_pools_.empty()) ++pool_in_use_;
      if (pool_in_use_ >= set_pools_.size()) {
        vk::DescriptorPoolSize size(vk::DescriptorType::eStorageBuffer, kSetsPerPool * kBindings);
        set_pools_.push_back(dev.createDescriptorPool(vk::DescriptorPoolCreateInfo({}, kSetsPerPool, size)));
        pool_in_use_ = set_pools_.size() - 1;
      }
      sets_left_ = kSetsPerPool;
    }
    --sets_left_;
    const vk::DescriptorSetLayout layout = kernels_->set_layout();
    return dev.allocateDescriptorSets(vk::DescriptorSetAllocateInfo(set_pools_[pool_in_use_], layout))[0];
  } catch (const std::exception& e) {
    return VkError("vkAllocateDescriptorSets", e);
  }
}

void Recorder::Barrier() {
  vk::MemoryBarrier mb(vk::AccessFlagBits::eShaderWrite | vk::AccessFlagBits::eTransferWrite,
                       vk::AccessFlagBits::eShaderRead | vk::AccessFlagBits::eShaderWrite |
                           vk::AccessFlagBits::eTransferRead | vk::AccessFlagBits::eTransferWrite);
  const auto stages = vk::PipelineStageFlagBits::eComputeShader | vk::PipelineStageFlagBits::eTransfer;
  cmd_.pipelineBarrier(stages, stages, {}, mb, {}, {});
}

absl::Status Recorder::Dispatch(const std::string& name, std::initializer_list<Range> buffers,
                                std::initializer_list<uint32_t> params, uint32_t gx, uint32_t gy, uint32_t gz) {
  if (buffers.size() > kBindings || params.size() > kParams)
    return absl::InternalError(StrCat("Vulkan kernel '", name, "': too many buffers or parameters"));
  auto pipeline = kernels_->Pipeline(name);
  if (!pipeline.ok()) return pipeline.status();
  auto set = NewSet();
  if (!set.ok()) return set.status();
  const DeviceInfo& info = kernels_->device()->info();
  const uint64_t align = std::max<uint64_t>(4, info.min_storage_offset_align);
  uint32_t push[kBindings + kParams] = {};
  vk::DescriptorBufferInfo infos[kBindings];
  vk::WriteDescriptorSet writes[kBindings];
  int i = 0;
  for (const Range& r : buffers) {
    const Buffer* b = r.buffer ? r.buffer : &kernels_->dummy();
    const uint64_t base = r.buffer ? r.offset / align * align : 0;
    uint64_t bytes = r.buffer ? (r.bytes ? r.bytes : b->bytes() - r.offset) + (r.offset - base) : b->bytes();
    if (r.buffer && bytes > info.max_storage_buffer_range)
      return absl::ResourceExhaustedError(StrCat("Vulkan kernel '", name, "': a binding of ", bytes,
                                                 " bytes exceeds the device's maxStorageBufferRange of ",
                                                 info.max_storage_buffer_range));
    infos[i] = vk::DescriptorBufferInfo(b->handle(), base, std::max<uint64_t>(bytes, 4));
    push[i] = static_cast<uint32_t>((r.buffer ? r.offset - base : 0) / 4);
    ++i;
  }
  for (; i < kBindings; ++i) infos[i] = vk::DescriptorBufferInfo(kernels_->dummy().handle(), 0, VK_WHOLE_SIZE);
  for (int j = 0; j < kBindings; ++j)
    writes[j] = vk::WriteDescriptorSet(*set, static_cast<uint32_t>(j), 0, 1, vk::DescriptorType::eStorageBuffer,
                                       nullptr, &infos[j]);
  int p = kBindings;
  for (uint32_t w : params) push[p++] = w;
  kernels_->device()->handle().updateDescriptorSets(kBindings, writes, 0, nullptr);
  cmd_.bindPipeline(vk::PipelineBindPoint::eCompute, *pipeline);
  cmd_.bindDescriptorSets(vk::PipelineBindPoint::eCompute, kernels_->layout(), 0, *set, {});
  cmd_.pushConstants(kernels_->layout(), vk::ShaderStageFlagBits::eCompute, 0, kPushBytes, push);
  cmd_.dispatch(gx, gy, gz);
  Barrier();
  return absl::OkStatus();
}

absl::Status Recorder::Dispatch1D(const std::string& name, std::initializer_list<Range> buffers,
                                  std::initializer_list<uint32_t> params, uint64_t n) {
  uint32_t gx, gy;
  Grid(n, 256, 32768, &gx, &gy);
  return Dispatch(name, buffers, params, gx, gy);
}

void Recorder::Copy(const Buffer& from, uint64_t from_offset, const Buffer& to, uint64_t to_offset, uint64_t bytes) {
  cmd_.copyBuffer(from.handle(), to.handle(), vk::BufferCopy(from_offset, to_offset, bytes));
  Barrier();
}

absl::Status Recorder::SubmitAndWait() {
  try {
    cmd_.end();
  } catch (const std::exception& e) {
    return VkError("vkEndCommandBuffer", e);
  }
  return kernels_->device()->SubmitAndWait(cmd_, fence_);
}

}  // namespace uaii::backends::vulkan
