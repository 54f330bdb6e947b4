// The expert cache's two read paths (runtime/moe_cache.h): io_uring exactly when the
// build has it (CMake option UAII_IO_URING; this suite links uaii_io_uring, so it sees
// the build's UAII_HAVE_LIBURING) and the kernel allows it (both asked as
// tests/storage/kernel_io_uring.h says), pread otherwise (a build without liburing, a
// caller that asks for pread), with the file's bytes either way.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../storage/kernel_io_uring.h"
#include "runtime/moe_cache.h"

namespace {

bool KernelGivesIoUring() { return uaii::testing::ExpectIoUring(uaii::runtime::ExpertCache::kQueueDepth); }

}  // namespace

TEST_CASE("moe: the expert cache reads through io_uring only where the build and kernel have it, else pread") {
  using uaii::runtime::BoundWeight;
  using uaii::runtime::ExpertCache;
  // A file of 8 slices of 3000 bytes (not page multiples), each byte a function of its offset.
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("uaii_moe_cache_io_" + std::to_string(::getpid()) + ".bin")).string();
  constexpr uint64_t kSlice = 3000, kSlices = 8;
  std::vector<uint8_t> bytes(kSlice * kSlices);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>((i * 131) ^ (i >> 7));
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  std::vector<BoundWeight> slices;
  for (uint64_t s : {5, 1, 6, 2}) {  // out of file order: the cache sorts its misses
    BoundWeight w;
    w.type = uaii::TensorType::I8;
    w.shape = {int64_t(kSlice)};
    w.bytes = w.row_bytes = kSlice;
    w.file = path;
    w.offset = s * kSlice;
    slices.push_back(w);
  }
#if UAII_HAVE_LIBURING
  INFO("built with io_uring; the kernel " << (KernelGivesIoUring() ? "allows" : "refuses") << " it");
#else
  INFO("built without io_uring (UAII_IO_URING off)");
#endif
  for (bool ask_uring : {true, false}) {
    ExpertCache cache(kSlice * kSlices, ask_uring);
    CHECK(cache.stats().io_uring == (ask_uring && KernelGivesIoUring()));
    std::vector<const uint8_t*> data;
    REQUIRE(cache.Acquire(slices, &data).ok());
    REQUIRE(data.size() == slices.size());
    for (size_t i = 0; i < slices.size(); ++i)
      CHECK(std::vector<uint8_t>(data[i], data[i] + kSlice) ==
            std::vector<uint8_t>(bytes.begin() + slices[i].offset, bytes.begin() + slices[i].offset + kSlice));
    CHECK(cache.stats().misses == slices.size());
    CHECK(cache.stats().bytes_read == slices.size() * kSlice);
  }
  // A slice past the end of the file fails naming the file, on either path.
  for (bool ask_uring : {true, false}) {
    ExpertCache cache(2 * kSlice * kSlices, ask_uring);
    std::vector<BoundWeight> past = {slices[0]};
    past[0].offset = kSlice * kSlices - kSlice / 2;
    std::vector<const uint8_t*> data;
    const auto st = cache.Acquire(past, &data);
    REQUIRE(!st.ok());
    CHECK(std::string(st.message()).find(path) != std::string::npos);
  }
  std::filesystem::remove(path);
}
