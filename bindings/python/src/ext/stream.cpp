// The worker thread, its queue and the uaii.Stream iterator.
#include "stream.h"

#include <utility>

namespace uaii_py {

StreamState::StreamState(std::shared_ptr<SessionCore> core, Request request)
    : core_(std::move(core)), request_(std::move(request)) {}

StreamState::~StreamState() {
  Cancel();
  Join();
}

void StreamState::Start() {
  try {
    worker_ = std::thread([this] { Work(); });
  } catch (...) {
    core_->Release();
    throw;
  }
}

// Called by the C ABI on the worker thread, once per event. Never throws.
int StreamState::OnEvent(const uaii_event* event, void* user_data) {
  auto* self = static_cast<StreamState*>(user_data);
  if (self->cancel_.load()) return 1;
  // The worker sends its own "done" with the whole reply once the call returns.
  if (event->kind == UAII_EVENT_DONE) return 0;
  try {
    Item item;
    item.event.kind = EventKindName(event->kind);
    item.event.text.assign(event->text ? event->text : "", event->text_len);
    self->Push(std::move(item));
  } catch (...) {  // out of memory: stop rather than unwind through C
    return 1;
  }
  return self->cancel_.load() ? 1 : 0;
}

void StreamState::Work() {
  Outcome out = RunRequest(core_->h, request_, &StreamState::OnEvent, this);
  Item last;
  if (out.status == UAII_OK) {
    auto result = std::make_shared<GenerateResult>(MakeResult(out.result, std::move(out.text)));
    core_->SetLastResult(result);
    last.event.kind = "done";
    last.event.result = std::move(result);
  } else {
    last.error = CapiError{out.status, std::move(out.error)};
  }
  // Free the session before the consumer sees the end, so it may call again at once.
  core_->Release();
  Push(std::move(last), /*last=*/true);
}

void StreamState::Push(Item item, bool last) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(item));
    ended_ = ended_ || last;
  }
  cv_.notify_all();
}

StreamState::Item StreamState::Pop() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return !queue_.empty() || ended_; });
  if (queue_.empty()) return Item{};
  Item item = std::move(queue_.front());
  queue_.pop_front();
  return item;
}

void StreamState::Join() {
  std::lock_guard<std::mutex> lock(join_mu_);
  if (worker_.joinable()) worker_.join();
  // The worker is done with the session: a closed session is freed now, not when the
  // last reference to this stream goes away.
  core_.reset();
}

Stream::~Stream() {
  // Python is dropping the iterator (e.g. a `for` loop left with break): stop the
  // generation. The worker never takes the GIL, so joining with it held cannot deadlock.
  if (state_) {
    state_->Cancel();
    state_->Join();
  }
}

Event Stream::Next() {
  if (finished_) throw py::stop_iteration();
  StreamState::Item item;
  {
    py::gil_scoped_release nogil;
    item = state_->Pop();
  }
  if (!item.error && item.event.kind.empty()) {  // another thread took the last event
    finished_ = true;
    throw py::stop_iteration();
  }
  if (item.error || item.event.kind == "done") {
    finished_ = true;
    py::gil_scoped_release nogil;
    state_->Join();  // the worker's last act was to push this item
  }
  if (item.error) throw *item.error;
  return std::move(item.event);
}

void Stream::Close() {
  if (finished_) return;
  finished_ = true;
  state_->Cancel();
  py::gil_scoped_release nogil;
  state_->Join();
}

void BindStream(py::module_& m) {
  py::class_<Stream, std::shared_ptr<Stream>>(m, "Stream", R"doc(
An iterator of uaii.Event for a streamed generate or chat call.

The generation runs on a worker thread while you iterate; the GIL is released while
waiting for the next event. The last event has kind 'done' and carries the result.
Leaving the loop early (break), close(), or dropping the iterator cancels the
generation: the engine stops at the next token and the session's last_result says
stop_reason 'cancelled'. A failure raises the matching uaii.UaiiError from the loop.
)doc")
      .def("__iter__", [](std::shared_ptr<Stream> self) { return self; })
      .def("__next__", &Stream::Next)
      .def("close", &Stream::Close, "Stops the generation (if still running) and waits for it to end.")
      .def("__enter__", [](std::shared_ptr<Stream> self) { return self; })
      .def("__exit__", [](Stream& self, py::args) { self.Close(); });
}

}  // namespace uaii_py
