// JsonSchemaToGbnf against llama.cpp (tests/golden/json_schema_grammar.json, written by
// tests/oracles/json_schema_grammar_oracle.py from llama.cpp's own converter and grammar
// sampler): for every schema, uaii converts exactly when llama.cpp does, to the same
// grammar text, and uaii's grammar (through uaii's GrammarMatcher) accepts exactly the
// instances llama.cpp's accepted; a seeded random corpus by grammar digest. Then the
// errors and the limits against hostile schemas.
#include <filesystem>
#include <memory>
#include <random>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <simdjson.h>

#include "sampling/grammar.h"
#include "sampling/json_schema_grammar.h"
#include "util/sha256.h"
#include "util/str_cat.h"

using uaii::sampling::JsonSchemaLimits;
using uaii::sampling::JsonSchemaToGbnf;

namespace {

std::string ReadGolden() {
  const auto path = std::filesystem::path(UAII_SOURCE_DIR) / "tests" / "golden" / "json_schema_grammar.json";
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Whether `grammar` takes the whole of `text` as one sentence.
bool Accepts(const std::shared_ptr<const uaii::sampling::Grammar>& grammar, std::string_view text) {
  uaii::sampling::GrammarMatcher m(grammar);
  return m.AcceptBytes(text) && m.IsComplete();
}

// The grammar for `schema`, which must convert and (with the engine) parse.
std::string GrammarOf(std::string_view schema) {
  auto g = JsonSchemaToGbnf(schema);
  REQUIRE(g.ok());
  auto parsed = uaii::sampling::ParseGbnf(*g);
  INFO(parsed.status().message());
  CHECK(parsed.ok());
  return *g;
}

// The conversion's error message; fails the test if it converted.
std::string ErrorOf(std::string_view schema) {
  auto g = JsonSchemaToGbnf(schema);
  REQUIRE_FALSE(g.ok());
  CHECK(g.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(g.status().message());
}

}  // namespace

TEST_CASE("json schema grammar: converts as llama.cpp's converter does, grammar for grammar") {
  const std::string text = ReadGolden();
  simdjson::dom::parser parser;
  simdjson::dom::element golden = parser.parse(text);
  CHECK(std::string_view(golden["llama_cpp_python"]) == "0.3.36");
  size_t n_cases = 0;
  size_t n_instances = 0;
  for (simdjson::dom::element c : simdjson::dom::array(golden["cases"])) {
    const std::string name{std::string_view(c["name"])};
    const std::string_view schema(c["schema"]);
    INFO("case " << name << ": " << schema);
    auto got = JsonSchemaToGbnf(schema);
    if (c["error"].error() == simdjson::SUCCESS) {
      INFO("llama.cpp: " << std::string_view(c["error"]));
      CHECK_FALSE(got.ok());
      if (!got.ok()) CHECK(got.status().code() == absl::StatusCode::kInvalidArgument);
    } else {
      REQUIRE(got.ok());
      // The same rules as llama.cpp's, byte for byte (so the same language).
      CHECK(*got == std::string_view(c["gbnf"]));
      // The language itself: uaii's grammar engine on uaii's grammar, instance by instance.
      auto grammar = uaii::sampling::ParseGbnf(*got);
      REQUIRE(grammar.ok());
      for (simdjson::dom::element inst : simdjson::dom::array(c["instances"])) {
        const std::string_view instance(inst["text"]);
        INFO("instance " << instance);
        CHECK(Accepts(*grammar, instance) == bool(inst["accepted"]));
        ++n_instances;
      }
    }
    ++n_cases;
  }
  CHECK(n_cases >= 40);
  CHECK(n_instances >= 400);
}

TEST_CASE("json schema grammar: random schemas convert to llama.cpp's grammar text") {
  const std::string text = ReadGolden();
  simdjson::dom::parser parser;
  simdjson::dom::element golden = parser.parse(text);
  size_t n = 0;
  for (simdjson::dom::element c : simdjson::dom::array(golden["random_cases"])) {
    const std::string_view schema(c["schema"]);
    INFO("schema " << schema);
    auto got = JsonSchemaToGbnf(schema);
    if (c["error"].error() == simdjson::SUCCESS) {
      CHECK_FALSE(got.ok());
    } else {
      REQUIRE(got.ok());
      CHECK(uaii::Sha256Hex(*got) == std::string_view(c["gbnf_sha256"]));
    }
    ++n;
  }
  CHECK(n >= 500);
}

TEST_CASE("json schema grammar: mutated schemas convert or fail cleanly") {
  // Every golden schema cut, spliced and sprinkled with JSON punctuation: the result is a
  // grammar or InvalidArgument, never a crash (run under the sanitizer builds too).
  const std::string text = ReadGolden();
  simdjson::dom::parser parser;
  simdjson::dom::element golden = parser.parse(text);
  std::mt19937 rng(28);
  const std::string_view punct = "{}[]\":,0-1e\\ ";
  size_t n_ok = 0, n_failed = 0;
  for (simdjson::dom::element c : simdjson::dom::array(golden["cases"])) {
    const std::string schema{std::string_view(c["schema"])};
    for (int round = 0; round < 30; ++round) {
      std::string m = schema;
      for (int edits = 1 + rng() % 3; edits > 0 && !m.empty(); --edits) {
        const size_t at = rng() % m.size(), len = 1 + rng() % 8;
        switch (rng() % 3) {
          case 0: m.erase(at, len); break;
          case 1: m.insert(at, m.substr(rng() % m.size(), len)); break;
          default: m.insert(m.begin() + at, punct[rng() % punct.size()]);
        }
      }
      auto g = JsonSchemaToGbnf(m);
      if (g.ok()) {
        ++n_ok;
        (void)uaii::sampling::ParseGbnf(*g);  // may refuse (left recursion), must not crash
      } else {
        INFO(m);
        CHECK(g.status().code() == absl::StatusCode::kInvalidArgument);
        ++n_failed;
      }
    }
  }
  CHECK(n_ok > 100);
  CHECK(n_failed > 100);
}

TEST_CASE("json schema grammar: errors name their cause") {
  CHECK_THAT(ErrorOf(R"({"type": "string",)"), Catch::Contains("invalid JSON"));
  CHECK_THAT(ErrorOf(R"({"type": "string"} x)"), Catch::Contains("invalid JSON"));
  CHECK_THAT(ErrorOf("true"), Catch::Contains("schema must be an object"));
  CHECK_THAT(ErrorOf(R"({"type": "color"})"), Catch::Contains("unrecognized type color"));
  CHECK_THAT(ErrorOf(R"({"properties": {"a": {"type": 5}}})"), Catch::Contains("#/properties/a") && Catch::Contains("type must be"));
  CHECK_THAT(ErrorOf(R"({"$ref": "#/$defs/missing"})"), Catch::Contains("cannot resolve $ref #/$defs/missing"));
  CHECK_THAT(ErrorOf(R"({"$ref": "https://example.com/s.json"})"), Catch::Contains("unsupported $ref"));
  CHECK_THAT(ErrorOf(R"({"$ref": "#"})"), Catch::Contains("unsupported $ref #"));
  CHECK_THAT(ErrorOf(R"({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"})"),
             Catch::Contains("$ref cycle"));
  CHECK_THAT(ErrorOf(R"({"$defs": {"a": {"$ref": "#/$defs/a"}}, "allOf": [{"$ref": "#/$defs/a"}]})"), Catch::Contains("$ref cycle"));
  CHECK_THAT(ErrorOf(R"({"type": "string", "pattern": "^(ab$"})"), Catch::Contains("invalid pattern ^(ab$: unbalanced parentheses"));
  CHECK_THAT(ErrorOf(R"({"type": "string", "pattern": "^[ab$"})"), Catch::Contains("unterminated character class"));
  CHECK_THAT(ErrorOf(R"({"type": "string", "pattern": "^*a$"})"), Catch::Contains("nothing to repeat"));
  CHECK_THAT(ErrorOf(R"({"type": "string", "pattern": "^a\\$"})"), Catch::Contains("trailing backslash"));
  CHECK_THAT(ErrorOf(R"({"type": "array", "minItems": -1})"), Catch::Contains("minItems must be a non-negative integer"));
  CHECK_THAT(ErrorOf(R"({"type": "integer", "minimum": "3"})"), Catch::Contains("minimum must be a number"));
  CHECK_THAT(ErrorOf(R"({"enum": []})"), Catch::Contains("enum must be a non-empty array"));
  CHECK_THAT(ErrorOf(R"({"type": "string", "pattern": "^a{-1}$"})"), Catch::Contains("negative repetition count"));
}

TEST_CASE("json schema grammar: hostile schemas give a clear error or a bounded grammar") {
  SECTION("deep nesting") {
    std::string deep;
    for (int i = 0; i < 5000; ++i) deep += R"({"type": "array", "items": )";
    deep += "{}";
    for (int i = 0; i < 5000; ++i) deep += "}";
    // simdjson's own depth limit (1024) or ours (kMaxDepth): an error either way, no overflow
    CHECK_FALSE(JsonSchemaToGbnf(deep).ok());
    std::string nested;
    for (int i = 0; i < 200; ++i) nested += R"({"type": "array", "items": )";
    nested += "{}";
    for (int i = 0; i < 200; ++i) nested += "}";
    CHECK_THAT(ErrorOf(nested), Catch::Contains("nest deeper than the limit of 128"));
  }
  SECTION("a long $ref chain") {
    std::string defs = R"({"$defs": {)";
    for (int i = 0; i < 300; ++i) defs += uaii::StrCat("\"d", i, R"(": {"type": "array", "items": {"$ref": "#/$defs/d)", i + 1, "\"}},");
    defs += R"("d300": {"type": "null"}}, "$ref": "#/$defs/d0"})";
    CHECK_THAT(ErrorOf(defs), Catch::Contains("nest deeper"));
  }
  SECTION("recursive $ref is a recursive rule, not an endless expansion") {
    const std::string g = GrammarOf(
        R"({"$defs": {"n": {"type": "object", "properties": {"k": {"type": "array", "items": {"$ref": "#/$defs/n"}}}}}, "$ref": "#/$defs/n"})");
    CHECK(g.size() < 2000);
  }
  SECTION("huge repetition counts") {
    CHECK_THAT(ErrorOf(R"({"type": "array", "minItems": 1000000000})"), Catch::Contains("minItems exceeds the limit of 10000"));
    CHECK_THAT(ErrorOf(R"({"type": "array", "maxItems": 18446744073709551615})"), Catch::Contains("maxItems exceeds the limit"));
    CHECK_THAT(ErrorOf(R"({"type": "string", "maxLength": 2147483647})"), Catch::Contains("maxLength exceeds the limit"));
    CHECK_THAT(ErrorOf(R"({"type": "string", "pattern": "^a{0,100000}$"})"), Catch::Contains("exceeds the limit of 10000"));
    const std::string g = GrammarOf(R"({"type": "array", "items": {"type": "string", "maxLength": 10000}, "maxItems": 10000})");
    CHECK(g.size() < 1000);  // counts in the text, not 10000 copies
  }
  SECTION("integer bounds beyond the limit") {
    CHECK_THAT(ErrorOf(R"({"type": "integer", "minimum": -9223372036854775808})"), Catch::Contains("minimum is beyond the limit"));
    CHECK_THAT(ErrorOf(R"({"type": "integer", "exclusiveMaximum": 1e300})"), Catch::Contains("exclusiveMaximum is beyond the limit"));
    GrammarOf(R"({"type": "integer", "minimum": -1000000000000000000, "maximum": 1000000000000000000})");
  }
  SECTION("many properties: linear, not quadratic") {
    std::string props = R"({"type": "object", "properties": {)";
    for (int i = 0; i < 3000; ++i) props += uaii::StrCat(i ? "," : "", "\"p", i, R"(": {"type": "integer"})");
    props += "}}";
    CHECK(GrammarOf(props).size() < 1'000'000);
  }
  SECTION("an oversized schema") {
    std::string big(JsonSchemaLimits::kMaxSchemaBytes + 1, ' ');
    CHECK_THAT(ErrorOf(big), Catch::Contains("exceeds the limit"));
  }
}
