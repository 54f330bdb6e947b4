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


def write_table_goldens(argv, table, kind):
    """Goldens for one table of tiny GGUFs (make_family_models.FAMILIES, make_moe_models
    .MOE_FAMILIES): argv = FIXTURE_DIR [OUT_DIR] [NAME ...]. For every row (or the NAMEs
    given), evaluates FIXTURE_DIR/<kind>/prompt.txt on <kind>/<name>.gguf and writes
    OUT_DIR/<kind>-<name>.json (default tests/golden/llamacpp/): the reference version,
    the file's SHA-256, the prompt, and all logit rows as zlib'ed little-endian int16
    round(logit * scale), base64 (scale = 30000 / max|logit|, so the rounding error is
    below 1 / (2 * scale))."""
    import base64
    import json
    import os

    import numpy as np

    here = os.path.dirname(os.path.abspath(__file__))
    fixtures = os.path.join(argv[0], kind)
    out = argv[1] if len(argv) > 1 else os.path.join(here, "..", "golden", "llamacpp")
    names = argv[2:] or list(table)
    prompt = [int(t) for t in open(os.path.join(fixtures, "prompt.txt")).read().split()]
    for name in names:
        path = os.path.join(fixtures, name + ".gguf")
        llm = load(path, n_ctx=256)
        logits = eval_all(llm, prompt)
        scale = 30000.0 / float(np.abs(logits).max())
        with open(os.path.join(out, f"{kind}-{name}.json"), "w") as f:
            json.dump({"reference": version(), "family": name, "arch": table[name]["arch"],
                       "type": table[name]["type"], "model_file": f"{kind}/{name}.gguf",
                       "model_sha256": sha256(path),
                       "settings": "n_ctx=256 n_batch=512 n_threads=2 flash_attn=False logits_all=True, KV f16",
                       "prompt_tokens": prompt, "n_vocab": int(logits.shape[1]), "scale": scale,
                       "logits_i16_zlib_b64": base64.b64encode(row_q_zlib(logits, scale)).decode()}, f)
        print(name, logits.shape, float(abs(logits).max()))
        del llm
