#!/usr/bin/env python3
"""Oracle: llama.cpp's tokenization (through llama-cpp-python, vocab_only) of the
default model's GGUF vocabulary (Gemma 3 270M Q4_K_M) over the shared corpus.
Writes tests/golden/tokenizers/gguf_gemma3_270m.json.

usage: tokenizer_gguf.py [path/to/gemma-3-270m-q4_k_m.gguf]   (default /tmp/gemma.gguf)"""
import json
import os
import sys

import llama_cpp

sys.path.insert(0, os.path.dirname(__file__))
import tokenizer_corpus as corpus  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "golden", "tokenizers", "gguf_gemma3_270m.json")


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "/tmp/gemma.gguf"
    llm = llama_cpp.Llama(path, vocab_only=True, verbose=False)
    cases = []
    for text in corpus.TEXTS:
        b = text.encode("utf-8")
        cases.append({
            "text": text,
            "ids": llm.tokenize(b, add_bos=False, special=False),
            "ids_special": llm.tokenize(b, add_bos=True, special=True),
        })
    big = corpus.big_text()
    golden = {
        "reference": f"llama.cpp via llama-cpp-python {llama_cpp.__version__}",
        "made_by": "tests/oracles/tokenizer_gguf.py",
        "model": os.path.basename(path),
        "special": {"bos": llm.token_bos(), "eos": llm.token_eos()},
        "cases": cases,
        "big": {
            "seed": corpus.BIG_SEED,
            "min_bytes": corpus.BIG_MIN_BYTES,
            "words": corpus.BIG_WORDS,
            "ids_packed": corpus.pack_ids(llm.tokenize(big.encode("utf-8"), add_bos=False, special=False)),
        },
    }
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(golden, f, ensure_ascii=False, separators=(",", ":"))
    print(OUT, os.path.getsize(OUT), "bytes")


if __name__ == "__main__":
    main()
