// The request bodies the server accepts, read and checked: OpenAI's chat completions
// and completions (with llama-server's extensions: top_k, min_p, repeat_penalty,
// grammar, chat_template_kwargs.enable_thinking), and llama-server's /tokenize and
// /detokenize. Every check names the field at fault (ApiError.param); fields the
// server does not know are ignored, as OpenAI's and llama-server's are. Nothing here
// touches a model: fuzz/fuzz_server_request.cpp feeds these functions arbitrary bytes.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api_error.h"
#include "uaii/chat.h"
#include "uaii/sampling.h"
#include "uaii/tokenizer.h"

namespace uaii::server {

struct RequestLimits {
  size_t max_messages = 1024;
  int64_t max_tokens = 4096;  // the most max_tokens a request may ask for
  size_t max_stop = 16;       // stop strings
};

// What both completion kinds share.
struct SamplingRequest {
  bool stream = false;
  bool include_usage = false;              // stream_options.include_usage
  std::optional<int64_t> max_tokens;       // max_tokens / max_completion_tokens
  // llama.cpp's defaults where the request is silent (temperature 0.8, top_k 40,
  // top_p 0.95, min_p 0.05), as llama-server's; temperature 0 is greedy.
  sampling::SamplingParams sampling;
  bool seed_given = false;                 // else the server draws a seed per request
  std::vector<std::string> stop;
  std::string grammar;                     // GBNF (llama-server's `grammar`)
  std::optional<std::string> json_schema;  // response_format's schema, as JSON text
};

struct ChatCompletionRequest : SamplingRequest {
  std::string messages_json;               // the messages array, as JSON text
  std::optional<std::string> tools_json;   // the tools array (absent with tool_choice "none")
  std::optional<bool> think;               // chat_template_kwargs.enable_thinking
  // tool_choice "required" or {"type": "function", "function": {"name": F}}, and
  // parallel_tool_calls (llama-server's default: false); "auto" and "none" force nothing.
  ToolChoice tool_choice;
};

struct CompletionRequest : SamplingRequest {
  std::string prompt;                      // a text prompt
  std::vector<TokenId> prompt_tokens;      // or token ids (prompt: [ids])
  bool prompt_is_tokens = false;
};

struct TokenizeRequest {
  std::string content;
  bool add_special = false;
  bool parse_special = true;
  bool with_pieces = false;
};

struct DetokenizeRequest {
  std::vector<TokenId> tokens;
};

// Each returns nullopt and fills *error (status 400) when the body is not what the
// route takes.
std::optional<ChatCompletionRequest> ParseChatCompletionRequest(std::string_view body, const RequestLimits& limits,
                                                                ApiError* error);
std::optional<CompletionRequest> ParseCompletionRequest(std::string_view body, const RequestLimits& limits,
                                                        ApiError* error);
std::optional<TokenizeRequest> ParseTokenizeRequest(std::string_view body, ApiError* error);
std::optional<DetokenizeRequest> ParseDetokenizeRequest(std::string_view body, ApiError* error);

}  // namespace uaii::server
