// uaii::StopReason: why a generation ended. One type for greedy generation
// (GenerateGreedy), the sampling loop (Generator, ChatEngine) and the C ABI, whose
// uaii_stop_reason has the same values one-to-one.
#pragma once
#include <cstdint>
#include <string_view>

namespace uaii {

enum class StopReason : uint32_t {
  kEndOfGeneration = 1,  // an end-of-generation token (not emitted)
  kMaxTokens = 2,        // the token limit
  kStopString = 3,       // a stop string (not emitted)
  kCancelled = 4,        // the callback asked to stop
  kContextFull = 5,      // the session's max_context is reached
};

// "eos", "max_tokens", "stop", "cancelled", "context_full" (`stop_reason` in --json).
std::string_view StopReasonName(StopReason s);

}  // namespace uaii
