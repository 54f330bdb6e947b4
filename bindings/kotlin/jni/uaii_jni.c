/* The JNI shim of the Kotlin SDK: dev.uaii.Native's external functions, over the C ABI
 * (capi/uaii.h) and nothing else.
 *
 * Conventions:
 *  - Handles cross as jlong (the pointer's bits); 0 is never a live handle.
 *  - Text crosses as byte[] holding UTF-8, both ways: JNI's own string functions speak
 *    "modified UTF-8", which mangles NUL and characters outside the BMP (emoji).
 *  - A failed C call throws dev.uaii.UaiiException(status, message bytes), the message read
 *    from uaii_last_error() on this thread right after the call.
 *  - Events reach a dev.uaii.NativeSink on the calling thread; a Java exception thrown by the
 *    sink stops the generation (the callback returns non-zero) and then propagates. */
#include <jni.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "uaii.h"

static jclass g_exception_class;   /* dev/uaii/UaiiException */
static jmethodID g_exception_ctor; /* UaiiException(int status, byte[] message) */
static jmethodID g_sink_on_event;  /* boolean NativeSink.onEvent(int kind, byte[] text) */
static jmethodID g_sink_on_done;   /* boolean NativeSink.onDone(long[] stats, double[] rates) */

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM* vm, void* reserved) {
  JNIEnv* env;
  jclass exc, sink;
  (void)reserved;
  if ((*vm)->GetEnv(vm, (void**)&env, JNI_VERSION_1_6) != JNI_OK) return JNI_ERR;
  exc = (*env)->FindClass(env, "dev/uaii/UaiiException");
  if (exc == NULL) return JNI_ERR;
  g_exception_ctor = (*env)->GetMethodID(env, exc, "<init>", "(I[B)V");
  if (g_exception_ctor == NULL) return JNI_ERR;
  g_exception_class = (jclass)(*env)->NewGlobalRef(env, exc);
  sink = (*env)->FindClass(env, "dev/uaii/NativeSink");
  if (sink == NULL) return JNI_ERR;
  g_sink_on_event = (*env)->GetMethodID(env, sink, "onEvent", "(I[B)Z");
  g_sink_on_done = (*env)->GetMethodID(env, sink, "onDone", "([J[D)Z");
  if (g_exception_class == NULL || g_sink_on_event == NULL || g_sink_on_done == NULL) return JNI_ERR;
  return JNI_VERSION_1_6;
}

/* ---- helpers ---- */

static void* from_handle(jlong h) { return (void*)(intptr_t)h; }
static jlong to_handle(const void* p) { return (jlong)(intptr_t)p; }

static jbyteArray new_bytes(JNIEnv* env, const char* data, size_t len) {
  jbyteArray a = (*env)->NewByteArray(env, (jsize)len);
  if (a != NULL && len > 0) (*env)->SetByteArrayRegion(env, a, 0, (jsize)len, (const jbyte*)data);
  return a;
}

/* Throws UaiiException for a failed call; the message is this thread's uaii_last_error(). */
static void throw_status(JNIEnv* env, uaii_status status) {
  const char* msg = uaii_last_error();
  jbyteArray bytes = new_bytes(env, msg, strlen(msg));
  jobject exc;
  if (bytes == NULL) return; /* OutOfMemoryError pending */
  exc = (*env)->NewObject(env, g_exception_class, g_exception_ctor, (jint)status, bytes);
  if (exc != NULL) (*env)->Throw(env, (jthrowable)exc);
}

static void throw_oom(JNIEnv* env) {
  jclass c = (*env)->FindClass(env, "java/lang/OutOfMemoryError");
  if (c != NULL) (*env)->ThrowNew(env, c, "uaii JNI: out of native memory");
}

/* A NUL-terminated copy of a byte[] (NULL stays NULL); *ok is 0 when the copy failed and an
 * exception is pending. Free with free(). */
static char* copy_bytes(JNIEnv* env, jbyteArray a, size_t* out_len, int* ok) {
  jsize n;
  char* p;
  *ok = 1;
  if (out_len != NULL) *out_len = 0;
  if (a == NULL) return NULL;
  n = (*env)->GetArrayLength(env, a);
  p = (char*)malloc((size_t)n + 1);
  if (p == NULL) {
    throw_oom(env);
    *ok = 0;
    return NULL;
  }
  (*env)->GetByteArrayRegion(env, a, 0, n, (jbyte*)p);
  p[n] = '\0';
  if (out_len != NULL) *out_len = (size_t)n;
  return p;
}

/* ---- version, status ---- */

JNIEXPORT jint JNICALL Java_dev_uaii_Native_capiVersion(JNIEnv* env, jclass cls) {
  (void)env, (void)cls;
  return (jint)uaii_capi_version();
}

/* The version of the header this shim was compiled against. */
JNIEXPORT jint JNICALL Java_dev_uaii_Native_headerVersion(JNIEnv* env, jclass cls) {
  (void)env, (void)cls;
  return (jint)UAII_CAPI_VERSION;
}

JNIEXPORT jbyteArray JNICALL Java_dev_uaii_Native_statusString(JNIEnv* env, jclass cls, jint status) {
  const char* s = uaii_status_string((uaii_status)status);
  (void)cls;
  return new_bytes(env, s, strlen(s));
}

/* ---- model ---- */

JNIEXPORT jlong JNICALL Java_dev_uaii_Native_modelOpen(JNIEnv* env, jclass cls, jbyteArray path) {
  int ok;
  char* p = copy_bytes(env, path, NULL, &ok);
  uaii_model* model = NULL;
  uaii_status st;
  (void)cls;
  if (!ok) return 0;
  st = uaii_model_open(p, NULL, &model);
  free(p);
  if (st != UAII_OK) {
    throw_status(env, st);
    return 0;
  }
  return to_handle(model);
}

JNIEXPORT void JNICALL Java_dev_uaii_Native_modelDestroy(JNIEnv* env, jclass cls, jlong h) {
  (void)env, (void)cls;
  uaii_model_destroy((uaii_model*)from_handle(h));
}

JNIEXPORT jbyteArray JNICALL Java_dev_uaii_Native_modelInspectJson(JNIEnv* env, jclass cls, jlong h) {
  char* json = NULL;
  jbyteArray out;
  uaii_status st = uaii_model_inspect_json((const uaii_model*)from_handle(h), &json);
  (void)cls;
  if (st != UAII_OK) {
    throw_status(env, st);
    return NULL;
  }
  out = new_bytes(env, json, strlen(json));
  uaii_string_free(json);
  return out;
}

JNIEXPORT jlong JNICALL Java_dev_uaii_Native_modelTokenizer(JNIEnv* env, jclass cls, jlong h) {
  uaii_tokenizer* tok = NULL;
  uaii_status st = uaii_model_tokenizer((const uaii_model*)from_handle(h), &tok);
  (void)cls;
  if (st != UAII_OK) {
    throw_status(env, st);
    return 0;
  }
  return to_handle(tok);
}

/* ---- tokenizer ---- */

JNIEXPORT jlong JNICALL Java_dev_uaii_Native_tokenizerOpen(JNIEnv* env, jclass cls, jbyteArray path) {
  int ok;
  char* p = copy_bytes(env, path, NULL, &ok);
  uaii_tokenizer* tok = NULL;
  uaii_status st;
  (void)cls;
  if (!ok) return 0;
  st = uaii_tokenizer_open(p, &tok);
  free(p);
  if (st != UAII_OK) {
    throw_status(env, st);
    return 0;
  }
  return to_handle(tok);
}

JNIEXPORT void JNICALL Java_dev_uaii_Native_tokenizerDestroy(JNIEnv* env, jclass cls, jlong h) {
  (void)env, (void)cls;
  uaii_tokenizer_destroy((uaii_tokenizer*)from_handle(h));
}

JNIEXPORT jlong JNICALL Java_dev_uaii_Native_tokenizerVocabSize(JNIEnv* env, jclass cls, jlong h) {
  (void)env, (void)cls;
  return (jlong)uaii_tokenizer_vocab_size((const uaii_tokenizer*)from_handle(h));
}

/* Buffer rule: a first try with a guessed capacity, then the size the library asked for. */
JNIEXPORT jintArray JNICALL Java_dev_uaii_Native_tokenize(JNIEnv* env, jclass cls, jlong h, jbyteArray text,
                                                          jint flags) {
  const uaii_tokenizer* tok = (const uaii_tokenizer*)from_handle(h);
  size_t len = 0, cap, out_len = 0;
  int ok, attempt;
  char* t = copy_bytes(env, text, &len, &ok);
  int32_t* ids = NULL;
  uaii_status st = UAII_ERR_INTERNAL;
  jintArray result = NULL;
  (void)cls;
  if (!ok) return NULL;
  cap = len + 8;
  for (attempt = 0; attempt < 2; ++attempt) {
    int32_t* grown = (int32_t*)realloc(ids, cap * sizeof(int32_t));
    if (grown == NULL) {
      throw_oom(env);
      goto done;
    }
    ids = grown;
    st = uaii_tokenize(tok, t, len, (uint32_t)flags, ids, cap, &out_len);
    if (st != UAII_ERR_BUFFER_TOO_SMALL || out_len <= cap) break;
    cap = out_len;
  }
  if (st != UAII_OK) {
    throw_status(env, st);
    goto done;
  }
  result = (*env)->NewIntArray(env, (jsize)out_len);
  if (result != NULL && out_len > 0) (*env)->SetIntArrayRegion(env, result, 0, (jsize)out_len, (const jint*)ids);
done:
  free(ids);
  free(t);
  return result;
}

JNIEXPORT jbyteArray JNICALL Java_dev_uaii_Native_detokenize(JNIEnv* env, jclass cls, jlong h, jintArray ids,
                                                             jint flags) {
  const uaii_tokenizer* tok = (const uaii_tokenizer*)from_handle(h);
  jsize n = (*env)->GetArrayLength(env, ids);
  size_t cap = (size_t)n * 8 + 16, out_len = 0;
  int attempt;
  int32_t* id_copy = (int32_t*)malloc(((size_t)n + 1) * sizeof(int32_t));
  char* buf = NULL;
  uaii_status st = UAII_ERR_INTERNAL;
  jbyteArray result = NULL;
  (void)cls;
  if (id_copy == NULL) {
    throw_oom(env);
    return NULL;
  }
  (*env)->GetIntArrayRegion(env, ids, 0, n, (jint*)id_copy);
  for (attempt = 0; attempt < 2; ++attempt) {
    char* grown = (char*)realloc(buf, cap);
    if (grown == NULL) {
      throw_oom(env);
      goto done;
    }
    buf = grown;
    st = uaii_detokenize(tok, id_copy, (size_t)n, (uint32_t)flags, buf, cap, &out_len);
    if (st != UAII_ERR_BUFFER_TOO_SMALL || out_len <= cap) break;
    cap = out_len;
  }
  if (st != UAII_OK) {
    throw_status(env, st);
    goto done;
  }
  result = new_bytes(env, buf, out_len);
done:
  free(buf);
  free(id_copy);
  return result;
}

/* ---- session ---- */

/* memory: [preset, ram_budget_bytes, kv_window, prefill_chunk, moe_top_k, moe_prefetch,
 * device_memory_bytes];
 * draft_model: a model handle for speculative decoding (0: none); draft_path: a drafter
 * file's UTF-8 path (NULL: none; C ABI 0.5); draft: [draft_max, draft_min,
 * draft_auto, draft_rule] and draft_p_min passed as they are (the library checks their
 * ranges). The session keeps its own reference to the draft's data. */
JNIEXPORT jlong JNICALL Java_dev_uaii_Native_sessionCreate(JNIEnv* env, jclass cls, jlong model, jbyteArray device,
                                                           jint threads, jlong max_context, jboolean learn_calibration,
                                                           jlongArray memory, jlong draft_model,
                                                           jbyteArray draft_path, jintArray draft,
                                                           jfloat draft_p_min) {
  uaii_session_options o;
  uaii_session* session = NULL;
  uaii_status st;
  int ok;
  char* dev = copy_bytes(env, device, NULL, &ok);
  char* path = NULL;
  (void)cls;
  if (!ok) return 0;
  path = copy_bytes(env, draft_path, NULL, &ok);
  if (!ok) {
    free(dev);
    return 0;
  }
  uaii_session_options_init(&o);
  if (dev != NULL) o.device = dev;
  o.threads = threads;
  o.max_context = max_context;
  o.learn_calibration = learn_calibration ? 1u : 0u;
  {
    jlong m[7];
    (*env)->GetLongArrayRegion(env, memory, 0, 7, m);
    o.preset = (uint32_t)m[0];
    o.ram_budget_bytes = (uint64_t)m[1];
    o.kv_window = m[2];
    o.prefill_chunk = m[3];
    o.moe_top_k = m[4];
    o.moe_prefetch = m[5] ? 1u : 0u;
    o.device_memory_bytes = (uint64_t)m[6];
  }
  o.draft_model = (const uaii_model*)from_handle(draft_model);
  o.draft_path = path;
  {
    jint d[4];
    (*env)->GetIntArrayRegion(env, draft, 0, 4, d);
    o.draft_max = (int32_t)d[0];
    o.draft_min = (int32_t)d[1];
    o.draft_auto = d[2] ? 1u : 0u;
    o.draft_rule = (uint32_t)d[3];
  }
  o.draft_p_min = (float)draft_p_min;
  st = uaii_session_create((const uaii_model*)from_handle(model), &o, &session);
  free(dev);
  free(path);
  if (st != UAII_OK) {
    throw_status(env, st);
    return 0;
  }
  return to_handle(session);
}

JNIEXPORT void JNICALL Java_dev_uaii_Native_sessionDestroy(JNIEnv* env, jclass cls, jlong h) {
  (void)env, (void)cls;
  uaii_session_destroy((uaii_session*)from_handle(h));
}

JNIEXPORT void JNICALL Java_dev_uaii_Native_sessionReset(JNIEnv* env, jclass cls, jlong h) {
  uaii_status st = uaii_session_reset((uaii_session*)from_handle(h));
  (void)cls;
  if (st != UAII_OK) throw_status(env, st);
}

/* Returns the device name (UTF-8); out: [budget, resident, host, staging, requantized_weights]
 * (DeviceStats.SIZE in Kotlin). */
JNIEXPORT jbyteArray JNICALL Java_dev_uaii_Native_sessionDeviceStats(JNIEnv* env, jclass cls, jlong h, jlongArray out) {
  uaii_device_stats ds;
  jlong v[5];
  uaii_status st;
  (void)cls;
  ds.struct_size = sizeof ds;
  st = uaii_session_device_stats((const uaii_session*)from_handle(h), &ds);
  if (st != UAII_OK) {
    throw_status(env, st);
    return NULL;
  }
  v[0] = (jlong)ds.budget_bytes;
  v[1] = (jlong)ds.resident_bytes;
  v[2] = (jlong)ds.host_bytes;
  v[3] = (jlong)ds.staging_bytes;
  v[4] = (jlong)ds.requantized_weights;
  (*env)->SetLongArrayRegion(env, out, 0, 5, v);
  return new_bytes(env, ds.device, strlen(ds.device));
}

/* The library's generation defaults: ints [max_tokens, top_k, think], floats [temperature,
 * top_p, min_p, repeat, presence, frequency]; returns the seed. */
JNIEXPORT jlong JNICALL Java_dev_uaii_Native_generateDefaults(JNIEnv* env, jclass cls, jintArray ints,
                                                              jfloatArray floats) {
  uaii_generate_options o;
  jint i[3];
  jfloat f[6];
  (void)cls;
  uaii_generate_options_init(&o);
  i[0] = o.max_tokens, i[1] = o.top_k, i[2] = o.think;
  f[0] = o.temperature, f[1] = o.top_p, f[2] = o.min_p;
  f[3] = o.repeat_penalty, f[4] = o.presence_penalty, f[5] = o.frequency_penalty;
  (*env)->SetIntArrayRegion(env, ints, 0, 3, i);
  (*env)->SetFloatArrayRegion(env, floats, 0, 6, f);
  return (jlong)o.seed;
}

/* The generation options as GenerateOptions carries them: ints [max_tokens, top_k, think],
 * floats [temperature, top_p, min_p, repeat, presence, frequency], the seed, and (0.4) the
 * grammar and JSON Schema as UTF-8 or null. *grammar_copy / *schema_copy are
 * NUL-terminated copies the caller frees (free()), pointed to by o->grammar /
 * o->json_schema; returns 0 when a copy failed (an exception is then pending). */
static int read_generate_options(JNIEnv* env, jintArray ints, jfloatArray floats, jlong seed, jbyteArray grammar,
                                 jbyteArray json_schema, uaii_generate_options* o, char** grammar_copy,
                                 char** schema_copy) {
  jint i[3];
  jfloat f[6];
  int ok;
  uaii_generate_options_init(o);
  (*env)->GetIntArrayRegion(env, ints, 0, 3, i);
  (*env)->GetFloatArrayRegion(env, floats, 0, 6, f);
  o->max_tokens = i[0], o->top_k = i[1], o->think = i[2];
  o->temperature = f[0], o->top_p = f[1], o->min_p = f[2];
  o->repeat_penalty = f[3], o->presence_penalty = f[4], o->frequency_penalty = f[5];
  o->seed = (uint64_t)seed;
  *schema_copy = NULL;
  *grammar_copy = copy_bytes(env, grammar, NULL, &ok);
  if (!ok) return 0;
  *schema_copy = copy_bytes(env, json_schema, NULL, &ok);
  if (!ok) return 0;
  o->grammar = *grammar_copy;
  o->json_schema = *schema_copy;
  return 1;
}

/* ---- token-level control (0.4) ---- */

JNIEXPORT jlong JNICALL Java_dev_uaii_Native_modelNVocab(JNIEnv* env, jclass cls, jlong h) {
  (void)env, (void)cls;
  return (jlong)uaii_model_n_vocab((const uaii_model*)from_handle(h));
}

JNIEXPORT jfloatArray JNICALL Java_dev_uaii_Native_sessionEval(JNIEnv* env, jclass cls, jlong h, jlong model,
                                                               jintArray tokens, jboolean all_logits) {
  jsize n = (*env)->GetArrayLength(env, tokens);
  size_t vocab = uaii_model_n_vocab((const uaii_model*)from_handle(model));
  size_t count = (all_logits ? (size_t)n : 1) * vocab;
  jint* ids = (jint*)malloc((size_t)(n > 0 ? n : 1) * sizeof(jint));
  float* logits = (float*)malloc(count * sizeof(float) + 1);
  jfloatArray result = NULL;
  uaii_status st;
  (void)cls;
  if (ids == NULL || logits == NULL) {
    throw_oom(env);
    goto done;
  }
  (*env)->GetIntArrayRegion(env, tokens, 0, n, ids);
  st = uaii_session_eval((uaii_session*)from_handle(h), (const int32_t*)ids, (size_t)n,
                         all_logits ? UAII_EVAL_ALL_LOGITS : 0u, logits, count, NULL);
  if (st != UAII_OK) {
    throw_status(env, st);
    goto done;
  }
  result = (*env)->NewFloatArray(env, (jsize)count);
  if (result != NULL) (*env)->SetFloatArrayRegion(env, result, 0, (jsize)count, logits);
done:
  free(ids);
  free(logits);
  return result;
}

JNIEXPORT jlong JNICALL Java_dev_uaii_Native_sessionNPast(JNIEnv* env, jclass cls, jlong h) {
  (void)env, (void)cls;
  return (jlong)uaii_session_n_past((const uaii_session*)from_handle(h));
}

JNIEXPORT jlong JNICALL Java_dev_uaii_Native_sessionMaxContext(JNIEnv* env, jclass cls, jlong h) {
  (void)env, (void)cls;
  return (jlong)uaii_session_max_context((const uaii_session*)from_handle(h));
}

JNIEXPORT void JNICALL Java_dev_uaii_Native_sessionTruncate(JNIEnv* env, jclass cls, jlong h, jlong n) {
  uaii_status st = uaii_session_truncate((uaii_session*)from_handle(h), (int64_t)n);
  (void)cls;
  if (st != UAII_OK) throw_status(env, st);
}

/* A sampler for the options (read_generate_options' arrays); vocabulary: a tokenizer handle
 * to constrain by the options' grammar or JSON Schema over (uaii_sampler_create_constrained),
 * or 0 (uaii_sampler_create, which refuses a grammar). */
JNIEXPORT jlong JNICALL Java_dev_uaii_Native_samplerCreate(JNIEnv* env, jclass cls, jintArray ints, jfloatArray floats,
                                                           jlong seed, jbyteArray grammar, jbyteArray json_schema,
                                                           jlong vocabulary) {
  uaii_generate_options o;
  uaii_sampler* sampler = NULL;
  uaii_status st;
  char* g = NULL;
  char* js = NULL;
  (void)cls;
  if (!read_generate_options(env, ints, floats, seed, grammar, json_schema, &o, &g, &js)) {
    free(g);
    free(js);
    return 0;
  }
  if (vocabulary != 0)
    st = uaii_sampler_create_constrained((const uaii_tokenizer*)from_handle(vocabulary), &o, &sampler);
  else
    st = uaii_sampler_create(&o, &sampler);
  free(g);
  free(js);
  if (st != UAII_OK) {
    throw_status(env, st);
    return 0;
  }
  return to_handle(sampler);
}

JNIEXPORT jboolean JNICALL Java_dev_uaii_Native_samplerGrammarComplete(JNIEnv* env, jclass cls, jlong h) {
  (void)env, (void)cls;
  return uaii_sampler_grammar_complete((const uaii_sampler*)from_handle(h)) ? JNI_TRUE : JNI_FALSE;
}

JNIEXPORT jbyteArray JNICALL Java_dev_uaii_Native_jsonSchemaToGrammar(JNIEnv* env, jclass cls, jbyteArray schema) {
  int ok;
  char* js = copy_bytes(env, schema, NULL, &ok);
  char* gbnf = NULL;
  jbyteArray out = NULL;
  uaii_status st;
  (void)cls;
  if (!ok) return NULL;
  st = uaii_json_schema_to_grammar(js, &gbnf);
  free(js);
  if (st != UAII_OK) {
    throw_status(env, st);
    return NULL;
  }
  out = new_bytes(env, gbnf, strlen(gbnf));
  uaii_string_free(gbnf);
  return out;
}

JNIEXPORT void JNICALL Java_dev_uaii_Native_samplerDestroy(JNIEnv* env, jclass cls, jlong h) {
  (void)env, (void)cls;
  uaii_sampler_destroy((uaii_sampler*)from_handle(h));
}

JNIEXPORT jint JNICALL Java_dev_uaii_Native_samplerSample(JNIEnv* env, jclass cls, jlong h, jfloatArray logits) {
  jsize n = (*env)->GetArrayLength(env, logits);
  jfloat* v = (*env)->GetFloatArrayElements(env, logits, NULL);
  int32_t token = -1;
  uaii_status st;
  (void)cls;
  if (v == NULL) return -1; /* OutOfMemoryError pending */
  st = uaii_sampler_sample((uaii_sampler*)from_handle(h), v, (size_t)n, &token);
  (*env)->ReleaseFloatArrayElements(env, logits, v, JNI_ABORT);
  if (st != UAII_OK) throw_status(env, st);
  return token;
}

JNIEXPORT void JNICALL Java_dev_uaii_Native_samplerAccept(JNIEnv* env, jclass cls, jlong h, jint token) {
  uaii_status st = uaii_sampler_accept((uaii_sampler*)from_handle(h), token);
  (void)cls;
  if (st != UAII_OK) throw_status(env, st);
}

JNIEXPORT void JNICALL Java_dev_uaii_Native_samplerReset(JNIEnv* env, jclass cls, jlong h) {
  uaii_status st = uaii_sampler_reset((uaii_sampler*)from_handle(h));
  (void)cls;
  if (st != UAII_OK) throw_status(env, st);
}

/* Returns the token; out_flags[0] receives the UAII_STEP_* flags. */
JNIEXPORT jint JNICALL Java_dev_uaii_Native_sessionStep(JNIEnv* env, jclass cls, jlong h, jlong sampler,
                                                        jintArray out_flags) {
  int32_t token = -1;
  uint32_t flags = 0;
  jint f;
  uaii_status st = uaii_session_step((uaii_session*)from_handle(h), (uaii_sampler*)from_handle(sampler), &token, &flags);
  (void)cls;
  if (st != UAII_OK) {
    throw_status(env, st);
    return -1;
  }
  f = (jint)flags;
  (*env)->SetIntArrayRegion(env, out_flags, 0, 1, &f);
  return token;
}

typedef struct sink_context {
  JNIEnv* env;
  jobject sink;
} sink_context;

/* [stop_reason, prompt, completion, cached, reasoning, peak_rss, draft, draft_accepted]
 * (Usage.STATS_SIZE in Kotlin) and [prefill, decode] tok/s, draft acceptance rate. */
#define N_STATS 8
#define N_RATES 3
static void result_arrays(const uaii_generate_result* r, jlong stats[N_STATS], jdouble rates[N_RATES]) {
  stats[0] = (jlong)r->stop_reason;
  stats[1] = (jlong)r->prompt_tokens;
  stats[2] = (jlong)r->completion_tokens;
  stats[3] = (jlong)r->cached_tokens;
  stats[4] = (jlong)r->reasoning_tokens;
  stats[5] = (jlong)r->peak_rss_bytes;
  stats[6] = (jlong)r->draft_tokens;
  stats[7] = (jlong)r->draft_accepted_tokens;
  rates[0] = r->prefill_tokens_per_s;
  rates[1] = r->decode_tokens_per_s;
  rates[2] = r->draft_acceptance_rate;
}

static int on_event(const uaii_event* ev, void* user_data) {
  sink_context* c = (sink_context*)user_data;
  JNIEnv* env = c->env;
  jboolean go = JNI_FALSE;
  if ((*env)->ExceptionCheck(env)) return 1;
  if (ev->kind == UAII_EVENT_DONE) {
    jlong stats[N_STATS];
    jdouble rates[N_RATES];
    jlongArray s;
    jdoubleArray r;
    if (ev->result == NULL) return 0;
    result_arrays(ev->result, stats, rates);
    s = (*env)->NewLongArray(env, N_STATS);
    r = (*env)->NewDoubleArray(env, N_RATES);
    if (s == NULL || r == NULL) return 1;
    (*env)->SetLongArrayRegion(env, s, 0, N_STATS, stats);
    (*env)->SetDoubleArrayRegion(env, r, 0, N_RATES, rates);
    go = (*env)->CallBooleanMethod(env, c->sink, g_sink_on_done, s, r);
    (*env)->DeleteLocalRef(env, s);
    (*env)->DeleteLocalRef(env, r);
  } else {
    jbyteArray text = new_bytes(env, ev->text, ev->text_len);
    if (text == NULL) return 1;
    go = (*env)->CallBooleanMethod(env, c->sink, g_sink_on_event, (jint)ev->kind, text);
    /* Long replies make thousands of events: local references must not pile up. */
    (*env)->DeleteLocalRef(env, text);
  }
  if ((*env)->ExceptionCheck(env)) return 1;
  return go ? 0 : 1;
}

/* One generation (chat == false: `prompt` is the raw text) or chat turn (`prompt` is the
 * messages JSON, `tools` the tools JSON or null). Options as read_generate_options reads
 * them, `stop` an array of UTF-8 strings. Returns the whole reply; fills out_stats /
 * out_rates as result_arrays does. */
JNIEXPORT jbyteArray JNICALL Java_dev_uaii_Native_sessionRun(JNIEnv* env, jclass cls, jlong h, jboolean chat,
                                                             jbyteArray prompt, jbyteArray tools, jintArray ints,
                                                             jfloatArray floats, jlong seed, jobjectArray stop,
                                                             jbyteArray grammar, jbyteArray json_schema,
                                                             jobject sink, jlongArray out_stats,
                                                             jdoubleArray out_rates) {
  uaii_generate_options o;
  uaii_generate_result result;
  sink_context ctx;
  jsize n_stop = stop == NULL ? 0 : (*env)->GetArrayLength(env, stop), k;
  char** stops = NULL;
  char* p = NULL;
  char* t = NULL;
  char* g = NULL;
  char* js = NULL;
  char* text = NULL;
  jbyteArray reply = NULL;
  uaii_status st;
  int ok;
  (void)cls;

  p = copy_bytes(env, prompt, NULL, &ok);
  if (!ok) goto done;
  t = copy_bytes(env, tools, NULL, &ok);
  if (!ok) goto done;
  stops = (char**)calloc((size_t)n_stop + 1, sizeof(char*));
  if (stops == NULL) {
    throw_oom(env);
    goto done;
  }
  for (k = 0; k < n_stop; ++k) {
    jbyteArray s = (jbyteArray)(*env)->GetObjectArrayElement(env, stop, k);
    stops[k] = copy_bytes(env, s, NULL, &ok);
    (*env)->DeleteLocalRef(env, s);
    if (!ok) goto done;
  }

  if (!read_generate_options(env, ints, floats, seed, grammar, json_schema, &o, &g, &js)) goto done;
  o.stop = (const char* const*)stops;
  o.n_stop = (size_t)n_stop;

  memset(&result, 0, sizeof(result));
  result.struct_size = sizeof(result);
  ctx.env = env;
  ctx.sink = sink;
  if (chat)
    st = uaii_session_chat((uaii_session*)from_handle(h), p, t, &o, sink ? on_event : NULL, &ctx, &result, &text);
  else
    st = uaii_session_generate((uaii_session*)from_handle(h), p, &o, sink ? on_event : NULL, &ctx, &result, &text);

  if ((*env)->ExceptionCheck(env)) goto done; /* the sink threw: that exception wins */
  if (st != UAII_OK) {
    throw_status(env, st);
    goto done;
  }
  {
    jlong stats[N_STATS];
    jdouble rates[N_RATES];
    result_arrays(&result, stats, rates);
    (*env)->SetLongArrayRegion(env, out_stats, 0, N_STATS, stats);
    (*env)->SetDoubleArrayRegion(env, out_rates, 0, N_RATES, rates);
  }
  reply = new_bytes(env, text, strlen(text));

done:
  uaii_string_free(text);
  if (stops != NULL) {
    for (k = 0; k < n_stop; ++k) free(stops[k]);
    free(stops);
  }
  free(js);
  free(g);
  free(t);
  free(p);
  return reply;
}
