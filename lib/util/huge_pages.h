// Anonymous memory for large, long-lived, streamed-through buffers (the resident
// weights), backed by transparent huge pages where the kernel allows them.
//
// Why: decode reads every resident weight once per token, so it walks the page
// tables once per 4 KiB page it streams. In a virtual machine each TLB miss is a
// two-level (guest + host) walk; with 2 MiB pages there are 512x fewer of them.
// Debian's default THP mode is `madvise`, so nothing gets huge pages unless it asks:
// the buffer is mapped 2 MiB-aligned and advised MADV_HUGEPAGE. Where THP is off
// (or the kernel has no 2 MiB page free) the same memory simply stays 4 KiB pages;
// UAII_HUGE_PAGES=0 turns the advice off (for A/B measurements).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

namespace uaii {

// One mapping of at least `bytes` bytes (zero-filled, as fresh anonymous memory is),
// starting on a 2 MiB boundary. Returns null when the mapping fails. The shared_ptr
// unmaps on release; callers hand out pieces with shared_ptr's aliasing constructor.
std::shared_ptr<uint8_t> AllocateHugePageBuffer(size_t bytes);

// The alignment AllocateHugePageBuffer gives (2 MiB).
constexpr size_t kHugePageBytes = size_t{2} << 20;

}  // namespace uaii
