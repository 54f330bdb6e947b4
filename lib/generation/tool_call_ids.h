// Tool-call ids are the engine's, never taken from the model's text (a model may write
// none, the same one twice, or one a client already used): "call_" and 24 characters
// of [0-9A-Za-z] from a generator seeded once per engine, unique within a reply.
#pragma once
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "uaii/chat_output.h"

namespace uaii {

class ToolCallIds {
 public:
  ToolCallIds();
  explicit ToolCallIds(uint64_t seed) : rng_(seed) {}
  void NewReply() { issued_.clear(); }
  std::string Next();
  // Gives every kToolCall block an id (replacing any it had).
  void Assign(std::vector<chat::OutputBlock>& blocks);

 private:
  std::mt19937_64 rng_;
  std::set<std::string> issued_;
};

}  // namespace uaii
