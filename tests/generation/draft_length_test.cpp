// DraftLength: the adaptive draft length's schedule.
#include <catch2/catch.hpp>

#include "generation/draft_length.h"

using uaii::DraftLength;

TEST_CASE("draft length: halves on failure, pauses with a growing cool-down, grows back", "[generation]") {
  DraftLength d(0, 16, true);
  for (int want : {16, 8, 4, 2, 1}) {
    REQUIRE(d.Next() == want);
    d.Observe(want, want, 0);
  }
  // Paused for 4 steps, then a probe of 1; a failed probe doubles the pause.
  for (int cooldown : {4, 8, 16}) {
    for (int i = 0; i < cooldown; ++i) REQUIRE(d.Next() == 0);
    REQUIRE(d.Next() == 1);
    d.Observe(1, 1, 0);
  }
  for (int i = 0; i < 32; ++i) REQUIRE(d.Next() == 0);
  REQUIRE(d.Next() == 1);
  d.Observe(1, 1, 1);  // kept: doubling from here
  for (int want : {2, 4, 8, 16, 16}) {
    REQUIRE(d.Next() == want);
    d.Observe(want, want, want);
  }
  d.Observe(16, 16, 5);  // partly kept: what the drafter managed, and one more
  CHECK(d.Next() == 6);
  d.Observe(6, 0, 0);  // nothing proposed counts as a failure
  CHECK(d.Next() == 3);
}

TEST_CASE("draft length: never below draft_min, fixed when not adaptive", "[generation]") {
  DraftLength d(3, 8, true);
  for (int i = 0; i < 10; ++i) d.Observe(d.Next(), 3, 0);
  CHECK(d.Next() == 3);
  DraftLength fixed(0, 5, false);
  for (int i = 0; i < 10; ++i) fixed.Observe(fixed.Next(), 5, 0);
  CHECK(fixed.Next() == 5);
}
