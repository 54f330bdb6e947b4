// The compute kernels (shaders/*.comp, embedded as SPIR-V) and the recording of a
// forward pass's dispatches into one command buffer.
//
// Every kernel has the same interface, so one pipeline layout serves them all: four
// storage buffers (set 0, bindings 0-3) and a 128-byte push-constant block whose first
// four words are each binding's start in 32-bit words from its bound offset (the
// binding is made at an offset aligned down to the device's
// minStorageBufferOffsetAlignment), then up to 28 words of the kernel's parameters
// (shaders/common.glsl).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/vulkan/vk_buffer.h"
#include "backends/vulkan/vk_device.h"

namespace uaii::backends::vulkan {

struct SpirV {
  const uint32_t* words = nullptr;
  size_t count = 0;
};
const std::map<std::string, SpirV>& EmbeddedShaders();  // shaders.cpp (generated)

inline constexpr int kBindings = 4;
inline constexpr int kParams = 28;

// One device's pipelines, created on first use and shared by its programs.
class Kernels {
 public:
  static absl::StatusOr<std::shared_ptr<Kernels>> Get(const std::shared_ptr<Device>& device);
  ~Kernels();
  absl::StatusOr<vk::Pipeline> Pipeline(const std::string& name);
  vk::PipelineLayout layout() const { return layout_; }
  vk::DescriptorSetLayout set_layout() const { return set_layout_; }
  const Buffer& dummy() const { return *dummy_; }
  const std::shared_ptr<Device>& device() const { return device_; }

 private:
  Kernels() = default;
  std::shared_ptr<Device> device_;
  vk::DescriptorSetLayout set_layout_;
  vk::PipelineLayout layout_;
  std::unique_ptr<Buffer> dummy_;  // bound where a kernel leaves a binding unused
  std::mutex mu_;
  std::map<std::string, vk::Pipeline> pipelines_;
};

// A range of a buffer a kernel reads or writes; null buffer: unused.
struct Range {
  const Buffer* buffer = nullptr;
  uint64_t offset = 0;  // bytes, a multiple of 4
  uint64_t bytes = 0;   // 0: to the buffer's end
};

// A parameter word: ints as themselves, floats by their bits.
uint32_t Word(float f);
inline uint32_t Word(int64_t v) { return static_cast<uint32_t>(v); }
inline uint32_t Word(int v) { return static_cast<uint32_t>(v); }
inline uint32_t Word(uint32_t v) { return v; }

// Records one pass: dispatches with a barrier after each (every kernel reads what the
// previous ones wrote), then submits it and waits. One per workspace: not shared
// between threads.
class Recorder {
 public:
  static absl::StatusOr<std::unique_ptr<Recorder>> Create(std::shared_ptr<Kernels> kernels);
  ~Recorder();
  absl::Status Begin();
  // Runs kernel `name` over groups (x, y, z) of its local size.
  absl::Status Dispatch(const std::string& name, std::initializer_list<Range> buffers,
                        std::initializer_list<uint32_t> params, uint32_t gx, uint32_t gy = 1, uint32_t gz = 1);
  // Element-wise kernels: n invocations of a 256-wide local size, the groups laid over
  // x and y (shaders/common.glsl's Index()).
  absl::Status Dispatch1D(const std::string& name, std::initializer_list<Range> buffers,
                          std::initializer_list<uint32_t> params, uint64_t n);
  void Copy(const Buffer& from, uint64_t from_offset, const Buffer& to, uint64_t to_offset, uint64_t bytes);
  absl::Status SubmitAndWait();

 private:
  Recorder() = default;
  absl::StatusOr<vk::DescriptorSet> NewSet();
  void Barrier();
  std::shared_ptr<Kernels> kernels_;
  vk::CommandPool pool_;
  vk::CommandBuffer cmd_;
  vk::Fence fence_;
  std::vector<vk::DescriptorPool> set_pools_;
  size_t pool_in_use_ = 0;
  uint32_t sets_left_ = 0;
};

// Groups for `n` items of `per_group` each, laid over x (at most `max_x`) and y.
void Grid(uint64_t n, uint64_t per_group, uint32_t max_x, uint32_t* gx, uint32_t* gy);

}  // namespace uaii::backends::vulkan
