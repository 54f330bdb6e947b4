// The server's slots (server/slot_pool.h): prefix affinity, arrival order, the queue's
// bound, deadlines and clients that leave. Over the tiny chat fixture's engines.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <thread>

#include "slot_pool.h"

using namespace uaii;
using namespace uaii::server;
using namespace std::chrono_literals;

namespace {

std::string Fixture() {
  const char* dir = std::getenv("UAII_FIXTURE_DIR");
  return std::string(dir ? dir : UAII_FIXTURE_DIR) + "/sdk/tiny-llama-chat.gguf";
}

std::unique_ptr<SlotPool> MakePool(int n, size_t max_queue) {
  auto model = Model::Load(Fixture());
  REQUIRE(model.ok());
  std::vector<std::unique_ptr<ChatEngine>> engines;
  for (int i = 0; i < n; ++i) {
    auto e = ChatEngine::Create(*model, ChatEngineOptions{.session = {.threads = 1, .max_context = 64}, .chat_template_path = ""});
    REQUIRE(e.ok());
    engines.push_back(*std::move(e));
  }
  return std::make_unique<SlotPool>(std::move(engines), max_queue);
}

auto Far() { return SlotPool::Clock::now() + 60s; }

}  // namespace

TEST_CASE("a free slot holding the prompt's prefix is preferred", "[server]") {
  auto pool = MakePool(3, 4);
  std::vector<TokenId> conversation = {1, 5, 6, 7, 8};
  int used = -1;
  {
    auto got = pool->Acquire(conversation, Far(), nullptr);
    auto& lease = std::get<SlotPool::Lease>(got);
    used = lease.index();
    std::vector<float> logits;
    REQUIRE(lease.engine().generator().Eval(conversation, &logits).ok());
  }
  // The next turn (the conversation plus more) goes back to that slot...
  std::vector<TokenId> next = conversation;
  next.insert(next.end(), {9, 10});
  {
    auto got = pool->Acquire(next, Far(), nullptr);
    CHECK(std::get<SlotPool::Lease>(got).index() == used);
  }
  // ... an unrelated prompt to a slot idle longer (no prefix anywhere: the oldest).
  auto a = pool->Acquire(std::vector<TokenId>{2, 3}, Far(), nullptr);
  CHECK(std::get<SlotPool::Lease>(a).index() != used);
  CHECK(pool->busy() == 1);
}

TEST_CASE("beyond the slots requests queue — beyond the queue they are refused", "[server]") {
  auto pool = MakePool(1, 1);
  auto held = std::make_unique<std::variant<SlotPool::Lease, SlotPool::Refusal>>(pool->Acquire({}, Far(), nullptr));
  REQUIRE(std::holds_alternative<SlotPool::Lease>(*held));
  std::atomic<bool> waiter_got{false};
  std::thread waiter([&] {
    auto got = pool->Acquire({}, Far(), nullptr);
    waiter_got = std::holds_alternative<SlotPool::Lease>(got);
  });
  while (pool->queued() == 0) std::this_thread::sleep_for(1ms);
  // The queue (one place) is full now.
  auto refused = pool->Acquire({}, Far(), nullptr);
  CHECK(std::get<SlotPool::Refusal>(refused) == SlotPool::Refusal::kQueueFull);
  held.reset();  // the slot frees: the waiter gets it
  waiter.join();
  CHECK(waiter_got);
  CHECK(pool->queued() == 0);
  CHECK(pool->busy() == 0);
}

TEST_CASE("a queued request gives up at its deadline or when its client leaves", "[server]") {
  auto pool = MakePool(1, 4);
  auto held = pool->Acquire({}, Far(), nullptr);
  REQUIRE(std::holds_alternative<SlotPool::Lease>(held));
  const auto t0 = SlotPool::Clock::now();
  auto late = pool->Acquire({}, t0 + 150ms, nullptr);
  CHECK(std::get<SlotPool::Refusal>(late) == SlotPool::Refusal::kTimedOut);
  CHECK(SlotPool::Clock::now() - t0 >= 150ms);
  std::atomic<bool> gone{false};
  std::thread leave([&] {
    std::this_thread::sleep_for(100ms);
    gone = true;
  });
  auto left = pool->Acquire({}, Far(), [&] { return gone.load(); });
  leave.join();
  CHECK(std::get<SlotPool::Refusal>(left) == SlotPool::Refusal::kGone);
  CHECK(pool->queued() == 0);
}

TEST_CASE("queued requests are served in arrival order", "[server]") {
  auto pool = MakePool(1, 8);
  auto held = std::make_unique<std::variant<SlotPool::Lease, SlotPool::Refusal>>(pool->Acquire({}, Far(), nullptr));
  std::mutex mu;
  std::vector<int> order;
  std::vector<std::thread> waiters;
  for (int i = 0; i < 4; ++i) {
    waiters.emplace_back([&, i] {
      auto got = pool->Acquire({}, Far(), nullptr);  // (Catch2's checks are not for other threads)
      std::lock_guard<std::mutex> l(mu);
      order.push_back(std::holds_alternative<SlotPool::Lease>(got) ? i : -1);
    });
    while (pool->queued() != i + 1) std::this_thread::sleep_for(1ms);
  }
  held.reset();
  for (auto& t : waiters) t.join();
  CHECK(order == std::vector<int>{0, 1, 2, 3});
}
