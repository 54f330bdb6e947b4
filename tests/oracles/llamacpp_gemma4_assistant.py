#!/usr/bin/env python3
"""Goldens for the tiny Gemma 4 assistant drafters (tests/fixtures/make_gemma4_assistant_models.py).

usage: llamacpp_gemma4_assistant.py FIXTURE_DIR [OUT_DIR] [NAME ...]

For every paired row of make_gemma4_assistant_models.GEMMA4_ASSISTANT (or the NAMEs
given), drives llama.cpp (llama-cpp-python's ctypes API; CPU, F16 KV cache, no flash
attention, 2 threads, n_ctx 256) the way common/speculative.cpp drives a Gemma 4
assistant (common_speculative_impl_draft_mtp with shared memory):

  1. the target gemma4/<target>.gguf gets a context with nextn embeddings on, unmasked
     (llama_set_embeddings_nextn(ctx_tgt, true, false)): every batch row's
     post-final-norm hidden state h is readable with llama_get_embeddings_nextn_ith;
  2. the assistant gets a context with ctx_type = LLAMA_CONTEXT_TYPE_MTP and
     ctx_other = the target's context, nextn embeddings on, masked (as speculative.cpp).
     It is created BEFORE the target's prefill: its KV cache shares the target's cell
     bookkeeping and (re)sizing it resets those cells;
  3. the 64-token prompt (gemma4-assistant/prompt.txt) is decoded on the target in one
     batch, logits for the last row only; h rows for every position are recorded;
  4. id_last = argmax of the target's last logits row (greedy: the token the target
     would sample next), pos0 = len(prompt), h = the target's h row at pos0 - 1;
  5. K = 4 draft steps, each one llama_decode on the assistant of a one-row batch
     carrying both a token id and an embedding row (token = the step's input token,
     embd = h, pos = pos0 for every step, seq 0, output on). The step's logits and its
     h_nextn (llama_get_embeddings_nextn_ith(ctx_dft, 0)) are recorded; the next step's
     token = argmax of those logits, its h = that h_nextn. The assistant writes no
     KV (it has no K/V projections and its cache's apply_ubatch is a no-op), so every
     step attends over the target's prompt cache only.

Writes OUT_DIR/assistant-gemma4-<name>.json (default tests/golden/llamacpp/):
  reference, name, arch, type, model_file / model_sha256 (the assistant),
  target_file / target_sha256 (paths relative to FIXTURE_DIR), settings,
  prompt_tokens, n_vocab, n_embd_out, pos0, id_last, n_steps,
  target_last_logits_scale + target_last_logits_i16_zlib_b64 (the target's row at
  pos0 - 1), target_h_scale + target_h_i16_zlib_b64 (all prompt h rows,
  [n_prompt, n_embd_out], int16 round(h * scale)), target_h_last_f32_b64 (the exact
  f32 h row at pos0 - 1 that step 0 consumes),
  steps: [{step, token, pos, h_in ("target_h_last" or "step<k-1>.h_nextn"),
           logits_scale, logits_i16_zlib_b64, h_nextn_f32_b64, argmax, top2_gap,
           max_abs_logit}],
  draft_tokens (the argmax of each step).
int16 rows as llamacpp_common.row_q_zlib (scale = 30000 / max|row|), base64; f32 rows
little-endian, base64.
"""
import base64
import ctypes
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))
import llamacpp_common as C  # noqa: E402
import make_gemma4_assistant_models as A  # noqa: E402

N_CTX, N_BATCH, N_THREADS, K_STEPS = 256, 512, 2, 4
SETTINGS = (f"n_ctx={N_CTX} n_batch={N_BATCH} n_ubatch={N_BATCH} n_threads={N_THREADS} flash_attn=disabled "
            "KV f16 swa_full=true (default) kv_unified=false n_seq_max=1; target: embeddings_nextn unmasked, logits for the last prompt row; "
            "assistant: ctx_type=MTP ctx_other=target, embeddings_nextn masked, one row per step with token+embd "
            "at pos0; greedy (argmax) chaining")


def lib():
    import llama_cpp
    import llama_cpp.llama_cpp as L

    try:
        import llama_cpp.llama_cpp_ext as X
        set_nextn, get_nextn_ith = X.llama_set_embeddings_nextn, X.llama_get_embeddings_nextn_ith
    except (ImportError, AttributeError):  # bind llama-ext.h ourselves (C++ linkage: mangled names)
        def bind(names, argtypes, restype):
            for n in names:
                f = getattr(L._lib, n, None)
                if f is not None:
                    f.argtypes, f.restype = argtypes, restype
                    return f
            raise AttributeError(names)
        set_nextn = bind(["llama_set_embeddings_nextn", "_Z26llama_set_embeddings_nextnP13llama_contextbb"],
                         [L.llama_context_p_ctypes, ctypes.c_bool, ctypes.c_bool], None)
        get_nextn_ith = bind(["llama_get_embeddings_nextn_ith", "_Z30llama_get_embeddings_nextn_ithP13llama_contexti"],
                             [L.llama_context_p_ctypes, ctypes.c_int32], ctypes.POINTER(ctypes.c_float))
    del llama_cpp
    return L, set_nextn, get_nextn_ith


class Batch:
    """A llama_batch owning its arrays; `embd` may be given together with tokens
    (llama_batch_compat accepts both: the MTP hook batches)."""

    def __init__(self, L, tokens, pos, outputs, embd=None):
        n = len(tokens)
        self.tok = (ctypes.c_int32 * n)(*tokens)
        self.pos = (ctypes.c_int32 * n)(*pos)
        self.nsid = (ctypes.c_int32 * n)(*([1] * n))
        self.sid0 = (ctypes.c_int32 * 1)(0)
        self.sid = (ctypes.POINTER(ctypes.c_int32) * n)(*([ctypes.cast(self.sid0, ctypes.POINTER(ctypes.c_int32))] * n))
        self.out = (ctypes.c_int8 * n)(*outputs)
        self.b = L.llama_batch()
        self.b.n_tokens = n
        self.b.token = ctypes.cast(self.tok, ctypes.POINTER(ctypes.c_int32))
        if embd is not None:
            self.embd = np.ascontiguousarray(embd, dtype=np.float32).reshape(-1)
            self.b.embd = self.embd.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
        self.b.pos = ctypes.cast(self.pos, ctypes.POINTER(ctypes.c_int32))
        self.b.n_seq_id = ctypes.cast(self.nsid, ctypes.POINTER(ctypes.c_int32))
        self.b.seq_id = ctypes.cast(self.sid, ctypes.POINTER(ctypes.POINTER(ctypes.c_int32)))
        self.b.logits = ctypes.cast(self.out, ctypes.POINTER(ctypes.c_int8))


def row(ptr, n):
    if not ptr:
        raise RuntimeError("llama.cpp returned no row")
    return np.ctypeslib.as_array(ptr, shape=(n,)).astype(np.float32).copy()


def q_b64(a):
    a = np.asarray(a, dtype=np.float32)
    scale = 30000.0 / float(np.abs(a).max())
    return scale, base64.b64encode(C.row_q_zlib(a, scale)).decode()


def run_pair(L, set_nextn, get_nextn_ith, target_path, draft_path, prompt):
    mp = L.llama_model_default_params()
    mp.n_gpu_layers = 0
    m_tgt = L.llama_model_load_from_file(target_path.encode(), mp)
    m_dft = L.llama_model_load_from_file(draft_path.encode(), mp)
    if not m_tgt or not m_dft:
        raise RuntimeError(f"failed to load {target_path if not m_tgt else draft_path}")

    def cparams():
        cp = L.llama_context_default_params()
        cp.n_ctx, cp.n_batch, cp.n_ubatch = N_CTX, N_BATCH, N_BATCH
        cp.n_threads = cp.n_threads_batch = N_THREADS
        cp.flash_attn_type = L.LLAMA_FLASH_ATTN_TYPE_DISABLED
        cp.type_k = cp.type_v = 1  # GGML_TYPE_F16
        return cp

    ctx_tgt = L.llama_init_from_model(m_tgt, cparams())
    if not ctx_tgt:
        raise RuntimeError("target context")
    cp = cparams()
    cp.ctx_type = 1  # LLAMA_CONTEXT_TYPE_MTP
    cp.ctx_other = ctx_tgt
    ctx_dft = L.llama_init_from_model(m_dft, cp)
    if not ctx_dft:
        raise RuntimeError("assistant context")
    set_nextn(ctx_tgt, True, False)
    set_nextn(ctx_dft, True, True)

    n_vocab = L.llama_vocab_n_tokens(L.llama_model_get_vocab(m_tgt))
    n_embd_out = L.llama_model_n_embd_out(m_tgt) if hasattr(L, "llama_model_n_embd_out") else L.llama_model_n_embd(m_tgt)
    n = len(prompt)
    b = Batch(L, prompt, range(n), [0] * (n - 1) + [1])
    rc = L.llama_decode(ctx_tgt, b.b)
    if rc != 0:
        raise RuntimeError(f"target llama_decode rc={rc}")
    tgt_logits = row(L.llama_get_logits_ith(ctx_tgt, n - 1), n_vocab)
    tgt_h = np.stack([row(get_nextn_ith(ctx_tgt, i), n_embd_out) for i in range(n)])

    pos0 = n
    id_last = int(np.argmax(tgt_logits))
    tok, h = id_last, tgt_h[-1]
    steps = []
    for k in range(K_STEPS):
        b = Batch(L, [tok], [pos0], [1], embd=h)
        rc = L.llama_decode(ctx_dft, b.b)
        if rc != 0:
            raise RuntimeError(f"assistant llama_decode step {k} rc={rc}")
        logits = row(L.llama_get_logits_ith(ctx_dft, 0), n_vocab)
        h_next = row(get_nextn_ith(ctx_dft, 0), n_embd_out)
        steps.append((tok, logits, h_next))
        tok, h = int(np.argmax(logits)), h_next

    L.llama_free(ctx_dft)
    L.llama_free(ctx_tgt)
    L.llama_model_free(m_dft)
    L.llama_model_free(m_tgt)
    return dict(n_vocab=n_vocab, n_embd_out=n_embd_out, tgt_logits=tgt_logits, tgt_h=tgt_h, pos0=pos0,
                id_last=id_last, steps=steps)


def main(argv):
    if not argv:
        sys.exit(__doc__)
    L, set_nextn, get_nextn_ith = lib()
    L.llama_backend_init()
    if not os.environ.get("ORACLE_VERBOSE"):
        L.llama_log_set(_QUIET, ctypes.c_void_p())
    fixture_dir = argv[0]
    out = argv[1] if len(argv) > 1 else os.path.join(HERE, "..", "golden", "llamacpp")
    names = argv[2:] or [k for k, v in A.GEMMA4_ASSISTANT.items() if v.get("golden", True)]
    prompt = [int(t) for t in open(os.path.join(fixture_dir, A.ARCH, "prompt.txt")).read().split()]
    for name in names:
        cfg = A.GEMMA4_ASSISTANT[name]
        model_file, target_file = f"{A.ARCH}/{name}.gguf", f"gemma4/{cfg['target']}.gguf"
        r = run_pair(L, set_nextn, get_nextn_ith, os.path.join(fixture_dir, target_file),
                     os.path.join(fixture_dir, model_file), prompt)
        tl_scale, tl_b64 = q_b64(r["tgt_logits"])
        th_scale, th_b64 = q_b64(r["tgt_h"])
        steps = []
        for k, (tok, logits, h_next) in enumerate(r["steps"]):
            s, b64 = q_b64(logits)
            steps.append({"step": k, "token": tok, "pos": r["pos0"],
                          "h_in": "target_h_last" if k == 0 else f"step{k - 1}.h_nextn",
                          "logits_scale": s, "logits_i16_zlib_b64": b64, "h_nextn_f32_b64": C.f32_b64(h_next),
                          "argmax": int(np.argmax(logits)), "top2_gap": C.top2_gap(logits),
                          "max_abs_logit": float(np.abs(logits).max())})
        golden = {"reference": C.version(), "name": name, "arch": A.ARCH, "type": cfg["type"],
                  "model_file": model_file, "model_sha256": C.sha256(os.path.join(fixture_dir, model_file)),
                  "target_file": target_file, "target_sha256": C.sha256(os.path.join(fixture_dir, target_file)),
                  "settings": SETTINGS, "prompt_tokens": prompt, "n_vocab": r["n_vocab"],
                  "n_embd_out": r["n_embd_out"], "pos0": r["pos0"], "id_last": r["id_last"], "n_steps": K_STEPS,
                  "target_last_logits_scale": tl_scale, "target_last_logits_i16_zlib_b64": tl_b64,
                  "target_h_scale": th_scale, "target_h_i16_zlib_b64": th_b64,
                  "target_h_last_f32_b64": C.f32_b64(r["tgt_h"][-1]),
                  "steps": steps, "draft_tokens": [st["argmax"] for st in steps]}
        path = os.path.join(out, f"assistant-gemma4-{name}.json")
        with open(path, "w") as f:
            json.dump(golden, f)
        print(name, "id_last", r["id_last"], "drafts", golden["draft_tokens"],
              "max|logit|", [round(st["max_abs_logit"], 3) for st in steps],
              "max|h|", round(float(np.abs(r["tgt_h"]).max()), 3), f"{os.path.getsize(path)} B")


@ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)
def _QUIET(level, text, user_data):
    if level == 4:  # GGML_LOG_LEVEL_ERROR
        sys.stderr.write(text.decode(errors="replace"))


if __name__ == "__main__":
    main(sys.argv[1:])
