// Storage yields bytes, the backend computes (runtime/weight_source.h): a session
// whose matmul weights stream from disk in row slices gives the resident session's
// logits bit for bit, prefill and decode, pinned and streamed tensors alike.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "../runtime/budgeted_run.h"
#include "uaii/session.h"

using namespace uaii;

namespace {

std::vector<float> Run(const std::shared_ptr<const Model>& m, uint64_t budget, StorageStats* stats) {
  std::vector<TokenId> prompt;
  for (TokenId t = 1; t <= 40; ++t) prompt.push_back(t * 5 % 300 + 3);
  return testing::PromptThenDecodes(m, budget, prompt, stats);
}

}  // namespace

TEST_CASE("weight source: streamed row slices give the resident logits bit for bit") {
  for (const char* name : {"tiny-llama-q8_0.gguf", "tiny-gemma3-q4_k.gguf"}) {
    const std::string path = std::string(UAII_FIXTURE_DIR) + "/tiny/" + name;
    if (!std::filesystem::exists(path)) FAIL("missing " << path << " (run tests/fixtures/make_tiny_models.py)");
    INFO(name);
    auto m = Model::Load(path);
    REQUIRE(m.ok());
    StorageStats resident_stats, streamed_stats;
    const auto resident = Run(*m, 0, &resident_stats);
    const uint64_t file_bytes = std::filesystem::file_size(path);
    const auto streamed = Run(*m, file_bytes * 9 / 10, &streamed_stats);  // less than the file: layers stream
    CHECK(streamed_stats.streamed_bytes > 0);
    CHECK(streamed_stats.bytes_read > 0);
    REQUIRE(streamed.size() == resident.size());
    CHECK(streamed == resident);
  }
}
