// GBNF parsing and matching: the syntax llama.cpp accepts, its errors, and the language a
// grammar accepts (whole strings, strings split at every byte, partial UTF-8).
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "sampling/grammar.h"

using namespace uaii::sampling;

namespace {

std::shared_ptr<const Grammar> MustParse(const std::string& gbnf) {
  auto g = ParseGbnf(gbnf);
  INFO(gbnf);
  REQUIRE(g.ok());
  return *g;
}

// Accepted as a whole sentence, fed whole and fed one byte at a time.
bool Accepts(const std::shared_ptr<const Grammar>& g, const std::string& s) {
  GrammarMatcher whole(g);
  const bool a = whole.AcceptBytes(s) && whole.IsComplete();
  GrammarMatcher bytewise(g);
  bool ok = true;
  for (char c : s) ok = ok && bytewise.AcceptBytes(std::string(1, c));
  const bool b = ok && bytewise.IsComplete();
  CHECK(a == b);
  return a;
}

std::string ErrorOf(const std::string& gbnf) {
  auto g = ParseGbnf(gbnf);
  REQUIRE_FALSE(g.ok());
  return std::string(g.status().message());
}

}  // namespace

TEST_CASE("grammar: literals, classes, alternatives and groups") {
  auto g = MustParse(R"(root ::= "yes" | "no" | [0-9]+ ( "," [a-c] )*)");
  CHECK(Accepts(g, "yes"));
  CHECK(Accepts(g, "no"));
  CHECK(Accepts(g, "42"));
  CHECK(Accepts(g, "7,a,b,c"));
  CHECK_FALSE(Accepts(g, "ye"));
  CHECK_FALSE(Accepts(g, "7,d"));
  CHECK_FALSE(Accepts(g, ""));
  CHECK_FALSE(Accepts(g, "yess"));
}

TEST_CASE("grammar: repetitions {m}, {m,}, {m,n}, ? and nested rules") {
  auto g = MustParse("root ::= a{2} b{1,3} c{2,} d?\na ::= \"a\"\nb ::= \"b\"\nc ::= \"c\"\nd ::= \"d\"\n");
  CHECK(Accepts(g, "aabcc"));
  CHECK(Accepts(g, "aabbbccccd"));
  CHECK_FALSE(Accepts(g, "abcc"));
  CHECK_FALSE(Accepts(g, "aabbbbcc"));
  CHECK_FALSE(Accepts(g, "aabc"));
  auto zero = MustParse(R"(root ::= "x" "y"{0,2} "z")");
  CHECK(Accepts(zero, "xz"));
  CHECK(Accepts(zero, "xyyz"));
  CHECK_FALSE(Accepts(zero, "xyyyz"));
}

TEST_CASE("grammar: negated classes, any character, escapes and UTF-8") {
  auto g = MustParse(R"(root ::= "\"" [^"\\\n]* "\"" . "\u00e9" [\x41-\x43] "\t")");
  CHECK(Accepts(g, "\"hi there\"!\xc3\xa9" "B\t"));
  CHECK(Accepts(g, "\"\"\xe2\x82\xac\xc3\xa9" "A\t"));  // . matches a 3-byte character
  CHECK_FALSE(Accepts(g, "\"a\nb\"!\xc3\xa9" "A\t"));
  CHECK_FALSE(Accepts(g, "\"\"!e" "A\t"));
  auto cjk = MustParse("root ::= [一-龥]+");
  CHECK(Accepts(cjk, "\xe4\xb8\xad\xe6\x96\x87"));  // 中文
  CHECK_FALSE(Accepts(cjk, "a"));
}

TEST_CASE("grammar: a character split across calls waits — a prefix no range can complete is refused") {
  auto g = MustParse("root ::= \"\xc3\xa9\"");  // é = C3 A9
  GrammarMatcher m(g);
  CHECK(m.AcceptBytes("\xc3"));
  CHECK_FALSE(m.IsComplete());
  CHECK(m.AcceptBytes("\xa9"));
  CHECK(m.IsComplete());
  GrammarMatcher wrong(g);
  CHECK_FALSE(wrong.AcceptBytes("\xc4"));  // U+0100..U+013F cannot be é
  CHECK_FALSE(wrong.AcceptBytes("\xff"));  // never a UTF-8 lead byte
}

TEST_CASE("grammar: comments, newlines inside groups, empty alternatives, redefinition") {
  auto g = MustParse(
      "# a comment\n"
      "root ::= ( \"a\"   # inside\n"
      "   | \"b\" ) opt\n"
      "opt ::= \"x\" | \"\"\n"
      "opt ::= ( \"y\" | )\n");  // a trailing | continues on the next line, as in llama.cpp
  CHECK(Accepts(g, "a"));
  CHECK(Accepts(g, "by"));
  CHECK_FALSE(Accepts(g, "bx"));  // the second definition of opt replaced the first
}

TEST_CASE("grammar: errors name the cause and the place") {
  CHECK_THAT(ErrorOf("root ::= foo"), Catch::Contains("undefined rule 'foo'"));
  CHECK_THAT(ErrorOf("start ::= \"a\""), Catch::Contains("no rule named 'root'"));
  CHECK_THAT(ErrorOf("root ::= root \"a\" | \"b\""), Catch::Contains("left recursion"));
  CHECK_THAT(ErrorOf("root ::= opt root \"a\"\nopt ::= \"x\" | "), Catch::Contains("left recursion"));
  CHECK_THAT(ErrorOf("root ::= \"abc"), Catch::Contains("unterminated literal"));
  CHECK_THAT(ErrorOf("root ::= [abc"), Catch::Contains("unterminated character class"));
  CHECK_THAT(ErrorOf("root ::= ( \"a\" "), Catch::Contains("expecting ')'"));
  CHECK_THAT(ErrorOf("root ::= * \"a\""), Catch::Contains("expecting an item before '*'"));
  CHECK_THAT(ErrorOf("root ::= \"a\"{3,1}"), Catch::Contains("n < m"));
  CHECK_THAT(ErrorOf("root ::= \"a\"{2001}"), Catch::Contains("repetition count 2001 above 2000"));
  CHECK_THAT(ErrorOf("root ::= \"a\"{40}{60}"), Catch::Contains("multiply to 2400 rules"));
  CHECK_THAT(ErrorOf("root ::= \"\\q\""), Catch::Contains("unknown escape"));
  CHECK_THAT(ErrorOf("root = \"a\""), Catch::Contains("expecting ::= at line 1, column 6"));
  CHECK_THAT(ErrorOf("root ::= \"a\"\n  ::= \"b\""), Catch::Contains("line 2"));
  CHECK_THAT(ErrorOf("root ::= <[12]>"), Catch::Contains("token references"));
  CHECK_THAT(ErrorOf("root ::= \"\xff\""), Catch::Contains("invalid UTF-8"));
  CHECK_THAT(ErrorOf("root ::= " + std::string(300, '(') + "\"a\"" + std::string(300, ')')),
             Catch::Contains("nested too deeply"));
  // Repetitions that would expand past the element limit.
  std::string huge = "root ::=";
  for (int i = 0; i < 2100; ++i) huge += " \"a\"{2000}";
  CHECK_THAT(ErrorOf(huge), Catch::Contains("elements after expanding"));
}

TEST_CASE("grammar: llama.cpp's repetition limits") {
  // A group repeated counts the group's rules once: accepted, as in llama.cpp.
  auto g = MustParse("root ::= (\"a\"{40}){50}");
  CHECK(Accepts(g, std::string(2000, 'a')));
  CHECK_FALSE(Accepts(g, std::string(1999, 'a')));
  // An upper bound above 2000 means none.
  auto open = MustParse("root ::= \"b\"{0,5000}");
  CHECK(Accepts(open, std::string(6000, 'b')));
}

TEST_CASE("grammar: a JSON-like recursive grammar") {
  auto g = MustParse(R"(
root   ::= value
value  ::= object | array | string | number | ("true" | "false" | "null")
object ::= "{" ws ( string ":" ws value ("," ws string ":" ws value)* )? "}" ws
array  ::= "[" ws ( value ("," ws value)* )? "]" ws
string ::= "\"" ( [^"\\] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4}) )* "\"" ws
number ::= ("-"? ([0-9] | [1-9] [0-9]*)) ("." [0-9]+)? ([eE] [-+]? [0-9]+)? ws
ws ::= ([ \t\n] ws)?
)");
  CHECK(Accepts(g, R"({"a": [1, 2.5, -3e4, {"b": null}], "c": "x\"y\u00e9"})"));
  CHECK(Accepts(g, "[[[[[]]]]]"));
  CHECK_FALSE(Accepts(g, R"({"a": [1, 2,]})"));
  CHECK_FALSE(Accepts(g, R"({"a" 1})"));
  CHECK_FALSE(Accepts(g, "[[[]]"));
}

TEST_CASE("grammar: an ambiguous grammar is refused with an error, not unbounded memory") {
  // Every "a" doubles the parses: (a | a)* keeps them distinct through rule positions.
  auto g = MustParse("root ::= x*\nx ::= y | z\ny ::= \"a\" w\nz ::= \"a\" w\nw ::= | \"b\" w\n");
  GrammarMatcher m(g);
  for (int i = 0; i < 200 && m.AcceptBytes("a"); ++i) {
  }
  // Either followed within the limit (interning merges equal stacks) or failed naming why.
  if (!m.error().ok()) CHECK_THAT(std::string(m.error().message()), Catch::Contains("ambiguous"));
}
