#include "runtime/moe_cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <set>

#include "util/str_cat.h"

namespace uaii::runtime {

ExpertCache::~ExpertCache() {
  for (auto& [path, fd] : fds_) ::close(fd);
}

absl::StatusOr<int> ExpertCache::Fd(const std::string& file) {
  auto it = fds_.find(file);
  if (it != fds_.end()) return it->second;
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(StrCat("expert cache: cannot open ", file, ": ", std::strerror(errno)));
  fds_[file] = fd;
  return fd;
}

absl::Status ExpertCache::Acquire(const std::vector<BoundWeight>& slices, std::vector<const uint8_t*>* data) {
  std::set<Key> wanted;
  uint64_t need = 0;
  for (const auto& s : slices)
    if (wanted.insert({s.file, s.offset}).second) need += s.bytes;
  if (need > stats_.capacity_bytes)
    return absl::ResourceExhaustedError(StrCat("expert cache: one step needs ", need, " bytes of experts, the cache holds ",
                                               stats_.capacity_bytes, "; raise the memory budget"));
  // Hits first (so they are not evicted), then the misses in file-offset order.
  std::vector<const BoundWeight*> misses;
  std::set<Key> seen;
  for (const auto& s : slices) {
    Key k{s.file, s.offset};
    if (!seen.insert(k).second) continue;
    auto it = entries_.find(k);
    if (it != entries_.end()) {
      ++stats_.hits;
      lru_.splice(lru_.begin(), lru_, it->second.lru);
    } else {
      ++stats_.misses;
      misses.push_back(&s);
    }
  }
  std::sort(misses.begin(), misses.end(), [](const BoundWeight* a, const BoundWeight* b) {
    return a->file != b->file ? a->file < b->file : a->offset < b->offset;
  });
  uint64_t incoming = 0;
  for (const BoundWeight* m : misses) incoming += m->bytes;
  while (stats_.used_bytes + incoming > stats_.capacity_bytes && !lru_.empty()) {
    // The least recently used entry not wanted by this step (hits were moved to the front).
    auto victim = std::prev(lru_.end());
    if (wanted.count(*victim)) break;  // everything left is wanted: cannot happen given the check above
    stats_.used_bytes -= entries_.at(*victim).bytes.size();
    entries_.erase(*victim);
    lru_.erase(victim);
    ++stats_.evictions;
  }
  const auto t0 = std::chrono::steady_clock::now();
  for (const BoundWeight* m : misses) {
    auto fd = Fd(m->file);
    if (!fd.ok()) return fd.status();
    Entry e;
    e.bytes.resize(m->bytes);
    uint64_t done = 0;
    while (done < m->bytes) {
      const ssize_t r = ::pread(*fd, e.bytes.data() + done, m->bytes - done, static_cast<off_t>(m->offset + done));
      if (r <= 0)
        return absl::DataLossError(StrCat("expert cache: short read of ", m->file, " at offset ", m->offset + done,
                                          " (", m->bytes, " bytes wanted)"));
      done += static_cast<uint64_t>(r);
    }
    Key k{m->file, m->offset};
    lru_.push_front(k);
    e.lru = lru_.begin();
    stats_.used_bytes += m->bytes;
    stats_.bytes_read += m->bytes;
    entries_.emplace(k, std::move(e));
  }
  stats_.io_wait_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  data->clear();
  for (const auto& s : slices) data->push_back(entries_.at({s.file, s.offset}).bytes.data());
  return absl::OkStatus();
}

}  // namespace uaii::runtime
