// Presets resolve to the table's numbers for a given total and available RAM.
#include <catch2/catch.hpp>

#include "storage/presets.h"

using namespace uaii::storage;

namespace {
constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kGiB = uint64_t{1} << 30;
MachineMemory Machine(uint64_t total_gib, uint64_t avail_gib, int cores = 8) {
  return {total_gib * kGiB, avail_gib * kGiB, cores};
}
}  // namespace

TEST_CASE("presets: parse names, off is none, unknown is an error", "[storage][presets]") {
  CHECK(*ParsePreset("laptop") == Preset::kLaptop);
  CHECK(*ParsePreset("off") == Preset::kNone);
  auto bad = ParsePreset("tablet");
  REQUIRE(!bad.ok());
  CHECK_THAT(std::string(bad.status().message()), Catch::Contains("unknown preset \"tablet\""));
}

TEST_CASE("presets: laptop, desktop, server keep their target on a big machine", "[storage][presets]") {
  auto m = Machine(256, 200);
  auto laptop = ResolvePreset(Preset::kLaptop, m);
  CHECK(laptop.budget_bytes == 8 * kGiB);
  CHECK(laptop.pin == PinPolicy::kAutoTrunk);
  CHECK(laptop.expert_lru_bytes == 1 * kGiB);
  CHECK(laptop.kv_window == 2048);
  CHECK(laptop.kv_sinks == 4);
  CHECK(laptop.staging_buffers == 2);
  CHECK(laptop.streaming == StreamPolicy::kWhenOverBudget);
  auto desktop = ResolvePreset(Preset::kDesktop, m);
  CHECK(desktop.budget_bytes == 32 * kGiB);
  CHECK(desktop.pin_layers == 16);
  CHECK(desktop.expert_lru_bytes == 4 * kGiB);
  CHECK(desktop.kv_window == 4096);
  auto server = ResolvePreset(Preset::kServer, m);
  CHECK(server.budget_bytes == 128 * kGiB);
  CHECK(server.pin == PinPolicy::kDenseIfFits);
  CHECK(server.expert_lru_bytes == 32 * kGiB);
  CHECK(server.kv_window == 8192);
}

TEST_CASE("presets: shrink to available RAM only when the machine has less than the target", "[storage][presets]") {
  CHECK(ResolvePreset(Preset::kLaptop, Machine(24, 20)).budget_bytes == 8 * kGiB);
  CHECK(ResolvePreset(Preset::kLaptop, Machine(8, 5)).budget_bytes == 5 * kGiB);
  CHECK(ResolvePreset(Preset::kDesktop, Machine(24, 20)).budget_bytes == 20 * kGiB);
  CHECK(ResolvePreset(Preset::kServer, Machine(64, 60)).budget_bytes == 60 * kGiB);
}

TEST_CASE("presets: phone is 2 GiB clamped to half of what is available", "[storage][presets]") {
  auto big = ResolvePreset(Preset::kPhone, Machine(12, 8, 8));
  CHECK(big.budget_bytes == 2 * kGiB);
  CHECK(big.kv_window == 512);
  CHECK(big.staging_buffers == 1);
  CHECK(big.threads == 4);
  CHECK(big.expert_lru_bytes == 256 * kMiB);
  CHECK(big.pin == PinPolicy::kNormsOnly);
  CHECK(big.streaming == StreamPolicy::kAlways);

  auto mid = ResolvePreset(Preset::kPhone, MachineMemory{4 * kGiB, 5 * kGiB / 2, 2});
  CHECK(mid.budget_bytes == 5 * kGiB / 4);
  CHECK(mid.kv_window == 256);
  CHECK(mid.threads == 2);
  CHECK(mid.expert_lru_bytes == mid.budget_bytes / 8);

  auto small = ResolvePreset(Preset::kPhone, Machine(3, 1));
  CHECK(small.budget_bytes == kGiB / 2);
  CHECK(small.kv_window == 128);
  CHECK(small.expert_lru_bytes == kGiB / 16);
}

TEST_CASE("presets: --ram-gb on a phone is clamped to half of what is available", "[storage][presets]") {
  // --ram-gb 8 on a phone with 6 GiB available: 3 GiB.
  auto phone = ResolvePreset(Preset::kPhone, Machine(12, 6), {.ram_bytes = 8 * kGiB, .kv_window = std::nullopt});
  CHECK(phone.budget_bytes == 3 * kGiB);
  CHECK(phone.expert_lru_bytes == 256 * kMiB);
  CHECK(phone.kv_window == 512);
  // Below half of what is available, --ram-gb stands.
  auto small = ResolvePreset(Preset::kPhone, Machine(12, 6), {.ram_bytes = 1 * kGiB, .kv_window = std::nullopt});
  CHECK(small.budget_bytes == 1 * kGiB);
  CHECK(small.kv_window == 256);
  // The other presets take --ram-gb as given, and shrink to what is available only
  // when the machine has less than their target.
  CHECK(ResolvePreset(Preset::kLaptop, Machine(12, 6), {.ram_bytes = 8 * kGiB, .kv_window = std::nullopt})
            .budget_bytes == 8 * kGiB);
  CHECK(ResolvePreset(Preset::kLaptop, Machine(12, 6)).budget_bytes == 6 * kGiB);
  CHECK(ResolvePreset(Preset::kLaptop, Machine(12, 9)).budget_bytes == 8 * kGiB);
  CHECK(ResolvePreset(Preset::kDesktop, Machine(64, 31)).budget_bytes == 31 * kGiB);
  CHECK(ResolvePreset(Preset::kServer, Machine(256, 200)).budget_bytes == 128 * kGiB);
}

TEST_CASE("presets: none is unlimited — overrides win", "[storage][presets]") {
  auto none = ResolvePreset(Preset::kNone, Machine(24, 20));
  CHECK(none.budget_bytes == 0);
  CHECK(none.pin == PinPolicy::kEverything);
  CHECK(none.kv_window == 0);
  CHECK(none.staging_buffers == 0);
  CHECK(none.streaming == StreamPolicy::kOff);

  auto ram = ResolvePreset(Preset::kNone, Machine(24, 20), {.ram_bytes = 1 * kGiB, .kv_window = std::nullopt});
  CHECK(ram.budget_bytes == 1 * kGiB);
  CHECK(ram.streaming == StreamPolicy::kWhenOverBudget);
  CHECK(ram.staging_buffers == 2);

  auto kv = ResolvePreset(Preset::kLaptop, Machine(24, 20), {.ram_bytes = std::nullopt, .kv_window = 64});
  CHECK(kv.kv_window == 64);
  auto unbounded = ResolvePreset(Preset::kLaptop, Machine(24, 20), {.ram_bytes = std::nullopt, .kv_window = 0});
  CHECK(unbounded.kv_window == 0);
  CHECK(unbounded.kv_sinks == 0);
}

TEST_CASE("presets: this machine's memory is readable", "[storage][presets]") {
  auto m = ReadMachineMemory();
  CHECK(m.total_bytes > 0);
  CHECK(m.available_bytes <= m.total_bytes);
  CHECK(m.cores >= 1);
}
