#include "backends/cpu/cpu_backend.h"

#include <cstdlib>
#include <cstring>

#include "backends/cpu/program.h"
#include "util/huge_pages.h"
#include "util/str_cat.h"

namespace uaii::backends::cpu {

Capabilities CpuBackend::capabilities() const {
  Capabilities c;
  c.gpu = false;
  c.real_device = true;
  c.host_memory = true;
  c.quantized_weights = true;
  return c;
}

bool CpuBackend::SupportsOp(const std::string& op_type) const { return CpuProgram::Supports(op_type); }

absl::StatusOr<std::unique_ptr<DeviceBuffer>> CpuBackend::Allocate(uint64_t bytes) const {
  return HostBuffer::Allocate(bytes);
}

absl::StatusOr<std::unique_ptr<Program>> CpuBackend::Compile(const ir::Graph& g,
                                                            const runtime::WeightSet& weights) const {
  auto p = CpuProgram::Create(g, weights);
  if (!p.ok()) return p.status();
  return std::unique_ptr<Program>(std::move(*p));
}

absl::StatusOr<std::unique_ptr<DeviceBuffer>> HostBuffer::Allocate(uint64_t bytes) {
  constexpr uint64_t kAlign = 64;
  const uint64_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  std::shared_ptr<uint8_t> p;
  if (rounded > 0) {
    p = AllocateHugePageBuffer(rounded);  // zeroed anonymous pages
    if (!p) {
      void* heap = std::aligned_alloc(kAlign, rounded);
      if (heap == nullptr) return absl::ResourceExhaustedError(StrCat("cannot allocate ", bytes, " bytes of host memory"));
      std::memset(heap, 0, rounded);
      p = std::shared_ptr<uint8_t>(static_cast<uint8_t*>(heap), [](uint8_t* q) { std::free(q); });
    }
  }
  return std::unique_ptr<DeviceBuffer>(new HostBuffer(std::move(p), bytes));
}

}  // namespace uaii::backends::cpu
