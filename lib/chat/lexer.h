// Template source -> tokens, with jinja2's whitespace rules for the Hugging Face
// environment: trim_blocks (drop the newline after %} and #}), lstrip_blocks (drop
// the indentation before {% and {# on their own line), `-` / `+` modifiers, raw
// blocks, newline normalisation and the dropped single trailing newline.
#pragma once
#include <string>
#include <vector>

namespace uaii::jinja {

enum class Tok { kData, kVarBegin, kVarEnd, kBlockBegin, kBlockEnd, kName, kString, kInt, kFloat, kOp, kEof };

struct Token {
  Tok type;
  std::string text;  // data text, name, decoded string literal, number text, operator
  int line = 1;
};

struct LexerOptions {
  bool trim_blocks = true;
  bool lstrip_blocks = true;
  bool keep_trailing_newline = false;
};

// Throws JinjaError (TemplateSyntaxError) on an unterminated tag, comment,
// string or raw block.
std::vector<Token> Tokenize(const std::string& source, const LexerOptions& opts = {});

}  // namespace uaii::jinja
