// The server's response bodies (server/openai_response.h) in OpenAI's shapes.
#include <catch2/catch.hpp>

#include "openai_response.h"
#include "simdjson.h"

using namespace uaii;
using namespace uaii::server;

namespace {

simdjson::dom::element Parse(simdjson::dom::parser& p, const std::string& json) {
  simdjson::dom::element e;
  REQUIRE(p.parse(json).get(e) == simdjson::SUCCESS);
  return e;
}

const ResponseHeader kHeader{"chatcmpl-abc", 1700000000, "model.gguf"};

}  // namespace

TEST_CASE("a chat completion carries text, reasoning, tool calls and usage", "[server]") {
  chat::ToolCall call{"get_weather", R"({"city":"Paris"})", "call_1"};
  std::vector<chat::OutputBlock> blocks = {chat::OutputBlock::Thinking("Let me see."),
                                           chat::OutputBlock::Text("Checking."), chat::OutputBlock::Call(call)};
  simdjson::dom::parser p;
  auto doc = Parse(p, ChatCompletionJson(kHeader, blocks, FinishReason(StopReason::kEndOfGeneration, true),
                                         Usage{10, 5, 4, 2}));
  CHECK(std::string_view(doc["object"]) == "chat.completion");
  CHECK(std::string_view(doc["id"]) == "chatcmpl-abc");
  auto msg = doc["choices"].at(0)["message"];
  CHECK(std::string_view(msg["content"]) == "Checking.");
  CHECK(std::string_view(msg["reasoning_content"]) == "Let me see.");
  auto tc = msg["tool_calls"].at(0);
  CHECK(std::string_view(tc["id"]) == "call_1");
  CHECK(std::string_view(tc["type"]) == "function");
  CHECK(std::string_view(tc["function"]["name"]) == "get_weather");
  // arguments is a string holding JSON, as OpenAI sends it
  CHECK(std::string_view(tc["function"]["arguments"]) == R"({"city":"Paris"})");
  CHECK(std::string_view(doc["choices"].at(0)["finish_reason"]) == "tool_calls");
  CHECK(int64_t(doc["usage"]["total_tokens"]) == 15);
  CHECK(int64_t(doc["usage"]["prompt_tokens_details"]["cached_tokens"]) == 4);
  CHECK(int64_t(doc["usage"]["completion_tokens_details"]["reasoning_tokens"]) == 2);
}

TEST_CASE("a reply of only tool calls has null content — an unreadable call is text", "[server]") {
  simdjson::dom::parser p;
  auto doc = Parse(p, ChatCompletionJson(kHeader, {chat::OutputBlock::Call({"f", "{}", "call_2"})}, "tool_calls", {}));
  CHECK(doc["choices"].at(0)["message"]["content"].is_null());
  auto doc2 = Parse(p, ChatCompletionJson(kHeader, {chat::OutputBlock::Error("bad", "<tool_call>{oops")}, "stop", {}));
  CHECK(std::string_view(doc2["choices"].at(0)["message"]["content"]) == "<tool_call>{oops");
}

TEST_CASE("finish reasons", "[server]") {
  CHECK(FinishReason(StopReason::kEndOfGeneration, false) == "stop");
  CHECK(FinishReason(StopReason::kStopString, false) == "stop");
  CHECK(FinishReason(StopReason::kMaxTokens, false) == "length");
  CHECK(FinishReason(StopReason::kContextFull, false) == "length");
  CHECK(FinishReason(StopReason::kMaxTokens, true) == "length");  // cut short, as llama-server says
  CHECK(FinishReason(StopReason::kEndOfGeneration, true) == "tool_calls");
}

TEST_CASE("stream chunks and deltas", "[server]") {
  simdjson::dom::parser p;
  CHECK(DeltaJson(chat::OutputBlock::Text("hi"), 0) == R"({"content":"hi"})");
  CHECK(DeltaJson(chat::OutputBlock::Thinking("hm"), 0) == R"({"reasoning_content":"hm"})");
  CHECK(DeltaJson(chat::OutputBlock::Text(""), 0).empty());
  auto delta = Parse(p, DeltaJson(chat::OutputBlock::Call({"f", R"({"a":1})", "call_3"}), 2));
  CHECK(int64_t(delta["tool_calls"].at(0)["index"]) == 2);
  simdjson::dom::parser p2;
  auto chunk = Parse(p2, ChatChunkJson(kHeader, R"({"content":"x"})"));
  CHECK(std::string_view(chunk["object"]) == "chat.completion.chunk");
  CHECK(chunk["choices"].at(0)["finish_reason"].is_null());
  CHECK(chunk["usage"].error() == simdjson::NO_SUCH_FIELD);
  Usage u{3, 2, 0, 0};
  simdjson::dom::parser p3;
  auto last = Parse(p3, ChatChunkJson(kHeader, "{}", "stop", &u));
  CHECK(std::string_view(last["choices"].at(0)["finish_reason"]) == "stop");
  CHECK(int64_t(last["usage"]["completion_tokens"]) == 2);
  simdjson::dom::parser p4;
  auto usage_only = Parse(p4, ChatChunkJson(kHeader, "{}", std::nullopt, &u, true));
  CHECK(simdjson::dom::array(usage_only["choices"]).size() == 0);
}

TEST_CASE("completions and the model list", "[server]") {
  simdjson::dom::parser p;
  Usage u{4, 1, 0, 0};
  auto c = Parse(p, CompletionJson({"cmpl-1", 1, "m"}, "Paris", "length", &u));
  CHECK(std::string_view(c["object"]) == "text_completion");
  CHECK(std::string_view(c["choices"].at(0)["text"]) == "Paris");
  simdjson::dom::parser p2;
  auto m = Parse(p2, ModelsJson("m.gguf", 5));
  CHECK(std::string_view(m["object"]) == "list");
  CHECK(std::string_view(m["data"].at(0)["id"]) == "m.gguf");
}
