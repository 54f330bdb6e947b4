// Where the HF fixtures (tests/fixtures/make_hf_fixtures.py) live.
#pragma once
#include <cstdlib>
#include <string>

namespace uaii::test {

inline std::string FixtureDir() {
  const char* env = std::getenv("UAII_FIXTURE_DIR");
  return env && *env ? env : UAII_FIXTURE_DIR;
}
inline std::string HfFixture(const std::string& rel) { return FixtureDir() + "/hf/" + rel; }

}  // namespace uaii::test
