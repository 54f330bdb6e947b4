// Memory presets: what `--preset` means on a given machine (ARCHITECTURE.md, "Memory
// presets"). Pure data plus one resolution function, so the table is unit-testable
// for any total / available RAM.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace uaii::storage {

enum class Preset { kLaptop, kDesktop, kServer, kPhone, kNone };

// "laptop" | "desktop" | "server" | "phone" | "none" | "off" (= none).
absl::StatusOr<Preset> ParsePreset(std::string_view name);
std::string_view PresetName(Preset p);

enum class PinPolicy {
  kAutoTrunk,     // laptop: norms always, then embeddings, lm_head, first layers while they fit
  kFirstLayers,   // desktop: up to `pin_layers` layers
  kDenseIfFits,   // server: everything when it fits
  kNormsOnly,     // phone: norms, plus embeddings / lm_head when they still fit
  kEverything,    // none
};
enum class StreamPolicy { kWhenOverBudget, kUnderPressure, kAlways, kOff };

struct MachineMemory {
  uint64_t total_bytes = 0;      // MemTotal
  uint64_t available_bytes = 0;  // MemAvailable: what the OS can still give the process
  int cores = 1;                 // physical cores
};
// Reads /proc/meminfo and the CPU topology.
MachineMemory ReadMachineMemory();

struct ResolvedPreset {
  Preset preset = Preset::kNone;
  uint64_t budget_bytes = 0;       // 0: unlimited
  PinPolicy pin = PinPolicy::kEverything;
  int pin_layers = 0;              // kFirstLayers only
  uint64_t expert_lru_bytes = 0;   // cap for the expert cache (0: none)
  int64_t kv_window = 0;           // resident KV positions (0: unbounded up to max_context)
  int kv_sinks = 0;                // attention-sink positions kept besides the window
  int staging_buffers = 0;         // 0 when nothing streams
  StreamPolicy streaming = StreamPolicy::kOff;
  int threads = 0;                 // 0: the default (physical cores)
};

struct PresetOverrides {
  std::optional<uint64_t> ram_bytes;  // --ram-gb
  std::optional<int64_t> kv_window;   // --kv-window (0 = unbounded)
};

// The preset's numbers on `machine`. Laptop / desktop / server keep their target
// unless the machine has less available than the target, then shrink to what is
// available; phone starts at 2 GiB (or --ram-gb) and is clamped to half of what is
// available.
ResolvedPreset ResolvePreset(Preset preset, const MachineMemory& machine, const PresetOverrides& overrides = {});

}  // namespace uaii::storage
