#include "util/huge_pages.h"

#include <sys/mman.h>
#include <cstdlib>
#include <string_view>

namespace uaii {

std::shared_ptr<uint8_t> AllocateHugePageBuffer(size_t bytes) {
  const size_t size = (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  if (size == 0) return nullptr;
  // Over-map by one huge page and trim both ends so the kept range is 2 MiB-aligned:
  // mmap only promises 4 KiB alignment, and a misaligned range cannot use huge pages.
  const size_t mapped = size + kHugePageBytes;
  void* p = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  const auto raw = reinterpret_cast<uintptr_t>(p);
  const uintptr_t start = (raw + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  if (start > raw) ::munmap(p, start - raw);
  if (const uintptr_t end = raw + mapped, kept_end = start + size; end > kept_end)
    ::munmap(reinterpret_cast<void*>(kept_end), end - kept_end);
  auto* base = reinterpret_cast<uint8_t*>(start);
#ifdef MADV_HUGEPAGE
  // Advice only: where it fails the memory stays 4 KiB pages. UAII_HUGE_PAGES=0 skips
  // it, to measure what huge pages buy (benchmarks/, docs/performance.md).
  const char* env = std::getenv("UAII_HUGE_PAGES");
  if (env == nullptr || std::string_view(env) != "0") ::madvise(base, size, MADV_HUGEPAGE);
#endif
  return std::shared_ptr<uint8_t>(base, [size](uint8_t* b) { ::munmap(b, size); });
}

}  // namespace uaii
