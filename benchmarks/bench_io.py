"""Shared by the storage and MoE benchmarks: drop a file from the page cache, and
time a sequential buffered read of it (what `dd bs=8M` does)."""
import os
import time


def drop_cache(path):
    """fsync, then POSIX_FADV_DONTNEED: the next reads come from the device."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def sequential_read_bandwidth(path, limit, cold):
    """Sequential pread of the first `limit` bytes in 8 MiB blocks (cold: after
    drop_cache): bytes/s."""
    if cold:
        drop_cache(path)
    fd = os.open(path, os.O_RDONLY)
    t0, done = time.perf_counter(), 0
    try:
        while done < limit:
            b = os.pread(fd, 8 << 20, done)
            if not b:
                break
            done += len(b)
    finally:
        os.close(fd)
    return done / (time.perf_counter() - t0)
