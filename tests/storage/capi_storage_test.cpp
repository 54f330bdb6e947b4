// The C ABI's memory options work (they were UNSUPPORTED before storage): a preset, a
// RAM budget that forces streaming and a KV window give the default session's text;
// a budget below the minimum is UAII_ERR_OUT_OF_MEMORY naming the minimum.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "uaii.h"

namespace {

std::string TinyModel() {
  const char* dir = std::getenv("UAII_FIXTURE_DIR");
  return std::string(dir ? dir : UAII_FIXTURE_DIR) + "/tiny/tiny-llama-q8_0.gguf";
}

// Greedy text of 24 tokens under `o` (nullptr: the defaults); status of session_create.
uaii_status Generate(uaii_model* m, const uaii_session_options* o, std::string* text) {
  uaii_session* s = nullptr;
  uaii_status st = uaii_session_create(m, o, &s);
  if (st != UAII_OK) return st;
  uaii_generate_options go;
  uaii_generate_options_init(&go);
  go.max_tokens = 24;
  char* out = nullptr;
  st = uaii_session_generate(s, "tok5tok6", &go, nullptr, nullptr, nullptr, &out);
  if (out) *text = out;
  uaii_string_free(out);
  uaii_session_destroy(s);
  return st;
}

}  // namespace

TEST_CASE("capi storage: presets, budgets and KV windows give the default session's tokens", "[storage][capi]") {
  uaii_model* m = nullptr;
  REQUIRE(uaii_model_open(TinyModel().c_str(), nullptr, &m) == UAII_OK);
  std::string ref;
  REQUIRE(Generate(m, nullptr, &ref) == UAII_OK);
  REQUIRE(!ref.empty());
  for (uint32_t preset : {UAII_PRESET_LAPTOP, UAII_PRESET_DESKTOP, UAII_PRESET_SERVER, UAII_PRESET_PHONE}) {
    uaii_session_options o;
    uaii_session_options_init(&o);
    o.preset = preset;
    o.max_context = 256;
    std::string text;
    INFO("preset " << preset);
    REQUIRE(Generate(m, &o, &text) == UAII_OK);
    CHECK(text == ref);
  }
  uaii_session_options o;
  uaii_session_options_init(&o);
  o.max_context = 256;
  o.ram_budget_bytes = 1900 * 1024;  // below the 2 MiB file + KV + activations: layers stream
  o.kv_window = 64;
  std::string text;
  REQUIRE(Generate(m, &o, &text) == UAII_OK);
  CHECK(text == ref);

  o.ram_budget_bytes = 1024;
  CHECK(Generate(m, &o, &text) == UAII_ERR_OUT_OF_MEMORY);
  CHECK_THAT(std::string(uaii_last_error()), Catch::Contains("minimum of"));
  o.ram_budget_bytes = 0;
  o.kv_window = -1;  // the preset's window (0.4: the default, as in C++)
  o.preset = UAII_PRESET_PHONE;
  REQUIRE(Generate(m, &o, &text) == UAII_OK);
  CHECK(text == ref);
  o.kv_window = -2;
  CHECK(Generate(m, &o, &text) == UAII_ERR_INVALID_ARGUMENT);
  uaii_model_destroy(m);
}

TEST_CASE("capi storage: a session that opts in teaches the calibration — by default none does", "[storage][capi]") {
  const std::string home = std::string(UAII_FIXTURE_DIR) + "/capi_learn_home";
  std::filesystem::remove_all(home);
  const char* old = std::getenv("UAII_HOME");
  const std::string saved = old ? old : "";
  ::setenv("UAII_HOME", home.c_str(), 1);
  uaii_model* m = nullptr;
  REQUIRE(uaii_model_open(TinyModel().c_str(), nullptr, &m) == UAII_OK);
  uaii_session_options o;
  uaii_session_options_init(&o);
  CHECK(o.learn_calibration == 0);
  o.max_context = 256;
  o.threads = 1;
  std::string text;
  REQUIRE(Generate(m, &o, &text) == UAII_OK);
  CHECK(!std::filesystem::exists(home + "/calibration.json"));  // off: nothing written
  o.learn_calibration = 1;
  REQUIRE(Generate(m, &o, &text) == UAII_OK);
  std::ifstream in(home + "/calibration.json");
  REQUIRE(in.good());
  std::stringstream doc;
  doc << in.rdbuf();
  // Nothing streamed: the call taught the resident figure, under this model file's key.
  const std::string model_key = std::filesystem::weakly_canonical(TinyModel()).string();
  CHECK_THAT(doc.str(), Catch::Contains("\"observed\"") && Catch::Contains(model_key) &&
                            Catch::Contains("\"resident\"") && Catch::Contains("|threads=1|"));
  uaii_model_destroy(m);
  if (old) ::setenv("UAII_HOME", saved.c_str(), 1);
  else ::unsetenv("UAII_HOME");
  std::filesystem::remove_all(home);
}
