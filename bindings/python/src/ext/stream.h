// Streaming: the generation runs on a C++ worker thread that feeds a queue; the Python
// iterator (uaii.Stream) waits on the queue with the GIL released. Closing the
// iterator (break out of the loop, close(), garbage collection, a new call on the
// session) makes the event callback return non-zero, which stops the generation, and
// joins the thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "request.h"
#include "results.h"
#include "session_core.h"

namespace uaii_py {

class StreamState {
 public:
  // One item of the queue: an event, or the failure that ended the call.
  struct Item {
    Event event;
    std::optional<CapiError> error;
  };

  // The caller has acquired `core` (SessionCore::Acquire); the worker releases it.
  StreamState(std::shared_ptr<SessionCore> core, Request request);
  ~StreamState();

  void Start();
  // Blocks until the next item; call without the GIL. Empty (no kind, no error) once
  // the last item was taken, so a second consumer of the same stream never hangs.
  Item Pop();
  // Asks the worker to stop at its next event; returns at once.
  void Cancel() { cancel_.store(true); }
  // Waits for the worker to end (idempotent, any thread); call without the GIL when you can.
  void Join();

 private:
  static int OnEvent(const uaii_event* event, void* user_data);
  void Work();
  void Push(Item item, bool last = false);

  std::shared_ptr<SessionCore> core_;
  Request request_;
  std::atomic<bool> cancel_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  bool ended_ = false;  // the worker pushed its last item
  std::mutex join_mu_;
  std::thread worker_;
};

// uaii.Stream, the Python iterator of events.
class Stream {
 public:
  explicit Stream(std::shared_ptr<StreamState> state) : state_(std::move(state)) {}
  ~Stream();
  Event Next();
  void Close();

 private:
  std::shared_ptr<StreamState> state_;
  bool finished_ = false;
};

void BindStream(py::module_& m);

}  // namespace uaii_py
