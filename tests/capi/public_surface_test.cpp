// The public surface seen from both sides: the C ABI's session defaults are the C++
// API's, field by field; the dry run's JSON is one document whether it comes from the
// library (uaii::PlanDryRun), the C ABI (uaii_model_plan_json) or `uaii generate
// --dry-run`; C status codes come from where each error arises (absl codes set at the
// origin), for several kinds of error; the C++ calls the CLI is written on (inspect,
// template rendering, compile) give what the CLI prints.
#include <catch2/catch.hpp>

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "uaii.h"
#include "uaii/chat.h"
#include "uaii/compile.h"
#include "uaii/generation.h"
#include "uaii/inspect.h"
#include "uaii/plan.h"
#include "uaii/session.h"
#include "uaii/stop_reason.h"

namespace {

std::string Fixture(const std::string& rel) {
  const char* dir = std::getenv("UAII_FIXTURE_DIR");
  return std::string(dir ? dir : UAII_FIXTURE_DIR) + "/" + rel;
}
std::string Tiny() { return Fixture("tiny/tiny-llama-f32.gguf"); }

// stdout of a shell command (stderr dropped) and its exit code.
std::pair<int, std::string> Run(const std::string& cmd) {
  std::string out;
  FILE* p = popen((cmd + " 2>/dev/null").c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int st = pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

// A private $UAII_HOME for this process and the commands it runs, so the calibration
// cache the dry runs read is the one they share.
struct ScopedHome {
  std::string dir;
  ScopedHome() {
    dir = (std::filesystem::temp_directory_path() / ("uaii_public_surface_" + std::to_string(::getpid()))).string();
    std::filesystem::create_directories(dir);
    ::setenv("UAII_HOME", dir.c_str(), 1);
  }
  ~ScopedHome() {
    ::unsetenv("UAII_HOME");
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

}  // namespace

TEST_CASE("public surface: the C and C++ session options have the same defaults, field by field", "[capi]") {
  const uaii::SessionOptions cxx;
  uaii_session_options c;
  uaii_session_options_init(&c);
  CHECK(c.struct_size == sizeof(uaii_session_options));
  CHECK(c.preset == static_cast<uint32_t>(cxx.preset));
  CHECK(std::string(c.device) == cxx.device);
  CHECK(c.threads == cxx.threads);
  CHECK(c.ram_budget_bytes == cxx.ram_budget_bytes);
  CHECK(c.kv_window == cxx.kv_window);
  CHECK(c.max_context == cxx.max_context);
  CHECK(c.prefill_chunk == cxx.prefill_chunk);
  CHECK(c.moe_top_k == cxx.moe_top_k);
  CHECK((c.moe_prefetch != 0) == cxx.moe_prefetch);
  CHECK(c.learn_calibration == 0);
  CHECK(c.device_memory_bytes == cxx.device_memory_bytes);
  // And the values themselves, so that a change to both sides is a visible decision.
  CHECK(cxx.preset == uaii::Preset::kNone);
  CHECK(c.preset == UAII_PRESET_NONE);
  CHECK(cxx.device == "cpu");
  CHECK(cxx.device_memory_bytes == 0);  // 90% of the device's largest memory heap
  CHECK(cxx.kv_window == -1);  // the preset's window
  CHECK(cxx.max_context == 0);  // kDefaultMaxContext, or the model's maximum when smaller
  CHECK(uaii::kDefaultMaxContext == 4096);
  CHECK(cxx.prefill_chunk == 512);
  CHECK(cxx.moe_top_k == 0);
  CHECK_FALSE(cxx.moe_prefetch);
  // One preset type: the C enum's values are the C++ enum's, and the CLI's names map to both.
  for (auto [name, c_value] : {std::pair{"none", UAII_PRESET_NONE}, std::pair{"laptop", UAII_PRESET_LAPTOP},
                               std::pair{"desktop", UAII_PRESET_DESKTOP}, std::pair{"server", UAII_PRESET_SERVER},
                               std::pair{"phone", UAII_PRESET_PHONE}}) {
    auto p = uaii::ParsePreset(name);
    REQUIRE(p.ok());
    CHECK(static_cast<int>(*p) == static_cast<int>(c_value));
    CHECK(uaii::PresetName(*p) == name);
  }
  CHECK(*uaii::ParsePreset("off") == uaii::Preset::kNone);
  CHECK_FALSE(uaii::ParsePreset("tablet").ok());
}

TEST_CASE("public surface: the C generate options have the C++ (and CLI) defaults, field by field", "[capi]") {
  const uaii::GenerationRequest cxx;
  const uaii::sampling::SamplingParams filters;  // what a sampled run starts from (`uaii generate --temp T`)
  uaii_generate_options c;
  uaii_generate_options_init(&c);
  CHECK(c.max_tokens == cxx.max_tokens);
  CHECK(c.temperature == cxx.sampling.temperature);
  CHECK(c.top_k == filters.top_k);
  CHECK(c.top_p == filters.top_p);
  CHECK(c.min_p == filters.min_p);
  CHECK(c.repeat_penalty == cxx.sampling.repeat_penalty);
  CHECK(c.presence_penalty == cxx.sampling.presence_penalty);
  CHECK(c.frequency_penalty == cxx.sampling.frequency_penalty);
  CHECK(c.seed == cxx.sampling.seed);
  CHECK(c.seed == uaii::sampling::kDefaultSeed);
  CHECK(c.n_stop == 0);
  CHECK(c.think == -1);
  CHECK(cxx.max_tokens == 256);
  CHECK(cxx.sampling.greedy());
}

TEST_CASE("public surface: the dry run is one document from the library, the C ABI and the CLI", "[capi]") {
  const std::string cli = UAII_BINARY_DIR "/uaii";
  if (!std::filesystem::exists(cli)) {
    WARN("SKIP: " << cli << " is not built");
    return;
  }
  ScopedHome home;
  const std::string cmd = "UAII_HOME='" + home.dir + "' '" + cli + "' generate --model '" + Tiny() +
                          "' --dry-run --preset laptop --max-context 256";
  // The first dry run measures the calibration and caches it; every later one reads it.
  REQUIRE(Run(cmd + " --json").first == 0);
  auto [code, cli_json] = Run(cmd + " --json");
  REQUIRE(code == 0);
  auto [text_code, cli_text] = Run(cmd);
  REQUIRE(text_code == 0);

  auto model = uaii::Model::Load(Tiny());
  REQUIRE(model.ok());
  uaii::SessionOptions so;
  so.preset = uaii::Preset::kLaptop;
  so.max_context = 256;
  auto dry = uaii::PlanDryRun(**model, so);
  REQUIRE(dry.ok());
  CHECK(dry->json + "\n" == cli_json);
  CHECK(dry->text == cli_text);
  CHECK(dry->plan.preset == uaii::Preset::kLaptop);
  CHECK(dry->plan.max_context == 256);
  CHECK(dry->plan.calibrated);
  CHECK(cli_json.find("\"calibration\": {") != std::string::npos);

  uaii_model* m = nullptr;
  REQUIRE(uaii_model_open(Tiny().c_str(), nullptr, &m) == UAII_OK);
  uaii_session_options o;
  uaii_session_options_init(&o);
  o.preset = UAII_PRESET_LAPTOP;
  o.max_context = 256;
  char* json = nullptr;
  REQUIRE(uaii_model_plan_json(m, &o, &json) == UAII_OK);
  CHECK(std::string(json) + "\n" == cli_json);
  uaii_string_free(json);
  CHECK(uaii_model_plan_json(m, &o, nullptr) == UAII_ERR_INVALID_ARGUMENT);
  uaii_model_destroy(m);
}

TEST_CASE("public surface: C status codes come from where each error arises", "[capi]") {
  uaii_model* m = nullptr;
  // Resources.
  CHECK(uaii_model_open("/nonexistent/model.gguf", nullptr, &m) == UAII_ERR_NOT_FOUND);
  // A malformed file is an invalid model; a well-formed one using what uaii lacks is unsupported.
  CHECK(uaii_model_open(Fixture("gguf/corrupt/bad_magic.gguf").c_str(), nullptr, &m) == UAII_ERR_INVALID_MODEL);
  CHECK(uaii_model_open(Fixture("gguf/corrupt/truncated_header.gguf").c_str(), nullptr, &m) ==
        UAII_ERR_INVALID_MODEL);
  CHECK(uaii_model_open(Fixture("gguf/corrupt/version_1.gguf").c_str(), nullptr, &m) == UAII_ERR_UNSUPPORTED);
  CHECK_THAT(std::string(uaii_last_error()), Catch::Contains("unsupported GGUF version 1"));
  CHECK(uaii_model_open(Fixture("gguf/corrupt/big_endian.gguf").c_str(), nullptr, &m) == UAII_ERR_UNSUPPORTED);
  CHECK(m == nullptr);
  {
    const std::string dir = (std::filesystem::temp_directory_path() /
                             ("uaii_unigram_" + std::to_string(::getpid()))).string();
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/tokenizer.json") << R"({"model":{"type":"Unigram","vocab":[]}})";
    uaii_tokenizer* t = nullptr;
    CHECK(uaii_tokenizer_open(dir.c_str(), &t) == UAII_ERR_UNSUPPORTED);
    CHECK_THAT(std::string(uaii_last_error()), Catch::Contains("Unigram"));
    std::filesystem::remove_all(dir);
  }

  REQUIRE(uaii_model_open(Tiny().c_str(), nullptr, &m) == UAII_OK);
  uaii_session_options o;
  uaii_session_options_init(&o);
  o.threads = 1;
  uaii_session* s = nullptr;
  // The engine, not the C layer, knows its devices.
  o.device = "tpu";
  CHECK(uaii_session_create(m, &o, &s) == UAII_ERR_UNSUPPORTED);
  char* json = nullptr;
  CHECK(uaii_model_plan_json(m, &o, &json) == UAII_ERR_UNSUPPORTED);
  CHECK_THAT(std::string(uaii_last_error()), Catch::Contains("tpu"));
  // Caller errors.
  uaii_session_options_init(&o);
  o.kv_window = -2;
  CHECK(uaii_session_create(m, &o, &s) == UAII_ERR_INVALID_ARGUMENT);
  CHECK_THAT(std::string(uaii_last_error()), Catch::Contains("kv_window"));
  uaii_session_options_init(&o);
  o.moe_top_k = -1;
  CHECK(uaii_session_create(m, &o, &s) == UAII_ERR_INVALID_ARGUMENT);
  // State: a prompt longer than the session's context.
  uaii_session_options_init(&o);
  o.threads = 1;
  o.max_context = 8;
  REQUIRE(uaii_session_create(m, &o, &s) == UAII_OK);
  std::string prompt;
  for (int i = 0; i < 20; ++i) prompt += "tok5";
  CHECK(uaii_session_generate(s, prompt.c_str(), nullptr, nullptr, nullptr, nullptr, nullptr) ==
        UAII_ERR_INVALID_STATE);
  CHECK_THAT(std::string(uaii_last_error()), Catch::Contains("context"));
  uaii_session_destroy(s);
  uaii_model_destroy(m);
}

// The C++ calls the CLI is written on give what the CLI prints.
TEST_CASE("public surface: InspectJson / InspectText are what `uaii inspect` prints", "[capi]") {
  const std::string cli = UAII_BINARY_DIR "/uaii";
  if (!std::filesystem::exists(cli)) {
    WARN("SKIP: " << cli << " is not built");
    return;
  }
  for (const std::string& path : {Tiny(), Fixture("hf_tiny/qwen3_f32_sharded")}) {
    INFO(path);
    auto json = uaii::InspectJson(path);
    auto text = uaii::InspectText(path);
    REQUIRE(json.ok());
    REQUIRE(text.ok());
    CHECK(*json + "\n" == Run("'" + cli + "' inspect '" + path + "' --json").second);
    CHECK(*text == Run("'" + cli + "' inspect '" + path + "'").second);
  }
  auto missing = uaii::InspectJson("/nonexistent/model.gguf");
  CHECK(absl::IsNotFound(missing.status()));
  auto old = uaii::InspectText(Fixture("gguf/corrupt/version_1.gguf"));
  CHECK(absl::IsUnimplemented(old.status()));
  auto bad = uaii::InspectText(Fixture("gguf/corrupt/hparam_block_count_zero.gguf"));
  CHECK(absl::IsInvalidArgument(bad.status()));
  CHECK_THAT(std::string(bad.status().message()), Catch::Contains("hparam_block_count_zero.gguf: "));
}

TEST_CASE("public surface: RenderChatTemplate renders as `uaii template` — CheckJsonArray names its input", "[capi]") {
  const std::string cli = UAII_BINARY_DIR "/uaii";
  if (!std::filesystem::exists(cli)) {
    WARN("SKIP: " << cli << " is not built");
    return;
  }
  const std::string model = Fixture("hf_tiny/qwen3_f32_sharded");
  const std::string messages = R"([{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"}])";
  const std::string file =
      (std::filesystem::temp_directory_path() / ("uaii_messages_" + std::to_string(::getpid()) + ".json")).string();
  std::ofstream(file) << messages;
  for (bool think : {false, true}) {
    uaii::ChatRenderRequest r;
    r.messages_json = R"({"messages": )" + messages + "}";  // the object form unwraps
    r.enable_thinking = think;
    auto prompt = uaii::RenderChatTemplate(model, r);
    REQUIRE(prompt.ok());
    CHECK(*prompt == Run("'" + cli + "' template --model '" + model + "' --messages '" + file + "' " +
                         (think ? "--think" : "--no-think")).second);
    CHECK(prompt->find("Be brief.") != std::string::npos);
  }
  uaii::ChatRenderRequest r;
  r.messages_json = R"({"role":"user"})";
  r.messages_origin = "messages file m.json";
  auto bad = uaii::RenderChatTemplate(model, r);
  CHECK(absl::IsInvalidArgument(bad.status()));
  CHECK_THAT(std::string(bad.status().message()), Catch::Contains("messages file m.json: expected a JSON list"));
  std::filesystem::remove(file);

  CHECK(uaii::CheckJsonArray("[1]", "tools file t.json").ok());
  CHECK(uaii::CheckJsonArray("[]", "tools file t.json").ok());
  auto empty = uaii::CheckJsonArray("[]", "messages file m.json", /*non_empty=*/true);
  CHECK_THAT(std::string(empty.message()), Catch::Contains("messages file m.json: expected a non-empty JSON array"));
  CHECK_THAT(std::string(uaii::CheckJsonArray("{}", "tools file t.json").message()),
             Catch::Contains("tools file t.json: expected a JSON array"));
  CHECK_FALSE(uaii::CheckJsonArray("[1,", "x").ok());
}

TEST_CASE("public surface: CompileModel writes the graph file and the plan report `uaii compile` prints", "[capi]") {
  const std::string cli = UAII_BINARY_DIR "/uaii";
  if (!std::filesystem::exists(cli)) {
    WARN("SKIP: " << cli << " is not built");
    return;
  }
  ScopedHome home;  // the plan cache lives under $UAII_HOME too: a fresh one for this test
  const std::string out = home.dir + "/tiny.uaii.json";
  uaii::CompileOptions o;
  o.output = out;
  o.report_plan = true;
  auto r = uaii::CompileModel(Tiny(), o);
  REQUIRE(r.ok());
  CHECK(std::filesystem::exists(out));
  CHECK(r->written_ops > 0);
  CHECK(r->written_tensors > 0);
  CHECK(r->ops > 0);
  CHECK(r->ops <= r->ops_unfused);
  CHECK(r->decode.tokens == 1);
  CHECK(r->prefill.tokens == o.prefill_tokens);
  CHECK(r->decode.peak_activation_bytes > 0);
  CHECK(r->plan_json.find("\"passes\":") != std::string::npos);
  // The text report, but for its timing line, is what the CLI prints.
  auto without_timing = [](std::string s) { return s.substr(0, s.rfind("plan: ")); };
  CHECK(without_timing(r->plan_text) ==
        without_timing(Run("UAII_HOME='" + home.dir + "' '" + cli + "' compile '" + Tiny() + "' --plan").second));
  // The written graph file compiles again (a graph file converts between its forms).
  uaii::CompileOptions again;
  again.output = home.dir + "/tiny.uaii";
  auto r2 = uaii::CompileModel(out, again);
  REQUIRE(r2.ok());
  CHECK(r2->written_ops == r->written_ops);

  uaii::CompileOptions bad_out;
  bad_out.output = home.dir + "/tiny.bin";
  CHECK(absl::IsInvalidArgument(uaii::CompileModel(Tiny(), bad_out).status()));
  CHECK_FALSE(uaii::IsGraphFilePath("tiny.bin"));
  CHECK(uaii::IsGraphFilePath("tiny.uaii.json"));
  // A Hugging Face directory compiles too (its weights as declared views).
  uaii::CompileOptions hf;
  hf.output = home.dir + "/qwen3.uaii";
  auto r3 = uaii::CompileModel(Fixture("hf_tiny/qwen3_f32_sharded"), hf);
  INFO((r3.ok() ? "" : std::string(r3.status().message())));
  REQUIRE(r3.ok());
  CHECK(r3->written_tensors > 0);
}

TEST_CASE("public surface: one stop reason, named as --json names it", "[capi]") {
  CHECK(uaii::StopReasonName(uaii::StopReason::kEndOfGeneration) == "eos");
  CHECK(uaii::StopReasonName(uaii::StopReason::kMaxTokens) == "max_tokens");
  CHECK(uaii::StopReasonName(uaii::StopReason::kStopString) == "stop");
  CHECK(uaii::StopReasonName(uaii::StopReason::kCancelled) == "cancelled");
  CHECK(uaii::StopReasonName(uaii::StopReason::kContextFull) == "context_full");
  CHECK(static_cast<int>(uaii::StopReason::kContextFull) == UAII_STOP_CONTEXT_FULL);
  CHECK(static_cast<int>(uaii::StopReason::kStopString) == UAII_STOP_STRING);
}
