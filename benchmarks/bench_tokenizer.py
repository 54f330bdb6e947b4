#!/usr/bin/env python3
"""Encode throughput (MB/s, single thread) of uaii vs Hugging Face `tokenizers` on
~1 MB of mixed text, for the llama3, qwen3 and gemma3 tokenizer.json files, and for
llama3 with its Split regex wrapped in (?:...) so that uaii runs it in Oniguruma
(the general engine) instead of the hand-written splitter (row llama3-onig).

usage: benchmarks/bench_tokenizer.py [BUILD_DIR]   (builds target bench_tokenizer)"""
import os
import json
import shutil
import subprocess
import sys
import tempfile
import time

os.environ["RAYON_NUM_THREADS"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"
import tokenizers  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "oracles"))
import tokenizer_corpus as corpus  # noqa: E402

BUILD = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")
SHARED = os.path.join(ROOT, "..", "shared", "data", "tokenizers")


def main():
    subprocess.run(["cmake", "--build", BUILD, "--target", "bench_tokenizer"], check=True,
                   stdout=subprocess.DEVNULL)
    corpus.BIG_MIN_BYTES = 1_000_000
    text = corpus.big_text()
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8") as f:
        f.write(text)
        path = f.name
    mb = len(text.encode("utf-8")) / 1e6
    print(f"text: {mb:.2f} MB; tokenizers {tokenizers.__version__}; single thread, best of 3")
    print(f"{'tokenizer':10} {'uaii MB/s':>10} {'HF MB/s':>10} {'same ids':>9}")
    onig_dir = tempfile.mkdtemp()
    with open(os.path.join(SHARED, "llama3", "tokenizer.json"), encoding="utf-8") as f:
        tj = json.load(f)
    split = tj["pre_tokenizer"]["pretokenizers"][0]["pattern"]
    split["Regex"] = "(?:" + split["Regex"] + ")"
    with open(os.path.join(onig_dir, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tj, f, ensure_ascii=False)
    dirs = {name: os.path.join(SHARED, name) for name in ["llama3", "qwen3", "gemma3"]}
    dirs["llama3-onig"] = onig_dir
    for name, tok_dir in dirs.items():
        hf = tokenizers.Tokenizer.from_file(os.path.join(tok_dir, "tokenizer.json"))
        best = 1e30
        for _ in range(3):
            t0 = time.perf_counter()
            ids = hf.encode(text, add_special_tokens=False).ids
            best = min(best, time.perf_counter() - t0)
        out = subprocess.run([os.path.join(BUILD, "benchmarks", "bench_tokenizer"),
                              tok_dir, path, "3"],
                             check=True, capture_output=True, text=True).stdout.split()
        print(f"{name:10} {float(out[0]):10.2f} {mb / best:10.2f} {str(int(out[1]) == len(ids)):>9}")
    os.unlink(path)
    shutil.rmtree(onig_dir)


if __name__ == "__main__":
    main()
