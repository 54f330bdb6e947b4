#include "backends/vulkan/vk_buffer.h"

#include <cstring>

#include "util/str_cat.h"

namespace uaii::backends::vulkan {

absl::StatusOr<std::unique_ptr<Buffer>> Buffer::Create(std::shared_ptr<Device> device, uint64_t bytes, Kind kind) {
  std::unique_ptr<Buffer> b(new Buffer());
  b->device_ = std::move(device);
  b->bytes_ = bytes;
  const vk::Device dev = b->device_->handle();
  using MF = vk::MemoryPropertyFlagBits;
  try {
    vk::BufferCreateInfo info({}, std::max<uint64_t>(bytes, 4),
                              vk::BufferUsageFlagBits::eStorageBuffer | vk::BufferUsageFlagBits::eTransferSrc |
                                  vk::BufferUsageFlagBits::eTransferDst);
    b->buffer_ = dev.createBuffer(info);
    const auto req = dev.getBufferMemoryRequirements(b->buffer_);
    const int type = kind == Kind::kHost
                         ? b->device_->MemoryType(req.memoryTypeBits, MF::eHostVisible | MF::eHostCoherent, MF::eDeviceLocal)
                         : b->device_->MemoryType(req.memoryTypeBits, MF::eDeviceLocal,
                                                  MF::eHostVisible | MF::eHostCoherent);
    if (type < 0)
      return absl::ResourceExhaustedError(StrCat("Vulkan device '", b->device_->info().name, "' has no ",
                                                 kind == Kind::kHost ? "host-visible" : "device-local",
                                                 " memory type for a buffer of ", bytes, " bytes"));
    b->memory_ = dev.allocateMemory(vk::MemoryAllocateInfo(req.size, static_cast<uint32_t>(type)));
    dev.bindBufferMemory(b->buffer_, b->memory_, 0);
    const auto flags = vk::PhysicalDeviceMemoryProperties(b->device_->physical().getMemoryProperties())
                           .memoryTypes[static_cast<uint32_t>(type)]
                           .propertyFlags;
    if ((flags & MF::eHostVisible) && (flags & MF::eHostCoherent)) {
      b->mapped_ = static_cast<uint8_t*>(dev.mapMemory(b->memory_, 0, VK_WHOLE_SIZE));
      if (kind == Kind::kHost) std::memset(b->mapped_, 0, bytes);
    }
  } catch (const std::exception& e) {
    return absl::ResourceExhaustedError(
        StrCat("Vulkan buffer of ", bytes, " bytes on '", b->device_->info().name, "': ", e.what()));
  }
  if (kind == Kind::kHost && b->mapped_ == nullptr)
    return absl::InternalError("a host-visible Vulkan buffer could not be mapped");
  return b;
}

Buffer::~Buffer() {
  const vk::Device dev = device_->handle();
  if (mapped_) dev.unmapMemory(memory_);
  if (buffer_) dev.destroyBuffer(buffer_);
  if (memory_) dev.freeMemory(memory_);
}

absl::Status Buffer::Write(const void* data, uint64_t bytes, uint64_t offset) {
  if (offset + bytes > bytes_)
    return absl::OutOfRangeError(StrCat("write of ", bytes, " bytes at ", offset, " past a buffer of ", bytes_));
  if (mapped_) {
    std::memcpy(mapped_ + offset, data, bytes);
    return absl::OkStatus();
  }
  auto staging = Create(device_, bytes, Kind::kHost);
  if (!staging.ok()) return staging.status();
  std::memcpy((*staging)->mapped(), data, bytes);
  const vk::Device dev = device_->handle();
  try {
    vk::CommandPool pool = dev.createCommandPool(vk::CommandPoolCreateInfo({}, device_->queue_family()));
    vk::CommandBuffer cmd =
        dev.allocateCommandBuffers(vk::CommandBufferAllocateInfo(pool, vk::CommandBufferLevel::ePrimary, 1))[0];
    cmd.begin(vk::CommandBufferBeginInfo(vk::CommandBufferUsageFlagBits::eOneTimeSubmit));
    cmd.copyBuffer((*staging)->handle(), buffer_, vk::BufferCopy(0, offset, bytes));
    cmd.end();
    vk::Fence fence = dev.createFence({});
    const absl::Status st = device_->SubmitAndWait(cmd, fence);
    dev.destroyFence(fence);
    dev.destroyCommandPool(pool);
    return st;
  } catch (const std::exception& e) {
    return VkError("staging copy", e);
  }
}

}  // namespace uaii::backends::vulkan
