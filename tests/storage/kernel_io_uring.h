// What the tests compare the read layer's choice of path against (storage/read_ring.h),
// asked independently of it: whether the build has io_uring (the CMake option
// UAII_IO_URING, seen through uaii_io_uring's UAII_HAVE_LIBURING, so the suite links
// uaii_io_uring) and whether this kernel lets the process set one up (seccomp or an old
// kernel refuse), asked with the raw io_uring_setup system call rather than liburing.
#pragma once
#include <linux/io_uring.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

namespace uaii::testing {

#if UAII_HAVE_LIBURING
inline constexpr bool kBuiltWithIoUring = true;
#else
inline constexpr bool kBuiltWithIoUring = false;
#endif

// True when io_uring_setup(entries) succeeds here (the ring is closed again).
inline bool KernelAllowsIoUring(unsigned entries) {
  io_uring_params p;
  std::memset(&p, 0, sizeof p);
  const long fd = ::syscall(__NR_io_uring_setup, entries, &p);
  if (fd < 0) return false;
  ::close(static_cast<int>(fd));
  return true;
}

// Whether a ReadRing (or what reads through one) asking for io_uring gets it.
inline bool ExpectIoUring(unsigned entries) { return kBuiltWithIoUring && KernelAllowsIoUring(entries); }

}  // namespace uaii::testing
