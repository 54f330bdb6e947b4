// DraftLength: the adaptive draft length's schedule.
#include <catch2/catch.hpp>

#include "generation/draft_length.h"

using uaii::DraftLength;

TEST_CASE("draft length: starts at 4, halves on failure, pauses with a growing cool-down, grows back", "[generation]") {
  DraftLength d(0, 16, true);
  for (int want : {4, 2, 1}) {
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
  d.Observe(1, 1, 1);  // kept: doubling from here, up to the maximum
  for (int want : {2, 4, 8, 16, 16}) {
    REQUIRE(d.Next() == want);
    d.Observe(want, want, want);
  }
  d.Observe(16, 16, 5);  // partly kept: what the drafter managed, and one more
  CHECK(d.Next() == 6);
}

TEST_CASE("draft length: steps without proposals count only as a streak", "[generation]") {
  DraftLength d(0, 16, true);
  d.Observe(4, 4, 4);
  REQUIRE(d.Next() == 8);
  // Below p_min now and then (nothing verified, nothing wasted): the length stays.
  for (int i = 0; i < DraftLength::kEmptyStreak - 1; ++i) d.Observe(8, 0, 0);
  CHECK(d.Next() == 8);
  d.Observe(8, 3, 3);  // a proposal ends the streak (every one kept: doubling)
  for (int i = 0; i < DraftLength::kEmptyStreak - 1; ++i) d.Observe(16, 0, 0);
  CHECK(d.Next() == 16);
  d.Observe(16, 0, 0);  // kEmptyStreak in a row: one failure
  CHECK(d.Next() == 8);
  // A probe that proposes nothing has failed at once.
  DraftLength p(0, 1, true);
  for (int i = 0; i < DraftLength::kEmptyStreak; ++i) p.Observe(p.Next(), 0, 0);
  for (int i = 0; i < DraftLength::kFirstCooldown; ++i) REQUIRE(p.Next() == 0);
  REQUIRE(p.Next() == 1);
  p.Observe(1, 0, 0);
  for (int i = 0; i < 2 * DraftLength::kFirstCooldown; ++i) REQUIRE(p.Next() == 0);
  CHECK(p.Next() == 1);
}

TEST_CASE("draft length: never below draft_min, fixed when not adaptive", "[generation]") {
  DraftLength d(3, 8, true);
  CHECK(d.Next() == 4);
  for (int i = 0; i < 10; ++i) d.Observe(d.Next(), 3, 0);
  CHECK(d.Next() == 3);
  DraftLength small(0, 2, true);
  CHECK(small.Next() == 2);  // the start is capped by the maximum
  DraftLength fixed(0, 5, false);
  for (int i = 0; i < 10; ++i) fixed.Observe(fixed.Next(), 5, 0);
  CHECK(fixed.Next() == 5);
}
