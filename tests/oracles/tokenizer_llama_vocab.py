#!/usr/bin/env python3
"""Converts llama.cpp's own tokenizer tests (vendor/llama.cpp/models/ggml-vocab-*.gguf.inp
/ .out, the ids llama.cpp recorded for each vocabulary) from the llama-cpp-python
sdist into compact goldens tests/golden/tokenizers/llama_vocab_<name>.json.
The vocabulary .gguf files (0.7-16 MB) are not committed: tests/fixtures/make_llama_vocabs.py
extracts them from the same sdist into $UAII_FIXTURE_DIR when it is available.

usage: tokenizer_llama_vocab.py [llama_cpp_python-0.3.36.tar.gz]"""
import json
import os
import sys
import tarfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "golden", "tokenizers")
SDIST = sys.argv[1] if len(sys.argv) > 1 else "/tmp/pipdl/llama_cpp_python-0.3.36.tar.gz"
# Vocabularies whose tokenizer model and pre-tokenizer uaii supports.
NAMES = ["llama-spm", "phi-3", "llama-bpe", "qwen2", "qwen35", "starcoder", "gpt-2",
         "command-r", "refact", "mpt", "gemma-4"]
SEP = "\n__ggml_vocab_test__\n"


def main():
    version = os.path.basename(SDIST).replace(".tar.gz", "")
    with tarfile.open(SDIST) as tar:
        members = {m.name.split("/models/")[-1]: m for m in tar.getmembers() if "/models/ggml-vocab-" in m.name}
        for name in NAMES:
            inp = tar.extractfile(members[f"ggml-vocab-{name}.gguf.inp"]).read().decode("utf-8")
            out = tar.extractfile(members[f"ggml-vocab-{name}.gguf.out"]).read().decode("utf-8")
            # Every text is followed by the separator (llama.cpp's test-tokenizer-0 format),
            # and tokenized with add_special = false, parse_special = false.
            texts = inp.split(SEP)
            if texts[-1] == "":
                texts.pop()  # gemma-4's file lacks the final separator
            lines = out.split("\n")
            if lines and lines[-1] == "":
                lines.pop()
            assert len(lines) == len(texts), (name, len(lines), len(texts))
            cases = [{"text": t, "ids": [int(x) for x in l.split()]} for t, l in zip(texts, lines)]
            golden = {
                "reference": f"llama.cpp as vendored by {version} (its recorded .inp/.out)",
                "made_by": "tests/oracles/tokenizer_llama_vocab.py",
                "vocab": f"ggml-vocab-{name}.gguf",
                "cases": cases,
            }
            dst = os.path.join(OUT, f"llama_vocab_{name}.json")
            with open(dst, "w", encoding="utf-8") as f:
                json.dump(golden, f, ensure_ascii=False, separators=(",", ":"))
            print(dst, len(cases), "cases")


if __name__ == "__main__":
    main()
