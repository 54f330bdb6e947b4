// Runaway templates stop with a clear error instead of exhausting the machine.
#include <catch2/catch.hpp>

#include "chat/template.h"

using namespace uaii::jinja;

namespace {

absl::Status RenderStatus(const std::string& source, const RenderOptions& opts = {}) {
  auto t = Template::Parse(source);
  if (!t.ok()) return t.status();
  auto out = t->Render(Value::MakeDict(), opts);
  return out.status();
}

}  // namespace

TEST_CASE("endless macro recursion stops at the call depth limit", "[chat]") {
  absl::Status s = RenderStatus("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}");
  REQUIRE(s.code() == absl::StatusCode::kResourceExhausted);
  CHECK(std::string(s.message()).find("call depth limit") != std::string::npos);
}

TEST_CASE("endless recursive loop stops at the call depth limit", "[chat]") {
  absl::Status s = RenderStatus("{% for x in [[1]] recursive %}{{ loop([x]) }}{% endfor %}");
  REQUIRE(s.code() == absl::StatusCode::kResourceExhausted);
  CHECK(std::string(s.message()).find("call depth limit") != std::string::npos);
}

TEST_CASE("huge nested loops stop at the iteration limit", "[chat]") {
  RenderOptions o;
  o.limits.max_loop_iterations = 1'000'000;
  absl::Status s = RenderStatus(
      "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}", o);
  REQUIRE(s.code() == absl::StatusCode::kResourceExhausted);
  CHECK(std::string(s.message()).find("loop iteration limit (1000000") != std::string::npos);
}

TEST_CASE("huge output stops at the output limit", "[chat]") {
  RenderOptions o;
  o.limits.max_output_bytes = 1 << 20;
  absl::Status s = RenderStatus("{% for a in range(100000) %}{{ 'x' * 100 }}{% endfor %}", o);
  REQUIRE(s.code() == absl::StatusCode::kResourceExhausted);
  CHECK(std::string(s.message()).find("output size limit") != std::string::npos);
}

TEST_CASE("a single enormous string repetition is refused before allocating", "[chat]") {
  absl::Status s = RenderStatus("{{ 'x' * 100000000000 }}");
  REQUIRE(s.code() == absl::StatusCode::kResourceExhausted);
}

TEST_CASE("block captures count toward the output limit", "[chat]") {
  RenderOptions o;
  o.limits.max_output_bytes = 1000;
  absl::Status s = RenderStatus("{% set x %}{% for i in range(1000) %}yy{% endfor %}{% endset %}", o);
  REQUIRE(s.code() == absl::StatusCode::kResourceExhausted);
}

TEST_CASE("deeply nested expressions are refused, not a stack overflow", "[chat]") {
  std::string deep(100000, '(');
  absl::Status s = RenderStatus("{{ " + deep + "1" + std::string(100000, ')') + " }}");
  REQUIRE_FALSE(s.ok());
  CHECK(std::string(s.message()).find("nested") != std::string::npos);
}

TEST_CASE("deeply nested blocks are refused, not a stack overflow", "[chat]") {
  std::string src;
  for (int i = 0; i < 50000; ++i) src += "{% if true %}";
  absl::Status s = RenderStatus(src);
  REQUIRE_FALSE(s.ok());
}

TEST_CASE("syntax errors and bad input are statuses", "[chat]") {
  CHECK(RenderStatus("{{ 'unterminated }}").code() == absl::StatusCode::kInvalidArgument);
  CHECK(RenderStatus("{% for %}").code() == absl::StatusCode::kInvalidArgument);
  CHECK(RenderStatus("{{ 99999999999999999999999 }}").code() == absl::StatusCode::kInvalidArgument);
  CHECK(RenderStatus("{{ 9223372036854775807 + 1 }}").code() == absl::StatusCode::kFailedPrecondition);
  CHECK(RenderStatus("{{ 1 // 0 }}").code() == absl::StatusCode::kFailedPrecondition);
  CHECK(RenderStatus("{{ '\\xff\\xfe' | length }}").ok());
}
