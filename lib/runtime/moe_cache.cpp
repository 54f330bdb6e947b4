#include "runtime/moe_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <new>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <set>

#include "util/str_cat.h"

namespace uaii::runtime {
namespace {

storage::ReadRingOptions ReaderOptions(bool use_io_uring) {
  storage::ReadRingOptions o;
  o.use_io_uring = use_io_uring;
  o.queue_depth = ExpertCache::kQueueDepth;
  return o;
}

// The reader's errors name the file and offset; this says whose read it was.
absl::Status Named(const absl::Status& st) {
  return st.ok() ? st : absl::Status(st.code(), StrCat("expert cache: ", std::string(st.message())));
}

}  // namespace

void ExpertCache::PageFree::operator()(uint8_t* p) const {
  if (p != nullptr) ::munmap(p, size);
}

void ExpertCache::Entry::Allocate(uint64_t n) {
  void* p = ::mmap(nullptr, std::max<uint64_t>(n, 1), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  bytes = std::unique_ptr<uint8_t, PageFree>(static_cast<uint8_t*>(p), PageFree{std::max<uint64_t>(n, 1)});
  size = n;
}

ExpertCache::ExpertCache(uint64_t capacity_bytes, bool use_io_uring) : reader_(ReaderOptions(use_io_uring)) {
  stats_.capacity_bytes = capacity_bytes;
  stats_.io_uring = reader_.uring();
}

ExpertCache::~ExpertCache() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
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

ExpertCacheStats ExpertCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

bool ExpertCache::EvictFor(uint64_t incoming, const std::set<Key>& keep) {
  // Least recently used first, skipping what must stay (hits were moved to the front).
  auto it = lru_.end();
  while (stats_.used_bytes + reserved_ + incoming > stats_.capacity_bytes && it != lru_.begin()) {
    --it;
    if (keep.count(*it) || in_use_.count(*it)) continue;
    Entry& e = entries_.at(*it);
    stats_.used_bytes -= e.size;
    if (e.prefetched) ++stats_.prefetch_wasted;
    entries_.erase(*it);
    it = lru_.erase(it);
    ++stats_.evictions;
  }
  return stats_.used_bytes + reserved_ + incoming <= stats_.capacity_bytes;
}

absl::Status ExpertCache::Acquire(const std::vector<BoundWeight>& slices, std::vector<const uint8_t*>* data) {
  std::unique_lock<std::mutex> lock(mu_);
  std::set<Key> wanted;
  uint64_t need = 0;
  for (const auto& s : slices)
    if (wanted.insert({s.file, s.offset}).second) need += s.bytes;
  if (need > stats_.capacity_bytes)
    return absl::ResourceExhaustedError(StrCat("expert cache: one step needs ", need, " bytes of experts, the cache holds ",
                                               stats_.capacity_bytes, "; raise the memory budget"));
  // Prefetch reads in flight are (usually) this step's experts: wait for them rather
  // than read twice; the wait is I/O wait.
  if (reading_ > 0) {
    const auto w0 = std::chrono::steady_clock::now();
    cv_.wait(lock, [&] { return reading_ == 0; });
    stats_.io_wait_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  }
  in_use_.clear();  // the previous step's pointers are no longer used
  // Hits first (so they are not evicted), then the misses in file-offset order.
  std::vector<const BoundWeight*> misses;
  std::set<Key> seen;
  for (const auto& s : slices) {
    Key k{s.file, s.offset};
    if (!seen.insert(k).second) continue;
    auto it = entries_.find(k);
    if (it != entries_.end()) {
      ++stats_.hits;
      if (it->second.prefetched) {
        ++stats_.prefetch_hits;
        it->second.prefetched = false;
      }
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
  EvictFor(incoming, wanted);  // always enough: need <= capacity, nothing reserved or in use now
  // Every miss's buffer first, then all reads together in file-offset order.
  std::vector<Entry> fresh(misses.size());
  std::vector<storage::ReadRequest> reads;
  reads.reserve(misses.size());
  for (size_t i = 0; i < misses.size(); ++i) {
    auto fd = Fd(misses[i]->file);
    if (!fd.ok()) return fd.status();
    fresh[i].Allocate(misses[i]->bytes);
    reads.push_back({*fd, misses[i]->offset, misses[i]->bytes, fresh[i].bytes.get(), misses[i]->file});
  }
  const auto t0 = std::chrono::steady_clock::now();
  const absl::Status read = Named(reader_.Read(reads));
  stats_.io_wait_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!read.ok()) return read;
  for (size_t i = 0; i < misses.size(); ++i) {
    Key k{misses[i]->file, misses[i]->offset};
    lru_.push_front(k);
    fresh[i].lru = lru_.begin();
    stats_.used_bytes += misses[i]->bytes;
    stats_.bytes_read += misses[i]->bytes;
    entries_.emplace(k, std::move(fresh[i]));
  }
  data->clear();
  for (const auto& s : slices) data->push_back(entries_.at({s.file, s.offset}).bytes.get());
  in_use_ = std::move(wanted);
  return absl::OkStatus();
}

void ExpertCache::EnablePrefetch(bool on) {
  std::lock_guard<std::mutex> lock(mu_);
  prefetch_ = stats_.prefetch = on;
}

void ExpertCache::NoteStep(uint64_t step, const StepWeights& w) {
  std::lock_guard<std::mutex> lock(mu_);
  steps_[step] = w;
  if (has_prev_ && prev_step_ != step) next_[prev_step_] = step;
  prev_step_ = step;
  has_prev_ = true;
}

std::optional<ExpertCache::StepWeights> ExpertCache::NextStep(uint64_t step) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto n = next_.find(step);
  if (n == next_.end()) return std::nullopt;
  auto s = steps_.find(n->second);
  if (s == steps_.end()) return std::nullopt;
  return s->second;
}

void ExpertCache::Prefetch(std::vector<BoundWeight> slices) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!prefetch_ || slices.empty()) return;
  job_ = std::move(slices);
  has_job_ = true;
  if (!worker_.joinable()) worker_ = std::thread([this] { Worker(); });
  cv_.notify_all();
}

void ExpertCache::Worker() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stop_ || has_job_; });
    if (stop_) return;
    std::vector<BoundWeight> job = std::move(job_);
    has_job_ = false;
    busy_ = true;
    std::sort(job.begin(), job.end(), [](const BoundWeight& a, const BoundWeight& b) {
      return a.file != b.file ? a.file < b.file : a.offset < b.offset;
    });
    for (const BoundWeight& s : job) {
      if (stop_ || has_job_) break;  // a newer request replaces this one
      Key k{s.file, s.offset};
      if (entries_.count(k)) continue;
      if (!EvictFor(s.bytes, {})) break;  // no room without evicting slices in use
      auto fd = Fd(s.file);
      if (!fd.ok()) break;
      reserved_ += s.bytes;
      ++reading_;
      Entry e;
      lock.unlock();
      e.Allocate(s.bytes);
      // pread: reader_ belongs to Acquire's thread (one thread per io_uring).
      const bool ok = storage::PreadFully(*fd, s.offset, s.bytes, e.bytes.get(), s.file).ok();
      lock.lock();
      reserved_ -= s.bytes;
      --reading_;
      if (ok && !entries_.count(k)) {
        lru_.push_front(k);
        e.lru = lru_.begin();
        e.prefetched = true;
        stats_.used_bytes += s.bytes;
        stats_.bytes_read += s.bytes;
        ++stats_.prefetch_reads;
        entries_.emplace(k, std::move(e));
      }
      cv_.notify_all();
      if (!ok) break;
    }
    busy_ = false;
    cv_.notify_all();
  }
}

void ExpertCache::WaitForPrefetch() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return stop_ || (!has_job_ && !busy_); });
}

}  // namespace uaii::runtime
