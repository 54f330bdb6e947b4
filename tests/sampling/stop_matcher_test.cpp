// StopMatcher: stop strings split across pieces, overlapping prefixes,
// multibyte UTF-8, several stop strings, none.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "sampling/stop_matcher.h"

using namespace uaii::sampling;

namespace {

struct Outcome {
  std::string emitted;  // everything released, Feed by Feed (and Flush when no stop)
  bool stopped = false;
  int stop_index = -1;
  size_t cut_offset = 0;
  int feeds_after_stop = 0;
};

Outcome Stream(std::vector<std::string> stops, const std::vector<std::string>& pieces) {
  auto m = StopMatcher::Create(std::move(stops));
  REQUIRE(m.ok());
  Outcome o;
  for (const std::string& piece : pieces) {
    if (o.stopped) {
      ++o.feeds_after_stop;
      StopResult r = m->Feed(piece);
      CHECK(r.text.empty());
      CHECK(r.stopped);
      continue;
    }
    StopResult r = m->Feed(piece);
    o.emitted += r.text;
    if (r.stopped) {
      o.stopped = true;
      o.stop_index = r.stop_index;
      o.cut_offset = r.cut_offset;
    }
  }
  if (!o.stopped) o.emitted += m->Flush();
  return o;
}

// Every way to cut `text` into pieces of 1..3 bytes, by a simple pattern.
std::vector<std::string> Chop(const std::string& text, size_t step) {
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size(); i += step) out.push_back(text.substr(i, step));
  return out;
}

}  // namespace

TEST_CASE("No stop strings: text passes through", "[sampling][stop]") {
  Outcome o = Stream({}, {"Hello", ", ", "world"});
  CHECK(o.emitted == "Hello, world");
  CHECK_FALSE(o.stopped);
  auto m = StopMatcher::Create({});
  CHECK(m->Feed("abc").text == "abc");  // nothing is held back
}

TEST_CASE("Empty stop strings are rejected by index", "[sampling][stop]") {
  auto m = StopMatcher::Create({"x", ""});
  REQUIRE_FALSE(m.ok());
  CHECK(std::string(m.status().message()).find("entry 1") != std::string::npos);
}

TEST_CASE("Stop string inside one piece", "[sampling][stop]") {
  Outcome o = Stream({"###"}, {"Answer: 4", "2### ignored", " more"});
  CHECK(o.emitted == "Answer: 42");
  CHECK(o.stopped);
  CHECK(o.stop_index == 0);
  CHECK(o.cut_offset == 10);
  CHECK(o.feeds_after_stop == 1);
}

TEST_CASE("Stop string split across pieces is held back then cut", "[sampling][stop]") {
  auto m = StopMatcher::Create({"</answer>"});
  StopResult r = m->Feed("42</");
  CHECK(r.text == "42");  // "</" could start the stop string
  CHECK(m->pending_size() == 2);
  r = m->Feed("ans");
  CHECK(r.text.empty());
  r = m->Feed("wer>tail");
  CHECK(r.text.empty());
  CHECK(r.stopped);
  CHECK(r.cut_offset == 2);
  // a false alarm is released as soon as it cannot match any more
  auto f = StopMatcher::Create({"</answer>"});
  CHECK(f->Feed("a</an").text == "a");
  CHECK(f->Feed("d").text == "</and");
  CHECK(f->Flush().empty());
}

TEST_CASE("Every chopping of the text gives the same result", "[sampling][stop]") {
  const std::string text = "The result is <|end|> and then more";
  for (size_t step = 1; step <= 7; ++step) {
    Outcome o = Stream({"<|end|>"}, Chop(text, step));
    INFO("step " << step);
    CHECK(o.emitted == "The result is ");
    CHECK(o.cut_offset == 14);
  }
}

TEST_CASE("Overlapping prefixes and self-overlap", "[sampling][stop]") {
  // "aab" after "aaab": a naive matcher that restarts after a mismatch misses it.
  for (size_t step = 1; step <= 4; ++step) {
    Outcome o = Stream({"aab"}, Chop("xaaab!", step));
    INFO("step " << step);
    CHECK(o.emitted == "xa");
    CHECK(o.stopped);
  }
  // stops that are prefixes of each other: the earlier start wins, then list order
  Outcome o = Stream({"abc", "ab"}, {"x", "a", "bc"});
  CHECK(o.emitted == "x");
  CHECK(o.stop_index == 0);  // both start at 1: first in the list
  o = Stream({"bcd", "abx"}, {"a", "b", "c", "d"});
  CHECK(o.emitted == "a");
  CHECK(o.stop_index == 0);
  // a shorter stop inside a held-back prefix of a longer one
  o = Stream({"hello world", "lo"}, {"hel", "l", "o wor"});
  CHECK(o.emitted == "hel");
  CHECK(o.stop_index == 1);
}

TEST_CASE("Several stop strings and the first to appear wins", "[sampling][stop]") {
  Outcome o = Stream({"\n\n", "User:", "###"}, {"Sure.", " User", ":", " hi\n\n"});
  CHECK(o.emitted == "Sure. ");
  CHECK(o.stop_index == 1);
  o = Stream({"\n\n", "User:", "###"}, {"one\n", "\ntwo"});
  CHECK(o.emitted == "one");
  CHECK(o.stop_index == 0);
}

TEST_CASE("Multibyte UTF-8: split stop strings and partial characters", "[sampling][stop]") {
  // "。" is E3 80 82; "終わり" is 9 bytes. Byte-level pieces as byte-fallback tokens give.
  const std::string text = "答えは42。終わり以降";
  for (size_t step = 1; step <= 5; ++step) {
    Outcome o = Stream({"終わり"}, Chop(text, step));
    INFO("step " << step);
    CHECK(o.emitted == "答えは42。");
    CHECK(o.stopped);
  }
  // released text never ends inside a character
  auto m = StopMatcher::Create({"STOP"});
  const std::string e_acute = "\xC3\xA9";  // é
  CHECK(m->Feed("caf\xC3").text == "caf");
  CHECK(m->Feed("\xA9!").text == e_acute + "!");
  const std::string smile = "\xF0\x9F\x98\x80";  // U+1F600, 4 bytes
  CHECK(m->Feed(smile.substr(0, 3)).text.empty());
  CHECK(m->Feed(smile.substr(3)).text == smile);
  // a stop string that starts with a multibyte character, split inside it
  Outcome s = Stream({"€END"}, {"price 5\xE2", "\x82", "\xAC", "E", "ND"});
  CHECK(s.emitted == "price 5");
  // an incomplete character at the end comes out with Flush
  auto f = StopMatcher::Create({"x"});
  CHECK(f->Feed("ab\xE2\x82").text == "ab");
  CHECK(f->Flush() == "\xE2\x82");
}

TEST_CASE("Reset reuses the matcher", "[sampling][stop]") {
  auto m = StopMatcher::Create({"END"});
  CHECK(m->Feed("aEND").stopped);
  CHECK(m->stopped());
  m->Reset();
  CHECK_FALSE(m->stopped());
  StopResult r = m->Feed("xyz");
  CHECK(r.text == "xyz");
  CHECK_FALSE(r.stopped);
}
