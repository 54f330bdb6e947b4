/*
 * uaii-capi: the stable C ABI of libuaii.
 *
 * Self-contained C99 (also valid C++). Everything not in this header is not API.
 *
 * Rules that hold for every function:
 *  - Handles are opaque; `uaii_<object>_destroy` accepts NULL.
 *  - Functions return a uaii_status; on failure the thread-local message from
 *    uaii_last_error() names the cause, and out-parameters are left unchanged
 *    (handles stay in their state before the call).
 *  - Options structs start with `struct_size` and are filled by
 *    `uaii_<x>_options_init()`. Callers compiled against an older, smaller struct
 *    keep working: fields past their struct_size take their defaults. New fields are
 *    only ever appended.
 *  - Caller buffers follow one rule: (buf, cap, out_len). On success *out_len is the
 *    number of elements written (strings: bytes, without the terminating NUL, which is
 *    written when it fits). When cap is too small the function returns
 *    UAII_ERR_BUFFER_TOO_SMALL and *out_len holds the size needed.
 *  - Strings the library allocates are returned as `char*` and freed by the caller
 *    with uaii_string_free().
 *  - Callbacks take `user_data` as their last argument.
 *
 * Thread safety: a model (and its tokenizer) may be shared by any number of threads;
 * a session belongs to one thread at a time. uaii_last_error() is per thread.
 *
 * Versions (docs/c_api.md, "Versions"): a minor version only appends (functions, enum
 * values, fields at the end of options structs); the soname libuaii.so.0 stays while
 * the major version is 0.
 *   0.4  uaii_model_plan_json (the dry run's plan as JSON); uaii_session_options gains
 *        learn_calibration (appended to 0.3.0 builds without a version bump),
 *        prefill_chunk, moe_top_k and moe_prefetch, and takes the C++ API's meanings:
 *        kv_window -1 (the new default) is the preset's window, 0 unbounded;
 *        max_context 0 (the default) means 4096 or the model's training context when
 *        smaller, and more than the training context fails (UAII_ERR_INVALID_ARGUMENT,
 *        "context_length N exceeds the model maximum M"); device is checked by the
 *        engine (UAII_ERR_UNSUPPORTED for a device it lacks); uaii_generate_options' seed
 *        defaults to 42, the CLI's and C++'s (was 0xC0FFEE). Status codes come from
 *        where each error arises: a file uaii cannot read because it lacks a feature
 *        (a GGUF version, a tensor type, a tokenizer component) is UAII_ERR_UNSUPPORTED,
 *        a malformed one UAII_ERR_INVALID_MODEL. The device budget:
 *        uaii_session_options.device_memory_bytes and uaii_session_device_stats.
 */
#ifndef UAII_CAPI_H_
#define UAII_CAPI_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define UAII_API __attribute__((visibility("default")))
#else
#define UAII_API
#endif

/* ---- Version ------------------------------------------------------------- */

#define UAII_CAPI_VERSION_MAJOR 0
#define UAII_CAPI_VERSION_MINOR 5
#define UAII_CAPI_VERSION_PATCH 0
/* major * 10000 + minor * 100 + patch: 500 for 0.5.0 */
#define UAII_CAPI_VERSION \
  (UAII_CAPI_VERSION_MAJOR * 10000 + UAII_CAPI_VERSION_MINOR * 100 + UAII_CAPI_VERSION_PATCH)

/* The library's ABI version, encoded as UAII_CAPI_VERSION. SDKs compare the major and
 * minor numbers with the header they were built against. */
UAII_API uint32_t uaii_capi_version(void);
/* "0.5.0". Static storage. */
UAII_API const char* uaii_capi_version_string(void);

/* ---- Status -------------------------------------------------------------- */

typedef enum uaii_status {
  UAII_OK = 0,
  /* caller errors */
  UAII_ERR_INVALID_ARGUMENT = 100, /* a NULL handle, a bad option value, bad UTF-8 */
  UAII_ERR_BUFFER_TOO_SMALL = 101, /* *out_len holds the size needed */
  UAII_ERR_INVALID_STATE = 102,    /* e.g. the session is full */
  /* resources */
  UAII_ERR_NOT_FOUND = 200,        /* a file or directory that does not exist */
  UAII_ERR_IO = 201,               /* a read failed */
  UAII_ERR_OUT_OF_MEMORY = 202,    /* including a memory budget that cannot hold the minimum */
  /* formats */
  UAII_ERR_INVALID_MODEL = 300,    /* malformed or inconsistent model file */
  UAII_ERR_UNSUPPORTED = 301,      /* an architecture, dtype or feature uaii lacks */
  /* backends */
  UAII_ERR_BACKEND = 400,          /* a device could not run the model */
  /* flow */
  UAII_ERR_CANCELLED = 500,        /* a callback asked to stop */
  UAII_ERR_INTERNAL = 900
} uaii_status;

/* A fixed English name for the code ("invalid argument"). Static storage. */
UAII_API const char* uaii_status_string(uaii_status status);
/* The message of the last failed call on this thread ("" if none). Valid until the
 * next uaii_* call on this thread. */
UAII_API const char* uaii_last_error(void);

/* Frees a string returned by the library. NULL is allowed. */
UAII_API void uaii_string_free(char* s);

/* ---- Handles ------------------------------------------------------------- */

typedef struct uaii_model uaii_model;
typedef struct uaii_tokenizer uaii_tokenizer;
typedef struct uaii_session uaii_session;

/* ---- Model --------------------------------------------------------------- */

typedef struct uaii_model_options {
  uint32_t struct_size; /* sizeof(uaii_model_options) as the caller knows it */
  uint32_t reserved;    /* 0 */
} uaii_model_options;

UAII_API void uaii_model_options_init(uaii_model_options* options);

/* Opens a model: a GGUF file (a Hugging Face directory where supported). NULL path:
 * $UAII_MODEL, then the default model in the cache. `options` may be NULL. */
UAII_API uaii_status uaii_model_open(const char* path, const uaii_model_options* options,
                                     uaii_model** out_model);
UAII_API void uaii_model_destroy(uaii_model* model);

/* The `uaii inspect --json` document of the model (docs/json/inspect.schema.json).
 * *out_json is owned by the caller: free it with uaii_string_free(). */
UAII_API uaii_status uaii_model_inspect_json(const uaii_model* model, char** out_json);

/* The model's tokenizer as a handle of its own (it keeps the model alive); destroy it
 * with uaii_tokenizer_destroy(). */
UAII_API uaii_status uaii_model_tokenizer(const uaii_model* model, uaii_tokenizer** out_tokenizer);

/* ---- Tokenizer ----------------------------------------------------------- */

/* A tokenizer alone: a GGUF file or a directory holding tokenizer files. */
UAII_API uaii_status uaii_tokenizer_open(const char* path, uaii_tokenizer** out_tokenizer);
UAII_API void uaii_tokenizer_destroy(uaii_tokenizer* tokenizer);

enum {
  UAII_TOKENIZE_ADD_SPECIAL = 1u << 0,   /* BOS/EOS as the tokenizer's configuration says */
  UAII_TOKENIZE_PARSE_SPECIAL = 1u << 1  /* recognise control tokens written in the text */
};
enum {
  UAII_DETOKENIZE_SKIP_SPECIAL = 1u << 0 /* leave control tokens out of the text */
};

/* text[0..text_len) (UTF-8) -> ids. Buffer rule as above. */
UAII_API uaii_status uaii_tokenize(const uaii_tokenizer* tokenizer, const char* text,
                                   size_t text_len, uint32_t flags, int32_t* ids, size_t cap,
                                   size_t* out_len);
/* ids -> bytes (may split a UTF-8 character when the ids do). Buffer rule as above. */
UAII_API uaii_status uaii_detokenize(const uaii_tokenizer* tokenizer, const int32_t* ids,
                                     size_t n_ids, uint32_t flags, char* buf, size_t cap,
                                     size_t* out_len);
UAII_API size_t uaii_tokenizer_vocab_size(const uaii_tokenizer* tokenizer);

/* ---- Session ------------------------------------------------------------- */

typedef enum uaii_preset {
  UAII_PRESET_NONE = 0, /* no budget, everything resident (the C ABI's default) */
  UAII_PRESET_LAPTOP = 1,
  UAII_PRESET_DESKTOP = 2,
  UAII_PRESET_SERVER = 3,
  UAII_PRESET_PHONE = 4
} uaii_preset;

/* The fields, defaults and meanings of the C++ API's uaii::SessionOptions
 * (include/uaii/session.h); uaii_session_options_init() fills its defaults. */
typedef struct uaii_session_options {
  uint32_t struct_size;
  uint32_t preset;           /* uaii_preset; default UAII_PRESET_NONE */
  const char* device;        /* "cpu" (default), "vulkan[:N]", "auto" (the first GPU backend reporting a real
                                device, else the CPU) or a backend's device name */
  int32_t threads;           /* <= 0: physical cores (default 0) */
  uint32_t reserved;         /* 0 */
  uint64_t ram_budget_bytes; /* 0: the preset's (default) */
  int64_t kv_window;         /* resident KV positions: -1 the preset's window (default; unbounded
                                for UAII_PRESET_NONE), 0 unbounded up to max_context, n > 0 n
                                positions (plus attention sinks) */
  int64_t max_context;       /* KV cache positions; 0 (default): 4096, or the model's training
                                context when smaller; more than the training context is
                                UAII_ERR_INVALID_ARGUMENT */
  /* Added in 0.4 (it first shipped, unversioned, in late 0.3.0 builds; a caller's smaller
   * struct_size leaves it 0, off). 1: after each
   * uaii_session_generate / uaii_session_chat call with two or more tokens, fold what
   * the call measured (decode time, its wait for streamed weights) into the storage
   * cost model's calibration, $UAII_HOME/calibration.json (default ~/.cache/uaii), as
   * `uaii generate` does: later dry runs of this model predict from it (docs/storage.md,
   * "Observed figures"). Writes a file; never fails the call (an unwritable cache is
   * skipped). Default 0. */
  uint32_t learn_calibration;
  uint32_t reserved2;        /* 0 */
  /* Appended in 0.4.0 (a caller's smaller struct_size leaves them their defaults). */
  int64_t prefill_chunk;     /* tokens per forward pass during prefill; default 512, 0 also 512 */
  int64_t moe_top_k;         /* mixture-of-experts models (docs/moe.md): experts per token; 0 the
                                file's expert_used_count (default, exact), k > 0 min(k, file's),
                                an explicit approximation */
  uint32_t moe_prefetch;     /* 1: under a budget, read ahead the experts the next layer chose for
                                the previous token (results do not change). Default 0 */
  uint32_t reserved3;        /* 0 */
  /* 0.4: speculative decoding (docs/speculative.md). A model with the same vocabulary
   * proposes up to draft_max tokens per step; the session's model evaluates them in one
   * batch and the acceptance rule (draft_rule) keeps a prefix of them. Greedy replies are
   * the same tokens as without a draft. NULL: none (default). The session keeps its own
   * reference to the draft model. */
  const uaii_model* draft_model;
  int32_t n_draft;           /* alias of draft_max (older callers): used when draft_max is 0; 0..16 */
  uint32_t reserved4;        /* 0 */
  /* Appended in 0.4 (a caller's smaller struct_size leaves it 0, the default). A GPU
   * device's memory for the weights, in bytes, a budget like ram_budget_bytes: 0 is 90% of
   * the device's largest memory heap. Weights past it stay in host memory the device reads
   * across the bus: slower, never a failure, the same logits (docs/backends.md, "The
   * device budget"; the CLI's --vram-gb). No effect on "cpu". uaii_session_device_stats
   * reports the placement. */
  uint64_t device_memory_bytes;
  /* Appended in 0.4 (a caller's smaller struct_size leaves them their defaults): the
   * speculative-decoding knobs, llama.cpp's --draft-max, --draft-min, --draft-p-min. */
  int32_t draft_max;         /* proposals per verification, 1..16 (UAII_MAX_DRAFT_TOKENS); 0: n_draft,
                                or 16 when that is 0 too (default) */
  int32_t draft_min;         /* drafts shorter than this are not verified; 0..draft_max, default 0 */
  float draft_p_min;         /* stop proposing when the drafter's top probability is below; [0, 1],
                                default 0.75 */
  uint32_t draft_auto;       /* 1: the model's own in-trunk multi-token-prediction head drafts (instead
                                of draft_model); no architecture has one yet, so session creation
                                fails with UAII_ERR_INVALID_ARGUMENT naming it. Default 0 */
  uint32_t draft_rule;       /* uaii_draft_rule; default UAII_DRAFT_RULE_AUTO */
  uint32_t reserved5;        /* 0 */
  /* Appended in 0.5 (a caller's smaller struct_size leaves it NULL): the drafter as a
   * file. A gemma4-assistant GGUF drafts for this session's gemma4 model: it reads the
   * model's KV cache and hidden state, so it is no model of its own and cannot be a
   * uaii_model. Any other model file is loaded and drafts as draft_model does. NULL or
   * "": none (default). At most one of draft_model, draft_path and draft_auto; the
   * knobs above apply to it. Read during uaii_session_create only. */
  const char* draft_path;
} uaii_session_options;

/* The most proposals one verification batch holds (with the pending token: 17 rows). */
#define UAII_MAX_DRAFT_TOKENS 16

/* Which proposals a speculative step keeps (docs/speculative.md, "Acceptance rules"). */
typedef enum uaii_draft_rule {
  UAII_DRAFT_RULE_AUTO = 0,      /* exact match for greedy requests and grammars, else rejection sampling */
  UAII_DRAFT_RULE_EXACT = 1,     /* the sampler picks every token: the same reply as without a draft */
  UAII_DRAFT_RULE_REJECTION = 2  /* Leviathan et al.: accept with min(1, p/q), resample from max(0, p - q) */
} uaii_draft_rule;

UAII_API void uaii_session_options_init(uaii_session_options* options);
UAII_API uaii_status uaii_session_create(const uaii_model* model, const uaii_session_options* options,
                                         uaii_session** out_session);
UAII_API void uaii_session_destroy(uaii_session* session);
/* Forgets the conversation (the KV cache). */
UAII_API uaii_status uaii_session_reset(uaii_session* session);

/* Added in 0.4. Where a session's weights live on its device: the C++ API's
 * uaii::DeviceStats (docs/backends.md, "The device budget"), fixed when the session is
 * created. On the CPU every figure is 0. Set struct_size to what you know (0: the
 * library's); the library writes only that much. */
typedef struct uaii_device_stats {
  uint32_t struct_size;
  uint32_t reserved;           /* 0 */
  const char* device;          /* what options.device resolved to: "cpu", "vulkan:0"; owned by
                                  the session, valid until it is destroyed */
  uint64_t budget_bytes;       /* the device memory the weights may take (device_memory_bytes,
                                  or the default's figure) */
  uint64_t resident_bytes;     /* weights in device memory */
  uint64_t host_bytes;         /* weights in host memory the device reads across the bus */
  uint64_t staging_bytes;      /* the device buffer host weights are copied into before each use
                                  (part of budget_bytes; 0: they are read in place) */
  int32_t requantized_weights; /* weight types without a device kernel, requantized to Q8_0 */
  uint32_t reserved2;          /* 0 */
} uaii_device_stats;

UAII_API uaii_status uaii_session_device_stats(const uaii_session* session, uaii_device_stats* out_stats);

/* Added in 0.4.0. The memory plan a session created with `options` (may be NULL) would
 * run with — what stays resident, what streams, the KV cache, the expected peak — and
 * the decode speed the storage cost model predicts, reading no weights: the document
 * `uaii generate --dry-run --json` prints (docs/json/dry_run.schema.json). The first
 * call on a machine measures the calibration (a second or so) and caches it in
 * $UAII_HOME/calibration.json. *out_json is freed with uaii_string_free(). */
UAII_API uaii_status uaii_model_plan_json(const uaii_model* model, const uaii_session_options* options,
                                          char** out_json);

/* ---- Generation ---------------------------------------------------------- */

typedef struct uaii_generate_options {
  uint32_t struct_size;
  int32_t max_tokens;       /* default 256 */
  float temperature;        /* default 0 (greedy); > 0 samples */
  int32_t top_k;            /* default 40; <= 0 off */
  float top_p;              /* default 0.95; 1 off */
  float min_p;              /* default 0.05; 0 off */
  float repeat_penalty;     /* default 1 (off) */
  float presence_penalty;   /* default 0 */
  float frequency_penalty;  /* default 0 */
  uint32_t reserved;        /* 0 */
  uint64_t seed;            /* default 42 (the CLI's and C++'s; 0.3: 0xC0FFEE); the same seed
                               reproduces a run */
  const char* const* stop;  /* stop strings (not emitted), may be NULL */
  size_t n_stop;
  int32_t think;            /* chat only: -1 template default, 0 off, 1 on */
  /* 0.4: structured output (docs/structured_output.md). At most one of the two; NULL: none. */
  const char* grammar;      /* a GBNF grammar (llama.cpp's format, start rule `root`) */
  const char* json_schema;  /* a JSON Schema: the output is a JSON document it allows */
} uaii_generate_options;

UAII_API void uaii_generate_options_init(uaii_generate_options* options);

typedef enum uaii_event_kind {
  UAII_EVENT_TEXT = 1,      /* visible text */
  UAII_EVENT_THINKING = 2,  /* reasoning text */
  UAII_EVENT_TOOL_CALL = 3, /* `text` is the call as JSON: {"name":..., "arguments": {...}} */
  UAII_EVENT_ERROR = 4,     /* a malformed tool call; `text` says why; the stream goes on */
  UAII_EVENT_DONE = 5       /* last event; `result` is set */
} uaii_event_kind;

typedef enum uaii_stop_reason {
  UAII_STOP_END_OF_GENERATION = 1, /* an end-of-generation token */
  UAII_STOP_MAX_TOKENS = 2,
  UAII_STOP_STRING = 3,            /* a stop string */
  UAII_STOP_CANCELLED = 4,         /* the callback returned non-zero */
  UAII_STOP_CONTEXT_FULL = 5
} uaii_stop_reason;

typedef struct uaii_generate_result {
  uint32_t struct_size;
  uint32_t stop_reason;        /* uaii_stop_reason */
  int64_t prompt_tokens;
  int64_t completion_tokens;
  int64_t cached_tokens;       /* prompt tokens reused from the session's KV cache */
  int64_t reasoning_tokens;
  double prefill_tokens_per_s;
  double decode_tokens_per_s;
  uint64_t peak_rss_bytes;
  /* 0.4: speculative decoding (uaii_session_options.draft_model): tokens the draft
   * proposed, and of those the ones the model's sampler picked too (0 without a draft) */
  int64_t draft_tokens;
  int64_t draft_accepted_tokens;
  /* Appended in 0.4: draft_accepted_tokens / draft_tokens (0 without proposals). */
  double draft_acceptance_rate;
} uaii_generate_result;

typedef struct uaii_event {
  uint32_t struct_size;
  uint32_t kind;            /* uaii_event_kind */
  const char* text;         /* UTF-8, not NUL-terminated; valid during the callback */
  size_t text_len;
  const uaii_generate_result* result; /* UAII_EVENT_DONE only */
} uaii_event;

/* Return 0 to go on, non-zero to stop (the call then returns UAII_OK with stop_reason
 * UAII_STOP_CANCELLED). */
typedef int (*uaii_event_fn)(const uaii_event* event, void* user_data);

/* Generates a continuation of the raw `prompt` text (BOS as the model's metadata says)
 * and streams it through `on_event` (may be NULL). `prompt` is the whole text: the
 * session reuses its KV cache for the longest prefix it already holds. `options` may be NULL.
 * `out_result` (may be NULL) receives the usage; `out_text` (may be NULL) the whole
 * reply, freed with uaii_string_free(). */
UAII_API uaii_status uaii_session_generate(uaii_session* session, const char* prompt,
                                           const uaii_generate_options* options,
                                           uaii_event_fn on_event, void* user_data,
                                           uaii_generate_result* out_result, char** out_text);

/* One chat turn: `messages_json` is an OpenAI-style array of messages
 * ([{"role":"user","content":"..."}]), `tools_json` an array of tool declarations or
 * NULL. The prompt is rendered with the model's chat template; the session reuses its
 * KV cache for the part of the conversation it has already seen. */
UAII_API uaii_status uaii_session_chat(uaii_session* session, const char* messages_json,
                                       const char* tools_json, const uaii_generate_options* options,
                                       uaii_event_fn on_event, void* user_data,
                                       uaii_generate_result* out_result, char** out_text);

/* ---- Token-level control (added in 0.4.0) --------------------------------
 * For applications that run their own loop: evaluate tokens, read logits, sample with
 * a sampler object of their own, step one token at a time. A session's token calls and
 * its generate/chat calls share one KV cache and its bookkeeping: generate after eval
 * reuses exactly the prefix the cache holds. */

/* Width of a logits row: the model's vocabulary (may exceed the tokenizer's). */
UAII_API size_t uaii_model_n_vocab(const uaii_model* model);

enum {
  UAII_EVAL_ALL_LOGITS = 1u << 0 /* every row's logits, not only the last row's */
};

/* Appends tokens[0..n_tokens) at positions uaii_session_n_past().. and evaluates
 * them. `logits` (n_vocab floats, or n_tokens * n_vocab with UAII_EVAL_ALL_LOGITS,
 * row-major) receives the logits; it may be NULL (cap 0) when the caller needs none.
 * `out_len` (may be NULL) receives the float count. A cap too small for the rows is
 * UAII_ERR_BUFFER_TOO_SMALL before anything is evaluated; a token id outside the
 * vocabulary is UAII_ERR_INVALID_ARGUMENT; more tokens than the context holds is
 * UAII_ERR_INVALID_STATE. On error the session keeps its position. The last row is kept
 * for uaii_session_step. */
UAII_API uaii_status uaii_session_eval(uaii_session* session, const int32_t* tokens, size_t n_tokens,
                                       uint32_t flags, float* logits, size_t cap, size_t* out_len);
/* Positions the KV cache holds; -1 for a NULL session. */
UAII_API int64_t uaii_session_n_past(const uaii_session* session);
/* Positions the session can hold (its max_context); -1 for a NULL session. */
UAII_API int64_t uaii_session_max_context(const uaii_session* session);
/* Forgets positions >= n; 0 <= n <= n_past, else UAII_ERR_INVALID_ARGUMENT. */
UAII_API uaii_status uaii_session_truncate(uaii_session* session, int64_t n);

/* A sampler: the chain uaii_session_generate uses (penalties, top-k, top-p, min-p,
 * temperature, seeded draw), over any logits. Built from the sampling fields of
 * uaii_generate_options (max_tokens, stop and think are ignored; NULL: the defaults,
 * greedy). One thread at a time. */
typedef struct uaii_sampler uaii_sampler;
UAII_API uaii_status uaii_sampler_create(const uaii_generate_options* options, uaii_sampler** out_sampler);
/* 0.4: a sampler constrained by the options' grammar or json_schema over `vocabulary`'s
 * tokens (a model's tokenizer or one opened alone): it samples only tokens the grammar
 * allows next, end-of-generation only where the grammar is complete, and
 * uaii_sampler_accept follows the grammar (so only generated tokens go there; a token
 * the grammar refuses is UAII_ERR_INVALID_ARGUMENT). uaii_sampler_create refuses options
 * with a grammar, which needs the vocabulary. An invalid grammar or schema is
 * UAII_ERR_INVALID_ARGUMENT naming the cause. */
UAII_API uaii_status uaii_sampler_create_constrained(const uaii_tokenizer* vocabulary,
                                                     const uaii_generate_options* options,
                                                     uaii_sampler** out_sampler);
/* 0.4: 1 when the tokens accepted so far form a whole sentence of the sampler's grammar,
 * 0 when not or when it has none (or sampler is NULL). */
UAII_API int uaii_sampler_grammar_complete(const uaii_sampler* sampler);
/* 0.4: the GBNF grammar for a JSON Schema (what json_schema above uses), for reading or
 * editing before passing it as `grammar`. *out_gbnf is freed with uaii_string_free(). */
UAII_API uaii_status uaii_json_schema_to_grammar(const char* schema_json, char** out_gbnf);
UAII_API void uaii_sampler_destroy(uaii_sampler* sampler);
/* Picks a token from logits[0..n_logits) without recording it. A NaN or +inf logit,
 * or all -inf, is UAII_ERR_INVALID_ARGUMENT. */
UAII_API uaii_status uaii_sampler_sample(uaii_sampler* sampler, const float* logits, size_t n_logits,
                                         int32_t* out_token);
/* Records a token in the penalty window (generated, or prompt tokens to penalize). */
UAII_API uaii_status uaii_sampler_accept(uaii_sampler* sampler, int32_t token);
/* Back to the state right after creation: empty penalty window, the seed's PRNG. */
UAII_API uaii_status uaii_sampler_reset(uaii_sampler* sampler);

enum {
  UAII_STEP_END_OF_GENERATION = 1u << 0, /* the token ends generation; it was not evaluated */
  UAII_STEP_CONTEXT_FULL = 1u << 1       /* no room left: the token was not evaluated */
};
/* One token of a generation the application drives: samples from the last evaluated
 * row (uaii_session_eval's or the previous step's) with `sampler`, records it there,
 * and evaluates it unless a flag above says otherwise. UAII_ERR_INVALID_STATE when there
 * is no row to sample from (nothing evaluated since the session was created, reset or
 * truncated, or since a generate/chat call). `out_flags` may be NULL. */
UAII_API uaii_status uaii_session_step(uaii_session* session, uaii_sampler* sampler, int32_t* out_token,
                                       uint32_t* out_flags);

#ifdef __cplusplus
}
#endif

#endif /* UAII_CAPI_H_ */
