// The state a session shares with its streams: the ABI handle, the "one thread at a
// time" flag, the stream running on it and the last result. No Python objects, so
// worker threads use it without the GIL.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>

#include "common.h"
#include "results.h"

namespace uaii_py {

class StreamState;

struct SessionCore {
  std::shared_ptr<ModelHandle> model;  // the session's model stays open while it lives
  uaii_session* h = nullptr;
  std::atomic<bool> busy{false};  // a call is running on the session (uaii.h: one thread at a time)

  std::mutex mu;  // guards the two below
  std::weak_ptr<StreamState> active;
  std::shared_ptr<GenerateResult> last_result;

  ~SessionCore() { uaii_session_destroy(h); }

  // Takes the session for one call, or raises InvalidStateError.
  void Acquire() {
    if (busy.exchange(true))
      Fail(UAII_ERR_INVALID_STATE,
           "the session is busy with a call from another thread; a session belongs to one thread at a time "
           "(make one session per thread)");
  }
  void Release() { busy.store(false); }
  void SetLastResult(std::shared_ptr<GenerateResult> r) {
    std::lock_guard<std::mutex> lock(mu);
    last_result = std::move(r);
  }
};

}  // namespace uaii_py
