#include "backends/vulkan/vk_device.h"

#include <cstring>
#include <map>

#include "util/str_cat.h"

VULKAN_HPP_DEFAULT_DISPATCH_LOADER_DYNAMIC_STORAGE

namespace uaii::backends::vulkan {
namespace {

struct InstanceState {
  absl::Status status = absl::OkStatus();
  std::unique_ptr<vk::DynamicLoader> loader;
  vk::Instance instance;
  std::vector<vk::PhysicalDevice> physical;
  std::vector<DeviceInfo> devices;
};

std::string TypeName(vk::PhysicalDeviceType t) {
  switch (t) {
    case vk::PhysicalDeviceType::eDiscreteGpu: return "discrete GPU";
    case vk::PhysicalDeviceType::eIntegratedGpu: return "integrated GPU";
    case vk::PhysicalDeviceType::eVirtualGpu: return "virtual GPU";
    case vk::PhysicalDeviceType::eCpu: return "CPU";
    default: return "other";
  }
}

bool HasExtension(vk::PhysicalDevice pd, const char* name) {
  for (const auto& e : pd.enumerateDeviceExtensionProperties())
    if (std::strcmp(e.extensionName.data(), name) == 0) return true;
  return false;
}

DeviceInfo Describe(vk::PhysicalDevice pd, int index) {
  DeviceInfo d;
  d.index = index;
  const auto props = pd.getProperties();
  d.name = props.deviceName.data();
  d.type = TypeName(props.deviceType);
  d.cpu_implementation = props.deviceType == vk::PhysicalDeviceType::eCpu;
  d.api_version = StrCat(VK_API_VERSION_MAJOR(props.apiVersion), ".", VK_API_VERSION_MINOR(props.apiVersion), ".",
                         VK_API_VERSION_PATCH(props.apiVersion));
  d.max_storage_buffer_range = props.limits.maxStorageBufferRange;
  d.min_storage_offset_align = props.limits.minStorageBufferOffsetAlignment;
  for (int i = 0; i < 3; ++i) d.max_workgroup_count[i] = props.limits.maxComputeWorkGroupCount[i];
  const auto mem = pd.getMemoryProperties();
  for (uint32_t h = 0; h < mem.memoryHeapCount; ++h)
    if (mem.memoryHeaps[h].flags & vk::MemoryHeapFlagBits::eDeviceLocal)
      d.device_local_bytes = std::max<uint64_t>(d.device_local_bytes, mem.memoryHeaps[h].size);
  if (props.apiVersion >= VK_API_VERSION_1_2) {
    auto chain = pd.getProperties2<vk::PhysicalDeviceProperties2, vk::PhysicalDeviceSubgroupProperties,
                                   vk::PhysicalDeviceDriverProperties>();
    d.subgroup_size = chain.get<vk::PhysicalDeviceSubgroupProperties>().subgroupSize;
    const auto& drv = chain.get<vk::PhysicalDeviceDriverProperties>();
    d.driver = StrCat(drv.driverName.data(), " ", drv.driverInfo.data());
    auto feats = pd.getFeatures2<vk::PhysicalDeviceFeatures2, vk::PhysicalDeviceVulkan11Features,
                                 vk::PhysicalDeviceVulkan12Features>();
    d.storage_16bit = feats.get<vk::PhysicalDeviceVulkan11Features>().storageBuffer16BitAccess;
    d.fp16_arithmetic = feats.get<vk::PhysicalDeviceVulkan12Features>().shaderFloat16;
  }
  d.integer_dot = HasExtension(pd, "VK_KHR_shader_integer_dot_product");
  d.cooperative_matrix = HasExtension(pd, "VK_KHR_cooperative_matrix");
  return d;
}

InstanceState* MakeInstance() {
  auto* s = new InstanceState();
  try {
    s->loader = std::make_unique<vk::DynamicLoader>();
  } catch (const std::exception& e) {
    s->status = absl::UnavailableError(StrCat("the Vulkan loader (libvulkan.so.1) could not be opened: ", e.what(),
                                              " (Debian: libvulkan1)"));
    return s;
  }
  try {
    auto get = s->loader->getProcAddress<PFN_vkGetInstanceProcAddr>("vkGetInstanceProcAddr");
    VULKAN_HPP_DEFAULT_DISPATCHER.init(get);
    vk::ApplicationInfo app("uaii", 1, "uaii", 1, VK_API_VERSION_1_2);
    vk::InstanceCreateInfo info({}, &app);
    s->instance = vk::createInstance(info);
    VULKAN_HPP_DEFAULT_DISPATCHER.init(s->instance);
    s->physical = s->instance.enumeratePhysicalDevices();
  } catch (const std::exception& e) {
    s->status = VkError("vkCreateInstance", e);
    return s;
  }
  if (s->physical.empty()) {
    s->status = absl::NotFoundError(
        "the Vulkan loader found no device (no driver installed; Debian: mesa-vulkan-drivers for lavapipe)");
    return s;
  }
  for (size_t i = 0; i < s->physical.size(); ++i) s->devices.push_back(Describe(s->physical[i], static_cast<int>(i)));
  return s;
}

InstanceState& State() {
  static InstanceState* s = MakeInstance();  // never destroyed: devices may outlive statics
  return *s;
}

}  // namespace

absl::Status VkError(const char* call, const std::exception& e) {
  return absl::InternalError(StrCat(call, ": ", e.what()));
}

absl::StatusOr<const std::vector<DeviceInfo>*> ListDevices() {
  InstanceState& s = State();
  if (!s.status.ok()) return s.status;
  return &s.devices;
}

absl::StatusOr<std::shared_ptr<Device>> Device::Open(int index) {
  static std::mutex mu;
  static std::map<int, std::weak_ptr<Device>> open;
  auto devices = ListDevices();
  if (!devices.ok()) return devices.status();
  if (index < 0 || index >= static_cast<int>((*devices)->size()))
    return absl::NotFoundError(StrCat("no Vulkan device ", index, " (", (*devices)->size(), " found)"));
  std::lock_guard<std::mutex> lk(mu);
  if (auto d = open[index].lock()) return d;
  std::shared_ptr<Device> d(new Device());
  d->info_ = (**devices)[index];
  d->physical_ = State().physical[index];
  d->memory_ = d->physical_.getMemoryProperties();
  try {
    const auto families = d->physical_.getQueueFamilyProperties();
    int family = -1;
    for (size_t i = 0; i < families.size(); ++i)
      if (families[i].queueFlags & vk::QueueFlagBits::eCompute) {
        family = static_cast<int>(i);
        break;
      }
    if (family < 0) return absl::UnimplementedError(StrCat("Vulkan device ", index, " has no compute queue"));
    d->queue_family_ = static_cast<uint32_t>(family);
    const float priority = 1.0f;
    vk::DeviceQueueCreateInfo q({}, d->queue_family_, 1, &priority);
    vk::StructureChain<vk::DeviceCreateInfo, vk::PhysicalDeviceFeatures2> chain;
    chain.get<vk::DeviceCreateInfo>().setQueueCreateInfos(q);
    d->device_ = d->physical_.createDevice(chain.get<vk::DeviceCreateInfo>());
    VULKAN_HPP_DEFAULT_DISPATCHER.init(d->device_);
    d->queue_ = d->device_.getQueue(d->queue_family_, 0);
  } catch (const std::exception& e) {
    return VkError("vkCreateDevice", e);
  }
  open[index] = d;
  return d;
}

Device::~Device() {
  if (device_) {
    device_.waitIdle();
    device_.destroy();
  }
}

absl::Status Device::SubmitAndWait(vk::CommandBuffer cmd, vk::Fence fence) {
  try {
    {
      std::lock_guard<std::mutex> lk(queue_mu_);
      vk::SubmitInfo submit({}, {}, cmd);
      queue_.submit(submit, fence);
    }
    if (device_.waitForFences(fence, VK_TRUE, UINT64_MAX) != vk::Result::eSuccess)
      return absl::InternalError("vkWaitForFences did not complete");
    device_.resetFences(fence);
  } catch (const std::exception& e) {
    return VkError("vkQueueSubmit", e);
  }
  return absl::OkStatus();
}

int Device::MemoryType(uint32_t type_bits, vk::MemoryPropertyFlags want, vk::MemoryPropertyFlags prefer) const {
  int fallback = -1;
  for (uint32_t i = 0; i < memory_.memoryTypeCount; ++i) {
    if (!(type_bits & (1u << i))) continue;
    const auto flags = memory_.memoryTypes[i].propertyFlags;
    if ((flags & want) != want) continue;
    if ((flags & prefer) == prefer) return static_cast<int>(i);
    if (fallback < 0) fallback = static_cast<int>(i);
  }
  return fallback;
}

}  // namespace uaii::backends::vulkan
