// Hostile config.json files next to valid weights (docs/reliability.md, "Hostile
// input"): missing, zero, negative, huge or inconsistent dimensions. Each load fails
// with a message naming the directory and the key or tensor at fault, before anything
// sized by the hostile figure is allocated, and leaves nothing behind.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "uaii/model.h"
#include "uaii/process_stats.h"

namespace fs = std::filesystem;

namespace {

fs::path Fixture() {
  const char* dir = std::getenv("UAII_FIXTURE_DIR");
  return fs::path(dir ? dir : UAII_FIXTURE_DIR) / "hf_tiny" / "llama_f32";
}

std::string Read(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The fixture's config.json with `key`'s value replaced (or the key dropped when
// `value` is empty).
std::string Edit(std::string json, const std::string& key, const std::string& value) {
  const std::regex member("\n *\"" + key + "\": [^,\n]*,?");
  REQUIRE(std::regex_search(json, member));
  return std::regex_replace(json, member, value.empty() ? std::string("") : "\n \"" + key + "\": " + value + ",",
                            std::regex_constants::format_first_only);
}

}  // namespace

TEST_CASE("hostile config.json dimensions are refused by name before allocating", "[runtime][hostile]") {
  const std::string config = Read(Fixture() / "config.json");
  struct Case {
    const char* key;
    const char* value;
    const char* want;
  };
  const Case cases[] = {
      {"hidden_size", "", "hidden_size: missing"},
      {"num_hidden_layers", "", "num_hidden_layers: missing"},
      {"hidden_size", "0", "hidden_size: must be >= 1"},
      {"num_attention_heads", "0", "num_attention_heads: must be >= 1"},
      {"intermediate_size", "-4", "intermediate_size"},
      {"head_dim", "0", "head_dim"},
      {"num_hidden_layers", "1000000000", "num_hidden_layers: 1000000000 is not plausible"},
      {"hidden_size", "1099511627776", "lm_head.weight"},
      {"intermediate_size", "1099511627776", "down_proj.weight"},
      {"num_attention_heads", "2147483648", "o_proj.weight"},
      {"num_hidden_layers", "5", "layer 3"},
      {"num_hidden_layers", "2", "beyond config.json num_hidden_layers 2"},
      {"hidden_size", "128", "lm_head.weight: shape [272, 64], config.json implies [272, 128]"},
      {"num_key_value_heads", "4", "k_proj.weight"},
      {"num_key_value_heads", "3", "num_key_value_heads"},
      {"rms_norm_eps", "-1", "rms_norm_eps"},
      {"rope_theta", "0", "rope_theta: must be > 0"},
      {"hidden_act", "\"mish\"", "hidden_act"},
  };
  const fs::path dir = fs::temp_directory_path() / ("uaii_hf_hostile_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& f : fs::directory_iterator(Fixture())) fs::copy_file(f.path(), dir / f.path().filename());
  // The unedited copy loads: each failure below is the edit's.
  REQUIRE(uaii::Model::Load(dir.string()).ok());
  const int64_t rss_before = uaii::PeakRssBytes();
  for (const auto& c : cases) {
    std::string edited = Edit(config, c.key, c.value);
    INFO(c.key << " = " << (*c.value ? c.value : "(missing)"));
    std::ofstream(dir / "config.json", std::ios::trunc) << edited;
    auto m = uaii::Model::Load(dir.string());
    REQUIRE(!m.ok());
    const std::string msg(m.status().message());
    INFO(msg);
    CHECK(msg.find(dir.filename().string()) != std::string::npos);
    CHECK(msg.find(c.want) != std::string::npos);
  }
  // None of them allocated by the hostile figure (2^40 floats would be 4 TiB).
  CHECK(uaii::PeakRssBytes() < rss_before + (int64_t{256} << 20));
  fs::remove_all(dir);
}
