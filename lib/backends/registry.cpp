#include "backends/registry.h"

#include <mutex>

#include "backends/cpu/cpu_backend.h"
#ifdef UAII_HAVE_VULKAN
#include "backends/vulkan/vulkan_backend.h"
#endif
#include "util/str_cat.h"

namespace uaii::backends {
namespace {

struct Registry {
  std::mutex mu;
  std::vector<const Backend*> extra;
};

Registry& Reg() {
  static Registry r;
  return r;
}

}  // namespace

const Backend& Cpu() {
  static const cpu::CpuBackend backend;
  return backend;
}

absl::Status VulkanStatus() {
#ifdef UAII_HAVE_VULKAN
  absl::Status why;
  vulkan::DeviceBackends(&why);
  return why;
#else
  return absl::UnimplementedError("this build has no Vulkan backend (configure with -DUAII_VULKAN=ON; Debian: "
                                  "libvulkan-dev glslc)");
#endif
}

std::vector<const Backend*> Backends() {
  Registry& r = Reg();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<const Backend*> all = {&Cpu()};
#ifdef UAII_HAVE_VULKAN
  for (const auto& b : vulkan::DeviceBackends()) all.push_back(b.get());
#endif
  all.insert(all.end(), r.extra.begin(), r.extra.end());
  return all;
}

absl::Status RegisterBackend(const Backend* b) {
  if (b == nullptr) return absl::InvalidArgumentError("RegisterBackend: null backend");
  const std::string dev = b->device();
  if (dev == "auto") return absl::InvalidArgumentError("RegisterBackend: \"auto\" is not a device name");
  for (const Backend* have : Backends())
    if (have->device() == dev) return absl::AlreadyExistsError(StrCat("a backend already serves device '", dev, "'"));
  Registry& r = Reg();
  std::lock_guard<std::mutex> lock(r.mu);
  r.extra.push_back(b);
  return absl::OkStatus();
}

absl::StatusOr<const Backend*> SelectBackend(std::string_view device) {
  if (device == "cpu") return &Cpu();  // without listing the GPUs (a Vulkan instance per process)
  const std::vector<const Backend*> all = Backends();
  if (device == "auto") {
    for (const Backend* b : all) {
      const Capabilities c = b->capabilities();
      if (c.gpu && c.real_device) return b;
    }
    return &Cpu();
  }
  std::string names = "auto";
  for (const Backend* b : all) {
    // A kind without its index names its first device ("vulkan" is "vulkan:0").
    if (b->device() == device || b->device() == StrCat(device, ":0")) return b;
    names += StrCat(", ", b->device());
  }
  if (device.substr(0, 6) == "vulkan") {
    const absl::Status why = VulkanStatus();
    return absl::UnimplementedError(StrCat("unknown device '", device, "' (available: ", names, ")",
                                           why.ok() ? "" : StrCat(": ", std::string(why.message()))));
  }
  // Unimplemented: the name may be a real device that this build or machine lacks.
  return absl::UnimplementedError(StrCat("unknown device '", device, "' (available: ", names, ")"));
}

std::string AutoCpuReason() {
  const absl::Status vk = VulkanStatus();
  if (!vk.ok()) return StrCat("no GPU device (", std::string(vk.message()), ")");
  std::string skipped;
  for (const Backend* b : Backends()) {
    const Capabilities c = b->capabilities();
    if (c.gpu && !c.real_device) skipped += StrCat(skipped.empty() ? "" : ", ", b->device());
  }
  if (skipped.empty()) return "no GPU device";
  return StrCat("no GPU device (", skipped, ": a CPU implementation, which auto skips; name it as the device to use it)");
}

std::vector<DeviceSummary> DescribeDevices() {
  std::vector<DeviceSummary> out;
  for (const Backend* b : Backends()) {
    DeviceSummary d;
    d.name = b->device();
    const Capabilities c = b->capabilities();
    d.gpu = c.gpu;
    d.real_device = c.real_device;
    d.type = b == &Cpu() ? "CPU" : c.gpu ? "GPU" : "emulation";
    d.description = b->name();
#ifdef UAII_HAVE_VULKAN
    if (const auto* vk = dynamic_cast<const vulkan::VulkanBackend*>(b)) {
      const vulkan::DeviceInfo& i = vk->info();
      d.description = i.name;
      d.type = i.cpu_implementation ? "CPU implementation" : i.type;
      d.api_version = StrCat("Vulkan ", i.api_version);
      d.driver = i.driver;
      d.memory_bytes = i.device_local_bytes;
      d.max_buffer_bytes = i.max_storage_buffer_range;
      if (i.fp16_arithmetic) d.features.push_back("fp16");
      if (i.storage_16bit) d.features.push_back("16-bit storage");
      if (i.integer_dot) d.features.push_back("integer dot");
      if (i.cooperative_matrix) d.features.push_back("cooperative matrix");
      if (i.subgroup_size) d.features.push_back(StrCat("subgroup ", i.subgroup_size));
    }
#endif
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace uaii::backends
