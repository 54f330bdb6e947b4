#!/usr/bin/env python3
"""Goldens for the tiny random GGUFs (tests/fixtures/make_tiny_models.py) from llama.cpp.

usage: llamacpp_tiny_models.py FIXTURE_DIR [OUT_DIR]
For every tiny-<family>-<type>.gguf, evaluates the fixture's 64-token prompt and
writes OUT_DIR/tiny/<name>.json (default tests/golden/llamacpp/tiny/): the file's
SHA-256 (the test checks it still matches), the prompt, and all 64 logit rows as
base64 little-endian float32.
"""
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import llamacpp_common as C  # noqa: E402


def main():
    fixtures = os.path.join(sys.argv[1], "tiny")
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "..", "golden", "llamacpp", "tiny")
    os.makedirs(out, exist_ok=True)
    prompt = [int(t) for t in open(os.path.join(fixtures, "prompt.txt")).read().split()]
    for path in sorted(glob.glob(os.path.join(fixtures, "tiny-*.gguf"))):
        name = os.path.basename(path)[: -len(".gguf")]
        llm = C.load(path, n_ctx=256)
        logits = C.eval_all(llm, prompt)
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump({"reference": C.version(), "model_file": os.path.basename(path),
                       "model_sha256": C.sha256(path),
                       "settings": "n_ctx=256 n_batch=512 n_threads=2 flash_attn=False logits_all=True, KV f16",
                       "prompt_tokens": prompt, "n_vocab": int(logits.shape[1]),
                       "logits_f32_b64": C.f32_b64(logits)}, f)
        print(name, logits.shape, float(abs(logits).max()))
        del llm


if __name__ == "__main__":
    main()
