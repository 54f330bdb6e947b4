#include "util/huge_pages.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace {

// The THPeligible flag /proc/self/smaps reports for the mapping holding `p`, or -1
// when the kernel does not report it. 1 means the range was advised (or THP is
// `always`): whether a 2 MiB page was actually free at fault time is up to the kernel.
int ThpEligible(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto addr = reinterpret_cast<uintptr_t>(p);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 && line.find(':') != std::string::npos &&
        line.find('-') < line.find(' ')) {
      inside = addr >= lo && addr < hi;
      continue;
    }
    if (inside && line.rfind("THPeligible:", 0) == 0) return std::stoi(line.substr(12));
  }
  return -1;
}

std::string ThpMode() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("huge-page buffers are 2 MiB aligned, zeroed and writable to their last byte") {
  const size_t bytes = 5 * uaii::kHugePageBytes + 1;
  auto buf = uaii::AllocateHugePageBuffer(bytes);
  REQUIRE(buf != nullptr);
  CHECK(reinterpret_cast<uintptr_t>(buf.get()) % uaii::kHugePageBytes == 0);
  size_t nonzero = 0;
  for (size_t i = 0; i < bytes; i += 4096) nonzero += buf.get()[i] != 0;
  CHECK(nonzero == 0);
  buf.get()[bytes - 1] = 7;
  CHECK(buf.get()[bytes - 1] == 7);
}

TEST_CASE("an empty huge-page buffer is null") { CHECK(uaii::AllocateHugePageBuffer(0) == nullptr); }

TEST_CASE("pieces of a huge-page buffer keep it mapped after the buffer's own pointer is gone") {
  auto buf = uaii::AllocateHugePageBuffer(3 << 20);
  REQUIRE(buf != nullptr);
  std::shared_ptr<uint8_t> piece(buf, buf.get() + (1 << 20));
  buf.reset();
  piece.get()[0] = 42;  // would fault had the arena been unmapped
  CHECK(piece.get()[0] == 42);
}

TEST_CASE("huge-page buffers are advised for transparent huge pages unless UAII_HUGE_PAGES=0") {
  const std::string mode = ThpMode();
  if (mode.find("[never]") != std::string::npos || mode.empty()) {
    std::puts("SKIP: transparent huge pages are off on this kernel");
    return;
  }
  auto buf = uaii::AllocateHugePageBuffer(4 << 20);
  REQUIRE(buf != nullptr);
  const int eligible = ThpEligible(buf.get());
  if (eligible < 0) {
    std::puts("SKIP: /proc/self/smaps has no THPeligible field");
    return;
  }
  CHECK(eligible == 1);
  if (mode.find("[madvise]") != std::string::npos) {  // under `always` everything is eligible
    setenv("UAII_HUGE_PAGES", "0", 1);
    auto plain = uaii::AllocateHugePageBuffer(4 << 20);
    unsetenv("UAII_HUGE_PAGES");
    REQUIRE(plain != nullptr);
    CHECK(ThpEligible(plain.get()) == 0);
  }
}
