#!/usr/bin/env python3
"""Goldens for the tiny mixture-of-experts GGUFs (tests/fixtures/make_moe_models.py).

usage: llamacpp_moe.py FIXTURE_DIR [OUT_DIR] [NAME ...]
For every row of make_moe_models.MOE_FAMILIES (or the NAMEs given), evaluates the
64-token prompt with llama.cpp (llama-cpp-python, CPU, F16 KV cache, no flash
attention) and writes OUT_DIR/moe-<name>.json (default tests/golden/llamacpp/):
the reference version, the file's SHA-256, the prompt, and all 64 logit rows as
zlib'ed little-endian int16 round(logit * scale), base64 (scale = 30000 / max|logit|,
so the rounding error is below 1 / (2 * scale)).
"""
import base64
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))
import llamacpp_common as C  # noqa: E402
import make_moe_models as F  # noqa: E402


def main():
    fixtures = os.path.join(sys.argv[1], "moe")
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "..", "golden", "llamacpp")
    names = sys.argv[3:] or list(F.MOE_FAMILIES)
    prompt = [int(t) for t in open(os.path.join(fixtures, "prompt.txt")).read().split()]
    for name in names:
        path = os.path.join(fixtures, name + ".gguf")
        llm = C.load(path, n_ctx=256)
        logits = C.eval_all(llm, prompt)
        scale = 30000.0 / float(np.abs(logits).max())
        with open(os.path.join(out, f"moe-{name}.json"), "w") as f:
            json.dump({"reference": C.version(), "family": name, "arch": F.MOE_FAMILIES[name]["arch"],
                       "type": F.MOE_FAMILIES[name]["type"], "model_file": f"moe/{name}.gguf",
                       "model_sha256": C.sha256(path),
                       "settings": "n_ctx=256 n_batch=512 n_threads=2 flash_attn=False logits_all=True, KV f16",
                       "prompt_tokens": prompt, "n_vocab": int(logits.shape[1]), "scale": scale,
                       "logits_i16_zlib_b64": base64.b64encode(C.row_q_zlib(logits, scale)).decode()}, f)
        print(name, logits.shape, float(abs(logits).max()))
        del llm


if __name__ == "__main__":
    main()
