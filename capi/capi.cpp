// The C ABI on the public C++ API (include/uaii). Exceptions become uaii_status in
// exactly one place (UAII_CAPI_BODY); an absl status becomes one by its code, which
// the library sets where the error arises (FromStatus); the message goes to the
// thread-local last error.
#include "uaii.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "uaii/calibration.h"
#include "uaii/chat.h"
#include "uaii/drafter.h"
#include "uaii/generation.h"
#include "uaii/grammar.h"
#include "uaii/inspect.h"
#include "uaii/json_writer.h"
#include "uaii/model_locator.h"
#include "uaii/plan.h"
#include "uaii/process_stats.h"
#include "uaii/str_cat.h"
#include "uaii/token_sampler.h"

struct uaii_model {
  std::shared_ptr<const uaii::Model> model;
};

struct uaii_tokenizer {
  std::shared_ptr<const uaii::Model> owner;          // set when it is a model's tokenizer
  std::shared_ptr<const uaii::Tokenizer> standalone; // set when opened alone
  const uaii::Tokenizer* tok = nullptr;
};

struct uaii_sampler {
  std::unique_ptr<uaii::TokenSampler> sampler;
};

struct uaii_session {
  std::shared_ptr<uaii::Generator> generator;
  std::unique_ptr<uaii::ChatEngine> chat;  // created on the first chat turn
  // learn_calibration: the options the session was planned with, to re-plan and fit.
  bool learn_calibration = false;
  uaii::SessionOptions options;
  std::string device;  // what options.device resolved to: uaii_device_stats.device points here
};

namespace {

thread_local std::string g_last_error;

uaii_status Fail(uaii_status code, std::string message) {
  g_last_error = std::move(message);
  return code;
}

uaii_status FromStatus(const absl::Status& s) {
  std::string msg(s.message());
  switch (s.code()) {
    case absl::StatusCode::kOk: return UAII_OK;
    case absl::StatusCode::kNotFound: return Fail(UAII_ERR_NOT_FOUND, msg);
    case absl::StatusCode::kInvalidArgument: return Fail(UAII_ERR_INVALID_ARGUMENT, msg);
    case absl::StatusCode::kUnimplemented: return Fail(UAII_ERR_UNSUPPORTED, msg);
    case absl::StatusCode::kResourceExhausted: return Fail(UAII_ERR_OUT_OF_MEMORY, msg);
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kFailedPrecondition: return Fail(UAII_ERR_INVALID_STATE, msg);
    case absl::StatusCode::kCancelled: return Fail(UAII_ERR_CANCELLED, msg);
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kDataLoss:
    case absl::StatusCode::kUnavailable: return Fail(UAII_ERR_IO, msg);
    default: return Fail(UAII_ERR_INTERNAL, msg);
  }
}

// Reading a model file: the readers report a malformed or inconsistent file as
// InvalidArgument (the file is the argument), which to a C caller is a format problem;
// what uaii does not implement they report as Unimplemented (UAII_ERR_UNSUPPORTED).
uaii_status FromModelStatus(const absl::Status& s) {
  if (s.code() == absl::StatusCode::kInvalidArgument) return Fail(UAII_ERR_INVALID_MODEL, std::string(s.message()));
  return FromStatus(s);
}

// Copies a caller's options struct over the defaults: fields past the caller's
// struct_size (an older, smaller struct) keep their defaults.
template <typename T>
bool ReadOptions(const T* given, T* out) {
  if (given == nullptr) return true;
  if (given->struct_size < sizeof(uint32_t)) return false;
  std::memcpy(out, given, std::min<size_t>(given->struct_size, sizeof(T)));
  out->struct_size = sizeof(T);
  return true;
}

// Hands a result struct to the caller: as much as its struct_size holds (0: all of it),
// so a caller compiled against an older, smaller struct keeps working.
template <typename T>
void WriteResult(const T& r, T* out) {
  const uint32_t size = out->struct_size == 0 ? sizeof(T) : out->struct_size;
  std::memcpy(out, &r, std::min<size_t>(size, sizeof(T)));
  out->struct_size = size;
}

uaii_status CopyOut(const std::string& s, char* buf, size_t cap, size_t* out_len) {
  if (out_len == nullptr) return Fail(UAII_ERR_INVALID_ARGUMENT, "out_len is NULL");
  *out_len = s.size();
  if (buf == nullptr || cap < s.size())
    return Fail(UAII_ERR_BUFFER_TOO_SMALL, uaii::StrCat("buffer of ", cap, " bytes; ", s.size(), " needed"));
  std::memcpy(buf, s.data(), s.size());
  if (cap > s.size()) buf[s.size()] = '\0';
  return UAII_OK;
}

char* NewString(const std::string& s) {
  char* p = static_cast<char*>(std::malloc(s.size() + 1));
  if (p == nullptr) throw std::bad_alloc();
  std::memcpy(p, s.data(), s.size());
  p[s.size()] = '\0';
  return p;
}

}  // namespace

// Every exported body runs inside this: no exception crosses the C boundary.
#define UAII_CAPI_BODY(...)                                                        \
  try {                                                                            \
    g_last_error.clear();                                                          \
    __VA_ARGS__                                                                    \
  } catch (const std::bad_alloc&) {                                                \
    return Fail(UAII_ERR_OUT_OF_MEMORY, "out of memory");                          \
  } catch (const std::exception& e) {                                              \
    return Fail(UAII_ERR_INTERNAL, uaii::StrCat("internal error: ", e.what()));    \
  } catch (...) {                                                                  \
    return Fail(UAII_ERR_INTERNAL, "internal error: unknown exception");           \
  }

#define UAII_REQUIRE_ARG(cond, what) \
  if (!(cond)) return Fail(UAII_ERR_INVALID_ARGUMENT, what)

extern "C" {

uint32_t uaii_capi_version(void) { return UAII_CAPI_VERSION; }
const char* uaii_capi_version_string(void) { return "0.5.0"; }

const char* uaii_status_string(uaii_status status) {
  // A C caller may pass any int; in C++ loading an enum outside its values' range is
  // undefined, so read the argument's bytes as the integer they are.
  int code;
  static_assert(sizeof code == sizeof status);
  std::memcpy(&code, &status, sizeof code);
  switch (code) {
    case UAII_OK: return "ok";
    case UAII_ERR_INVALID_ARGUMENT: return "invalid argument";
    case UAII_ERR_BUFFER_TOO_SMALL: return "buffer too small";
    case UAII_ERR_INVALID_STATE: return "invalid state";
    case UAII_ERR_NOT_FOUND: return "not found";
    case UAII_ERR_IO: return "I/O error";
    case UAII_ERR_OUT_OF_MEMORY: return "out of memory";
    case UAII_ERR_INVALID_MODEL: return "invalid model";
    case UAII_ERR_UNSUPPORTED: return "unsupported";
    case UAII_ERR_BACKEND: return "backend error";
    case UAII_ERR_CANCELLED: return "cancelled";
    case UAII_ERR_INTERNAL: return "internal error";
  }
  return "unknown status";
}

const char* uaii_last_error(void) { return g_last_error.c_str(); }
void uaii_string_free(char* s) { std::free(s); }

/* ---- Model ---- */

void uaii_model_options_init(uaii_model_options* o) {
  if (o == nullptr) return;
  *o = uaii_model_options{};
  o->struct_size = sizeof(*o);
}

uaii_status uaii_model_open(const char* path, const uaii_model_options* options, uaii_model** out_model) {
  UAII_CAPI_BODY({
    UAII_REQUIRE_ARG(out_model != nullptr, "out_model is NULL");
    uaii_model_options o;
    uaii_model_options_init(&o);
    UAII_REQUIRE_ARG(ReadOptions(options, &o), "uaii_model_options.struct_size is too small");
    auto resolved = uaii::ResolveModelPath(path ? path : "");
    if (!resolved.ok()) return FromStatus(resolved.status());
    auto model = uaii::Model::Load(*resolved);
    if (!model.ok()) return FromModelStatus(model.status());
    *out_model = new uaii_model{*std::move(model)};
    return UAII_OK;
  })
}

void uaii_model_destroy(uaii_model* model) { delete model; }

uaii_status uaii_model_inspect_json(const uaii_model* model, char** out_json) {
  UAII_CAPI_BODY({
    UAII_REQUIRE_ARG(model != nullptr && out_json != nullptr, "model or out_json is NULL");
    auto json = uaii::InspectJson(model->model->info().path);  // what `uaii inspect --json` prints
    if (!json.ok()) return FromModelStatus(json.status());
    *out_json = NewString(*json);
    return UAII_OK;
  })
}

uaii_status uaii_model_tokenizer(const uaii_model* model, uaii_tokenizer** out_tokenizer) {
  UAII_CAPI_BODY({
    UAII_REQUIRE_ARG(model != nullptr && out_tokenizer != nullptr, "model or out_tokenizer is NULL");
    auto* t = new uaii_tokenizer;
    t->owner = model->model;
    t->tok = &model->model->tokenizer();
    *out_tokenizer = t;
    return UAII_OK;
  })
}

/* ---- Tokenizer ---- */

uaii_status uaii_tokenizer_open(const char* path, uaii_tokenizer** out_tokenizer) {
  UAII_CAPI_BODY({
    UAII_REQUIRE_ARG(out_tokenizer != nullptr, "out_tokenizer is NULL");
    auto resolved = uaii::ResolveModelPath(path ? path : "");
    if (!resolved.ok()) return FromStatus(resolved.status());
    auto tok = uaii::Tokenizer::Load(*resolved);
    if (!tok.ok()) return FromModelStatus(tok.status());
    auto* t = new uaii_tokenizer;
    t->standalone = std::shared_ptr<const uaii::Tokenizer>(*std::move(tok));
    t->tok = t->standalone.get();
    *out_tokenizer = t;
    return UAII_OK;
  })
}

void uaii_tokenizer_destroy(uaii_tokenizer* tokenizer) { delete tokenizer; }

uaii_status uaii_tokenize(const uaii_tokenizer* tokenizer, const char* text, size_t text_len, uint32_t flags,
                          int32_t* ids, size_t cap, size_t* out_len) {
  UAII_CAPI_BODY({
    UAII_REQUIRE_ARG(tokenizer != nullptr && (text != nullptr || text_len == 0) && out_len != nullptr,
                     "tokenizer, text or out_len is NULL");
    uaii::EncodeOptions eo;
    eo.add_special = (flags & UAII_TOKENIZE_ADD_SPECIAL) != 0;
    eo.parse_special = (flags & UAII_TOKENIZE_PARSE_SPECIAL) != 0;
    auto encoded = tokenizer->tok->Encode(std::string_view(text ? text : "", text_len), eo);
    if (!encoded.ok()) return FromStatus(encoded.status());
    *out_len = encoded->size();
    if (ids == nullptr || cap < encoded->size())
      return Fail(UAII_ERR_BUFFER_TOO_SMALL, uaii::StrCat("room for ", cap, " ids; ", encoded->size(), " needed"));
    std::memcpy(ids, encoded->data(), encoded->size() * sizeof(int32_t));
    return UAII_OK;
  })
}

uaii_status uaii_detokenize(const uaii_tokenizer* tokenizer, const int32_t* ids, size_t n_ids, uint32_t flags,
                            char* buf, size_t cap, size_t* out_len) {
  UAII_CAPI_BODY({
    UAII_REQUIRE_ARG(tokenizer != nullptr && (ids != nullptr || n_ids == 0), "tokenizer or ids is NULL");
    const size_t vocab = tokenizer->tok->vocab_size();
    for (size_t i = 0; i < n_ids; ++i)
      if (ids[i] < 0 || static_cast<size_t>(ids[i]) >= vocab)
        return Fail(UAII_ERR_INVALID_ARGUMENT,
                    uaii::StrCat("token id ", ids[i], " at index ", i, " is outside the vocabulary (", vocab, ")"));
    std::string text = tokenizer->tok->Decode(std::span<const int32_t>(ids, n_ids),
                                              (flags & UAII_DETOKENIZE_SKIP_SPECIAL) != 0);
    return CopyOut(text, buf, cap, out_len);
  })
}

size_t uaii_tokenizer_vocab_size(const uaii_tokenizer* tokenizer) {
  return tokenizer ? tokenizer->tok->vocab_size() : 0;
}

/* ---- Session ---- */

void uaii_session_options_init(uaii_session_options* o) {
  if (o == nullptr) return;
  // The C++ defaults (uaii/session.h), field by field.
  const uaii::SessionOptions d;
  *o = uaii_session_options{};
  o->struct_size = sizeof(*o);
  o->preset = static_cast<uint32_t>(d.preset);
  o->device = "cpu";
  o->threads = d.threads;
  o->ram_budget_bytes = d.ram_budget_bytes;
  o->kv_window = d.kv_window;
  o->max_context = d.max_context;
  o->learn_calibration = 0;
  o->prefill_chunk = d.prefill_chunk;
  o->moe_top_k = d.moe_top_k;
  o->moe_prefetch = d.moe_prefetch ? 1 : 0;
  o->device_memory_bytes = d.device_memory_bytes;
  const uaii::SpeculativeOptions spec;
  o->draft_max = 0;  // n_draft's, or the default
  o->draft_min = spec.draft_min;
  o->draft_p_min = spec.p_min;
  o->draft_rule = UAII_DRAFT_RULE_AUTO;
}

}  // extern "C"

namespace {

static_assert(UAII_PRESET_NONE == static_cast<int>(uaii::Preset::kNone) &&
              UAII_PRESET_LAPTOP == static_cast<int>(uaii::Preset::kLaptop) &&
              UAII_PRESET_DESKTOP == static_cast<int>(uaii::Preset::kDesktop) &&
              UAII_PRESET_SERVER == static_cast<int>(uaii::Preset::kServer) &&
              UAII_PRESET_PHONE == static_cast<int>(uaii::Preset::kPhone),
              "uaii_preset and uaii::Preset are one-to-one");

// The C options as uaii::SessionOptions: the same fields, defaults and meanings; only
// values no C++ caller could give (a negative count, an unknown preset) are checked here.
uaii_status ReadSessionOptions(const uaii_session_options* options, uaii::SessionOptions* so,
                               bool* learn_calibration, uaii::SpeculativeOptions* speculative = nullptr,
                               std::shared_ptr<const uaii::Model> target = nullptr) {
  uaii_session_options o;
  uaii_session_options_init(&o);
  if (!ReadOptions(options, &o)) return Fail(UAII_ERR_INVALID_ARGUMENT, "uaii_session_options.struct_size is too small");
  if (o.preset > UAII_PRESET_PHONE) return Fail(UAII_ERR_INVALID_ARGUMENT, uaii::StrCat("unknown preset ", o.preset));
  if (o.kv_window < -1)
    return Fail(UAII_ERR_INVALID_ARGUMENT, uaii::StrCat("kv_window ", o.kv_window, " is below -1 (the preset's)"));
  if (o.max_context < 0)
    return Fail(UAII_ERR_INVALID_ARGUMENT, uaii::StrCat("max_context ", o.max_context, " is negative"));
  if (o.prefill_chunk < 0)
    return Fail(UAII_ERR_INVALID_ARGUMENT, uaii::StrCat("prefill_chunk ", o.prefill_chunk, " is negative"));
  if (o.moe_top_k < 0) return Fail(UAII_ERR_INVALID_ARGUMENT, uaii::StrCat("moe_top_k ", o.moe_top_k, " is negative"));
  so->threads = o.threads;
  so->max_context = o.max_context;
  so->prefill_chunk = o.prefill_chunk;
  so->device = o.device ? o.device : "cpu";
  so->preset = static_cast<uaii::Preset>(o.preset);
  so->ram_budget_bytes = o.ram_budget_bytes;
  so->kv_window = o.kv_window;
  so->moe_top_k = o.moe_top_k;
  so->moe_prefetch = o.moe_prefetch != 0;
  so->device_memory_bytes = o.device_memory_bytes;
  if (learn_calibration != nullptr) *learn_calibration = o.learn_calibration != 0;
  if (o.n_draft < 0 || o.draft_max < 0)
    return Fail(UAII_ERR_INVALID_ARGUMENT, uaii::StrCat(o.n_draft < 0 ? "n_draft " : "draft_max ",
                                                        o.n_draft < 0 ? o.n_draft : o.draft_max, " is negative"));
  if (o.draft_rule > UAII_DRAFT_RULE_REJECTION)
    return Fail(UAII_ERR_INVALID_ARGUMENT, uaii::StrCat("unknown draft_rule ", o.draft_rule));
  const bool by_path = o.draft_path != nullptr && o.draft_path[0] != '\0';
  if ((o.draft_model != nullptr) + by_path + (o.draft_auto != 0) > 1)
    return Fail(UAII_ERR_INVALID_ARGUMENT, "one drafter at a time: give at most one of draft_model, draft_path and draft_auto");
  if (speculative != nullptr && (o.draft_model != nullptr || by_path || o.draft_auto != 0)) {
    if (o.draft_model != nullptr) speculative->draft = o.draft_model->model;
    if (by_path && target == nullptr)
      return Fail(UAII_ERR_INVALID_ARGUMENT, "draft_path needs the session's model");
    if (by_path && uaii::IsAssistantDrafterFile(o.draft_path)) {
      // The gemma4 assistant: a drafter over the target's cache, not a model.
      auto d = uaii::MakeAssistantDrafter(target, o.draft_path);
      if (!d.ok()) return FromStatus(d.status());
      speculative->drafter = *std::move(d);
    } else if (by_path) {
      auto m = uaii::Model::Load(o.draft_path);
      if (!m.ok()) return FromStatus(m.status());
      speculative->draft = *std::move(m);
    }
    speculative->draft_auto = o.draft_auto != 0;
    // draft_max, else its older alias n_draft, else the default; the range is checked
    // (and named) by uaii::Generator::Create.
    speculative->draft_max = o.draft_max != 0 ? o.draft_max : o.n_draft != 0 ? o.n_draft : uaii::kMaxDraftTokens;
    speculative->draft_min = o.draft_min;
    speculative->p_min = o.draft_p_min;
    speculative->rule = static_cast<uaii::AcceptanceRule>(o.draft_rule);
    speculative->draft_session = *so;  // the same threads and memory settings
  }
  return UAII_OK;
}

}  // namespace

extern "C" {

uaii_status uaii_session_create(const uaii_model* model, const uaii_session_options* options,
                                uaii_session** out_session) {
  UAII_CAPI_BODY({
    UAII_REQUIRE_ARG(model != nullptr && out_session != nullptr, "model or out_session is NULL");
    uaii::SessionOptions so;
    bool learn = false;
    uaii::SpeculativeOptions speculative;
    if (uaii_status st = ReadSessionOptions(options, &so, &learn, &speculative, model->model); st != UAII_OK)
      return st;
    auto gen = uaii::Generator::Create(model->model, so, speculative);
    if (!gen.ok()) return FromStatus(gen.status());
    auto* s = new uaii_session{std::shared_ptr<uaii::Generator>(*std::move(gen)), nullptr, learn, so, {}};
    s->device = s->generator->session().device();
    *out_session = s;
    return UAII_OK;
  })
}

uaii_status uaii_model_plan_json(const uaii_model* model, const uaii_session_options* options, char** out_json) {
  UAII_CAPI_BODY({
    UAII_REQUIRE_ARG(model != nullptr && out_json != nullptr, "model or out_json is NULL");
    uaii::SessionOptions so;
    if (uaii_status st = ReadSessionOptions(options, &so, nullptr); st != UAII_OK) return st;
    auto dry = uaii::PlanDryRun(*model->model, so);
    if (!dry.ok()) return FromStatus(dry.status());
    *out_json = NewString(dry->json);
    return UAII_OK;
  })
}

void uaii_session_destroy(uaii_session* session) { delete session; }

uaii_status uaii_session_reset(uaii_session* session) {
  UAII_CAPI_BODY({
    UAII_REQUIRE_ARG(session != nullptr, "session is NULL");
    session->generator->Reset();
    return UAII_OK;
  })
}

uaii_status uaii_session_device_stats(const uaii_session* session, uaii_device_stats* out_stats) {
  UAII_CAPI_BODY({
    UAII_REQUIRE_ARG(session != nullptr && out_stats != nullptr, "session or out_stats is NULL");
    const uaii::DeviceStats d = session->generator->session().device_stats();
    uaii_device_stats r{};
    r.struct_size = sizeof(r);
    r.device = session->device.c_str();
    r.budget_bytes = d.budget_bytes;
    r.resident_bytes = d.resident_bytes;
    r.host_bytes = d.host_bytes;
    r.staging_bytes = d.staging_bytes;
    r.requantized_weights = d.requantized_weights;
    WriteResult(r, out_stats);
    return UAII_OK;
  })
}

/* ---- Generation ---- */

void uaii_generate_options_init(uaii_generate_options* o) {
  if (o == nullptr) return;
  *o = uaii_generate_options{};
  o->struct_size = sizeof(*o);
  // The C++ defaults (uaii/generation.h, uaii/sampling.h), as the CLI applies them:
  // greedy, and llama.cpp's filters for when a caller turns the temperature up.
  const uaii::GenerationRequest d;
  const uaii::sampling::SamplingParams filters;
  o->max_tokens = static_cast<int32_t>(d.max_tokens);
  o->temperature = d.sampling.temperature;
  o->top_k = filters.top_k;
  o->top_p = filters.top_p;
  o->min_p = filters.min_p;
  o->repeat_penalty = d.sampling.repeat_penalty;
  o->presence_penalty = d.sampling.presence_penalty;
  o->frequency_penalty = d.sampling.frequency_penalty;
  o->seed = d.sampling.seed;
  o->think = -1;
}

namespace {

struct Request {
  int64_t max_tokens;
  uaii::sampling::SamplingParams sampling;
  std::vector<std::string> stop;
  std::optional<bool> think;
  std::string grammar;  // GBNF (a json_schema converted); empty: none
};

uaii_status ReadGenerateOptions(const uaii_generate_options* options, Request* r) {
  uaii_generate_options o;
  uaii_generate_options_init(&o);
  if (!ReadOptions(options, &o))
    return Fail(UAII_ERR_INVALID_ARGUMENT, "uaii_generate_options.struct_size is too small");
  if (o.max_tokens < 0) return Fail(UAII_ERR_INVALID_ARGUMENT, uaii::StrCat("max_tokens ", o.max_tokens, " is negative"));
  if (o.n_stop > 0 && o.stop == nullptr) return Fail(UAII_ERR_INVALID_ARGUMENT, "n_stop > 0 but stop is NULL");
  r->max_tokens = o.max_tokens;
  auto& s = r->sampling;
  s.temperature = o.temperature;
  s.top_k = o.top_k;
  s.top_p = o.top_p;
  s.min_p = o.min_p;
  s.repeat_penalty = o.repeat_penalty;
  s.presence_penalty = o.presence_penalty;
  s.frequency_penalty = o.frequency_penalty;
  s.seed = static_cast<uint32_t>(o.seed);
  for (size_t i = 0; i < o.n_stop; ++i) {
    if (o.stop[i] == nullptr) return Fail(UAII_ERR_INVALID_ARGUMENT, uaii::StrCat("stop[", i, "] is NULL"));
    r->stop.emplace_back(o.stop[i]);
  }
  if (o.think >= 0) r->think = o.think != 0;
  if (auto st = uaii::sampling::ValidateSamplingParams(s); !st.ok()) return FromStatus(st);
  if (o.grammar != nullptr && o.json_schema != nullptr)
    return Fail(UAII_ERR_INVALID_ARGUMENT, "grammar and json_schema exclude each other");
  if (o.json_schema != nullptr) {
    auto g = uaii::JsonSchemaToGrammar(o.json_schema);
    if (!g.ok()) return FromStatus(g.status());
    r->grammar = *std::move(g);
  } else if (o.grammar != nullptr) {
    r->grammar = o.grammar;  // parsed (and refused, before anything runs) by the generator or sampler
  }
  return UAII_OK;
}

static_assert(UAII_MAX_DRAFT_TOKENS == uaii::kMaxDraftTokens &&
              UAII_DRAFT_RULE_AUTO == static_cast<int>(uaii::AcceptanceRule::kAuto) &&
              UAII_DRAFT_RULE_EXACT == static_cast<int>(uaii::AcceptanceRule::kExactMatch) &&
              UAII_DRAFT_RULE_REJECTION == static_cast<int>(uaii::AcceptanceRule::kRejectionSampling),
              "uaii_draft_rule and uaii::AcceptanceRule are one-to-one");

static_assert(UAII_STOP_END_OF_GENERATION == static_cast<int>(uaii::StopReason::kEndOfGeneration) &&
              UAII_STOP_MAX_TOKENS == static_cast<int>(uaii::StopReason::kMaxTokens) &&
              UAII_STOP_STRING == static_cast<int>(uaii::StopReason::kStopString) &&
              UAII_STOP_CANCELLED == static_cast<int>(uaii::StopReason::kCancelled) &&
              UAII_STOP_CONTEXT_FULL == static_cast<int>(uaii::StopReason::kContextFull),
              "uaii_stop_reason and uaii::StopReason are one-to-one");

uaii_generate_result MakeResult(const uaii::GenerationResult& g, int64_t reasoning_tokens) {
  uaii_generate_result r{};
  r.struct_size = sizeof(r);
  r.stop_reason = static_cast<uint32_t>(g.stop);
  r.prompt_tokens = g.prompt_tokens;
  r.completion_tokens = static_cast<int64_t>(g.tokens.size());
  r.cached_tokens = g.cached_tokens;
  r.reasoning_tokens = reasoning_tokens;
  r.prefill_tokens_per_s = g.prefill_tokens_per_s();
  r.decode_tokens_per_s = g.decode_tokens_per_s();
  r.peak_rss_bytes = static_cast<uint64_t>(uaii::PeakRssBytes());
  r.draft_tokens = g.draft_tokens;
  r.draft_accepted_tokens = g.draft_accepted;
  r.draft_acceptance_rate = g.draft_acceptance_rate();
  return r;
}

bool Emit(uaii_event_fn on_event, void* user_data, uaii_event_kind kind, std::string_view text,
          const uaii_generate_result* result = nullptr) {
  if (on_event == nullptr) return true;
  uaii_event ev{};
  ev.struct_size = sizeof(ev);
  ev.kind = kind;
  ev.text = text.data();
  ev.text_len = text.size();
  ev.result = result;
  return on_event(&ev, user_data) == 0;
}

// Hands the result to the caller: out_result (as much as its struct_size holds),
// out_text, and the DONE event.
uaii_status Finish(const uaii_generate_result& r, const std::string& text, uaii_event_fn on_event,
                   void* user_data, uaii_generate_result* out_result, char** out_text) {
  if (out_result != nullptr) WriteResult(r, out_result);
  if (out_text != nullptr) *out_text = NewString(text);
  Emit(on_event, user_data, UAII_EVENT_DONE, {}, &r);
  return UAII_OK;
}

// {"name": ..., "arguments": {...}[, "id": ...]} for UAII_EVENT_TOOL_CALL.
std::string ToolCallJson(const uaii::chat::ToolCall& call) {
  uaii::JsonWriter w;
  w.BeginObject().Key("name").String(call.name).Key("arguments").Raw(call.arguments);
  if (!call.id.empty()) w.Key("id").String(call.id);
  w.EndObject();
  return w.str();
}

// A chat reply's visible text: its Text blocks, in order.
std::string VisibleText(const std::vector<uaii::chat::OutputBlock>& blocks) {
  std::string text;
  for (const auto& b : blocks)
    if (b.kind == uaii::chat::BlockKind::kText) text += b.text;
  return text;
}

// learn_calibration: what this call teaches the storage cost model (the bytes it read
// from the device or the page cache, its decode timings). Best effort: a cache that
// cannot be written is skipped, the call's status is its own.
void LearnFromCall(uaii_session* s, const uaii::StorageStats& before, const uaii::GenerationResult& g) {
  // A speculative call's decode time is the draft's and the batches' too: not a decode
  // step's, so it teaches nothing about one.
  if (!s->learn_calibration || g.draft_tokens > 0) return;
  uaii::StorageStats st = s->generator->session().storage_stats();
  st.direct_bytes -= std::min(st.direct_bytes, before.direct_bytes);
  st.cached_bytes -= std::min(st.cached_bytes, before.cached_bytes);
  uaii::DecodeTimings d;
  d.Add(g.decode_steps, g.decode_seconds, g.decode_io_wait_seconds);
  (void)uaii::LearnFromGeneration(uaii::CacheDir(), s->generator->model().info().path, s->generator->model(),
                                  s->options, st, d);
}

}  // namespace

uaii_status uaii_session_generate(uaii_session* session, const char* prompt, const uaii_generate_options* options,
                                  uaii_event_fn on_event, void* user_data, uaii_generate_result* out_result,
                                  char** out_text) {
  UAII_CAPI_BODY({
    UAII_REQUIRE_ARG(session != nullptr && prompt != nullptr, "session or prompt is NULL");
    Request req;
    if (uaii_status st = ReadGenerateOptions(options, &req); st != UAII_OK) return st;
    const uaii::Tokenizer& tok = session->generator->model().tokenizer();
    auto ids = tok.Encode(prompt, uaii::EncodeOptions{.parse_special = false, .add_special = true});
    if (!ids.ok()) return FromStatus(ids.status());
    uaii::GenerationRequest gr;
    gr.prompt = *std::move(ids);
    gr.max_tokens = req.max_tokens;
    gr.sampling = req.sampling;
    gr.stop = req.stop;
    gr.grammar = req.grammar;
    const uaii::StorageStats before = session->generator->session().storage_stats();
    auto g = session->generator->Run(gr, [&](uaii::TokenId, std::string_view text) {
      return text.empty() || Emit(on_event, user_data, UAII_EVENT_TEXT, text);
    });
    if (!g.ok()) return FromStatus(g.status());
    LearnFromCall(session, before, *g);
    return Finish(MakeResult(*g, 0), g->text, on_event, user_data, out_result, out_text);
  })
}

uaii_status uaii_session_chat(uaii_session* session, const char* messages_json, const char* tools_json,
                              const uaii_generate_options* options, uaii_event_fn on_event, void* user_data,
                              uaii_generate_result* out_result, char** out_text) {
  UAII_CAPI_BODY({
    UAII_REQUIRE_ARG(session != nullptr && messages_json != nullptr, "session or messages_json is NULL");
    Request req;
    if (uaii_status st = ReadGenerateOptions(options, &req); st != UAII_OK) return st;
    if (!session->chat) {
      auto engine = uaii::ChatEngine::Create(session->generator);
      if (!engine.ok()) return FromStatus(engine.status());
      session->chat = *std::move(engine);
    }
    uaii::ChatTurnRequest turn;
    turn.messages_json = messages_json;
    if (tools_json != nullptr) turn.tools_json = std::string(tools_json);
    turn.think = req.think;
    turn.max_tokens = req.max_tokens;
    turn.sampling = req.sampling;
    turn.stop = req.stop;
    turn.grammar = req.grammar;
    const uaii::StorageStats before = session->generator->session().storage_stats();
    auto r = session->chat->Run(turn, [&](const uaii::chat::OutputBlock& b) {
      switch (b.kind) {
        case uaii::chat::BlockKind::kThinking: return Emit(on_event, user_data, UAII_EVENT_THINKING, b.text);
        case uaii::chat::BlockKind::kToolCall: return Emit(on_event, user_data, UAII_EVENT_TOOL_CALL, ToolCallJson(b.call));
        case uaii::chat::BlockKind::kError: return Emit(on_event, user_data, UAII_EVENT_ERROR, b.text);
        case uaii::chat::BlockKind::kText: break;
      }
      return Emit(on_event, user_data, UAII_EVENT_TEXT, b.text);
    });
    if (!r.ok()) return FromStatus(r.status());
    LearnFromCall(session, before, r->generation);
    return Finish(MakeResult(r->generation, r->reasoning_tokens), VisibleText(r->blocks), on_event, user_data,
                  out_result, out_text);
  })
}

/* ---- Token-level control ---- */

size_t uaii_model_n_vocab(const uaii_model* model) {
  return model == nullptr ? 0 : static_cast<size_t>(model->model->info().n_vocab);
}

uaii_status uaii_session_eval(uaii_session* session, const int32_t* tokens, size_t n_tokens, uint32_t flags,
                              float* logits, size_t cap, size_t* out_len) {
  UAII_CAPI_BODY({
    UAII_REQUIRE_ARG(session != nullptr, "session is NULL");
    UAII_REQUIRE_ARG(tokens != nullptr && n_tokens > 0, "no tokens (tokens is NULL or n_tokens is 0)");
    UAII_REQUIRE_ARG((flags & ~uint32_t{UAII_EVAL_ALL_LOGITS}) == 0, uaii::StrCat("unknown eval flags ", flags));
    const bool all = (flags & UAII_EVAL_ALL_LOGITS) != 0;
    const size_t n_vocab = static_cast<size_t>(session->generator->model().info().n_vocab);
    const size_t need = (all ? n_tokens : 1) * n_vocab;
    if (out_len != nullptr) *out_len = need;
    if (logits != nullptr && cap < need)
      return Fail(UAII_ERR_BUFFER_TOO_SMALL, uaii::StrCat("room for ", cap, " floats; ", need, " needed"));
    std::vector<float> out;
    auto st = session->generator->Eval({tokens, n_tokens}, &out, all);
    if (!st.ok()) return FromStatus(st);
    if (logits != nullptr) std::memcpy(logits, out.data(), need * sizeof(float));
    return UAII_OK;
  })
}

int64_t uaii_session_n_past(const uaii_session* session) {
  return session == nullptr ? -1 : session->generator->session().n_past();
}

int64_t uaii_session_max_context(const uaii_session* session) {
  return session == nullptr ? -1 : session->generator->session().max_context();
}

uaii_status uaii_session_truncate(uaii_session* session, int64_t n) {
  UAII_CAPI_BODY({
    UAII_REQUIRE_ARG(session != nullptr, "session is NULL");
    const int64_t n_past = session->generator->session().n_past();
    UAII_REQUIRE_ARG(n >= 0 && n <= n_past, uaii::StrCat("truncate to ", n, ": outside [0, n_past ", n_past, "]"));
    session->generator->Truncate(n);
    return UAII_OK;
  })
}

uaii_status uaii_sampler_create(const uaii_generate_options* options, uaii_sampler** out_sampler) {
  UAII_CAPI_BODY({
    UAII_REQUIRE_ARG(out_sampler != nullptr, "out_sampler is NULL");
    Request req;
    if (uaii_status st = ReadGenerateOptions(options, &req); st != UAII_OK) return st;
    UAII_REQUIRE_ARG(req.grammar.empty(),
                     "a grammar or json_schema needs the vocabulary: use uaii_sampler_create_constrained");
    auto s = uaii::TokenSampler::Create(req.sampling);
    if (!s.ok()) return FromStatus(s.status());
    *out_sampler = new uaii_sampler{*std::move(s)};
    return UAII_OK;
  })
}

uaii_status uaii_sampler_create_constrained(const uaii_tokenizer* vocabulary, const uaii_generate_options* options,
                                            uaii_sampler** out_sampler) {
  UAII_CAPI_BODY({
    UAII_REQUIRE_ARG(vocabulary != nullptr && out_sampler != nullptr, "vocabulary or out_sampler is NULL");
    Request req;
    if (uaii_status st = ReadGenerateOptions(options, &req); st != UAII_OK) return st;
    auto s = uaii::TokenSampler::Create(req.sampling, *vocabulary->tok, req.grammar);
    if (!s.ok()) return FromStatus(s.status());
    *out_sampler = new uaii_sampler{*std::move(s)};
    return UAII_OK;
  })
}

int uaii_sampler_grammar_complete(const uaii_sampler* sampler) {
  return sampler != nullptr && sampler->sampler->grammar_complete() ? 1 : 0;
}

uaii_status uaii_json_schema_to_grammar(const char* schema_json, char** out_gbnf) {
  UAII_CAPI_BODY({
    UAII_REQUIRE_ARG(schema_json != nullptr && out_gbnf != nullptr, "schema_json or out_gbnf is NULL");
    auto g = uaii::JsonSchemaToGrammar(schema_json);
    if (!g.ok()) return FromStatus(g.status());
    *out_gbnf = NewString(*g);
    return UAII_OK;
  })
}

void uaii_sampler_destroy(uaii_sampler* sampler) { delete sampler; }

uaii_status uaii_sampler_sample(uaii_sampler* sampler, const float* logits, size_t n_logits, int32_t* out_token) {
  UAII_CAPI_BODY({
    UAII_REQUIRE_ARG(sampler != nullptr && out_token != nullptr, "sampler or out_token is NULL");
    UAII_REQUIRE_ARG(logits != nullptr && n_logits > 0, "no logits (logits is NULL or n_logits is 0)");
    auto t = sampler->sampler->Sample({logits, n_logits});
    if (!t.ok()) return FromStatus(t.status());
    *out_token = *t;
    return UAII_OK;
  })
}

uaii_status uaii_sampler_accept(uaii_sampler* sampler, int32_t token) {
  UAII_CAPI_BODY({
    UAII_REQUIRE_ARG(sampler != nullptr, "sampler is NULL");
    UAII_REQUIRE_ARG(token >= 0, uaii::StrCat("token id ", token, " is negative"));
    if (absl::Status st = sampler->sampler->Accept(token); !st.ok()) return FromStatus(st);
    return UAII_OK;
  })
}

uaii_status uaii_sampler_reset(uaii_sampler* sampler) {
  UAII_CAPI_BODY({
    UAII_REQUIRE_ARG(sampler != nullptr, "sampler is NULL");
    sampler->sampler->Reset();
    return UAII_OK;
  })
}

uaii_status uaii_session_step(uaii_session* session, uaii_sampler* sampler, int32_t* out_token, uint32_t* out_flags) {
  UAII_CAPI_BODY({
    UAII_REQUIRE_ARG(session != nullptr && sampler != nullptr && out_token != nullptr,
                     "session, sampler or out_token is NULL");
    auto r = session->generator->Step(*sampler->sampler);
    if (!r.ok()) return FromStatus(r.status());
    *out_token = r->token;
    if (out_flags != nullptr)
      *out_flags = (r->end_of_generation ? uint32_t{UAII_STEP_END_OF_GENERATION} : 0u) |
                   (r->context_full ? uint32_t{UAII_STEP_CONTEXT_FULL} : 0u);
    return UAII_OK;
  })
}

}  // extern "C"
