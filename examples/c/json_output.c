/* Structured output driven token by token through the uaii C ABI: evaluates a prompt,
 * then samples with the application's own sampler chain (temperature, top-k, seed)
 * constrained by a JSON Schema, one uaii_session_step at a time, and prints the JSON
 * document the tokens spell.
 *   json_output SCHEMA_JSON [PROMPT [MODEL]]   (MODEL defaults to $UAII_MODEL, then the default model)
 * Build: cc -std=c99 json_output.c $(pkg-config --cflags --libs uaii) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uaii.h"

#define MAX_TOKENS 256

static int fail(const char* what, uaii_status st) {
  fprintf(stderr, "%s: %s: %s\n", what, uaii_status_string(st), uaii_last_error());
  return 1;
}

int main(int argc, char** argv) {
  const char* schema = argc > 1 ? argv[1] : "{\"type\": \"object\"}";
  const char* prompt = argc > 2 ? argv[2] : "A JSON object:";
  const char* path = argc > 3 ? argv[3] : NULL;
  uaii_model* model = NULL;
  uaii_tokenizer* tok = NULL;
  uaii_session* session = NULL;
  uaii_sampler* sampler = NULL;
  uaii_generate_options opts;
  int32_t ids[MAX_TOKENS], out[MAX_TOKENS];
  size_t n_ids = 0, n_out = 0, len = 0;
  float* logits = NULL;
  char text[8192];
  uaii_status st;
  int ended = 0, complete = 0;

  if ((st = uaii_model_open(path, NULL, &model)) != UAII_OK) return fail("open", st);
  if ((st = uaii_model_tokenizer(model, &tok)) != UAII_OK) return fail("tokenizer", st);
  if ((st = uaii_session_create(model, NULL, &session)) != UAII_OK) return fail("session", st);
  st = uaii_tokenize(tok, prompt, strlen(prompt), UAII_TOKENIZE_ADD_SPECIAL, ids, MAX_TOKENS, &n_ids);
  if (st != UAII_OK) return fail("tokenize", st);

  /* The application's sampler chain, constrained to the schema over the model's tokens. */
  uaii_generate_options_init(&opts);
  opts.temperature = 0.9f;
  opts.top_k = 20;
  opts.seed = 7;
  opts.json_schema = schema;
  if ((st = uaii_sampler_create_constrained(tok, &opts, &sampler)) != UAII_OK) return fail("sampler", st);

  logits = malloc(uaii_model_n_vocab(model) * sizeof(float));
  if (logits == NULL) return 1;
  if ((st = uaii_session_eval(session, ids, n_ids, 0, logits, uaii_model_n_vocab(model), NULL)) != UAII_OK)
    return fail("eval", st);
  while (n_out < MAX_TOKENS) {
    uint32_t flags = 0;
    int32_t t = -1;
    if ((st = uaii_session_step(session, sampler, &t, &flags)) != UAII_OK) return fail("step", st);
    if (flags & UAII_STEP_END_OF_GENERATION) {
      ended = 1;
      break;
    }
    out[n_out++] = t;
    if (flags & UAII_STEP_CONTEXT_FULL) break;
  }
  st = uaii_detokenize(tok, out, n_out, 0, text, sizeof text - 1, &len);
  if (st != UAII_OK) return fail("detokenize", st);
  text[len] = '\0';
  printf("%s\n", text);
  complete = uaii_sampler_grammar_complete(sampler);
  fprintf(stderr, "[%zu tokens, %s, grammar %s]\n", n_out, ended ? "end of generation" : "cut",
          complete ? "complete" : "incomplete");
  free(logits);
  uaii_sampler_destroy(sampler);
  uaii_session_destroy(session);
  uaii_tokenizer_destroy(tok);
  uaii_model_destroy(model);
  return ended && complete ? 0 : 1;
}
