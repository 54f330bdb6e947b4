// The devices this build and machine can run a model on: the CPU, then every Vulkan
// device the loader lists. `name` is what SessionOptions::device (and the CLI's
// --device, the C ABI's and the SDKs' device fields) take; "auto" picks the first
// device that counts for it (a real GPU), else the CPU. `uaii devices` prints this.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace uaii {

struct DeviceDescription {
  std::string name;         // "cpu", "vulkan:0", ...
  std::string description;  // the device's own name ("NVIDIA H200", "llvmpipe (LLVM 15.0.6, 256 bits)")
  std::string type;         // "CPU", "discrete GPU", "integrated GPU", "virtual GPU", "CPU implementation", ...
  bool gpu = false;
  bool counts_for_auto = false;  // a real device of a GPU backend
  uint64_t memory_bytes = 0;     // the largest device-local heap (the CPU: physical memory)
  uint64_t max_buffer_bytes = 0;  // the largest buffer a kernel binds (weights are split in rows beyond it)
  std::string api_version, driver;
  std::vector<std::string> features;  // "fp16", "16-bit storage", "integer dot", "cooperative matrix", "subgroup 32"
};

struct DeviceList {
  std::vector<DeviceDescription> devices;
  std::string auto_device;  // what "auto" selects
  std::string note;         // why auto selects the CPU, when it does ("" otherwise)
};

DeviceList ListDevices();

}  // namespace uaii
