/* Streams a reply from a model through the uaii C ABI.
 *   stream_reply [PROMPT [MODEL]]      (MODEL defaults to $UAII_MODEL, then the default model)
 * Build: cc -std=c99 stream_reply.c -I<uaii>/capi -L<build> -luaii */
#include <stdio.h>
#include <stdlib.h>

#include "uaii.h"

static int on_event(const uaii_event* ev, void* user_data) {
  int* pieces = (int*)user_data;
  if (ev->kind == UAII_EVENT_TEXT) {
    fwrite(ev->text, 1, ev->text_len, stdout);
    fflush(stdout);
    ++*pieces;
  } else if (ev->kind == UAII_EVENT_DONE) {
    fprintf(stderr, "\n[%lld prompt tokens, %lld generated, %.1f tok/s decode]\n",
            (long long)ev->result->prompt_tokens, (long long)ev->result->completion_tokens,
            ev->result->decode_tokens_per_s);
  }
  return 0; /* non-zero would stop the reply */
}

int main(int argc, char** argv) {
  const char* prompt = argc > 1 ? argv[1] : "The capital of France is";
  const char* path = argc > 2 ? argv[2] : NULL;
  uaii_model* model = NULL;
  uaii_session* session = NULL;
  uaii_generate_options opts;
  uaii_generate_result result;
  int pieces = 0;
  uaii_status st;

  if (uaii_capi_version() / 100 != UAII_CAPI_VERSION / 100) {
    fprintf(stderr, "libuaii %s does not match this program's header %d\n", uaii_capi_version_string(),
            UAII_CAPI_VERSION);
    return 1;
  }
  st = uaii_model_open(path, NULL, &model);
  if (st != UAII_OK) {
    fprintf(stderr, "open: %s: %s\n", uaii_status_string(st), uaii_last_error());
    return 1;
  }
  st = uaii_session_create(model, NULL, &session);
  if (st != UAII_OK) {
    fprintf(stderr, "session: %s: %s\n", uaii_status_string(st), uaii_last_error());
    uaii_model_destroy(model);
    return 1;
  }
  uaii_generate_options_init(&opts);
  opts.max_tokens = 16;
  result.struct_size = sizeof(result);
  st = uaii_session_generate(session, prompt, &opts, on_event, &pieces, &result, NULL);
  if (st != UAII_OK) fprintf(stderr, "generate: %s: %s\n", uaii_status_string(st), uaii_last_error());
  uaii_session_destroy(session);
  uaii_model_destroy(model);
  return st == UAII_OK && pieces > 0 ? 0 : 1;
}
