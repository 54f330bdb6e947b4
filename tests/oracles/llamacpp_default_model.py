#!/usr/bin/env python3
"""Goldens for the default model (Gemma 3 270M Q4_K_M) from llama.cpp.

usage: llamacpp_default_model.py MODEL.gguf [OUT_DIR]
Writes OUT_DIR (default tests/golden/llamacpp/) files:
  greedy.json   greedy continuations (32 tokens) of several prompts, with llama.cpp's
                top-2 logit gap at every step
  teacher.json  teacher-forced pass over teacher_text.txt: per position the top-20
                (id, logit) and the top-2 gap
  row_<pos>.i16.zlib  two full logit rows: zlib of little-endian int16 round(logit*32)
                (position, scale and versions are in teacher.json under "full_rows")
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import llamacpp_common as C  # noqa: E402

PROMPTS = [
    "The capital of France is",
    "def fibonacci(n):",
    "Once upon a time, in a small village by the sea,",
    "The three primary colors are",
    "Water boils at a temperature of",
    "My favourite recipe for pancakes needs",
]
N_GEN = 32
FULL_ROWS = (100, 650)
ROW_SCALE = 32


def main():
    model = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "..", "golden", "llamacpp")
    os.makedirs(out, exist_ok=True)
    llm = C.load(model, n_ctx=1024)
    meta = {"reference": C.version(), "model_sha256": C.sha256(model), "model_file": os.path.basename(model),
            "settings": "n_ctx=1024 n_batch=512 n_threads=2 flash_attn=False logits_all=True, KV f16"}

    greedy = []
    for p in PROMPTS:
        toks = llm.tokenize(p.encode(), add_bos=True, special=False)
        llm.reset()
        llm.eval(toks)
        gen, gaps = [], []
        for _ in range(N_GEN):
            row = np.array(llm.scores[llm.n_tokens - 1], dtype=np.float32)
            t = int(row.argmax())
            gen.append(t)
            gaps.append(round(C.top2_gap(row), 5))
            llm.eval([t])
        greedy.append({"prompt": p, "prompt_tokens": toks, "tokens": gen, "top2_gaps": gaps})
        print(p, "->", llm.detokenize(gen).decode(errors="replace"))
    with open(os.path.join(out, "greedy.json"), "w") as f:
        json.dump({**meta, "n_gen": N_GEN, "cases": greedy}, f, indent=1)

    text = open(os.path.join(here, "teacher_text.txt")).read()
    toks = llm.tokenize(text.encode(), add_bos=True, special=False)
    print("teacher tokens:", len(toks))
    logits = C.eval_all(llm, toks)
    top_ids, top_vals, gaps = [], [], []
    for row in logits:
        idx = np.argsort(-row, kind="stable")[:20]
        top_ids.append([int(i) for i in idx])
        top_vals.append([round(float(row[i]), 4) for i in idx])
        gaps.append(round(float(row[idx[0]] - row[idx[1]]), 5))
    rows = []
    for pos in FULL_ROWS:
        name = f"row_{pos}.i16.zlib"
        with open(os.path.join(out, name), "wb") as f:
            f.write(C.row_q_zlib(logits[pos], ROW_SCALE))
        rows.append({"position": pos, "file": name, "scale": ROW_SCALE, "n_vocab": int(logits.shape[1])})
    with open(os.path.join(out, "teacher.json"), "w") as f:
        json.dump({**meta, "tokens": toks, "top_k": 20, "top_ids": top_ids, "top_logits": top_vals,
                   "top2_gaps": gaps, "full_rows": rows}, f, separators=(",", ":"))


if __name__ == "__main__":
    main()
