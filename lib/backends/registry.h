// Which backend runs a session: SessionOptions::device names one.
//   "cpu"   the CPU backend (lib/backends/cpu), always present;
//   "auto"  the first registered GPU backend whose device is present
//           (Capabilities::gpu and real_device), else the CPU;
//   other   the backend whose device() it is.
// An unknown name is an Unimplemented error (the C ABI's UAII_ERR_UNSUPPORTED: a device this
// build or machine lacks) listing the devices there are.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/backend.h"

namespace uaii::backends {

// The CPU backend (one per process).
const Backend& Cpu();

// Every backend, the CPU first, then the registered ones in registration order.
std::vector<const Backend*> Backends();

// Adds a backend for the rest of the process (`b` must outlive it): the test suite's
// reference backend, later a GPU backend at start-up. A device name already taken is
// an AlreadyExists error.
absl::Status RegisterBackend(const Backend* b);

absl::StatusOr<const Backend*> SelectBackend(std::string_view device);

// What each backend runs on, for `uaii devices` (include/uaii/devices.h).
struct DeviceSummary {
  std::string name, description, type, api_version, driver;
  bool gpu = false, real_device = false;
  uint64_t memory_bytes = 0, max_buffer_bytes = 0;
  std::vector<std::string> features;
};
std::vector<DeviceSummary> DescribeDevices();

// Why "auto" selects the CPU: "no GPU device (...)" naming what is missing, or the CPU
// implementations it skipped.
std::string AutoCpuReason();

// Why no Vulkan device is listed (OK when some are): the build, the loader or the drivers.
absl::Status VulkanStatus();

}  // namespace uaii::backends
