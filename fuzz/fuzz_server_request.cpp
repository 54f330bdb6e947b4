// The request bodies `uaii serve` reads (server/openai_request.h): chat completions,
// completions, /tokenize and /detokenize, from arbitrary bytes. Nothing a client sends
// may crash the parser; what it accepts must hold up: the messages and tools it passes
// on are JSON arrays, sampling parameters validate, limits hold. The first byte picks
// the route, the rest is the body.
#include <cstdint>
#include <cstdlib>

#include "fuzz_util.h"
#include "openai_request.h"
#include "simdjson.h"

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

bool IsJsonArray(const std::string& text) {
  simdjson::dom::parser p;
  simdjson::dom::element e;
  return p.parse(text).get(e) == simdjson::SUCCESS && e.is_array();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace uaii::server;
  if (size == 0) return 0;
  const std::string_view body = uaii::fuzz::AsText(data + 1, size - 1);
  RequestLimits limits{.max_messages = 8, .max_tokens = 100, .max_stop = 4};
  ApiError error;
  switch (data[0] % 4) {
    case 0:
      if (auto r = ParseChatCompletionRequest(body, limits, &error)) {
        Check(IsJsonArray(r->messages_json));
        Check(!r->tools_json || IsJsonArray(*r->tools_json));
        Check(!r->max_tokens || (*r->max_tokens >= 0 && *r->max_tokens <= limits.max_tokens));
        Check(r->stop.size() <= limits.max_stop);
        Check(uaii::sampling::ValidateSamplingParams(r->sampling).ok());
      } else {
        Check(error.status == 400 && !error.message.empty());
      }
      break;
    case 1:
      if (auto r = ParseCompletionRequest(body, limits, &error)) {
        Check(!r->prompt_is_tokens || !r->prompt_tokens.empty());
        Check(uaii::sampling::ValidateSamplingParams(r->sampling).ok());
      } else {
        Check(error.status == 400 && !error.message.empty());
      }
      break;
    case 2:
      if (!ParseTokenizeRequest(body, &error)) Check(error.status == 400 && !error.message.empty());
      break;
    case 3:
      if (auto r = ParseDetokenizeRequest(body, &error)) {
        for (auto id : r->tokens) Check(id >= 0);
      } else {
        Check(error.status == 400 && !error.message.empty());
      }
      break;
  }
  return 0;
}
