// Every snippet in tests/chat/jinja_snippets.txt rendered by uaii must equal what
// jinja2 rendered (tests/golden/chat/jinja_snippets.json, made by
// tests/oracles/chat_template_snippets.py), or fail with jinja2's error class
// and message.
#include <catch2/catch.hpp>

#include "chat/template.h"
#include "test_util.h"

using namespace uaii::jinja;
using namespace uaii::jinja::testing;

TEST_CASE("jinja snippets match jinja2 goldens", "[chat]") {
  std::string path = SourceDir() + "/tests/golden/chat/jinja_snippets.json";
  auto golden = ParseJson(ReadFile(path), path);
  REQUIRE(golden.ok());
  const Value* cases = Field(*golden, "cases");
  REQUIRE(cases);
  RenderOptions base;
  base.fixed_time = Field(*golden, "strftime_now_epoch")->as_int();
  int failures = 0;
  for (const Value& c : *cases->list) {
    std::string name = Field(c, "name")->str;
    RenderOptions opts = base;
    opts.immutable = Truthy(*Field(c, "immutable"));
    absl::StatusOr<std::string> out = absl::InternalError("not rendered");
    auto t = Template::Parse(Field(c, "template")->str);
    if (t.ok()) out = t->Render(*Field(c, "context"), opts);
    else out = t.status();
    INFO("case " << name);
    if (const Value* want = Field(c, "output")) {
      INFO("uaii: " << (out.ok() ? *out : std::string(out.status().message())));
      CHECK(out.ok());
      if (out.ok()) CHECK(*out == want->str);
      failures += !out.ok() || *out != want->str;
    } else {
      const Value& err = *Field(c, "error");
      std::string want_err = Field(err, "type")->str + ": " + Field(err, "message")->str;
      INFO("want error: " << want_err);
      INFO("uaii: " << (out.ok() ? "rendered " + *out : std::string(out.status().message())));
      bool ok = !out.ok() && std::string(out.status().message()).rfind(want_err, 0) == 0;
      CHECK(ok);
      failures += !ok;
    }
  }
  INFO(failures << " of " << cases->list->size() << " snippets differ from jinja2");
  CHECK(failures == 0);
}
