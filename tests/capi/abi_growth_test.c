/* An older caller: compiled against smaller options structs (an early layout, and
 * 0.3.0's whole uaii_session_options, before 0.4 appended prefill_chunk, moe_top_k and
 * moe_prefetch), it must still work against the current library, with the fields it
 * does not know taking their defaults. Compares against a run with the current structs.
 *   abi_growth_test MODEL */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uaii.h"

/* The first fields of uaii_session_options and uaii_generate_options, as an old
 * header declared them. */
typedef struct old_session_options {
  uint32_t struct_size;
  uint32_t preset;
  const char* device;
  int32_t threads;
} old_session_options;

/* uaii_session_options as capi/uaii.h 0.3.0 declared it. */
typedef struct v03_session_options {
  uint32_t struct_size;
  uint32_t preset;
  const char* device;
  int32_t threads;
  uint32_t reserved;
  uint64_t ram_budget_bytes;
  int64_t kv_window;
  int64_t max_context;
  uint32_t learn_calibration;
  uint32_t reserved2;
} v03_session_options;

typedef struct old_generate_options {
  uint32_t struct_size;
  int32_t max_tokens;
} old_generate_options;

/* uaii_generate_options as capi/uaii.h 0.3.0 declared it, before 0.4 appended grammar
 * and json_schema. */
typedef struct v03_generate_options {
  uint32_t struct_size;
  int32_t max_tokens;
  float temperature;
  int32_t top_k;
  float top_p;
  float min_p;
  float repeat_penalty;
  float presence_penalty;
  float frequency_penalty;
  uint32_t reserved;
  uint64_t seed;
  const char* const* stop;
  size_t n_stop;
  int32_t think;
} v03_generate_options;

typedef struct old_result {
  uint32_t struct_size;
  uint32_t stop_reason;
  int64_t prompt_tokens;
  int64_t completion_tokens;
} old_result;

static int run(const uaii_model* model, const uaii_session_options* so, const uaii_generate_options* go,
               uaii_generate_result* res, char** text) {
  uaii_session* s = NULL;
  uaii_status st = uaii_session_create(model, so, &s);
  if (st != UAII_OK) {
    fprintf(stderr, "session_create: %s\n", uaii_last_error());
    return 0;
  }
  st = uaii_session_generate(s, "tok5tok6tok7", go, NULL, NULL, res, text);
  uaii_session_destroy(s);
  if (st != UAII_OK) fprintf(stderr, "generate: %s\n", uaii_last_error());
  return st == UAII_OK;
}

/* 0.4's samplers read the same options struct: an old caller's smaller one gives the
 * defaults' sampler, which picks what a current caller's default sampler picks. */
static int sampler_from_old_options(const uaii_model* model, const old_generate_options* old_go,
                                    const uaii_generate_options* go) {
  uaii_sampler *a = NULL, *b = NULL;
  uaii_session* s = NULL;
  int32_t prompt[3] = {1, 260, 261};
  size_t n_vocab = uaii_model_n_vocab(model), len = 0;
  float* logits = NULL;
  int32_t ta = -1, tb = -2;
  int ok = uaii_sampler_create((const uaii_generate_options*)old_go, &a) == UAII_OK &&
           uaii_sampler_create(go, &b) == UAII_OK && uaii_session_create(model, NULL, &s) == UAII_OK;
  if (ok) {
    logits = (float*)malloc(n_vocab * sizeof(float));
    ok = logits != NULL && uaii_session_eval(s, prompt, 3, 0, logits, n_vocab, &len) == UAII_OK && len == n_vocab &&
         uaii_sampler_sample(a, logits, n_vocab, &ta) == UAII_OK &&
         uaii_sampler_sample(b, logits, n_vocab, &tb) == UAII_OK && ta == tb;
  }
  printf("sampler from old options: %s (%d, %d)\n", ok ? "ok" : "MISMATCH", (int)ta, (int)tb);
  if (!ok) fprintf(stderr, "%s\n", uaii_last_error());
  free(logits);
  uaii_session_destroy(s);
  uaii_sampler_destroy(a);
  uaii_sampler_destroy(b);
  return ok;
}

int main(int argc, char** argv) {
  uaii_model* model = NULL;
  old_session_options old_so;
  v03_session_options v03_so;
  uaii_generate_result v03_res;
  char* v03_text = NULL;
  old_generate_options old_go;
  old_result old_res;
  uaii_session_options so;
  uaii_generate_options go;
  uaii_generate_result res;
  char *old_text = NULL, *new_text = NULL;
  int ok;

  if (argc < 2 || uaii_model_open(argv[1], NULL, &model) != UAII_OK) {
    fprintf(stderr, "open: %s\n", uaii_last_error());
    return 1;
  }
  memset(&old_so, 0, sizeof old_so);
  old_so.struct_size = sizeof old_so;
  old_so.device = "cpu";
  old_so.threads = 1;
  /* A 0.3.0 caller filled its struct with the 0.3.0 defaults. */
  memset(&v03_so, 0, sizeof v03_so);
  v03_so.struct_size = sizeof v03_so;
  v03_so.device = "cpu";
  v03_so.threads = 1;
  v03_so.max_context = 0; /* 0.3.0: the training context capped at 4096 */
  memset(&old_go, 0, sizeof old_go);
  old_go.struct_size = sizeof old_go;
  old_go.max_tokens = 6;
  memset(&old_res, 0, sizeof old_res);
  old_res.struct_size = sizeof old_res;

  uaii_session_options_init(&so);
  so.threads = 1;
  uaii_generate_options_init(&go);
  go.max_tokens = 6;
  res.struct_size = sizeof res;

  ok = run(model, (const uaii_session_options*)&old_so, (const uaii_generate_options*)&old_go,
           (uaii_generate_result*)&old_res, &old_text) &&
       run(model, &so, &go, &res, &new_text);
  v03_res.struct_size = sizeof v03_res;
  ok = ok && run(model, (const uaii_session_options*)&v03_so, &go, &v03_res, &v03_text);
  if (ok) {
    ok = strcmp(old_text, new_text) == 0 && old_res.completion_tokens == res.completion_tokens &&
         old_res.struct_size == sizeof old_res && old_res.prompt_tokens == res.prompt_tokens &&
         strcmp(v03_text, new_text) == 0 && v03_res.completion_tokens == res.completion_tokens;
    printf("old: \"%s\" (%lld tokens)\nnew: \"%s\" (%lld tokens)\n%s\n", old_text,
           (long long)old_res.completion_tokens, new_text, (long long)res.completion_tokens,
           ok ? "ABI growth: ok" : "ABI growth: MISMATCH");
  }
  ok = ok && sampler_from_old_options(model, &old_go, &go);
  if (ok) {
    /* 0.3.0's whole generate options: no grammar, the same reply. */
    v03_generate_options v03_go;
    char* v03_go_text = NULL;
    memcpy(&v03_go, &go, sizeof v03_go);
    v03_go.struct_size = sizeof v03_go;
    res.struct_size = sizeof res;
    ok = run(model, &so, (const uaii_generate_options*)&v03_go, &res, &v03_go_text) &&
         strcmp(v03_go_text, new_text) == 0;
    printf("0.3.0 generate options: %s\n", ok ? "ok" : "MISMATCH");
    uaii_string_free(v03_go_text);
  }
  uaii_string_free(old_text);
  uaii_string_free(new_text);
  uaii_string_free(v03_text);
  uaii_model_destroy(model);
  return ok ? 0 : 1;
}
