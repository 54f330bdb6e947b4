// `uaii devices`: what --device can name on this machine, with memory and features,
// and what "auto" picks (include/uaii/devices.h).
#include <cstdio>
#include <string>

#include "args.h"
#include "commands.h"
#include "uaii/devices.h"
#include "uaii/json_writer.h"

namespace uaii::cli {

const char* const kDevicesUsage = "usage: uaii devices [--json]\n";

namespace {

std::string Gib(uint64_t bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f GiB", static_cast<double>(bytes) / double(uint64_t{1} << 30));
  return b;
}

}  // namespace

int RunDevices(int argc, char** argv) {
  auto args = ParseArgs(argc, argv, {.boolean = {"--json"}});
  if (!args.ok() || !args->positional.empty()) {
    std::fprintf(stderr, "uaii devices: %s\n%s",
                 !args.ok() ? std::string(args.status().message()).c_str() : "unexpected argument", kDevicesUsage);
    return 2;
  }
  const DeviceList list = ListDevices();
  if (args->has("--json")) {
    JsonWriter j(2);
    j.BeginObject().Key("devices").BeginArray();
    for (const auto& d : list.devices) {
      j.BeginObject().Key("name").String(d.name).Key("description").String(d.description).Key("type").String(d.type);
      j.Key("gpu").Bool(d.gpu).Key("counts_for_auto").Bool(d.counts_for_auto).Key("memory_bytes").Uint(d.memory_bytes);
      if (d.max_buffer_bytes) j.Key("max_buffer_bytes").Uint(d.max_buffer_bytes);
      if (!d.api_version.empty()) j.Key("api").String(d.api_version);
      if (!d.driver.empty()) j.Key("driver").String(d.driver);
      j.Key("features").BeginArray();
      for (const auto& f : d.features) j.String(f);
      j.EndArray().EndObject();
    }
    j.EndArray().Key("auto").String(list.auto_device);
    if (!list.note.empty()) j.Key("note").String(list.note);
    j.EndObject();
    std::printf("%s\n", j.str().c_str());
    return 0;
  }
  for (const auto& d : list.devices) {
    std::printf("%-10s %s, %s", d.name.c_str(), d.type.c_str(), d.description.c_str());
    if (d.memory_bytes) std::printf(", %s", Gib(d.memory_bytes).c_str());
    if (!d.api_version.empty()) std::printf(", %s", d.api_version.c_str());
    std::printf("\n");
    if (!d.driver.empty()) std::printf("           driver %s\n", d.driver.c_str());
    if (d.max_buffer_bytes) std::printf("           largest buffer %s\n", Gib(d.max_buffer_bytes).c_str());
    if (!d.features.empty()) {
      std::string f;
      for (const auto& x : d.features) f += (f.empty() ? "" : ", ") + x;
      std::printf("           features: %s\n", f.c_str());
    }
  }
  std::printf("auto: %s%s%s\n", list.auto_device.c_str(), list.note.empty() ? "" : " (", list.note.empty() ? "" : (list.note + ")").c_str());
  return 0;
}

}  // namespace uaii::cli
