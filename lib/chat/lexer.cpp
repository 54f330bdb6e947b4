#include "chat/lexer.h"

#include <cctype>
#include <cstring>

#include "chat/error.h"
#include "chat/value.h"

namespace uaii::jinja {
namespace {

bool IsWs(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

int CountLines(const std::string& s, size_t from, size_t to) {
  int n = 0;
  for (size_t i = from; i < to && i < s.size(); ++i) n += s[i] == '\n';
  return n;
}

// Python's unicode-escape decoding of a string literal's body (jinja2 lexer).
std::string DecodeStringLiteral(std::string_view body, int line) {
  std::string out;
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c != '\\' || i + 1 >= body.size()) {
      out += c;
      continue;
    }
    char e = body[++i];
    auto hex = [&](size_t n) -> uint32_t {
      uint32_t v = 0;
      for (size_t k = 1; k <= n; ++k) {
        if (i + k >= body.size() || !std::isxdigit(static_cast<unsigned char>(body[i + k])))
          throw JinjaError("TemplateSyntaxError", "truncated \\x/\\u escape in string literal", line);
        char h = body[i + k];
        v = v * 16 + (std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : (std::tolower(h) - 'a' + 10));
      }
      i += n;
      return v;
    };
    switch (e) {
      case '\n': break;
      case '\\': out += '\\'; break;
      case '\'': out += '\''; break;
      case '"': out += '"'; break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'v': out += '\v'; break;
      case 'x': AppendUtf8(out, hex(2)); break;
      case 'u': AppendUtf8(out, hex(4)); break;
      case 'U': AppendUtf8(out, hex(8)); break;
      default:
        if (e >= '0' && e <= '7') {
          uint32_t v = e - '0';
          for (int k = 0; k < 2 && i + 1 < body.size() && body[i + 1] >= '0' && body[i + 1] <= '7'; ++k)
            v = v * 8 + (body[++i] - '0');
          AppendUtf8(out, v);
        } else {
          out += '\\';
          out += e;
        }
    }
  }
  return out;
}

class Lexer {
 public:
  Lexer(std::string src, const LexerOptions& o) : s_(std::move(src)), o_(o) {}

  std::vector<Token> Run() {
    size_t pos = 0;
    bool line_starting = true;
    while (pos < s_.size()) {
      size_t start = FindTagStart(pos);
      if (start == std::string::npos) {
        Emit(Tok::kData, s_.substr(pos), pos);
        break;
      }
      char kind = s_[start + 1];  // '{', '%' or '#'
      char sign = start + 2 < s_.size() && (s_[start + 2] == '-' || s_[start + 2] == '+') ? s_[start + 2] : 0;
      std::string text = s_.substr(pos, start - pos);
      ApplyLeftStrip(text, sign, kind != '{', line_starting);
      if (!text.empty()) Emit(Tok::kData, text, pos);
      size_t body = start + 2 + (sign ? 1 : 0);
      if (kind == '#') {
        pos = SkipComment(body, start);
      } else if (kind == '%' && IsRawBegin(body, &pos)) {
        pos = LexRaw(pos, start);
      } else {
        pos = LexTag(kind == '%', body, start);
      }
      line_starting = pos > 0 && s_[pos - 1] == '\n';
    }
    tokens_.push_back({Tok::kEof, "", line_});
    return std::move(tokens_);
  }

 private:
  size_t FindTagStart(size_t pos) const {
    for (size_t i = s_.find('{', pos); i != std::string::npos; i = s_.find('{', i + 1))
      if (i + 1 < s_.size() && (s_[i + 1] == '{' || s_[i + 1] == '%' || s_[i + 1] == '#')) return i;
    return std::string::npos;
  }

  void Emit(Tok t, std::string text, size_t at) {
    tokens_.push_back({t, std::move(text), LineAt(at)});
  }
  int LineAt(size_t at) {
    line_ += CountLines(s_, line_pos_, at);
    line_pos_ = std::max(line_pos_, at);
    return line_;
  }

  // `{%-` strips all whitespace before the tag; lstrip_blocks strips the
  // indentation before a block or comment tag that starts its line.
  void ApplyLeftStrip(std::string& text, char sign, bool block_or_comment, bool line_starting) const {
    if (sign == '-') {
      size_t e = text.size();
      while (e > 0 && IsWs(text[e - 1])) --e;
      text.resize(e);
    } else if (sign != '+' && o_.lstrip_blocks && block_or_comment) {
      size_t nl = text.rfind('\n');
      size_t l_pos = nl == std::string::npos ? 0 : nl + 1;
      if (l_pos > 0 || line_starting) {
        bool all_ws = l_pos < text.size();
        for (size_t i = l_pos; i < text.size(); ++i) all_ws = all_ws && IsWs(text[i]);
        if (all_ws) text.resize(l_pos);
      }
    }
  }

  // After an end tag: `-` eats all following whitespace; trim_blocks eats one newline.
  size_t AfterEnd(size_t p, char sign, bool trim) const {
    if (sign == '-') {
      while (p < s_.size() && IsWs(s_[p])) ++p;
    } else if (sign != '+' && trim && o_.trim_blocks && p < s_.size() && s_[p] == '\n') {
      ++p;
    }
    return p;
  }

  size_t SkipComment(size_t body, size_t start) {
    size_t q = s_.find("#}", body);
    if (q == std::string::npos) throw JinjaError("TemplateSyntaxError", "Missing end of comment tag", LineAt(start));
    char sign = q > body && (s_[q - 1] == '-' || s_[q - 1] == '+') ? s_[q - 1] : 0;
    return AfterEnd(q + 2, sign, true);
  }

  // `{% raw %}` (with optional -/+ and spaces); sets *after to the end of the tag.
  bool IsRawBegin(size_t p, size_t* after) const {
    while (p < s_.size() && IsWs(s_[p])) ++p;
    if (s_.compare(p, 3, "raw") != 0) return false;
    p += 3;
    while (p < s_.size() && IsWs(s_[p])) ++p;
    if (s_.compare(p, 3, "-%}") == 0) {
      p += 3;
      while (p < s_.size() && IsWs(s_[p])) ++p;
    } else if (s_.compare(p, 2, "%}") == 0) {
      p += 2;
    } else {
      return false;
    }
    *after = p;
    return true;
  }

  size_t LexRaw(size_t pos, size_t start) {
    for (size_t i = s_.find("{%", pos); i != std::string::npos; i = s_.find("{%", i + 1)) {
      size_t p = i + 2;
      char sign = p < s_.size() && (s_[p] == '-' || s_[p] == '+') ? s_[p] : 0;
      if (sign) ++p;
      while (p < s_.size() && IsWs(s_[p])) ++p;
      if (s_.compare(p, 6, "endraw") != 0) continue;
      p += 6;
      while (p < s_.size() && IsWs(s_[p])) ++p;
      char esign = 0;
      if (p < s_.size() && (s_[p] == '-' || s_[p] == '+')) esign = s_[p++];
      if (s_.compare(p, 2, "%}") != 0) continue;
      std::string text = s_.substr(pos, i - pos);
      ApplyLeftStrip(text, sign, true, false);
      if (!text.empty()) Emit(Tok::kData, text, pos);
      return AfterEnd(p + 2, esign, true);
    }
    throw JinjaError("TemplateSyntaxError", "Missing end of raw directive", LineAt(start));
  }

  size_t LexTag(bool block, size_t p, size_t start) {
    Emit(block ? Tok::kBlockBegin : Tok::kVarBegin, "", start);
    std::vector<char> balance;
    const char* end = block ? "%}" : "}}";
    while (true) {
      while (p < s_.size() && IsWs(s_[p])) ++p;
      if (p >= s_.size())
        throw JinjaError("TemplateSyntaxError",
                         std::string("unexpected end of template, expected '") + (block ? "end of statement block" : "end of print statement") + "'",
                         LineAt(start));
      if (balance.empty()) {
        char sign = (s_[p] == '-' || (block && s_[p] == '+')) ? s_[p] : 0;
        if (s_.compare(p + (sign ? 1 : 0), 2, end) == 0) {
          Emit(block ? Tok::kBlockEnd : Tok::kVarEnd, "", p);
          return AfterEnd(p + (sign ? 1 : 0) + 2, sign, block);
        }
      }
      p = LexOne(p, balance);
    }
  }

  size_t LexOne(size_t p, std::vector<char>& balance) {
    char c = s_[p];
    if (std::isdigit(static_cast<unsigned char>(c))) return LexNumber(p);
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t e = p;
      while (e < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[e])) || s_[e] == '_')) ++e;
      Emit(Tok::kName, s_.substr(p, e - p), p);
      return e;
    }
    if (c == '\'' || c == '"') {
      size_t e = p + 1;
      while (e < s_.size() && s_[e] != c) e += s_[e] == '\\' ? 2 : 1;
      if (e >= s_.size()) throw JinjaError("TemplateSyntaxError", "unexpected char '" + std::string(1, c) + "'", LineAt(p));
      Emit(Tok::kString, DecodeStringLiteral(std::string_view(s_).substr(p + 1, e - p - 1), LineAt(p)), p);
      return e + 1;
    }
    static const char* kOps[] = {"//", "**", "==", "!=", ">=", "<=", "+", "-", "/", "*", "%", "~", "[", "]",
                                 "(", ")", "{", "}", "=", "<", ">", ".", ":", "|", ",", ";"};
    for (const char* op : kOps) {
      size_t n = std::strlen(op);
      if (s_.compare(p, n, op) != 0) continue;
      if (n == 1 && (c == '(' || c == '[' || c == '{')) balance.push_back(c == '(' ? ')' : c == '[' ? ']' : '}');
      if (n == 1 && (c == ')' || c == ']' || c == '}')) {
        if (balance.empty()) throw JinjaError("TemplateSyntaxError", std::string("unexpected '") + c + "'", LineAt(p));
        if (balance.back() != c)
          throw JinjaError("TemplateSyntaxError", std::string("unexpected '") + c + "', expected '" + balance.back() + "'", LineAt(p));
        balance.pop_back();
      }
      Emit(Tok::kOp, op, p);
      return p + n;
    }
    throw JinjaError("TemplateSyntaxError", std::string("unexpected char '") + c + "'", LineAt(p));
  }

  size_t LexNumber(size_t p) {
    auto digits = [&](size_t q) {
      while (q < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[q])) || (s_[q] == '_' && q + 1 < s_.size() && std::isdigit(static_cast<unsigned char>(s_[q + 1])))))
        ++q;
      return q;
    };
    size_t e = digits(p);
    bool is_float = false;
    if (e + 1 < s_.size() && s_[e] == '.' && std::isdigit(static_cast<unsigned char>(s_[e + 1]))) {
      e = digits(e + 1);
      is_float = true;
    }
    if (e < s_.size() && (s_[e] == 'e' || s_[e] == 'E')) {
      size_t q = e + 1;
      if (q < s_.size() && (s_[q] == '+' || s_[q] == '-')) ++q;
      if (q < s_.size() && std::isdigit(static_cast<unsigned char>(s_[q]))) {
        e = digits(q);
        is_float = true;
      }
    }
    std::string text;
    for (size_t i = p; i < e; ++i)
      if (s_[i] != '_') text += s_[i];
    Emit(is_float ? Tok::kFloat : Tok::kInt, text, p);
    return e;
  }

  std::string s_;
  LexerOptions o_;
  std::vector<Token> tokens_;
  int line_ = 1;
  size_t line_pos_ = 0;
};

}  // namespace

std::vector<Token> Tokenize(const std::string& source, const LexerOptions& opts) {
  // Newlines (\r\n, \r) become \n everywhere, and one trailing newline is dropped.
  std::string s;
  s.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      s += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      s += source[i];
    }
  }
  if (!opts.keep_trailing_newline && !s.empty() && s.back() == '\n') s.pop_back();
  return Lexer(std::move(s), opts).Run();
}

}  // namespace uaii::jinja
