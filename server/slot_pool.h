// The server's N slots: one ChatEngine (a Generator, its own Session and KV cache)
// each, over one shared Model. A request takes a slot for its whole generation; when
// every slot is busy it waits in arrival order, up to max_queue requests, beyond which
// it is refused (429). A free slot is chosen by the prompt: the one whose KV cache holds
// the longest prefix of it, so a conversation's next turn lands where its previous
// turns are and evaluates only what is new (llama-server's slot similarity); ties go to
// the slot idle longest.
//
// Each slot's generations run on a thread of its own (SlotWorker), not on whichever of
// the HTTP library's many threads took the request: the kernels keep per-thread scratch
// buffers, and a session used from one thread keeps that memory to one set per slot
// (run on the handlers' threads, the resident set crept up as more of them generated).
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <variant>
#include <vector>

#include "uaii/chat.h"

namespace uaii::server {

// One thread that runs what it is given, one task at a time, while the giver waits.
class SlotWorker {
 public:
  SlotWorker();
  ~SlotWorker();  // joins
  // Runs `task` on the worker and returns when it is done (an exception it throws is
  // rethrown here).
  void Run(const std::function<void()>& task);

 private:
  void Loop();
  std::mutex mu_;
  std::condition_variable cv_;
  const std::function<void()>* task_ = nullptr;
  std::exception_ptr error_;
  bool done_ = false, quit_ = false;
  std::thread thread_;
};

class SlotPool {
 public:
  using Clock = std::chrono::steady_clock;

  SlotPool(std::vector<std::unique_ptr<ChatEngine>> engines, size_t max_queue);

  // A slot held by one request; released (and its waiters woken) on destruction.
  class Lease {
   public:
    Lease(SlotPool* pool, int index) : pool_(pool), index_(index) {}
    Lease(Lease&& o) noexcept : pool_(o.pool_), index_(o.index_) { o.pool_ = nullptr; }
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    ChatEngine& engine() const { return *pool_->slots_[index_].engine; }
    int index() const { return index_; }
    // Runs `task` (which uses engine()) on the slot's own thread; returns when done.
    void Run(const std::function<void()>& task) const { pool_->slots_[index_].worker->Run(task); }

   private:
    SlotPool* pool_;
    int index_;
  };

  enum class Refusal { kQueueFull, kTimedOut, kGone };
  // Takes a slot for `prompt`, waiting until `deadline` at most; `gone` (polled while
  // waiting) says the client has left.
  std::variant<Lease, Refusal> Acquire(std::span<const TokenId> prompt, Clock::time_point deadline,
                                       const std::function<bool()>& gone);

  int size() const { return static_cast<int>(slots_.size()); }
  int busy() const;
  int queued() const;
  // Slot 0's engine, for what any slot answers alike (the chat syntax, rendering a
  // prompt: ChatEngine::PromptTokens is const and thread-safe).
  const ChatEngine& any_engine() const { return *slots_[0].engine; }
  // The storage figures of every slot added up, as of each slot's last release (a
  // busy slot's session is its request's alone).
  StorageStats storage_stats() const;

 private:
  struct Slot {
    std::unique_ptr<ChatEngine> engine;
    std::unique_ptr<SlotWorker> worker;
    bool busy = false;
    uint64_t released_at = 0;  // release count when it was last freed: lower = idle longer
    StorageStats stats;
  };
  int PickLocked(std::span<const TokenId> prompt) const;
  void Release(int index);

  mutable std::mutex mu_;
  std::condition_variable freed_;
  std::vector<Slot> slots_;
  std::deque<uint64_t> waiting_;  // tickets of queued requests, in arrival order
  uint64_t next_ticket_ = 0;
  uint64_t releases_ = 0;
  size_t max_queue_;
};

}  // namespace uaii::server
