// The server's request parsing (server/openai_request.h): what each route accepts, the
// defaults it fills in, and a 400 naming the field for everything it refuses.
#include <catch2/catch.hpp>

#include "openai_request.h"

using namespace uaii::server;

namespace {

const RequestLimits kLimits{.max_messages = 4, .max_tokens = 100, .max_stop = 2};

ApiError ChatError(std::string_view body) {
  ApiError e;
  REQUIRE_FALSE(ParseChatCompletionRequest(body, kLimits, &e).has_value());
  CHECK(e.status == 400);
  CHECK(e.type == "invalid_request_error");
  return e;
}

}  // namespace

TEST_CASE("a chat request's fields are read, the messages passed on as written", "[server]") {
  ApiError e;
  auto r = ParseChatCompletionRequest(
      R"({"model":"x","messages":[{"role":"user","content":"Hi"}], "tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"x":{"type":"number","minimum":1.0}}}}}],
          "max_tokens":12,"temperature":0,"top_p":0.5,"top_k":3,"min_p":0.1,"seed":9,"stop":"END",
          "presence_penalty":0.25,"frequency_penalty":-0.5,"repeat_penalty":1.1,"stream":true,
          "stream_options":{"include_usage":true},"chat_template_kwargs":{"enable_thinking":false},
          "unknown_field":{"ignored":true}})",
      kLimits, &e);
  REQUIRE(r.has_value());
  CHECK(r->messages_json == R"([{"role":"user","content":"Hi"}])");
  // The tools' text as the client wrote it: 1.0 stays a float for the template.
  REQUIRE(r->tools_json.has_value());
  CHECK(r->tools_json->find("\"minimum\":1.0") != std::string::npos);
  CHECK(r->max_tokens == 12);
  CHECK(r->sampling.greedy());
  CHECK(r->sampling.top_p == 0.5f);
  CHECK(r->sampling.top_k == 3);
  CHECK(r->sampling.min_p == Approx(0.1f));
  CHECK(r->sampling.seed == 9u);
  CHECK(r->seed_given);
  CHECK(r->sampling.presence_penalty == 0.25f);
  CHECK(r->sampling.frequency_penalty == -0.5f);
  CHECK(r->sampling.repeat_penalty == Approx(1.1f));
  CHECK(r->stop == std::vector<std::string>{"END"});
  CHECK(r->stream);
  CHECK(r->include_usage);
  CHECK(r->think == false);
}

TEST_CASE("a silent chat request gets llama-server's sampling defaults", "[server]") {
  ApiError e;
  auto r = ParseChatCompletionRequest(R"({"messages":[{"role":"user","content":"Hi"}]})", kLimits, &e);
  REQUIRE(r.has_value());
  const uaii::sampling::SamplingParams defaults;
  CHECK(r->sampling.temperature == defaults.temperature);
  CHECK(r->sampling.top_k == defaults.top_k);
  CHECK(r->sampling.top_p == defaults.top_p);
  CHECK(r->sampling.min_p == defaults.min_p);
  CHECK_FALSE(r->seed_given);
  CHECK_FALSE(r->max_tokens.has_value());
  CHECK_FALSE(r->stream);
  CHECK_FALSE(r->tools_json.has_value());
  CHECK_FALSE(r->think.has_value());
  CHECK_FALSE(r->json_schema.has_value());
}

TEST_CASE("tool_choice: none drops the tools — required and a named function force calls", "[server]") {
  ApiError e;
  const std::string hi_tools = R"({"messages":[{"role":"user","content":"Hi"}],"tools":[{"type":"function","function":{"name":"f"}}])";
  auto r = ParseChatCompletionRequest(hi_tools + R"(,"tool_choice":"none"})", kLimits, &e);
  REQUIRE(r.has_value());
  CHECK_FALSE(r->tools_json.has_value());
  CHECK(r->tool_choice.mode == uaii::ToolChoice::Mode::kAuto);

  r = ParseChatCompletionRequest(hi_tools + R"(,"tool_choice":"required"})", kLimits, &e);
  REQUIRE(r.has_value());
  CHECK(r->tools_json.has_value());
  CHECK(r->tool_choice.mode == uaii::ToolChoice::Mode::kRequired);
  CHECK_FALSE(r->tool_choice.parallel);  // llama-server's default

  r = ParseChatCompletionRequest(
      hi_tools + R"(,"tool_choice":{"type":"function","function":{"name":"f"}},"parallel_tool_calls":true})", kLimits, &e);
  REQUIRE(r.has_value());
  CHECK(r->tool_choice.mode == uaii::ToolChoice::Mode::kFunction);
  CHECK(r->tool_choice.function == "f");
  CHECK(r->tool_choice.parallel);

  CHECK(ChatError(R"({"messages":[{"role":"user","content":"Hi"}],"tool_choice":"required"})").param == "tool_choice");
  CHECK_THAT(ChatError(R"({"messages":[{"role":"user","content":"Hi"}],"tool_choice":"required"})").message,
             Catch::Contains("no 'tools'"));
  CHECK(ChatError(hi_tools + R"(,"tool_choice":{"type":"function"}})").param == "tool_choice");
  CHECK(ChatError(hi_tools + R"(,"tool_choice":"always"})").param == "tool_choice");
  CHECK(ChatError(hi_tools + R"(,"tool_choice":"required","grammar":"root ::= \"x\""})").param == "tool_choice");
  CHECK(ChatError(hi_tools + R"(,"tool_choice":"required","response_format":{"type":"json_object"}})").param ==
        "tool_choice");
  CHECK(ChatError(hi_tools + R"(,"parallel_tool_calls":1})").param == "parallel_tool_calls");
}

TEST_CASE("response_format becomes the schema the reply must follow", "[server]") {
  ApiError e;
  auto r = ParseChatCompletionRequest(
      R"({"messages":[{"role":"user","content":"Hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"p","schema":{"type":"object","properties":{"a":{"type":"integer"}}}}}})",
      kLimits, &e);
  REQUIRE(r.has_value());
  CHECK(r->json_schema == R"({"type":"object","properties":{"a":{"type":"integer"}}})");
  r = ParseChatCompletionRequest(R"({"messages":[{"role":"user","content":"Hi"}],"response_format":{"type":"json_object"}})",
                                 kLimits, &e);
  REQUIRE(r.has_value());
  CHECK(r->json_schema == R"({"type":"object"})");
  r = ParseChatCompletionRequest(R"({"messages":[{"role":"user","content":"Hi"}],"response_format":{"type":"text"}})",
                                 kLimits, &e);
  REQUIRE(r.has_value());
  CHECK_FALSE(r->json_schema.has_value());
  CHECK(ChatError(R"({"messages":[{"role":"user","content":"Hi"}],"response_format":{"type":"json_schema"}})").param ==
        "response_format");
  CHECK(ChatError(R"({"messages":[{"role":"user","content":"Hi"}],"response_format":{"type":"yaml"}})").param ==
        "response_format");
  CHECK(ChatError(R"({"messages":[{"role":"user","content":"Hi"}],"response_format":"json"})").param ==
        "response_format");
  CHECK(ChatError(R"({"messages":[{"role":"user","content":"Hi"}],"grammar":"root ::= \"a\"","response_format":{"type":"json_object"}})")
            .param == "grammar");
}

TEST_CASE("bad chat bodies are refused naming the field", "[server]") {
  CHECK(ChatError("{not json").message.find("not valid JSON") != std::string::npos);
  CHECK(ChatError("[1,2]").message.find("must be a JSON object") != std::string::npos);
  CHECK(ChatError("\"\xff\xfe\"").message.find("not valid JSON") != std::string::npos);  // invalid UTF-8
  CHECK(ChatError("{}").param == "messages");
  CHECK(ChatError(R"({"messages":[]})").param == "messages");
  CHECK(ChatError(R"({"messages":"hi"})").message == "'messages' must be an array, got a string");
  CHECK(ChatError(R"({"messages":[1]})").message == "'messages[0]' must be an object, got a number");
  CHECK(ChatError(R"({"messages":[{"content":"x"}]})").message == "'messages[0]' needs a 'role' string");
  CHECK(ChatError(R"({"messages":[{"role":"user","content":7}]})").param == "messages");
  CHECK(ChatError(R"({"messages":[{"role":"user"},{"role":"user"},{"role":"user"},{"role":"user"},{"role":"user"}]})")
            .message.find("at most 4") != std::string::npos);
  const std::string one = R"("messages":[{"role":"user","content":"Hi"}])";
  CHECK(ChatError("{" + one + R"(,"temperature":"hot"})").message == "'temperature' must be a number, got a string");
  CHECK(ChatError("{" + one + R"(,"temperature":-1})").param == "temperature");
  CHECK(ChatError("{" + one + R"(,"top_p":1.5})").param == "top_p");
  CHECK(ChatError("{" + one + R"(,"max_tokens":101})").param == "max_tokens");
  CHECK(ChatError("{" + one + R"(,"max_tokens":-1})").param == "max_tokens");
  CHECK(ChatError("{" + one + R"(,"max_tokens":2.5})").param == "max_tokens");
  CHECK(ChatError("{" + one + R"(,"max_completion_tokens":1e300})").param == "max_completion_tokens");
  CHECK(ChatError("{" + one + R"(,"n":2})").param == "n");
  CHECK(ChatError("{" + one + R"(,"logprobs":true})").param == "logprobs");
  CHECK(ChatError("{" + one + R"(,"stop":["a","b","c"]})").param == "stop");
  CHECK(ChatError("{" + one + R"(,"stop":[""]})").param == "stop");
  CHECK(ChatError("{" + one + R"(,"stop":5})").param == "stop");
  CHECK(ChatError("{" + one + R"(,"stream":"yes"})").param == "stream");
  CHECK(ChatError("{" + one + R"(,"tools":{}})").param == "tools");
  CHECK(ChatError("{" + one + R"(,"tools":[1]})").param == "tools");
  CHECK(ChatError("{" + one + R"(,"chat_template_kwargs":{"enable_thinking":"no"}})").param == "chat_template_kwargs");
  // Deep nesting is an error, not a stack overflow.
  CHECK(ChatError(std::string(100000, '[')).status == 400);
}

TEST_CASE("a completion takes a string or token ids", "[server]") {
  ApiError e;
  auto r = ParseCompletionRequest(R"({"prompt":"Once"})", kLimits, &e);
  REQUIRE(r.has_value());
  CHECK(r->prompt == "Once");
  CHECK(r->max_tokens == 16);  // OpenAI's default
  r = ParseCompletionRequest(R"({"prompt":[1,2,3],"max_tokens":4})", kLimits, &e);
  REQUIRE(r.has_value());
  CHECK(r->prompt_is_tokens);
  CHECK(r->prompt_tokens == std::vector<uaii::TokenId>{1, 2, 3});
  r = ParseCompletionRequest(R"({"prompt":["Once"]})", kLimits, &e);
  REQUIRE(r.has_value());
  CHECK(r->prompt == "Once");
  r = ParseCompletionRequest(R"({"prompt":[[5,6]]})", kLimits, &e);
  REQUIRE(r.has_value());
  CHECK(r->prompt_tokens == std::vector<uaii::TokenId>{5, 6});
  for (const char* bad : {R"({})", R"({"prompt":5})", R"({"prompt":["a","b"]})", R"({"prompt":[-1]})",
                          R"({"prompt":[1.5]})", R"({"prompt":[]})", R"({"prompt":"x","echo":true})",
                          R"({"prompt":[9999999999]})"}) {
    INFO(bad);
    CHECK_FALSE(ParseCompletionRequest(bad, kLimits, &e).has_value());
    CHECK(e.status == 400);
    CHECK_FALSE(e.param.empty());
  }
}

TEST_CASE("tokenize and detokenize bodies", "[server]") {
  ApiError e;
  auto t = ParseTokenizeRequest(R"({"content":"Hi","add_special":true,"with_pieces":true})", &e);
  REQUIRE(t.has_value());
  CHECK(t->content == "Hi");
  CHECK(t->add_special);
  CHECK(t->parse_special);
  CHECK(t->with_pieces);
  CHECK_FALSE(ParseTokenizeRequest(R"({"content":3})", &e).has_value());
  CHECK(e.param == "content");
  CHECK_FALSE(ParseTokenizeRequest(R"({})", &e).has_value());
  auto d = ParseDetokenizeRequest(R"({"tokens":[3,4]})", &e);
  REQUIRE(d.has_value());
  CHECK(d->tokens == std::vector<uaii::TokenId>{3, 4});
  CHECK_FALSE(ParseDetokenizeRequest(R"({"tokens":["a"]})", &e).has_value());
  CHECK(e.param == "tokens");
}

TEST_CASE("errors are OpenAI-shaped JSON", "[server]") {
  CHECK(ErrorJson(BadRequest("'n' is bad", "n")) ==
        R"({"error":{"message":"'n' is bad","type":"invalid_request_error","param":"n","code":null}})");
  ApiError e = FromStatus(absl::OutOfRangeError("too long"));
  CHECK(e.status == 400);
  CHECK(e.code == "context_length_exceeded");
  CHECK(FromStatus(absl::InternalError("boom")).status == 500);
  CHECK(FromStatus(absl::InvalidArgumentError("bad")).status == 400);
}

TEST_CASE("an assistant's tool calls reach the template as Hugging Face templates read them", "[server]") {
  ApiError e;
  auto r = ParseChatCompletionRequest(
      R"({"messages":[{"role":"user","content":"Weather?"},
          {"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"w","arguments":"{\"city\": \"Paris\", \"days\": 2.0}"}}]},
          {"role":"assistant","tool_calls":[{"id":"call_2","type":"function","function":{"name":"w","arguments":"not json"}}]},
          {"role":"tool","tool_call_id":"call_1","content":"18C"}]})",
      kLimits, &e);
  REQUIRE(r.has_value());
  CHECK(r->messages_json ==
        R"([{"role":"user","content":"Weather?"},)"
        R"({"role":"assistant","content":"","tool_calls":[{"id":"call_1","type":"function","function":{"name":"w","arguments":{"city":"Paris","days":2.0}}}]},)"
        R"({"role":"assistant","tool_calls":[{"id":"call_2","type":"function","function":{"name":"w","arguments":"not json"}}],"content":""},)"
        R"({"role":"tool","tool_call_id":"call_1","content":"18C"}])");
}
