// What a generation hands back to Python: events, the result and its usage. Plain C++
// values (no Python objects), so a worker thread can build them without the GIL.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "uaii.h"

namespace uaii_py {

struct Usage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;
  int64_t reasoning_tokens = 0;
  double prefill_tokens_per_s = 0;
  double decode_tokens_per_s = 0;
  uint64_t peak_rss_bytes = 0;
  int64_t draft_tokens = 0;           // speculative decoding: proposed
  int64_t draft_accepted_tokens = 0;  // and kept
  double draft_acceptance_rate = 0;   // kept / proposed (0 without proposals)
};

struct GenerateResult {
  std::string text;         // the whole reply, UTF-8
  std::string stop_reason;  // "end_of_generation", "max_tokens", "stop_string", "cancelled", "context_full"
  Usage usage;
};

struct Event {
  std::string kind;  // "text", "thinking", "tool_call", "error", "done"
  std::string text;  // UTF-8 bytes as the engine gave them
  std::shared_ptr<GenerateResult> result;  // "done" only
};

const char* StopReasonName(uint32_t stop_reason);
const char* EventKindName(uint32_t kind);
GenerateResult MakeResult(const uaii_generate_result& r, std::string text);

}  // namespace uaii_py
