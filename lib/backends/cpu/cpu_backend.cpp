#include "backends/cpu/cpu_backend.h"

#include <cstdlib>
#include <cstring>

#include "backends/cpu/program.h"
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
  void* p = rounded == 0 ? nullptr : std::aligned_alloc(kAlign, rounded);
  if (rounded != 0 && p == nullptr)
    return absl::ResourceExhaustedError(StrCat("cannot allocate ", bytes, " bytes of host memory"));
  if (p != nullptr) std::memset(p, 0, rounded);
  return std::unique_ptr<DeviceBuffer>(new HostBuffer(p, bytes));
}

HostBuffer::~HostBuffer() { std::free(data_); }

}  // namespace uaii::backends::cpu
