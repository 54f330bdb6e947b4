// What file_set.cpp (the synchronous reads) and file_set_async.cpp (BeginStaged /
// WaitStaged) share: alignment arithmetic, range text, the io_uring wrapper. Private to
// lib/storage.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

#if UAII_HAVE_LIBURING
#include <liburing.h>
#endif

#include "storage/file_set.h"
#include "util/str_cat.h"

namespace uaii::storage {
namespace file_set_internal {

inline uint64_t AlignDown(uint64_t v) { return v / kDirectIoAlign * kDirectIoAlign; }
inline uint64_t AlignUp(uint64_t v) { return (v + kDirectIoAlign - 1) / kDirectIoAlign * kDirectIoAlign; }

inline std::string Range(uint64_t offset, uint64_t bytes) {
  return StrCat("[", offset, ", ", offset + bytes, ")");
}

// Entries of the asynchronous ring: room for a few chunks' pieces at once.
constexpr unsigned kAsyncEntries = 64;

inline double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace file_set_internal

#if UAII_HAVE_LIBURING
struct FileSet::Ring {
  io_uring ring{};
  unsigned entries = 0;
  ~Ring() { io_uring_queue_exit(&ring); }
};
#else
struct FileSet::Ring {};
#endif

}  // namespace uaii::storage
