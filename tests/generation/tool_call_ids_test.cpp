// Tool-call ids come from the engine: unique within a reply, never the model's.
#include <catch2/catch.hpp>

#include <set>

#include "chat/output_parser.h"
#include "generation/tool_call_ids.h"

using namespace uaii;

TEST_CASE("tool call ids: the engine's, unique per reply, replacing the model's", "[generation][chat]") {
  chat::ChatSyntax syntax;
  syntax.tool_calls = chat::ToolCallSyntax::kTaggedJson;
  // The model writes the same id twice: neither is kept.
  auto blocks = chat::ChatOutputParser::ParseAll(
      syntax, false,
      {R"(<tool_call>{"id": "call_1", "name": "f", "arguments": {}}</tool_call>)",
       R"(<tool_call>{"id": "call_1", "name": "g", "arguments": {}}</tool_call>)"});
  REQUIRE(blocks.size() == 2);
  ToolCallIds ids(7);
  ids.NewReply();
  ids.Assign(blocks);
  std::set<std::string> seen;
  for (const auto& b : blocks) {
    REQUIRE(b.kind == chat::BlockKind::kToolCall);
    CHECK(b.call.id != "call_1");
    CHECK(b.call.id.size() == 5 + 24);
    CHECK(b.call.id.rfind("call_", 0) == 0);
    CHECK(b.call.id.find_first_not_of("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", 5) ==
          std::string::npos);
    seen.insert(b.call.id);
  }
  CHECK(seen.size() == 2);
  // Many calls in one reply never repeat an id.
  for (int i = 0; i < 10000; ++i) CHECK(seen.insert(ids.Next()).second);
  // Text and errors get none.
  std::vector<chat::OutputBlock> text = {chat::OutputBlock::Text("x")};
  ids.Assign(text);
  CHECK(text[0].call.id.empty());
}
