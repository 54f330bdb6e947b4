// Decoding allocates nothing once warm (issue 6: "no allocation per token"): this
// binary counts every operator new (all threads, the pool's workers included) across
// Session::DecodeInto steps after a few warm-up tokens. Its own executable, so that
// the counting operator new touches no other suite.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <new>
#include <string>
#include <vector>

#include "uaii/session.h"

namespace {
std::atomic<long> g_news{0};
}  // namespace

void* operator new(std::size_t n) {
  g_news.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
// Every form that pairs with the deletes below (libstdc++ takes the nothrow ones for
// temporary buffers); the aligned forms stay the library's, with their own deletes.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  g_news.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n ? n : 1);
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

using namespace uaii;

TEST_CASE("decode: no allocation per token once warm") {
  const std::string dir = std::string(UAII_FIXTURE_DIR) + "/tiny/";
  std::ifstream in(dir + "prompt.txt");
  const std::vector<TokenId> prompt{std::istream_iterator<TokenId>(in), std::istream_iterator<TokenId>()};
  REQUIRE(prompt.size() >= 24);
  for (const char* name : {"tiny-llama-q4_0.gguf", "tiny-gemma3-q4_k.gguf", "tiny-gemma3-f16.gguf"}) {
    for (int threads : {1, 2}) {
      INFO(name << " threads=" << threads);
      if (!std::filesystem::exists(dir + name)) FAIL("missing " << dir << name << " (tests/fixtures/make_tiny_models.py)");
      auto model = Model::Load(dir + name);
      REQUIRE(model.ok());
      SessionOptions o;
      o.threads = threads;
      o.max_context = 128;
      auto session = Session::Create(*model, o);
      REQUIRE(session.ok());
      std::vector<float> logits;
      REQUIRE((*session)->EvalInto(std::span<const TokenId>(prompt).first(8), &logits).ok());
      for (size_t i = 8; i < 12; ++i) REQUIRE((*session)->DecodeInto(prompt[i], &logits).ok());  // warm-up
      const long before = g_news.load();
      for (size_t i = 12; i < 24; ++i) REQUIRE((*session)->DecodeInto(prompt[i], &logits).ok());
      CHECK(g_news.load() - before == 0);
    }
  }
}
