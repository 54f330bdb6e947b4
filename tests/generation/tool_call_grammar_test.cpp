// The grammars that force tool calls (tool_choice "required" / a named function): for each
// tool-call syntax, the calls as the templates write them are accepted and read back by the
// chat output parser as the same calls; other names, missing required arguments, plain text
// and a second call without parallel calls are refused; reasoning first is optional, or
// required when the prompt opened it; bad requests give errors naming the cause.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "chat/output_parser.h"
#include "generation/tool_call_grammar.h"
#include "sampling/grammar.h"

using namespace uaii;
using chat::ChatSyntax;
using chat::ToolCallSyntax;

namespace {

const char* kTools = R"([
 {"type":"function","function":{"name":"get_weather","parameters":{"type":"object",
   "properties":{"city":{"type":"string"},"days":{"type":"integer"},"metric":{"type":"boolean"}},
   "required":["city"]}}},
 {"type":"function","function":{"name":"list_files","parameters":{"type":"object","properties":{}}}}
])";

ChatSyntax Syntax(ToolCallSyntax calls, bool reasoning = false) {
  ChatSyntax s;
  s.tool_calls = calls;
  if (reasoning) s.reasoning = chat::ReasoningMarkers{"<think>", "</think>"};
  return s;
}

ToolChoice Required(bool parallel = false) { return {ToolChoice::Mode::kRequired, "", parallel}; }
ToolChoice Named(std::string f) { return {ToolChoice::Mode::kFunction, std::move(f), false}; }

std::shared_ptr<const sampling::Grammar> Build(const ChatSyntax& syntax, const ToolChoice& choice,
                                               bool starts_in_thinking = false, bool thinking_allowed = true) {
  auto gbnf = ToolCallGrammar(syntax, kTools, choice, starts_in_thinking, thinking_allowed);
  INFO((gbnf.ok() ? "" : std::string(gbnf.status().message())));
  REQUIRE(gbnf.ok());
  auto g = sampling::ParseGbnf(*gbnf);
  INFO(*gbnf);
  INFO((g.ok() ? "" : std::string(g.status().message())));
  REQUIRE(g.ok());
  return *g;
}

// Accepted whole and byte by byte (tokens split markers anywhere).
bool Accepts(const std::shared_ptr<const sampling::Grammar>& g, const std::string& s) {
  sampling::GrammarMatcher whole(g);
  const bool a = whole.AcceptBytes(s) && whole.IsComplete();
  sampling::GrammarMatcher bytewise(g);
  bool ok = true;
  for (char c : s) ok = ok && bytewise.AcceptBytes(std::string(1, c));
  CHECK(a == (ok && bytewise.IsComplete()));
  return a;
}

// The calls the output parser reads from `text`.
std::vector<chat::ToolCall> CallsIn(const ChatSyntax& syntax, const std::string& text, bool starts_in_thinking = false) {
  chat::ChatOutputParser parser(syntax, starts_in_thinking);
  std::vector<chat::OutputBlock> blocks;
  chat::AppendBlocks(blocks, parser.Feed(text));
  chat::AppendBlocks(blocks, parser.Flush());
  std::vector<chat::ToolCall> calls;
  for (const auto& b : blocks) {
    INFO(chat::DebugString(b));
    CHECK(b.kind != chat::BlockKind::kError);
    if (b.kind == chat::BlockKind::kToolCall) calls.push_back(b.call);
  }
  return calls;
}

std::string ErrorOf(const ChatSyntax& syntax, const ToolChoice& choice, const std::string& tools = kTools) {
  auto gbnf = ToolCallGrammar(syntax, tools, choice, false);
  REQUIRE_FALSE(gbnf.ok());
  return std::string(gbnf.status().message());
}

}  // namespace

TEST_CASE("tool-call grammar: tagged JSON (Qwen, Hermes)", "[generation][tool_choice]") {
  const ChatSyntax s = Syntax(ToolCallSyntax::kTaggedJson);
  auto g = Build(s, Required());
  const std::string call = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 3}}\n</tool_call>";
  CHECK(Accepts(g, call));
  CHECK(Accepts(g, "<tool_call>\n{\"name\": \"list_files\", \"arguments\": {}}\n</tool_call>"));
  auto calls = CallsIn(s, call);
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].name == "get_weather");
  CHECK(calls[0].arguments == R"({"city":"Paris","days":3})");
  CHECK_FALSE(Accepts(g, "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>"));  // no such tool
  CHECK_FALSE(Accepts(g, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"days\": 3}}\n</tool_call>"));  // city
  CHECK_FALSE(Accepts(g, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": 7}}\n</tool_call>"));
  CHECK_FALSE(Accepts(g, "It is sunny."));
  CHECK_FALSE(Accepts(g, call + "\n" + call));  // one call unless parallel
  CHECK(Accepts(Build(s, Required(true)), call + "\n" + call));
  CHECK(CallsIn(s, call + "\n" + call).size() == 2);

  auto named = Build(s, Named("list_files"));
  CHECK(Accepts(named, "<tool_call>\n{\"name\": \"list_files\", \"arguments\": {}}\n</tool_call>"));
  CHECK_FALSE(Accepts(named, call));
}

TEST_CASE("tool-call grammar: reasoning before the call", "[generation][tool_choice]") {
  const ChatSyntax s = Syntax(ToolCallSyntax::kTaggedJson, /*reasoning=*/true);
  const std::string call = "<tool_call>\n{\"name\": \"list_files\", \"arguments\": {}}\n</tool_call>";
  const std::string thought = "Look at </thin and < and </think then decide.</think>\n\n";
  auto optional = Build(s, Required());
  CHECK(Accepts(optional, call));
  CHECK(Accepts(optional, "<think>\n" + thought + call));
  CHECK_FALSE(Accepts(optional, "<think>\nendless thought" + call));  // the block must close first
  CHECK(CallsIn(s, "<think>\n" + thought + call).size() == 1);
  // The prompt opened the block: the reply starts inside it.
  auto forced = Build(s, Required(), /*starts_in_thinking=*/true);
  CHECK(Accepts(forced, thought + call));
  CHECK_FALSE(Accepts(forced, call));
  CHECK(CallsIn(s, thought + call, /*starts_in_thinking=*/true).size() == 1);
  // Thinking turned off: the call comes first.
  auto off = Build(s, Required(), false, /*thinking_allowed=*/false);
  CHECK(Accepts(off, call));
  CHECK_FALSE(Accepts(off, "<think>\n" + thought + call));
}

TEST_CASE("tool-call grammar: Qwen XML", "[generation][tool_choice]") {
  const ChatSyntax s = Syntax(ToolCallSyntax::kQwenXml);
  auto g = Build(s, Required());
  const std::string call =
      "<tool_call>\n<function=get_weather>\n<parameter=city>\nSan <b>Jose</b>\n</parameter>\n"
      "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>";
  CHECK(Accepts(g, call));
  CHECK(Accepts(g, "<tool_call>\n<function=list_files>\n</function>\n</tool_call>"));
  auto calls = CallsIn(s, call);
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].name == "get_weather");
  CHECK(calls[0].arguments == R"({"city":"San <b>Jose</b>","days":3})");
  CHECK_FALSE(Accepts(g, "<tool_call>\n<function=get_weather>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>"));
  CHECK_FALSE(Accepts(g, "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
                         "<parameter=days>\nthree\n</parameter>\n</function>\n</tool_call>"));
}

TEST_CASE("tool-call grammar: Gemma 4", "[generation][tool_choice]") {
  ChatSyntax s = Syntax(ToolCallSyntax::kGemma4);
  s.reasoning = chat::ReasoningMarkers{"<|channel>thought", "<channel|>"};
  auto g = Build(s, Required(true));
  const std::string call = "<|tool_call>call:get_weather{city:<|\"|>Paris, \"FR\"<|\"|>,days:3,metric:true}<tool_call|>";
  CHECK(Accepts(g, call));
  CHECK(Accepts(g, "<|tool_call>call:list_files{}<tool_call|>" + call));
  CHECK(Accepts(g, "<|channel>thought\nfirst the weather<channel|>" + call));
  auto calls = CallsIn(s, call);
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].name == "get_weather");
  CHECK(calls[0].arguments == R"({"city":"Paris, \"FR\"","days":3,"metric":true})");
  CHECK_FALSE(Accepts(g, "<|tool_call>call:get_weather{days:3}<tool_call|>"));
  CHECK_FALSE(Accepts(g, "<|tool_call>call:get_weather{city:Paris}<tool_call|>"));
}

TEST_CASE("tool-call grammar: Granite and Llama 3", "[generation][tool_choice]") {
  ChatSyntax granite = Syntax(ToolCallSyntax::kGranite);
  const std::string object = "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}";
  CHECK(Accepts(Build(granite, Required()), "<|tool_call|>[" + object + "]"));
  CHECK_FALSE(Accepts(Build(granite, Required()), "<|tool_call|>[" + object + ", " + object + "]"));
  CHECK(Accepts(Build(granite, Required(true)), "<|tool_call|>[" + object + ", " + object + "]"));
  REQUIRE(CallsIn(granite, "<|tool_call|>[" + object + "]").size() == 1);
  granite.tool_call_close = "<|/tool_call|>";
  CHECK(Accepts(Build(granite, Required()), "<|tool_call|>[" + object + "]<|/tool_call|>"));

  const ChatSyntax llama3 = Syntax(ToolCallSyntax::kLlama3);
  auto g = Build(llama3, Named("get_weather"));
  const std::string bare = "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Oslo\", \"metric\": false}}";
  CHECK(Accepts(g, bare));
  CHECK_FALSE(Accepts(g, object));
  auto calls = CallsIn(llama3, bare);
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].arguments == R"({"city":"Oslo","metric":false})");
}

TEST_CASE("tool-call grammar: errors name the cause", "[generation][tool_choice]") {
  CHECK_THAT(ErrorOf(Syntax(ToolCallSyntax::kNone), Required()), Catch::Contains("no tool-call syntax"));
  CHECK_THAT(ErrorOf(Syntax(ToolCallSyntax::kTaggedJson), Named("get_time")),
             Catch::Contains("\"get_time\", which is not among"));
  CHECK_THAT(ErrorOf(Syntax(ToolCallSyntax::kTaggedJson), Required(), "[]"), Catch::Contains("at least one tool"));
  CHECK_THAT(ErrorOf(Syntax(ToolCallSyntax::kTaggedJson), Required(), "{"), Catch::Contains("not a JSON array"));
  CHECK_THAT(ErrorOf(Syntax(ToolCallSyntax::kTaggedJson), Required(), R"([{"type":"function","function":{}}])"),
             Catch::Contains("'name'"));
  CHECK_THAT(ErrorOf(Syntax(ToolCallSyntax::kTaggedJson), Required(),
                     R"([{"function":{"name":"f","parameters":{"type":"object","properties":{"a":{"type":"nonsense"}}}}}])"),
             Catch::Contains("nonsense"));
  CHECK_THAT(ErrorOf(Syntax(ToolCallSyntax::kTaggedJson), ToolChoice{}), Catch::Contains("forces nothing"));
}
