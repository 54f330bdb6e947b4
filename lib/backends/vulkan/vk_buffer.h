// Device memory: one VkBuffer with its own allocation. Host buffers are host-visible
// and mapped for the buffer's life (preferring device-local memory the host can map,
// as on unified-memory GPUs and with resizable BAR); device buffers are device-local,
// written through a staging copy where the host cannot map them.
#pragma once
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "backends/backend.h"
#include "backends/vulkan/vk_device.h"

namespace uaii::backends::vulkan {

class Buffer {
 public:
  enum class Kind { kDevice, kHost };
  static absl::StatusOr<std::unique_ptr<Buffer>> Create(std::shared_ptr<Device> device, uint64_t bytes, Kind kind);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  vk::Buffer handle() const { return buffer_; }
  uint64_t bytes() const { return bytes_; }
  uint8_t* mapped() const { return mapped_; }  // null when the host cannot map it
  // Copies host bytes in at `offset` (mapped: memcpy; else a staging buffer and a copy).
  absl::Status Write(const void* data, uint64_t bytes, uint64_t offset = 0);

 private:
  Buffer() = default;
  std::shared_ptr<Device> device_;
  vk::Buffer buffer_;
  vk::DeviceMemory memory_;
  uint64_t bytes_ = 0;
  uint8_t* mapped_ = nullptr;
};

// A Buffer as the backend seam's DeviceBuffer (the KV cache's arena): host-visible,
// zeroed, so the runtime's cache policy writes cell positions and clears cells through
// host(), and the shaders read the same memory.
class VulkanDeviceBuffer final : public DeviceBuffer {
 public:
  explicit VulkanDeviceBuffer(std::unique_ptr<Buffer> b) : buffer_(std::move(b)) {}
  uint64_t bytes() const override { return buffer_->bytes(); }
  void* host() override { return buffer_->mapped(); }
  const Buffer& buffer() const { return *buffer_; }

 private:
  std::unique_ptr<Buffer> buffer_;
};

}  // namespace uaii::backends::vulkan
