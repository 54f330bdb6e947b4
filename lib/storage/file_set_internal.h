// What file_set.cpp (the synchronous reads) and file_set_async.cpp (BeginStaged /
// WaitStaged) share: alignment arithmetic, range text, the clock. Private to lib/storage.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

#include "storage/file_set.h"
#include "util/str_cat.h"

namespace uaii::storage {
namespace file_set_internal {

inline uint64_t AlignDown(uint64_t v) { return v / kDirectIoAlign * kDirectIoAlign; }
inline uint64_t AlignUp(uint64_t v) { return (v + kDirectIoAlign - 1) / kDirectIoAlign * kDirectIoAlign; }

inline std::string Range(uint64_t offset, uint64_t bytes) {
  return StrCat("[", offset, ", ", offset + bytes, ")");
}

// Pieces in flight on the asynchronous ring: room for a few chunks' pieces at once.
constexpr unsigned kAsyncEntries = 64;

inline double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace file_set_internal

}  // namespace uaii::storage
