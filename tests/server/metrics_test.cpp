// The server's counters and their Prometheus text (server/metrics.h).
#include <catch2/catch.hpp>

#include <regex>

#include "metrics.h"

using namespace uaii::server;

TEST_CASE("metrics are Prometheus text with the counts given", "[server]") {
  Metrics m;
  m.CountRequest("/v1/chat/completions", 200);
  m.CountRequest("/v1/chat/completions", 200);
  m.CountRequest("/v1/chat/completions", 499);
  m.CountTokens(10, 4, 6, 1);
  for (int i = 0; i < 5; ++i) m.TokenGenerated();
  Gauges g;
  g.loaded = true;
  g.slots = 2;
  g.busy = 1;
  g.queued = 3;
  g.rss_bytes = 1 << 20;
  g.model = "m\"q.gguf";
  g.device = "cpu";
  g.storage.expert_hits = 7;
  const std::string text = m.Prometheus(g);
  CHECK(text.find("uaii_requests_total{route=\"/v1/chat/completions\",code=\"200\"} 2\n") != std::string::npos);
  CHECK(text.find("uaii_requests_total{route=\"/v1/chat/completions\",code=\"499\"} 1\n") != std::string::npos);
  CHECK(text.find("uaii_prompt_tokens_total 10\n") != std::string::npos);
  CHECK(text.find("uaii_cached_prompt_tokens_total 4\n") != std::string::npos);
  CHECK(text.find("uaii_generated_tokens_total 6\n") != std::string::npos);
  CHECK(text.find("uaii_requests_queued 3\n") != std::string::npos);
  CHECK(text.find("uaii_process_resident_memory_bytes 1048576\n") != std::string::npos);
  CHECK(text.find("uaii_expert_cache_hits_total 7\n") != std::string::npos);
  CHECK(text.find("uaii_model_info{model=\"m\\\"q.gguf\",device=\"cpu\"} 1\n") != std::string::npos);
  CHECK(m.RecentTokensPerSecond() > 0);
  // Every line is a comment or `name{labels} value`.
  const std::regex sample(R"(^(# (HELP|TYPE) .*|[a-z_]+(\{.*\})? -?[0-9.e+]+)$)");
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    const std::string line = text.substr(start, end - start);
    INFO(line);
    CHECK(std::regex_match(line, sample));
    start = end + 1;
  }
}

TEST_CASE("the process's resident set is read", "[server]") {
  CHECK(CurrentRssBytes() > 1 << 20);
}
