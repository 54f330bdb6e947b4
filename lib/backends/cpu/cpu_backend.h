// The CPU backend: host memory, the step kernels of this directory (cpu_ops,
// attention, moe, linear / stage_linear) run by CpuProgram (program.h).
#pragma once
#include "backends/backend.h"

namespace uaii::backends::cpu {

class CpuBackend final : public Backend {
 public:
  std::string name() const override { return "cpu"; }
  std::string device() const override { return "cpu"; }
  Capabilities capabilities() const override;
  bool SupportsOp(const std::string& op_type) const override;
  absl::StatusOr<std::unique_ptr<DeviceBuffer>> Allocate(uint64_t bytes) const override;
  absl::StatusOr<std::unique_ptr<Program>> Compile(const ir::Graph& g,
                                                   const runtime::WeightSet& weights) const override;
};

// Host memory, zeroed, on transparent huge pages where the kernel gives them
// (util/huge_pages.h: a decode step streams the KV cache from DRAM, and on 4 KiB
// pages each page was also a TLB miss), else the heap; 64-byte aligned at least.
class HostBuffer final : public DeviceBuffer {
 public:
  static absl::StatusOr<std::unique_ptr<DeviceBuffer>> Allocate(uint64_t bytes);
  uint64_t bytes() const override { return bytes_; }
  void* host() override { return data_.get(); }

 private:
  HostBuffer(std::shared_ptr<uint8_t> data, uint64_t bytes) : data_(std::move(data)), bytes_(bytes) {}
  std::shared_ptr<uint8_t> data_;
  uint64_t bytes_;
};

}  // namespace uaii::backends::cpu
