#include "slot_pool.h"

#include <algorithm>

namespace uaii::server {

SlotWorker::SlotWorker() : thread_([this] { Loop(); }) {}

SlotWorker::~SlotWorker() {
  {
    std::lock_guard<std::mutex> l(mu_);
    quit_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void SlotWorker::Run(const std::function<void()>& task) {
  std::unique_lock<std::mutex> l(mu_);
  task_ = &task;
  done_ = false;
  error_ = nullptr;
  cv_.notify_all();
  cv_.wait(l, [&] { return done_; });
  if (error_) std::rethrow_exception(error_);
}

void SlotWorker::Loop() {
  std::unique_lock<std::mutex> l(mu_);
  while (true) {
    cv_.wait(l, [&] { return quit_ || task_ != nullptr; });
    if (quit_) return;
    const std::function<void()>* task = task_;
    l.unlock();
    std::exception_ptr error;
    try {
      (*task)();
    } catch (...) {
      error = std::current_exception();
    }
    l.lock();
    task_ = nullptr;
    error_ = error;
    done_ = true;
    cv_.notify_all();
  }
}

SlotPool::SlotPool(std::vector<std::unique_ptr<ChatEngine>> engines, size_t max_queue) : max_queue_(max_queue) {
  for (auto& e : engines) {
    Slot s;
    s.stats = e->generator().session().storage_stats();
    s.engine = std::move(e);
    s.worker = std::make_unique<SlotWorker>();
    slots_.push_back(std::move(s));
  }
}

SlotPool::Lease::~Lease() {
  if (pool_) pool_->Release(index_);
}

int SlotPool::busy() const {
  std::lock_guard<std::mutex> l(mu_);
  return static_cast<int>(std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return s.busy; }));
}

int SlotPool::queued() const {
  std::lock_guard<std::mutex> l(mu_);
  return static_cast<int>(waiting_.size());
}

StorageStats SlotPool::storage_stats() const {
  std::lock_guard<std::mutex> l(mu_);
  StorageStats sum = slots_[0].stats;  // the plan's figures (budget, pinned, streamed) are the model's
  sum.kv_bytes = 0;
  sum.bytes_read = sum.staging_hits = sum.staging_misses = 0;
  sum.expert_hits = sum.expert_misses = sum.expert_bytes_read = 0;
  for (const Slot& s : slots_) {
    sum.kv_bytes += s.stats.kv_bytes;
    sum.bytes_read += s.stats.bytes_read;
    sum.staging_hits += s.stats.staging_hits;
    sum.staging_misses += s.stats.staging_misses;
    sum.expert_hits += s.stats.expert_hits;
    sum.expert_misses += s.stats.expert_misses;
    sum.expert_bytes_read += s.stats.expert_bytes_read;
  }
  return sum;
}

int SlotPool::PickLocked(std::span<const TokenId> prompt) const {
  int best = -1;
  size_t best_prefix = 0;
  for (int i = 0; i < size(); ++i) {
    const Slot& s = slots_[i];
    if (s.busy) continue;
    const auto& held = s.engine->generator().history();
    const size_t n = std::min(held.size(), prompt.size());
    const size_t prefix = std::mismatch(held.begin(), held.begin() + n, prompt.begin()).first - held.begin();
    if (best < 0 || prefix > best_prefix || (prefix == best_prefix && s.released_at < slots_[best].released_at)) {
      best = i;
      best_prefix = prefix;
    }
  }
  return best;
}

std::variant<SlotPool::Lease, SlotPool::Refusal> SlotPool::Acquire(std::span<const TokenId> prompt,
                                                                   Clock::time_point deadline,
                                                                   const std::function<bool()>& gone) {
  std::unique_lock<std::mutex> l(mu_);
  if (waiting_.empty()) {
    if (int i = PickLocked(prompt); i >= 0) {
      slots_[i].busy = true;
      return Lease(this, i);
    }
  }
  if (waiting_.size() >= max_queue_) return Refusal::kQueueFull;
  const uint64_t ticket = next_ticket_++;
  waiting_.push_back(ticket);
  auto leave = [&] {
    waiting_.erase(std::find(waiting_.begin(), waiting_.end(), ticket));
    freed_.notify_all();  // the next in line may be first now
  };
  while (true) {
    if (waiting_.front() == ticket) {
      if (int i = PickLocked(prompt); i >= 0) {
        leave();
        slots_[i].busy = true;
        return Lease(this, i);
      }
    }
    if (Clock::now() >= deadline) {
      leave();
      return Refusal::kTimedOut;
    }
    // Wake at least every 100 ms to see whether the client has left.
    freed_.wait_until(l, std::min(deadline, Clock::now() + std::chrono::milliseconds(100)));
    if (gone && gone()) {
      leave();
      return Refusal::kGone;
    }
  }
}

void SlotPool::Release(int index) {
  {
    std::lock_guard<std::mutex> l(mu_);
    Slot& s = slots_[index];
    s.stats = s.engine->generator().session().storage_stats();
    s.busy = false;
    s.released_at = ++releases_;
  }
  freed_.notify_all();
}

}  // namespace uaii::server
