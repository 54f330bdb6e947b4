// The Vulkan instance and devices: the loader is opened at run time (no link-time
// libvulkan), every physical device is listed with what device selection and the
// planner need, and a Device is one opened physical device with a compute queue.
// Vulkan-Hpp throws vk::SystemError; nothing here lets one escape: every entry point
// returns absl::Status naming the failed call.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/vulkan/vk.h"

namespace uaii::backends::vulkan {

struct DeviceInfo {
  int index = 0;                  // vulkan:N
  std::string name;               // deviceName
  std::string type;               // "discrete GPU", "integrated GPU", "virtual GPU", "CPU", "other"
  bool cpu_implementation = false;  // lavapipe / SwiftShader: never picked by "auto"
  std::string driver;             // driverName driverInfo
  std::string api_version;        // "1.3.230"
  uint64_t device_local_bytes = 0;  // the largest DEVICE_LOCAL heap
  uint64_t max_storage_buffer_range = 0;
  uint64_t min_storage_offset_align = 0;
  uint32_t subgroup_size = 0;
  uint32_t max_workgroup_count[3] = {0, 0, 0};
  bool fp16_arithmetic = false;     // shaderFloat16
  bool storage_16bit = false;       // storageBuffer16BitAccess
  bool integer_dot = false;         // VK_KHR_shader_integer_dot_product
  bool cooperative_matrix = false;  // VK_KHR_cooperative_matrix
};

// The process's instance and the devices it found; the error names what is missing
// (the loader library, an instance, any device).
absl::StatusOr<const std::vector<DeviceInfo>*> ListDevices();

class Device {
 public:
  // Opens physical device `index` of ListDevices() (shared: one per process and index).
  static absl::StatusOr<std::shared_ptr<Device>> Open(int index);
  ~Device();

  const DeviceInfo& info() const { return info_; }
  vk::Device handle() const { return device_; }
  vk::PhysicalDevice physical() const { return physical_; }
  uint32_t queue_family() const { return queue_family_; }
  // Submits `cmd` and waits for it (submissions to the one queue are serialised).
  absl::Status SubmitAndWait(vk::CommandBuffer cmd, vk::Fence fence);
  // A memory type with `want` flags among `type_bits`, preferring `prefer` too; -1 if none.
  int MemoryType(uint32_t type_bits, vk::MemoryPropertyFlags want, vk::MemoryPropertyFlags prefer = {}) const;

 private:
  Device() = default;
  DeviceInfo info_;
  vk::PhysicalDevice physical_;
  vk::PhysicalDeviceMemoryProperties memory_;
  vk::Device device_;
  vk::Queue queue_;
  uint32_t queue_family_ = 0;
  std::mutex queue_mu_;
};

// "vkCreateBuffer: ErrorOutOfDeviceMemory" from a caught vk::SystemError.
absl::Status VkError(const char* call, const std::exception& e);

}  // namespace uaii::backends::vulkan
