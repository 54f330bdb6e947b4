#!/usr/bin/env python3
"""Oracle: trains a tiny SentencePiece model with Debian's `spm_train` and records
`spm_encode --output_format=id` ids (the sentencepiece library's own) for the
single-line texts of the shared corpus. Writes tests/golden/tokenizers/spm_tiny.model
(a few KB, committed so the ids stay valid) and spm_tiny.json."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import tokenizer_corpus as corpus  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "golden", "tokenizers")


def main():
    version = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "sentencepiece"],
                             capture_output=True, text=True).stdout.strip()
    texts = [t for t in corpus.TEXTS if "\n" not in t and "\r" not in t and t.strip() == t and t]
    with tempfile.TemporaryDirectory() as d:
        train = os.path.join(d, "train.txt")
        with open(train, "w", encoding="utf-8") as f:
            f.write(corpus.big_text().replace("\r", ""))
            f.write("\n".join(texts) + "\n")
        prefix = os.path.join(d, "spm_tiny")
        r = subprocess.run(["spm_train", f"--input={train}", f"--model_prefix={prefix}", "--vocab_size=800",
                        "--model_type=bpe", "--byte_fallback=true", "--character_coverage=0.995",
                        "--num_threads=1", "--user_defined_symbols=<tool>",
                        "--normalization_rule_name=identity", "--remove_extra_whitespaces=false"],
                       check=False, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(r.stderr[-2000:])
        model = prefix + ".model"
        inp = os.path.join(d, "in.txt")
        with open(inp, "w", encoding="utf-8") as f:
            f.write("\n".join(texts) + "\n")
        ids = subprocess.run(["spm_encode", f"--model={model}", "--output_format=id", f"--input={inp}"],
                             check=True, capture_output=True, text=True).stdout.split("\n")
        with open(model, "rb") as src, open(os.path.join(OUT, "spm_tiny.model"), "wb") as dst:
            dst.write(src.read())
    cases = [{"text": t, "ids": [int(x) for x in line.split()]} for t, line in zip(texts, ids)]
    golden = {"reference": f"sentencepiece {version} (spm_train, spm_encode)",
              "made_by": "tests/oracles/tokenizer_spm.py", "model": "spm_tiny.model", "cases": cases}
    with open(os.path.join(OUT, "spm_tiny.json"), "w", encoding="utf-8") as f:
        json.dump(golden, f, ensure_ascii=False, separators=(",", ":"))
    print(len(cases), "cases", os.path.getsize(os.path.join(OUT, "spm_tiny.model")), "model bytes")


if __name__ == "__main__":
    main()
