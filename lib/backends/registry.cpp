#include "backends/registry.h"

#include <mutex>

#include "backends/cpu/cpu_backend.h"
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

std::vector<const Backend*> Backends() {
  Registry& r = Reg();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<const Backend*> all = {&Cpu()};
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
    if (b->device() == device) return b;
    names += StrCat(", ", b->device());
  }
  // Unimplemented: the name may be a real device that this build or machine lacks.
  return absl::UnimplementedError(StrCat("unknown device '", device, "' (available: ", names, ")"));
}

}  // namespace uaii::backends
