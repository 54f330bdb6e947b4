// The streaming output parser (lib/chat/output_parser.h) for every ToolCallSyntax, with
// and without reasoning markers, fed the reply in pieces split where the fuzzer says.
// Input: byte 0 picks the syntax and flags, byte 1 seeds the split points, the rest is
// the reply. Check: the blocks do not depend on where the reply was split (streamed
// pieces give what one piece gives).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "chat/output_parser.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace uaii;
  using namespace uaii::chat;
  if (size < 2) return 0;
  constexpr ToolCallSyntax kSyntaxes[] = {ToolCallSyntax::kNone,    ToolCallSyntax::kTaggedJson,
                                          ToolCallSyntax::kQwenXml, ToolCallSyntax::kGemma4,
                                          ToolCallSyntax::kGranite, ToolCallSyntax::kLlama3};
  ChatSyntax syntax;
  syntax.tool_calls = kSyntaxes[(data[0] & 7) % 6];
  const uint8_t flags = data[0] >> 3;
  if (flags & 1) syntax.reasoning = (flags & 2) ? ReasoningMarkers{"<|channel>thought", "<channel|>"}
                                                : ReasoningMarkers{"<think>", "</think>"};
  if (syntax.tool_calls == ToolCallSyntax::kGranite && (flags & 4)) syntax.tool_call_close = "<|/tool_call|>";
  const bool starts_in_thinking = syntax.reasoning && (flags & 8);
  const std::string_view reply = fuzz::AsText(data + 2, size - 2);

  // Split points from a small xorshift generator seeded by byte 1: pieces of 1..16 bytes.
  std::vector<std::string_view> pieces;
  uint32_t state = 0x9E3779B9u ^ data[1];
  for (size_t at = 0; at < reply.size();) {
    state ^= state << 13; state ^= state >> 17; state ^= state << 5;
    const size_t n = std::min<size_t>(1 + state % 16, reply.size() - at);
    pieces.push_back(reply.substr(at, n));
    at += n;
  }
  const auto streamed = ChatOutputParser::ParseAll(syntax, starts_in_thinking, pieces);
  const auto whole = ChatOutputParser::ParseAll(syntax, starts_in_thinking, {reply});
  if (streamed != whole) {
    std::fprintf(stderr, "fuzz_output_parser: %zu blocks streamed, %zu whole\n", streamed.size(), whole.size());
    for (const auto& b : streamed) std::fprintf(stderr, "  streamed %s\n", DebugString(b).c_str());
    for (const auto& b : whole) std::fprintf(stderr, "  whole    %s\n", DebugString(b).c_str());
    std::abort();
  }
  return 0;
}
