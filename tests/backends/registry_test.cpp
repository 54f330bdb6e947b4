// The device registry (backends/registry.h) and SessionOptions::device.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include "backends/registry.h"
#include "runtime/kv_cache.h"
#include "uaii/session.h"

using namespace uaii;

TEST_CASE("backends: cpu and auto select the CPU backend while no GPU backend exists") {
  auto cpu = backends::SelectBackend("cpu");
  REQUIRE(cpu.ok());
  CHECK(*cpu == &backends::Cpu());
  CHECK((*cpu)->name() == "cpu");
  CHECK_FALSE((*cpu)->capabilities().gpu);
  CHECK((*cpu)->capabilities().host_memory);
  auto any = backends::SelectBackend("auto");
  REQUIRE(any.ok());
  CHECK(*any == &backends::Cpu());
  CHECK(backends::Backends().front() == &backends::Cpu());
}

TEST_CASE("backends: an unknown device is an error listing the devices there are") {
  auto b = backends::SelectBackend("cuda:7");
  REQUIRE_FALSE(b.ok());
  CHECK(b.status().code() == absl::StatusCode::kUnimplemented);  // the C ABI's UAII_ERR_UNSUPPORTED
  const std::string msg(b.status().message());
  CHECK(msg.find("cuda:7") != std::string::npos);
  CHECK(msg.find("available: auto, cpu") != std::string::npos);
}

TEST_CASE("backends: a device name is registered once") {
  CHECK(backends::RegisterBackend(&backends::Cpu()).code() == absl::StatusCode::kAlreadyExists);
  CHECK(backends::RegisterBackend(nullptr).code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("backends: the CPU backend's ops, buffers and compile errors") {
  const backends::Backend& cpu = backends::Cpu();
  CHECK(cpu.SupportsOp("attention"));
  CHECK(cpu.SupportsOp("moe_ffn"));
  CHECK_FALSE(cpu.SupportsOp("conv2d"));
  auto buf = cpu.Allocate(1000);
  REQUIRE(buf.ok());
  CHECK((*buf)->bytes() == 1000);
  REQUIRE((*buf)->host() != nullptr);
  const auto* p = static_cast<const unsigned char*>((*buf)->host());
  CHECK(std::all_of(p, p + 1000, [](unsigned char c) { return c == 0; }));  // zeroed
  CHECK(reinterpret_cast<uintptr_t>(p) % 64 == 0);
}

TEST_CASE("backends: SessionOptions::device picks the backend, an unknown one fails Session::Create") {
  const std::string path = std::string(UAII_FIXTURE_DIR) + "/tiny/tiny-llama-f32.gguf";
  if (!std::filesystem::exists(path)) FAIL("missing " << path << " (run tests/fixtures/make_tiny_models.py)");
  auto m = Model::Load(path);
  REQUIRE(m.ok());
  SessionOptions o;
  o.max_context = 64;
  o.device = "gpu-that-is-not-there";
  auto bad = Session::Create(*m, o);
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.status().message()).find("unknown device 'gpu-that-is-not-there'") != std::string::npos);
  for (const char* dev : {"cpu", "auto"}) {
    o.device = dev;
    auto s = Session::Create(*m, o);
    INFO(dev);
    REQUIRE(s.ok());
    const std::vector<TokenId> prompt = {1, 2, 3};
    CHECK((*s)->Eval(prompt).ok());
  }
}

TEST_CASE("backends: the KV cache lives in the buffer its backend allocated") {
  const std::vector<runtime::KvLayerShape> layers = {{2, 64, 64}, {1, 32, 48}};
  const int64_t cells = runtime::KvCache::CellCount(100, 0, 0, 0);
  const uint64_t bytes = runtime::KvCache::ArenaBytes(layers, cells);
  CHECK(bytes >= static_cast<uint64_t>(cells) * 2 * (2 * 128 + 80));
  auto buf = backends::Cpu().Allocate(bytes);
  REQUIRE(buf.ok());
  auto* base = static_cast<uint8_t*>((*buf)->host());
  runtime::KvCache cache(layers, 100, 0, 0, 0, *std::move(buf));
  CHECK(reinterpret_cast<uint8_t*>(cache.K(0, 0)) == base);
  const auto* last = reinterpret_cast<uint8_t*>(cache.Vt(1, 0, 47) + cells);
  CHECK(last <= base + bytes);
  CHECK(cache.bytes() <= bytes);
}
