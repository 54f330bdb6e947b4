#include "storage/staging.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "util/str_cat.h"

namespace uaii::storage {

StagingPipeline::StagingPipeline(const FileSet* files, std::vector<Chunk> sequence, int buffers,
                                 uint64_t buffer_bytes)
    : files_(files), sequence_(std::move(sequence)), slots_(std::max(1, buffers)) {
  for (auto& s : slots_) s.buf = AlignedBytes::Allocate(buffer_bytes);
  if (const char* e = std::getenv("UAII_STAGING_ASYNC"); e && std::string(e) == "0") engine_reads_ = false;
  if (slots_.size() > 1) worker_ = std::thread([this] { Worker(); });
}

StagingPipeline::~StagingPipeline() {
  // The kernel writes into a buffer until its read is waited for.
  for (auto& s : slots_)
    if (s.async.active) (void)files_->WaitStaged(&s.async);
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void StagingPipeline::Worker() {
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    cv_.wait(l, [&] { return stop_ || request_ >= 0; });
    if (stop_) return;
    const int64_t c = request_;
    Slot& s = slots_[request_slot_];
    request_ = -1;
    const auto t0 = std::chrono::steady_clock::now();
    stats_.handoff_seconds += std::chrono::duration<double>(t0 - request_at_).count();
    ++stats_.worker_reads;
    l.unlock();
    const Chunk& ch = sequence_[c];
    auto r = files_->ReadStaged(ch.file, ch.offset, ch.bytes, s.buf.data.get(), s.buf.size);
    const auto t1 = std::chrono::steady_clock::now();
    const double dt = std::chrono::duration<double>(t1 - t0).count();
    l.lock();
    s.status = r.status();
    s.data = r.ok() ? *r : nullptr;
    s.chunk = c;
    s.loading = false;
    stats_.bytes_read += ch.bytes;
    stats_.read_seconds += dt;
    cv_.notify_all();
  }
}

absl::StatusOr<const uint8_t*> StagingPipeline::Acquire(size_t i) {
  using Clock = std::chrono::steady_clock;
  if (i >= sequence_.size()) return absl::OutOfRangeError(StrCat("staging chunk ", i, " outside the sequence"));
  const auto t0 = Clock::now();
  std::unique_lock<std::mutex> l(mu_);
  // A queued but not yet started request is cancelled if it is not the one asked for.
  if (request_ >= 0 && request_ != static_cast<int64_t>(i)) {
    slots_[request_slot_].loading = false;
    slots_[request_slot_].chunk = -1;
    request_ = -1;
  }
  int slot = -1;
  for (size_t k = 0; k < slots_.size(); ++k) {
    if (slots_[k].async.active && slots_[k].async_chunk == static_cast<int64_t>(i)) {
      FinishAsync(k, l);  // the prefetch the engine started: wait here, no hand-over
      slot = static_cast<int>(k);
      break;
    }
    if (slots_[k].chunk == static_cast<int64_t>(i) || (slots_[k].loading && request_slot_ == static_cast<int>(k) &&
                                                      request_ == static_cast<int64_t>(i)))
      slot = static_cast<int>(k);
  }
  // Out of sequence: a read started for another chunk still owns its buffer.
  if (slot < 0)
    for (size_t k = 0; k < slots_.size(); ++k)
      if (slots_[k].async.active) {
        FinishAsync(k, l);
        slots_[k].chunk = -1;
      }
  bool waited_for_prefetch = false;
  if (slot < 0) {
    // Not staged: wait for any load in flight (it owns its slot), then read here.
    for (size_t k = 0; k < slots_.size(); ++k)
      if (slots_[k].loading) {
        cv_.wait(l, [&] { return !slots_[k].loading; });
        if (slots_[k].chunk == static_cast<int64_t>(i)) slot = static_cast<int>(k);
      }
  }
  if (slot >= 0) {
    if (slots_[slot].loading) waited_for_prefetch = true;
    cv_.wait(l, [&] { return !slots_[slot].loading; });
    ++stats_.hits;
    (void)waited_for_prefetch;
  } else {
    slot = current_ >= 0 && slots_.size() > 1 ? (current_ + 1) % static_cast<int>(slots_.size()) : 0;
    Slot& s = slots_[slot];
    s.loading = true;
    l.unlock();
    const Chunk& ch = sequence_[i];
    const auto r0 = Clock::now();
    auto r = files_->ReadStaged(ch.file, ch.offset, ch.bytes, s.buf.data.get(), s.buf.size);
    const double dt = std::chrono::duration<double>(Clock::now() - r0).count();
    l.lock();
    s.loading = false;
    s.status = r.status();
    s.data = r.ok() ? *r : nullptr;
    s.chunk = static_cast<int64_t>(i);
    stats_.bytes_read += ch.bytes;
    stats_.read_seconds += dt;
    ++stats_.misses;
  }
  if (!slots_[slot].status.ok()) {
    absl::Status st = slots_[slot].status;
    slots_[slot].chunk = -1;
    slots_[slot].status = absl::OkStatus();
    return st;
  }
  current_ = slot;
  stats_.io_wait_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
  if (slots_.size() > 1) {
    const int next_slot = (slot + 1) % static_cast<int>(slots_.size());
    const int64_t next = static_cast<int64_t>((i + 1) % sequence_.size());
    Slot& ns = slots_[next_slot];
    if (ns.chunk != next && !ns.async.active) {
      ns.chunk = -1;
      const Chunk& ch = sequence_[next];
      // A cold chunk: this thread submits its direct reads now and returns (the device
      // starts at once); anything else (page-cache bytes to copy, no io_uring) goes to
      // the worker, whose copy then overlaps the compute.
      if (engine_reads_ && files_->BeginStaged(ch.file, ch.offset, ch.bytes, ns.buf.data.get(), ns.buf.size, &ns.async)) {
        ns.async_chunk = next;
        ++stats_.engine_reads;
      } else {
        ns.loading = true;
        request_ = next;
        request_slot_ = next_slot;
        request_at_ = Clock::now();
        cv_.notify_all();
      }
    }
  }
  return slots_[slot].data;
}

void StagingPipeline::FinishAsync(size_t k, std::unique_lock<std::mutex>& l) {
  Slot& s = slots_[k];
  const Chunk& ch = sequence_[s.async_chunk];
  const double started = s.async.started;
  l.unlock();  // only this thread touches an asynchronous slot
  auto r = files_->WaitStaged(&s.async);
  const double done =
      std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  l.lock();
  s.status = r.status();
  s.data = r.ok() ? *r : nullptr;
  s.chunk = s.async_chunk;
  s.async_chunk = -1;
  stats_.bytes_read += ch.bytes;
  // Up to this wait: the read may have finished earlier, while the engine computed.
  stats_.read_seconds += done - started;
}

absl::Status StagingPipeline::ReadDirect(int file, uint64_t offset, uint64_t bytes, uint8_t* dst) {
  const auto t0 = std::chrono::steady_clock::now();
  absl::Status st = files_->Read(file, offset, bytes, dst);
  std::lock_guard<std::mutex> l(mu_);
  stats_.bytes_read += bytes;
  stats_.io_wait_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return st;
}

StagingStats StagingPipeline::stats() const {
  std::lock_guard<std::mutex> l(mu_);
  return stats_;
}

}  // namespace uaii::storage
