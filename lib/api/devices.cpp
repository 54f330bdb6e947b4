#include "uaii/devices.h"

#include <unistd.h>

#include "backends/registry.h"
#include "util/str_cat.h"

namespace uaii {

DeviceList ListDevices() {
  DeviceList list;
  for (auto& s : backends::DescribeDevices()) {
    DeviceDescription d;
    d.name = s.name;
    d.description = s.description;
    d.type = s.type;
    d.gpu = s.gpu;
    d.counts_for_auto = s.gpu && s.real_device;
    d.memory_bytes = s.memory_bytes;
    d.max_buffer_bytes = s.max_buffer_bytes;
    d.api_version = s.api_version;
    d.driver = s.driver;
    d.features = s.features;
    if (d.name == "cpu") {
      const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
      d.memory_bytes = pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
      d.description = StrCat(sysconf(_SC_NPROCESSORS_ONLN), " cores");
    }
    list.devices.push_back(std::move(d));
  }
  auto chosen = backends::SelectBackend("auto");
  list.auto_device = chosen.ok() ? (*chosen)->device() : "cpu";
  if (list.auto_device == "cpu") list.note = backends::AutoCpuReason();
  return list;
}

}  // namespace uaii
