#!/usr/bin/env python3
"""llama.cpp's end-of-generation and special-token behaviour on real GGUF
vocabularies (the ggml-vocab-*.gguf files llama.cpp ships, extracted by
tests/fixtures/make_llama_vocabs.py), written to
tests/golden/tokenizers/special_rules.json for the rules table test
(tests/tokenizers/special_rules_test.cpp).

Per vocabulary: the ids llama_vocab_is_eog reports (over the whole vocabulary), the
BOS id and whether the vocabulary adds it, and llama_tokenize's ids for texts that
exercise the special-token rules (parse_special = add_special = true): a special
token inside text, whitespace after one (Phi-3's rstrip), the SentencePiece leading
space after a special token (add_space_prefix), and a text that starts with the BOS
text (llama.cpp then adds a second BOS: uaii never doubles it, and the test says
how the two differ).

usage: tokenizer_special_rules.py FIXTURE_DIR   (needs llama-cpp-python)
"""
import ctypes
import json
import os
import sys

import llama_cpp

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "golden", "tokenizers", "special_rules.json")
NAMES = ["llama-spm", "phi-3", "llama-bpe", "qwen2", "qwen35", "starcoder", "gpt-2", "command-r", "refact", "mpt",
         "gemma-4"]


def piece(vocab, i):
    return llama_cpp.llama_vocab_get_text(vocab, i).decode("utf-8", "replace")


def tokenize(vocab, text, add_special=True, parse_special=True):
    data = text.encode("utf-8")
    buf = (llama_cpp.llama_token * (len(data) + 16))()
    n = llama_cpp.llama_tokenize(vocab, data, len(data), buf, len(buf), add_special, parse_special)
    assert n >= 0, (text, n)
    return list(buf[:n])


def texts_for(vocab, n_vocab):
    """Texts built from the vocabulary's own special tokens."""
    bos = llama_cpp.llama_vocab_bos(vocab)
    control = [i for i in range(n_vocab) if llama_cpp.llama_vocab_is_control(vocab, i)]
    eog = [i for i in range(n_vocab) if llama_cpp.llama_vocab_is_eog(vocab, i)]
    specials = [piece(vocab, i) for i in (control[:3] + eog[:3]) if i != bos and piece(vocab, i)]
    texts = ["Hello world", " Hello", "  leading spaces"]
    for s in dict.fromkeys(specials):
        texts += [f"{s}Hello", f"x{s} y", f"{s}  two spaces", f"{s}\nnewline"]
    if bos >= 0 and piece(vocab, bos):
        texts += [piece(vocab, bos) + "Hello", piece(vocab, bos) + " Hello"]
    return texts


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    llama_cpp.llama_backend_init()
    vocabs = []
    for name in NAMES:
        path = os.path.join(sys.argv[1], "llama-vocab", f"ggml-vocab-{name}.gguf")
        params = llama_cpp.llama_model_default_params()
        params.vocab_only = True
        model = llama_cpp.llama_model_load_from_file(path.encode(), params)
        assert model, path
        vocab = llama_cpp.llama_model_get_vocab(model)
        n = llama_cpp.llama_vocab_n_tokens(vocab)
        bos = llama_cpp.llama_vocab_bos(vocab)
        cases = [{"text": t, "ids": tokenize(vocab, t)} for t in texts_for(vocab, n)]
        vocabs.append({
            "vocab": f"ggml-vocab-{name}.gguf",
            "eog": [i for i in range(n) if llama_cpp.llama_vocab_is_eog(vocab, i)],
            "bos": bos,
            "add_bos": bool(llama_cpp.llama_vocab_get_add_bos(vocab)),
            "cases": cases,
        })
        llama_cpp.llama_model_free(model)
        print(name, "eog", vocabs[-1]["eog"][:8], len(cases), "cases")
    golden = {
        "reference": f"llama-cpp-python {llama_cpp.__version__} (llama_vocab_is_eog, llama_tokenize with "
                     "add_special and parse_special)",
        "made_by": "tests/oracles/tokenizer_special_rules.py",
        "vocabs": vocabs,
    }
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(golden, f, ensure_ascii=False, indent=0)
        f.write("\n")


if __name__ == "__main__":
    main()
