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

// Why no Vulkan device is listed (OK when some are): the build, the loader or the drivers.
absl::Status VulkanStatus();

}  // namespace uaii::backends
