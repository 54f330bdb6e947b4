#include "storage/presets.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "uaii/session.h"
#include "util/str_cat.h"

namespace uaii::storage {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kGiB = uint64_t{1} << 30;

// The table of ARCHITECTURE.md, as data. Phone's budget-dependent cells are computed
// in ResolvePreset.
struct PresetRow {
  Preset preset;
  std::string_view name;
  uint64_t target;
  PinPolicy pin;
  int pin_layers;
  uint64_t expert_lru;
  int64_t kv_window;
  StreamPolicy streaming;
  int staging_buffers;
};
constexpr PresetRow kPresets[] = {
    //  preset            name       target      pin                       layers  expert LRU   KV     streaming                        staging
    {Preset::kLaptop,  "laptop",  8 * kGiB,   PinPolicy::kAutoTrunk,    0,      1 * kGiB,    2048,  StreamPolicy::kWhenOverBudget,   2},
    {Preset::kDesktop, "desktop", 32 * kGiB,  PinPolicy::kFirstLayers,  16,     4 * kGiB,    4096,  StreamPolicy::kUnderPressure,    2},
    {Preset::kServer,  "server",  128 * kGiB, PinPolicy::kDenseIfFits,  0,      32 * kGiB,   8192,  StreamPolicy::kUnderPressure,    2},
    {Preset::kPhone,   "phone",   2 * kGiB,   PinPolicy::kNormsOnly,    0,      256 * kMiB,  512,   StreamPolicy::kAlways,           1},
    {Preset::kNone,    "none",    0,          PinPolicy::kEverything,   0,      0,           0,     StreamPolicy::kOff,              0},
};

const PresetRow& Row(Preset p) {
  for (const auto& r : kPresets)
    if (r.preset == p) return r;
  return kPresets[std::size(kPresets) - 1];
}

uint64_t MeminfoField(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key + ":", 0) == 0) return std::stoull(line.substr(key.size() + 1)) * 1024;  // kB
  return 0;
}

}  // namespace

absl::StatusOr<Preset> ParsePreset(std::string_view name) {
  if (name == "off") return Preset::kNone;
  for (const auto& r : kPresets)
    if (r.name == name) return r.preset;
  return absl::InvalidArgumentError(
      StrCat("unknown preset \"", name, "\"; choose laptop, desktop, server, phone, none or off"));
}

std::string_view PresetName(Preset p) { return Row(p).name; }

MachineMemory ReadMachineMemory() {
  MachineMemory m;
  std::ifstream f("/proc/meminfo");
  std::stringstream ss;
  ss << f.rdbuf();
  m.total_bytes = MeminfoField(ss.str(), "MemTotal");
  m.available_bytes = MeminfoField(ss.str(), "MemAvailable");
  if (m.total_bytes == 0) {  // not Linux: sysconf's view
    m.total_bytes = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
    m.available_bytes = m.total_bytes / 2;
  }
  // Physical cores: distinct (physical id, core id) pairs; logical CPUs as a fallback.
  std::ifstream cpu("/proc/cpuinfo");
  std::set<std::pair<std::string, std::string>> cores;
  std::string line, phys = "0";
  while (std::getline(cpu, line)) {
    auto value = [&] { return line.substr(line.find(':') + 1); };
    if (line.rfind("physical id", 0) == 0) phys = value();
    if (line.rfind("core id", 0) == 0) cores.insert({phys, value()});
  }
  long logical = sysconf(_SC_NPROCESSORS_ONLN);
  m.cores = !cores.empty() ? static_cast<int>(cores.size()) : static_cast<int>(std::max(1L, logical));
  return m;
}

ResolvedPreset ResolvePreset(Preset preset, const MachineMemory& machine, const PresetOverrides& overrides) {
  const PresetRow& row = Row(preset);
  ResolvedPreset r;
  r.preset = preset;
  r.pin = row.pin;
  r.pin_layers = row.pin_layers;
  r.streaming = row.streaming;
  r.staging_buffers = row.staging_buffers;
  r.kv_window = row.kv_window;
  r.kv_sinks = row.kv_window > 0 ? 4 : 0;
  r.expert_lru_bytes = row.expert_lru;
  switch (preset) {
    case Preset::kNone:
      r.budget_bytes = 0;
      break;
    case Preset::kPhone:
      r.budget_bytes = std::min(row.target, machine.available_bytes / 2);
      r.expert_lru_bytes = std::min(row.expert_lru, r.budget_bytes / 8);
      r.threads = std::min(4, std::max(1, machine.cores));
      break;
    default:
      r.budget_bytes = machine.available_bytes < row.target ? machine.available_bytes : row.target;
      break;
  }
  if (overrides.ram_bytes) {
    // A phone's budget never exceeds half of what the OS can still give (the rest is
    // the OS's and the apps'); the other presets take --ram-gb as given.
    r.budget_bytes = preset == Preset::kPhone ? std::min(*overrides.ram_bytes, machine.available_bytes / 2)
                                              : *overrides.ram_bytes;
    if (preset == Preset::kNone) {  // a budget turns streaming on
      r.pin = PinPolicy::kAutoTrunk;
      r.streaming = StreamPolicy::kWhenOverBudget;
      r.staging_buffers = 2;
    }
    if (preset == Preset::kPhone) r.expert_lru_bytes = std::min(row.expert_lru, r.budget_bytes / 8);
  }
  if (preset == Preset::kPhone) {
    // Smaller phones keep a shorter window.
    if (r.budget_bytes < 1 * kGiB) r.kv_window = 128;
    else if (r.budget_bytes < 3 * kGiB / 2) r.kv_window = 256;
  }
  if (overrides.kv_window) {
    r.kv_window = *overrides.kv_window;
    r.kv_sinks = r.kv_window > 0 ? 4 : 0;
  }
  return r;
}

}  // namespace uaii::storage

// The public preset type (uaii/session.h, the C ABI's uaii_preset values) names the
// same rows.
namespace uaii {

absl::StatusOr<Preset> ParsePreset(std::string_view name) {
  auto p = storage::ParsePreset(name);
  if (!p.ok()) return p.status();
  switch (*p) {
    case storage::Preset::kLaptop: return Preset::kLaptop;
    case storage::Preset::kDesktop: return Preset::kDesktop;
    case storage::Preset::kServer: return Preset::kServer;
    case storage::Preset::kPhone: return Preset::kPhone;
    case storage::Preset::kNone: break;
  }
  return Preset::kNone;
}

std::string_view PresetName(Preset p) {
  switch (p) {
    case Preset::kLaptop: return "laptop";
    case Preset::kDesktop: return "desktop";
    case Preset::kServer: return "server";
    case Preset::kPhone: return "phone";
    case Preset::kNone: break;
  }
  return "none";
}

}  // namespace uaii
