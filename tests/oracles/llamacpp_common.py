"""Shared helpers for the llama.cpp oracle scripts (llama-cpp-python).

The oracles run llama.cpp on CPU with the settings uaii mirrors: F16 KV cache
(llama.cpp's default), no flash attention, 2 threads, logits for every position.
They record the llama-cpp-python version in every golden they write.
"""
import base64
import hashlib
import zlib

import numpy as np


def load(path, n_ctx):
    import llama_cpp

    return llama_cpp.Llama(model_path=path, n_ctx=n_ctx, n_batch=512, logits_all=True, n_threads=2,
                           flash_attn=False, verbose=False)


def version():
    import llama_cpp

    return f"llama-cpp-python {llama_cpp.__version__}"


def eval_all(llm, tokens):
    """Logits [len(tokens), n_vocab] of a fresh evaluation of `tokens`."""
    llm.reset()
    llm.eval(tokens)
    return np.array(llm.scores[: len(tokens)], dtype=np.float32)


def top2_gap(row):
    a = np.partition(row, -2)[-2:]
    return float(abs(a[1] - a[0]))


def f32_b64(a):
    return base64.b64encode(np.asarray(a, dtype="<f4").tobytes()).decode()


def row_q_zlib(row, scale):
    """A full logit row as zlib'ed little-endian int16 of round(logit * scale)."""
    q = np.clip(np.round(np.asarray(row) * scale), -32768, 32767).astype("<i2")
    return zlib.compress(q.tobytes(), 9)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
