// ChatOutputParser on hand-written model outputs for every syntax, well-formed and
// malformed. Each output is fed whole, split in two at every byte, byte by byte,
// one UTF-8 character at a time and in token-like pieces: the merged blocks must
// be the same every time, and every text / thinking delta must be valid UTF-8.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "chat/output_parser.h"
#include "chat/output_syntax.h"
#include "chat/value.h"

using namespace uaii::chat;

namespace {

using TC = ToolCallSyntax;
enum Reasoning { kNoReasoning, kThink, kChannel };

ChatSyntax Syntax(TC tools, Reasoning r) {
  ChatSyntax s;
  s.tool_calls = tools;
  if (r == kThink) s.reasoning = ReasoningMarkers{"<think>", "</think>"};
  if (r == kChannel) s.reasoning = ReasoningMarkers{"<|channel>thought", "<channel|>"};
  return s;
}

OutputBlock T(std::string s) { return OutputBlock::Text(std::move(s)); }
OutputBlock Th(std::string s) { return OutputBlock::Thinking(std::move(s)); }
OutputBlock Call(std::string name, std::string args, std::string id = {}) {
  return OutputBlock::Call(ToolCall{std::move(name), std::move(args), std::move(id)});
}
// An Error whose message contains `message_part` and whose raw text is `raw`.
OutputBlock Err(std::string message_part, std::string raw) {
  return OutputBlock::Error(std::move(message_part), std::move(raw));
}

struct Case {
  const char* name;
  TC tools;
  Reasoning reasoning;
  bool starts_in_thinking;
  std::string output;
  std::vector<OutputBlock> want;
  std::string tool_call_close = {};  // ChatSyntax::tool_call_close (Granite templates that print one)
};

bool ValidUtf8(std::string_view s) {
  auto cps = uaii::jinja::DecodeUtf8(s);
  std::string back;
  for (uint32_t cp : cps) uaii::jinja::AppendUtf8(back, cp);
  return back == s && s.find("\xEF\xBF\xBD") == std::string_view::npos;
}

// Token-like pieces: every marker alone, words, and single other bytes.
std::vector<std::string> TokenPieces(const std::string& s) {
  static const std::vector<std::string> kMarkers = {
      "<think>", "</think>", "<|channel>", "<channel|>", "<tool_call>", "</tool_call>", "<|tool_call>",
      "<tool_call|>", "<|\"|>", "<|tool_call|>", "<|python_tag|>", "<|eom_id|>", "<function=", "<parameter=",
      "</parameter>", "</function>"};
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    bool marker = false;
    for (const std::string& m : kMarkers) {
      if (s.compare(i, m.size(), m) == 0) {
        out.push_back(m);
        i += m.size();
        marker = true;
        break;
      }
    }
    if (marker) continue;
    size_t j = i;
    auto word = [](unsigned char c) { return std::isalnum(c) || c >= 0x80; };
    if (word(s[i])) {
      while (j < s.size() && word(s[j])) ++j;
    } else {
      j = i + 1;
    }
    out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

std::vector<std::string> Utf8Chars(const std::string& s) {
  std::vector<std::string> out;
  for (uint32_t cp : uaii::jinja::DecodeUtf8(s)) {
    std::string c;
    uaii::jinja::AppendUtf8(c, cp);
    out.push_back(c);
  }
  return out;
}

std::string Show(const std::vector<OutputBlock>& blocks) {
  std::string s;
  for (const OutputBlock& b : blocks) s += "  " + DebugString(b) + "\n";
  return s;
}

bool Matches(const std::vector<OutputBlock>& got, const std::vector<OutputBlock>& want) {
  if (got.size() != want.size()) return false;
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i].kind != want[i].kind) return false;
    if (want[i].kind == BlockKind::kError) {
      if (got[i].text.find(want[i].text) == std::string::npos || got[i].raw != want[i].raw) return false;
    } else if (!(got[i] == want[i])) {
      return false;
    }
  }
  return true;
}

void CheckSplit(const Case& c, const std::vector<std::string>& pieces, const std::string& how) {
  ChatSyntax syntax = Syntax(c.tools, c.reasoning);
  syntax.tool_call_close = c.tool_call_close;
  ChatOutputParser p(syntax, c.starts_in_thinking);
  std::vector<OutputBlock> blocks;
  bool deltas_ok = true;
  auto take = [&](std::vector<OutputBlock> events) {
    for (const OutputBlock& e : events)
      if ((e.kind == BlockKind::kText || e.kind == BlockKind::kThinking) && (e.text.empty() || !ValidUtf8(e.text)))
        deltas_ok = false;
    AppendBlocks(blocks, events);
  };
  for (const std::string& piece : pieces) take(p.Feed(piece));
  take(p.Flush());
  INFO("case " << c.name << ", fed " << how << "\ngot:\n" << Show(blocks) << "want:\n" << Show(c.want));
  CHECK(Matches(blocks, c.want));
  CHECK(deltas_ok);
}

void RunCases(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    const std::string& s = c.output;
    CheckSplit(c, {s}, "whole");
    CheckSplit(c, TokenPieces(s), "as tokens");
    CheckSplit(c, Utf8Chars(s), "by UTF-8 character");
    std::vector<std::string> bytes;
    for (char ch : s) bytes.emplace_back(1, ch);
    CheckSplit(c, bytes, "byte by byte");
    for (size_t k = 1; k < s.size(); ++k) CheckSplit(c, {s.substr(0, k), s.substr(k)}, "split at byte " + std::to_string(k));
  }
}

}  // namespace

TEST_CASE("output parser: plain text and reasoning blocks") {
  RunCases({
      {"plain", TC::kNone, kNoReasoning, false, "Hello, world!\nSecond line.", {T("Hello, world!\nSecond line.")}},
      {"plain_outer_whitespace", TC::kNone, kNoReasoning, false, "\n  Hi there  \n", {T("Hi there")}},
      {"plain_utf8", TC::kNone, kThink, false, "Grüße, 世界! 🎉 done", {T("Grüße, 世界! 🎉 done")}},
      {"think_block", TC::kNone, kThink, false, "<think>\nLet me think.\n\nStep 2.\n</think>\n\nThe answer is 4.",
       {Th("Let me think.\n\nStep 2."), T("The answer is 4.")}},
      {"think_forced_open", TC::kNone, kThink, true, "\nReasoning here.\n</think>\n\nAnswer.",
       {Th("Reasoning here."), T("Answer.")}},
      {"think_empty", TC::kNone, kThink, false, "<think>\n\n</think>\n\nHi", {T("Hi")}},
      {"think_unclosed", TC::kNone, kThink, false, "<think>\nStill thinking about", {Th("Still thinking about")}},
      {"think_utf8", TC::kNone, kThink, false, "<think>考えています…🤔</think>答えは４です。🎉",
       {Th("考えています…🤔"), T("答えは４です。🎉")}},
      {"think_keeps_tool_markup", TC::kTaggedJson, kThink, false, "<think>maybe <tool_call>{}</tool_call>?</think>Done",
       {Th("maybe <tool_call>{}</tool_call>?"), T("Done")}},
      {"lookalike_markers", TC::kTaggedJson, kThink, false, "a < b, <thinker> and </think <tool_x> x <thi",
       {T("a < b, <thinker> and </think <tool_x> x <thi")}},
      // A closer with no open block is dropped, the text around it kept.
      {"stray_close_is_dropped", TC::kNone, kThink, false, "Hello</think>World", {T("HelloWorld")}},
      {"stray_close_keeps_spacing", TC::kNone, kThink, false, "plan</think>\n\nAnswer", {T("plan\n\nAnswer")}},
      {"stray_tool_close_is_dropped", TC::kTaggedJson, kThink, false, "done</tool_call> ok", {T("done ok")}},
      {"no_reasoning_syntax_keeps_think", TC::kNone, kNoReasoning, false, "<think>x</think>y", {T("<think>x</think>y")}},
      {"none_syntax_keeps_tool_markup", TC::kNone, kNoReasoning, false, "<tool_call>{\"name\":\"f\"}</tool_call>",
       {T("<tool_call>{\"name\":\"f\"}</tool_call>")}},
      {"channel_thought", TC::kNone, kChannel, false, "<|channel>thought\nThe user greets.<channel|>Hello!",
       {Th("The user greets."), T("Hello!")}},
      {"channel_empty", TC::kNone, kChannel, false, "<|channel>thought\n<channel|>The capital is Paris.",
       {T("The capital is Paris.")}},
      {"channel_starts_open", TC::kNone, kChannel, true, "Hmm.<channel|>Hi", {Th("Hmm."), T("Hi")}},
  });
}

TEST_CASE("output parser: tagged JSON tool calls (Qwen 2.5 and 3 and SmolLM 3 and Hermes)") {
  const std::string open = "<tool_call>\n", close = "\n</tool_call>";
  auto tc = [&](const std::string& json) { return open + json + close; };
  RunCases({
      {"call", TC::kTaggedJson, kThink, false,
       "Let me check.\n" + tc(R"({"name": "get_weather", "arguments": {"city": "Paris", "days": 3}})"),
       {T("Let me check."), Call("get_weather", R"({"city":"Paris","days":3})")}},
      {"two_calls", TC::kTaggedJson, kThink, false,
       tc(R"({"name": "a", "arguments": {}})") + "\n" + tc(R"({"name": "b", "arguments": {"x": [1, 2.5, null, true]}})"),
       {Call("a", "{}"), Call("b", R"({"x":[1,2.5,null,true]})")}},
      {"think_then_call", TC::kTaggedJson, kThink, false,
       "<think>\nNeed weather.\n</think>\n\n" + tc(R"({"name": "w", "arguments": {"q": "Zürich \"centre\""}})"),
       {Th("Need weather."), Call("w", R"({"q":"Zürich \"centre\""})")}},
      {"call_then_text", TC::kTaggedJson, kThink, false, tc(R"({"name": "f", "arguments": {}})") + "\n\nDone.",
       {Call("f", "{}"), T("Done.")}},
      {"parameters_key", TC::kTaggedJson, kThink, false, tc(R"({"name": "f", "parameters": {"a": 1}})"),
       {Call("f", R"({"a":1})")}},
      {"arguments_string", TC::kTaggedJson, kThink, false, tc(R"({"name": "f", "arguments": "{\"a\": \"b\"}"})"),
       {Call("f", R"({"a":"b"})")}},
      {"arguments_null", TC::kTaggedJson, kThink, false, tc(R"({"name": "f", "arguments": null})"), {Call("f", "{}")}},
      {"arguments_absent", TC::kTaggedJson, kThink, false, tc(R"({"name": "f"})"), {Call("f", "{}")}},
      {"openai_shape", TC::kTaggedJson, kThink, false,
       tc(R"({"type": "function", "id": "call_1", "function": {"name": "f", "arguments": "{\"a\":1}"}})"),
       {Call("f", R"({"a":1})")}},  // the model's "id" is not taken (the engine numbers calls)
      {"function_key", TC::kTaggedJson, kThink, false, tc(R"({"function": "f", "arguments": {"a": 1}})"),
       {Call("f", R"({"a":1})")}},
      {"list", TC::kTaggedJson, kThink, false, tc(R"([{"name": "a", "arguments": {}}, {"name": "b", "arguments": {}}])"),
       {Call("a", "{}"), Call("b", "{}")}},
      {"malformed_then_text", TC::kTaggedJson, kThink, false,
       tc(R"({"name": "f", "arguments": {"a": }})") + "\nSorry, let me retry.",
       {Err("invalid JSON", tc(R"({"name": "f", "arguments": {"a": }})")), T("Sorry, let me retry.")}},
      {"arguments_list", TC::kTaggedJson, kThink, false, tc(R"({"name": "f", "arguments": [1, 2]})"),
       {Err("not an object", tc(R"({"name": "f", "arguments": [1, 2]})"))}},
      {"arguments_string_not_json", TC::kTaggedJson, kThink, false, tc(R"({"name": "f", "arguments": "hello"})"),
       {Err("invalid JSON", tc(R"({"name": "f", "arguments": "hello"})"))}},
      {"arguments_string_list", TC::kTaggedJson, kThink, false, tc(R"({"name": "f", "arguments": "[1]"})"),
       {Err("not an object", tc(R"({"name": "f", "arguments": "[1]"})"))}},
      {"no_name", TC::kTaggedJson, kThink, false, tc(R"({"arguments": {}})"),
       {Err("no \"name\"", tc(R"({"arguments": {}})"))}},
      {"unclosed_but_complete", TC::kTaggedJson, kThink, false, open + R"({"name": "f", "arguments": {}})",
       {Call("f", "{}")}},
      {"unclosed_cut", TC::kTaggedJson, kThink, false, open + R"({"name": "f", "argu)",
       {Err("not closed by </tool_call>", open + R"({"name": "f", "argu)")}},
      {"empty", TC::kTaggedJson, kThink, false, "<tool_call></tool_call>ok",
       {Err("holds no call", "<tool_call></tool_call>"), T("ok")}},
  });
}

TEST_CASE("output parser: Qwen 3.5 XML tool calls") {
  RunCases({
      {"call", TC::kQwenXml, kThink, false,
       "I'll look that up.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
       "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
       {T("I'll look that up."), Call("get_weather", R"({"city":"Paris","days":3})")}},
      {"types", TC::kQwenXml, kThink, false,
       "<tool_call>\n<function=f>\n<parameter=text>\nline 1\nline 2\n</parameter>\n<parameter=obj>\n{\"a\": [1, 2]}\n"
       "</parameter>\n<parameter=flag>\nTrue\n</parameter>\n<parameter=none>\nNone\n</parameter>\n<parameter=neg>\n-2.5\n"
       "</parameter>\n<parameter=code>\n007\n</parameter>\n</function>\n</tool_call>",
       {Call("f", R"({"text":"line 1\nline 2","obj":{"a":[1,2]},"flag":true,"none":null,"neg":-2.5,"code":"007"})")}},
      {"no_parameters", TC::kQwenXml, kThink, false, "<tool_call>\n<function=now>\n</function>\n</tool_call>",
       {Call("now", "{}")}},
      {"json_body", TC::kQwenXml, kThink, false, "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool_call>",
       {Call("f", R"({"a":1})")}},
      {"think_then_two_calls", TC::kQwenXml, kThink, true,
       "Two lookups.\n</think>\n\n<tool_call>\n<function=a>\n<parameter=x>\n1\n</parameter>\n</function>\n</tool_call>\n"
       "<tool_call>\n<function=b>\n<parameter=y>\nhi there\n</parameter>\n</function>\n</tool_call>",
       {Th("Two lookups."), Call("a", R"({"x":1})"), Call("b", R"({"y":"hi there"})")}},
      {"unclosed_parameter", TC::kQwenXml, kThink, false,
       "<tool_call>\n<function=f>\n<parameter=a>\n1\n</function>\n</tool_call>\nnext",
       {Err("not closed by </parameter>", "<tool_call>\n<function=f>\n<parameter=a>\n1\n</function>\n</tool_call>"),
        T("next")}},
      {"unclosed_function", TC::kQwenXml, kThink, false,
       "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</tool_call>",
       {Err("not closed by </function>", "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</tool_call>")}},
      {"garbage_body", TC::kQwenXml, kThink, false, "<tool_call>\n<function=f>\nhello\n</function>\n</tool_call>",
       {Err("expected <parameter=NAME>", "<tool_call>\n<function=f>\nhello\n</function>\n</tool_call>")}},
  });
}

TEST_CASE("output parser: Gemma 4 tool calls") {
  const std::string q = "<|\"|>";
  RunCases({
      {"thought_and_call", TC::kGemma4, kChannel, false,
       "<|channel>thought\nThe user wants the weather.<channel|><|tool_call>call:get_weather{city:" + q + "Paris, France" +
           q + ",days:3,metric:true,tags:[" + q + "a" + q + ",1],opts:{x:null,y:-1.5}}<tool_call|>",
       {Th("The user wants the weather."),
        Call("get_weather", R"({"city":"Paris, France","days":3,"metric":true,"tags":["a",1],"opts":{"x":null,"y":-1.5}})")}},
      {"no_arguments", TC::kGemma4, kChannel, false, "<|tool_call>call:get_time{}<tool_call|>", {Call("get_time", "{}")}},
      {"quoted_punctuation", TC::kGemma4, kChannel, false,
       "<|tool_call>call:f{s:" + q + "a{b},c:d \"e\"" + q + "}<tool_call|>", {Call("f", R"({"s":"a{b},c:d \"e\""})")}},
      {"json_style_keys", TC::kGemma4, kChannel, false, "<|tool_call>call:f{\"a\":\"b\",\"n\":2}<tool_call|>",
       {Call("f", R"({"a":"b","n":2})")}},
      {"two_calls_then_text", TC::kGemma4, kChannel, false,
       "Checking.<|tool_call>call:a{x:1}<tool_call|><|tool_call>call:b{y:" + q + "z" + q + "}<tool_call|>\nok",
       {T("Checking."), Call("a", R"({"x":1})"), Call("b", R"({"y":"z"})"), T("ok")}},
      {"unclosed_string", TC::kGemma4, kChannel, false, "<|tool_call>call:f{a:" + q + "x}<tool_call|>Done.",
       {Err("closing <|\"|>", "<|tool_call>call:f{a:" + q + "x}<tool_call|>"), T("Done.")}},
      {"no_call_prefix", TC::kGemma4, kChannel, false, "<|tool_call>f{a:1}<tool_call|>",
       {Err("expected \"call:\"", "<|tool_call>f{a:1}<tool_call|>")}},
      {"trailing_garbage", TC::kGemma4, kChannel, false, "<|tool_call>call:f{a:1}}<tool_call|>",
       {Err("the end of the call", "<|tool_call>call:f{a:1}}<tool_call|>")}},
      {"cut_off", TC::kGemma4, kChannel, false, "<|tool_call>call:f{a:",
       {Err("not closed by <tool_call|>", "<|tool_call>call:f{a:")}},
  });
}

TEST_CASE("output parser: Granite tool calls") {
  RunCases({
      {"calls", TC::kGranite, kNoReasoning, false,
       R"(<|tool_call|>[{"name": "f", "arguments": {"a": 1}}, {"name": "g", "arguments": {}}])",
       {Call("f", R"({"a":1})"), Call("g", "{}")}},
      {"text_then_call", TC::kGranite, kNoReasoning, false, R"(Sure.<|tool_call|>[{"name":"f","arguments":{}}])",
       {T("Sure."), Call("f", "{}")}},
      {"brackets_in_strings", TC::kGranite, kNoReasoning, false,
       R"(<|tool_call|>[{"name": "f", "arguments": {"q": "a]}b\"]"}}] after)",
       {Call("f", R"({"q":"a]}b\"]"})"), T("after")}},
      {"cut_off", TC::kGranite, kNoReasoning, false, R"(<|tool_call|>[{"name": "f", "arg)",
       {Err("cut off", R"(<|tool_call|>[{"name": "f", "arg)")}},
      {"not_json", TC::kGranite, kNoReasoning, false, "<|tool_call|>oops", {Err("expected a JSON", "<|tool_call|>"), T("oops")}},
      {"nothing", TC::kGranite, kNoReasoning, false, "<|tool_call|> ", {Err("followed by nothing", "<|tool_call|> ")}},
      // The plain text <tool_call> Granite models write instead of the token opens the list too.
      {"text_opener", TC::kGranite, kNoReasoning, false, R"(Sure. <tool_call>[{"name": "f", "arguments": {"a": 1}}])",
       {T("Sure."), Call("f", R"({"a":1})")}},
      // <|/tool_call|> is read as the list's close only when the template prints it.
      {"close_marker", TC::kGranite, kNoReasoning, false,
       R"(<|tool_call|>[{"name": "f", "arguments": {}}] <|/tool_call|> done)", {Call("f", "{}"), T("done")},
       "<|/tool_call|>"},
      {"close_marker_absent", TC::kGranite, kNoReasoning, false, R"(<|tool_call|>[{"name": "f", "arguments": {}}] done)",
       {Call("f", "{}"), T("done")}, "<|/tool_call|>"},
      {"close_marker_unknown_is_text", TC::kGranite, kNoReasoning, false,
       R"(<|tool_call|>[{"name": "f", "arguments": {}}]<|/tool_call|>)", {Call("f", "{}"), T("<|/tool_call|>")}},
  });
}

TEST_CASE("output parser: Llama 3.x bare JSON and python_tag calls") {
  RunCases({
      {"bare_json", TC::kLlama3, kNoReasoning, false, R"({"name": "get_weather", "parameters": {"city": "Paris"}})",
       {Call("get_weather", R"({"city":"Paris"})")}},
      {"bare_json_typed", TC::kLlama3, kNoReasoning, false, "\n\n{\"type\": \"function\", \"name\": \"f\", \"parameters\": {}}",
       {Call("f", "{}")}},
      {"bare_json_two", TC::kLlama3, kNoReasoning, false,
       R"({"name": "a", "parameters": {}}; {"name": "b", "parameters": {"x": "y"}})", {Call("a", "{}"), Call("b", R"({"x":"y"})")}},
      {"bare_json_then_text", TC::kLlama3, kNoReasoning, false, R"({"name": "a", "parameters": {}} Hope that helps.)",
       {Call("a", "{}"), T("Hope that helps.")}},
      {"bare_arguments_string", TC::kLlama3, kNoReasoning, false, R"({"name": "f", "parameters": "{\"a\":1}"})",
       {Call("f", R"({"a":1})")}},
      {"json_answer_is_text", TC::kLlama3, kNoReasoning, false, R"({"answer": 42})", {T(R"({"answer": 42})")}},
      {"name_without_arguments_is_text", TC::kLlama3, kNoReasoning, false, R"({"name": "Bob", "age": 3})",
       {T(R"({"name": "Bob", "age": 3})")}},
      {"brace_text", TC::kLlama3, kNoReasoning, false, "{not json} is how sets look", {T("{not json} is how sets look")}},
      {"json_later_is_text", TC::kLlama3, kNoReasoning, false, R"(Here: {"name": "a", "parameters": {}})",
       {T(R"(Here: {"name": "a", "parameters": {}})")}},
      {"bare_cut_off", TC::kLlama3, kNoReasoning, false, R"({"name": "f", "param)",
       {Err("not complete", R"({"name": "f", "param)")}},
      {"bare_invalid_json", TC::kLlama3, kNoReasoning, false, R"({"name": "f", "parameters": {"a": tru}})",
       {Err("invalid JSON", R"({"name": "f", "parameters": {"a": tru}})")}},
      {"bare_arguments_list", TC::kLlama3, kNoReasoning, false, R"({"name": "f", "parameters": [1]})",
       {Err("not an object", R"({"name": "f", "parameters": [1]})")}},
      {"python_tag_builtin", TC::kLlama3, kNoReasoning, false,
       "<|python_tag|>brave_search.call(query=\"weather in Paris\", count=3, safe=True)",
       {Call("brave_search", R"({"query":"weather in Paris","count":3,"safe":true})")}},
      {"python_tag_code", TC::kLlama3, kNoReasoning, false, "<|python_tag|>import math\nprint(math.pi)<|eom_id|>",
       {Call("python", R"j({"code":"import math\nprint(math.pi)"})j")}},
      {"python_tag_json", TC::kLlama3, kNoReasoning, false,
       R"(<|python_tag|>{"name": "f", "parameters": {"a": 1}}<|eom_id|>)", {Call("f", R"({"a":1})")}},
      {"python_tag_bad_json", TC::kLlama3, kNoReasoning, false, R"(<|python_tag|>{"name": "f", )",
       {Err("invalid JSON", R"(<|python_tag|>{"name": "f", )")}},
      {"python_tag_empty", TC::kLlama3, kNoReasoning, false, "<|python_tag|>", {Err("holds no call", "<|python_tag|>")}},
  });
}

TEST_CASE("output parser: per-token classification counts reasoning tokens") {
  ChatSyntax s = Syntax(TC::kTaggedJson, kThink);
  struct Step {
    const char* piece;
    PieceClass want;
  };
  const std::vector<Step> steps = {
      {"<think>", PieceClass::kThinking}, {"\n", PieceClass::kThinking},  {"Let", PieceClass::kThinking},
      {" me", PieceClass::kThinking},     {"</think>", PieceClass::kThinking}, {"\n\n", PieceClass::kText},
      {"Sure", PieceClass::kText},        {"<tool_call>", PieceClass::kToolCall}, {"{}", PieceClass::kToolCall},
      {"</tool_call>", PieceClass::kToolCall}, {"ok", PieceClass::kText},
  };
  ChatOutputParser p(s);
  int reasoning = 0;
  for (const Step& step : steps) {
    p.Feed(step.piece);
    INFO("piece " << step.piece);
    CHECK(p.last_piece_class() == step.want);
    reasoning += p.last_piece_class() == PieceClass::kThinking;
  }
  CHECK(reasoning == 5);

  ChatOutputParser forced(s, /*starts_in_thinking=*/true);
  CHECK(forced.in_thinking());
  forced.Feed("Hmm");
  CHECK(forced.last_piece_class() == PieceClass::kThinking);
  forced.Feed("</think>");
  CHECK(forced.last_piece_class() == PieceClass::kThinking);
  CHECK_FALSE(forced.in_thinking());
  forced.Feed("Hi");
  CHECK(forced.last_piece_class() == PieceClass::kText);
}

TEST_CASE("output parser: Reset starts a new reply") {
  ChatSyntax s = Syntax(TC::kNone, kThink);
  ChatOutputParser p(s);
  std::vector<OutputBlock> blocks;
  AppendBlocks(blocks, p.Feed("<think>a"));
  p.Reset(/*starts_in_thinking=*/false);
  AppendBlocks(blocks, p.Feed("b"));
  AppendBlocks(blocks, p.Flush());
  REQUIRE(blocks.size() == 2);
  CHECK(blocks[0] == Th("a"));
  CHECK(blocks[1] == T("b"));
}

// ---- DetectChatSyntax --------------------------------------------------------

#include <fstream>
#include <set>
#include <sstream>

#include "chat/chat_template.h"
#include "chat/json.h"

namespace {

std::string SharedTokenizers() { return std::string(UAII_SOURCE_DIR) + "/../shared/data/tokenizers"; }

struct HfTokenizer {
  std::string chat_template;
  std::set<std::string> added;  // added_tokens_decoder contents
  PieceLookup lookup() const {
    return [this](std::string_view p) { return added.count(std::string(p)) > 0; };
  }
};

// nullopt when /work/shared is absent.
std::optional<HfTokenizer> LoadHf(const std::string& name) {
  std::ifstream f(SharedTokenizers() + "/" + name + "/tokenizer_config.json", std::ios::binary);
  if (!f) return std::nullopt;
  std::stringstream ss;
  ss << f.rdbuf();
  auto v = uaii::jinja::ParseJson(ss.str(), name + "/tokenizer_config.json");
  REQUIRE(v.ok());
  HfTokenizer t;
  if (const auto* tmpl = v->dict->Find(std::string_view("chat_template")); tmpl && tmpl->is_string()) t.chat_template = tmpl->str;
  if (const auto* dec = v->dict->Find(std::string_view("added_tokens_decoder")); dec && dec->is_dict())
    for (const auto& [id, tok] : dec->dict->items)
      if (const auto* c = tok.dict->Find(std::string_view("content")); c && c->is_string()) t.added.insert(c->str);
  return t;
}

std::string Render(const std::string& source, std::optional<bool> enable_thinking) {
  ChatRequest r;
  r.messages = uaii::jinja::Value::MakeList();
  uaii::jinja::Value m = uaii::jinja::Value::MakeDict();
  m.dict->Set(uaii::jinja::Value::String("role"), uaii::jinja::Value::String("user"));
  m.dict->Set(uaii::jinja::Value::String("content"), uaii::jinja::Value::String("Hi"));
  r.messages.list->push_back(m);
  r.enable_thinking = enable_thinking;
  r.bos_token = "<s>";
  r.eos_token = "</s>";
  auto out = RenderChat(source, r);
  REQUIRE(out.ok());
  return *out;
}

}  // namespace

TEST_CASE("detect syntax: real templates from /work/shared") {
  if (!LoadHf("qwen3")) {
    WARN("SKIP: " << SharedTokenizers() << " is absent");
    std::printf("SKIP: %s is absent\n", SharedTokenizers().c_str());
    return;
  }
  {
    auto t = *LoadHf("qwen3");
    ChatSyntax s = DetectChatSyntax(t.chat_template, t.lookup());
    REQUIRE(s.reasoning);
    CHECK(*s.reasoning == ReasoningMarkers{"<think>", "</think>"});
    CHECK(s.tool_calls == ToolCallSyntax::kTaggedJson);
    CHECK(s.capabilities.reasoning);
    CHECK(s.capabilities.can_disable_thinking);
    CHECK(s.capabilities.tools);
    // Qwen3 lets the model open <think> itself; with thinking off the prompt holds
    // an empty, closed block. A request that does not enable thinking has it off (the
    // template's own default, on, never applies).
    std::string on = Render(t.chat_template, true), off = Render(t.chat_template, false);
    CHECK(Render(t.chat_template, std::nullopt) == off);
    CHECK(on.ends_with("<|im_start|>assistant\n"));
    CHECK(off.ends_with("<think>\n\n</think>\n\n"));
    CHECK_FALSE(s.StartsInThinking(on));
    CHECK_FALSE(s.StartsInThinking(off));
    CHECK(s.StartsInThinking(on + "<think>\n"));  // a "forced thinking" variant
  }
  {
    auto t = *LoadHf("gemma3");
    ChatSyntax s = DetectChatSyntax(t.chat_template, t.lookup());
    CHECK_FALSE(s.reasoning);
    CHECK(s.tool_calls == ToolCallSyntax::kNone);
    CHECK_FALSE(s.capabilities.can_disable_thinking);
    CHECK_FALSE(s.capabilities.tools);
    CHECK_FALSE(s.StartsInThinking(Render(t.chat_template, std::nullopt)));
  }
  for (const char* name : {"llama3", "llama3_1"}) {
    auto t = *LoadHf(name);
    INFO(name);
    ChatSyntax s = DetectChatSyntax(t.chat_template, t.lookup());
    CHECK_FALSE(s.reasoning);
    // These tokenizer configs carry the short template without tool support.
    CHECK(s.tool_calls == ToolCallSyntax::kNone);
    CHECK_FALSE(s.capabilities.tools);
  }
  {
    auto t = *LoadHf("llama2");  // no chat template at all
    ChatSyntax s = DetectChatSyntax(t.chat_template, t.lookup());
    CHECK_FALSE(s.reasoning);
    CHECK(s.tool_calls == ToolCallSyntax::kNone);
  }
}

// Hand-written snippets in each family's style (the markup each prints for an
// assistant tool call and for its generation prompt), not the full templates.
TEST_CASE("detect syntax: template snippets") {
  const std::string gemma4 =
      "{{ bos_token }}{%- if enable_thinking is defined and enable_thinking -%}<|turn>system\n<|think|><turn|>\n{%- endif -%}"
      "{%- for m in messages -%}<|turn>{{ 'model' if m.role == 'assistant' else m.role }}\n"
      "{%- for tc in m.tool_calls or [] -%}<|tool_call>call:{{ tc.function.name }}{}<tool_call|>{%- endfor -%}"
      "{{ m.content | trim }}<turn|>\n{%- endfor -%}{%- if tools %}{% for t in tools %}<|tool>{{ t }}<tool|>{% endfor %}{% endif %}"
      "{%- if add_generation_prompt -%}<|turn>model\n{%- endif -%}";
  const std::string qwen35 =
      "{%- if tools %}<|im_start|>system\n# Tools\n{%- endif %}{%- for m in messages %}<|im_start|>{{ m.role }}\n"
      "{%- if m.reasoning_content %}<think>\n{{ m.reasoning_content }}\n</think>\n\n{%- endif %}{{ m.content }}"
      "{%- for tc in m.tool_calls or [] %}<tool_call>\n<function={{ tc.function.name }}>\n"
      "{%- for k, v in tc.function.arguments.items() %}<parameter={{ k }}>\n{{ v }}\n</parameter>\n{%- endfor %}"
      "</function>\n</tool_call>{%- endfor %}<|im_end|>\n{%- endfor %}"
      "{%- if add_generation_prompt %}<|im_start|>assistant\n{%- if enable_thinking is defined and enable_thinking is false %}"
      "<think>\n\n</think>\n\n{%- else %}<think>\n{%- endif %}{%- endif %}";
  const std::string granite =
      "{%- if tools %}<|start_of_role|>available_tools<|end_of_role|>{{ tools | tojson }}<|end_of_text|>\n{%- endif %}"
      "{%- for m in messages %}<|start_of_role|>{{ m.role }}<|end_of_role|>"
      "{%- if m.tool_calls %}<|tool_call|>{{ m.tool_calls | tojson }}{%- else %}{{ m.content }}{%- endif %}<|end_of_text|>\n"
      "{%- endfor %}{%- if add_generation_prompt %}<|start_of_role|>assistant<|end_of_role|>{%- endif %}";
  const std::string smollm3 =
      "{%- set reasoning_mode = '/no_think' if enable_thinking is defined and not enable_thinking else '/think' -%}"
      "<|im_start|>system\n## Metadata\nReasoning Mode: {{ reasoning_mode }}\n{%- if tools %}\n### Tools\n"
      "<tool_call>{\"name\": \"function_name\", \"arguments\": {\"arg_1\": \"value_1\"}}</tool_call>\n{%- endif %}<|im_end|>\n"
      "{%- for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{%- endfor %}"
      "{%- if add_generation_prompt %}<|im_start|>assistant\n{%- if reasoning_mode == '/no_think' %}<think>\n\n</think>\n"
      "{%- endif %}{%- endif %}";
  const std::string llama31 =
      "{{- bos_token }}{%- if tools %}Respond with {\"name\": function name, \"parameters\": dictionary}{%- endif %}"
      "{%- for m in messages %}<|start_header_id|>{{ m.role }}<|end_header_id|>\n\n"
      "{%- if m.tool_calls %}<|python_tag|>{{ m.tool_calls[0].function | tojson }}<|eom_id|>{%- else %}{{ m.content }}<|eot_id|>"
      "{%- endif %}{%- endfor %}{%- if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n{%- endif %}";
  const std::string llama32 =
      "{%- if tools %}Respond in the format {\"name\": function name, \"parameters\": dictionary of argument name and its "
      "value}.{%- endif %}{%- for m in messages %}<|start_header_id|>{{ m.role }}<|end_header_id|>\n\n{{ m.content }}<|eot_id|>"
      "{%- endfor %}{%- if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n{%- endif %}";
  const std::string deepseek_r1 =
      "{%- for m in messages %}{{ '<｜' + m.role + '｜>' + m.content }}{%- endfor %}"
      "{%- if add_generation_prompt %}<｜Assistant｜><think>\n{%- endif %}";

  struct Want {
    const char* name;
    const std::string& source;
    PieceLookup lookup;
    std::optional<ReasoningMarkers> reasoning;
    ToolCallSyntax tools;
    bool can_disable_thinking, has_tools, starts_in_thinking_on, starts_in_thinking_off;
  };
  const ReasoningMarkers think{"<think>", "</think>"}, channel{"<|channel>thought", "<channel|>"};
  auto vocab = [](std::set<std::string> pieces) {
    return PieceLookup([pieces](std::string_view p) { return pieces.count(std::string(p)) > 0; });
  };
  const std::vector<Want> wants = {
      // Gemma 4's template only strips <|channel> blocks from history; here the
      // vocabulary shows the markers.
      {"gemma4", gemma4, vocab({"<|channel>", "<channel|>", "<|tool_call>", "<tool_call|>"}), channel,
       ToolCallSyntax::kGemma4, true, true, false, false},
      {"gemma4_no_vocab", gemma4, {}, std::nullopt, ToolCallSyntax::kGemma4, true, true, false, false},
      {"qwen35", qwen35, {}, think, ToolCallSyntax::kQwenXml, true, true, true, false},
      {"granite", granite, {}, std::nullopt, ToolCallSyntax::kGranite, false, true, false, false},
      {"smollm3", smollm3, {}, think, ToolCallSyntax::kTaggedJson, true, true, false, false},
      {"llama31", llama31, {}, std::nullopt, ToolCallSyntax::kLlama3, false, true, false, false},
      {"llama32", llama32, {}, std::nullopt, ToolCallSyntax::kLlama3, false, true, false, false},
      {"deepseek_r1", deepseek_r1, {}, think, ToolCallSyntax::kNone, false, false, true, true},
  };
  for (const Want& w : wants) {
    INFO(w.name);
    ChatSyntax s = DetectChatSyntax(w.source, w.lookup);
    CHECK(s.reasoning == w.reasoning);
    CHECK(s.tool_calls == w.tools);
    CHECK(s.capabilities.reasoning == w.reasoning.has_value());
    CHECK(s.capabilities.can_disable_thinking == w.can_disable_thinking);
    CHECK(s.capabilities.tools == w.has_tools);
    CHECK(s.StartsInThinking(Render(w.source, true)) == w.starts_in_thinking_on);
    CHECK(s.StartsInThinking(Render(w.source, false)) == w.starts_in_thinking_off);
  }
  // The Gemma 4 prompt with thinking on ends with "<|turn>model\n"; an explicit
  // open thought channel at the end means generation starts inside it.
  ChatSyntax g = DetectChatSyntax(gemma4, vocab({"<|channel>", "<channel|>"}));
  CHECK(g.StartsInThinking("<|turn>model\n<|channel>thought\n"));
  CHECK_FALSE(g.StartsInThinking("<|turn>model\n<|channel>thought\n<channel|>"));
  CHECK(ToolCallSyntaxName(ToolCallSyntax::kQwenXml) == "qwen_xml");
}

// Random outputs built from marker fragments, JSON bits and multi-byte text: for
// every syntax, the blocks must not depend on where the stream is split, and no
// delta may be empty or cut a UTF-8 character.
#include <random>

TEST_CASE("output parser: random outputs give the same blocks at any split") {
  const std::vector<std::string> fragments = {
      "<think>", "</think>", "<|channel>thought\n", "<channel|>", "<tool_call>", "</tool_call>", "<|tool_call>",
      "<tool_call|>", "<|tool_call|>", "<|python_tag|>", "<|eom_id|>", "<|\"|>", "call:f{", "a:1", "}", "{", "[", "]",
      "\"name\": \"f\"", "\"arguments\": {}", "\"parameters\": ", ",", ":", "<function=f>", "<parameter=x>",
      "</parameter>", "</function>", "<", "</", "<|", "|>", "\n", " ", "\n\n", "hello", "é", "世界", "🎉", ";", "\"",
      "\\", "tool", "think", "x.call(q=\"v\")"};
  std::mt19937 rng(1234);
  const std::vector<std::pair<TC, Reasoning>> syntaxes = {
      {TC::kNone, kNoReasoning}, {TC::kTaggedJson, kThink},  {TC::kQwenXml, kThink},
      {TC::kGemma4, kChannel},   {TC::kGranite, kNoReasoning}, {TC::kLlama3, kNoReasoning}};
  for (const auto& [tools, reasoning] : syntaxes) {
    for (int n = 0; n < 150; ++n) {
      std::string s;
      int len = 1 + static_cast<int>(rng() % 12);
      for (int i = 0; i < len; ++i) s += fragments[rng() % fragments.size()];
      for (bool thinking : {false, true}) {
        ChatSyntax syntax = Syntax(tools, reasoning);
        auto whole = ChatOutputParser::ParseAll(syntax, thinking, {s});
        Case c{"random", tools, reasoning, thinking, s, whole};
        std::vector<std::string> bytes;
        for (char ch : s) bytes.emplace_back(1, ch);
        CheckSplit(c, bytes, "byte by byte");
        CheckSplit(c, Utf8Chars(s), "by UTF-8 character");
        std::vector<std::string> pieces;
        for (size_t i = 0; i < s.size();) {
          size_t k = std::min(s.size() - i, size_t(1 + rng() % 7));
          pieces.push_back(s.substr(i, k));
          i += k;
        }
        CheckSplit(c, pieces, "in random pieces");
      }
    }
  }
}

TEST_CASE("output parser: hostile nesting is an error and not a crash") {
  std::string deep = "<|tool_call>call:f{a:" + std::string(100000, '[') + "<tool_call|>ok";
  auto blocks = ChatOutputParser::ParseAll(Syntax(TC::kGemma4, kChannel), false, {deep});
  REQUIRE(blocks.size() == 2);
  CHECK(blocks[0].kind == BlockKind::kError);
  CHECK(blocks[0].text.find("nest too deeply") != std::string::npos);
  CHECK(blocks[1] == T("ok"));

  std::string json = "<tool_call>{\"name\": \"f\", \"arguments\": " + std::string(100000, '[') + "</tool_call>";
  blocks = ChatOutputParser::ParseAll(Syntax(TC::kTaggedJson, kThink), false, {json});
  REQUIRE(blocks.size() == 1);
  CHECK(blocks[0].kind == BlockKind::kError);

  std::string bare = std::string(100000, '{');
  blocks = ChatOutputParser::ParseAll(Syntax(TC::kLlama3, kNoReasoning), false, {bare});
  REQUIRE(blocks.size() == 1);
  CHECK(blocks[0] == T(bare));
}

TEST_CASE("output parser: long calls streamed byte by byte are read once") {
  // 300 KB of arguments, fed one byte at a time: a parser that rescanned its
  // buffer on every piece would take minutes here.
  const std::string big(300000, 'x');
  struct Long {
    TC tools;
    std::string output;
  };
  const std::vector<Long> outputs = {
      {TC::kTaggedJson, "<tool_call>{\"name\": \"f\", \"arguments\": {\"s\": \"" + big + "\"}}</tool_call>"},
      {TC::kGranite, "<|tool_call|>[{\"name\": \"f\", \"arguments\": {\"s\": \"" + big + "\"}}]"},
      {TC::kLlama3, "{\"name\": \"f\", \"parameters\": {\"s\": \"" + big + "\"}}"},
  };
  for (const Long& l : outputs) {
    ChatOutputParser p(Syntax(l.tools, kNoReasoning));
    std::vector<OutputBlock> blocks;
    for (char c : l.output) AppendBlocks(blocks, p.Feed(std::string_view(&c, 1)));
    AppendBlocks(blocks, p.Flush());
    REQUIRE(blocks.size() == 1);
    CHECK(blocks[0] == Call("f", "{\"s\":\"" + big + "\"}"));
  }
}

TEST_CASE("output parser: Qwen 3.5 XML values follow the declared parameter types") {
  auto types = ToolParamTypesFromJson(R"([{"type": "function", "function": {"name": "lookup", "parameters": {
      "type": "object", "properties": {"zip": {"type": "string"}, "count": {"type": "integer"}, "flag": {"type": "string"}}}}},
      {"type": "function", "function": {"name": "no_params"}}, 42])");
  REQUIRE(types.ok());
  CHECK(types->at("lookup").at("zip") == "string");
  const std::string out =
      "<tool_call>\n<function=lookup>\n<parameter=zip>\n12345\n</parameter>\n<parameter=count>\n3\n</parameter>\n"
      "<parameter=flag>\ntrue\n</parameter>\n<parameter=other>\n7\n</parameter>\n</function>\n</tool_call>";
  ChatOutputParser typed(Syntax(TC::kQwenXml, kThink));
  typed.SetToolParamTypes(*types);
  std::vector<OutputBlock> blocks;
  AppendBlocks(blocks, typed.Feed(out));
  AppendBlocks(blocks, typed.Flush());
  REQUIRE(blocks.size() == 1);
  CHECK(blocks[0] == Call("lookup", R"({"zip":"12345","count":3,"flag":"true","other":7})"));
  // Without the schema the shapes decide.
  auto untyped = ChatOutputParser::ParseAll(Syntax(TC::kQwenXml, kThink), false, {out});
  REQUIRE(untyped.size() == 1);
  CHECK(untyped[0] == Call("lookup", R"({"zip":12345,"count":3,"flag":true,"other":7})"));
  CHECK_FALSE(ToolParamTypesFromJson("[").ok());
}

TEST_CASE("detect syntax: Granite's <|/tool_call|> only when the template prints it") {
  const std::string open_only = "{%- for m in messages %}{%- if m.tool_calls %}<|tool_call|>{{ m.tool_calls | tojson }}"
                                "{%- endif %}{%- endfor %}";
  const std::string with_close = "{%- for m in messages %}{%- if m.tool_calls %}<|tool_call|>{{ m.tool_calls | tojson }}"
                                 "<|/tool_call|>{%- endif %}{%- endfor %}";
  CHECK(DetectChatSyntax(open_only).tool_calls == ToolCallSyntax::kGranite);
  CHECK(DetectChatSyntax(open_only).tool_call_close.empty());
  CHECK(DetectChatSyntax(with_close).tool_call_close == "<|/tool_call|>");
}
