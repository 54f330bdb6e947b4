#!/usr/bin/env python3
"""Oracle: splits of every named pre-tokenizer by its published regex(es), run with
Python's `regex` module. Several regexes apply in sequence (llama.cpp's
unicode_regex_split): each splits the previous pieces, unmatched text staying as its
own pieces. Writes tests/golden/tokenizers/pretok_splits.json (corpus + piece
lengths in code points, packed)."""
import json
import os
import random
import sys

import regex

sys.path.insert(0, os.path.dirname(__file__))
import tokenizer_corpus as corpus  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "golden", "tokenizers", "pretok_splits.json")

GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
LLAMA3 = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
QWEN2 = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
QWEN35 = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
GPT4O = r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
DEEPSEEK3 = [r"\p{N}{1,3}", r"[一-龥぀-ゟ゠-ヿ]+",
             r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"]

# name -> regex sequence (tokenizer.json regexes; llama.cpp's lists for default/starcoder).
PRETOKENIZERS = {
    "default": [r"[\p{P}\$\+<=>\^~\|]+", GPT2, r"\p{N}+", r"[0-9][0-9][0-9]"],
    "gpt-2": [GPT2],
    "llama3": [LLAMA3],
    "smaug-bpe": [LLAMA3],
    "qwen2": [QWEN2],
    "qwen35": [QWEN35],
    "starcoder": [r"\p{N}", GPT2],
    "gpt-4o": [GPT4O],
    "deepseek-v3": DEEPSEEK3,
    "gemma4": [r"[^\n]+|[\n]+"],
}

# Characters to mix: every class the splitters distinguish.
ALPHABET = (
    list("abcXYZ   \t\n\r'sSlLdD0123456789.,;:!?-_/\\\"#$%&*+<=>@^`|~()[]{}")
    + ["\r\n", "'s", "'LL", "'Re", " ", "  ", "\u00a0", "\u2003", "\u3000", "\u0085",
       "é", "e\u0301", "\u0301", "\u0903", "ǅ", "ʰ", "ª", "ß", "Ω", "ω", "Ж", "ж",
       "日", "本", "語", "ひ", "カ", "ー", "한", "ㄱ", "中", "龥", "龦",
       "ا", "ب", "\u064b", "न", "म", "\u094d", "\u093f", "ก", "\u0e31",
       "①", "²", "½", "Ⅻ", "٣", "३", "€", "£", "©", "∑", "😀", "👍", "\U0001f3fd", "\u200d",
       "🇫", "🇷", "\u200b", "𝔘", "𐍈", "\x00", "\x7f", "…", "«", "»", "—", "。", "、"]
)


def split_seq(patterns, text):
    pieces = [text]
    for pat in patterns:
        rx = regex.compile(pat)
        nxt = []
        for p in pieces:
            pos = 0
            for m in rx.finditer(p):
                if m.start() > pos:
                    nxt.append(p[pos:m.start()])
                if m.end() > m.start():
                    nxt.append(m.group())
                pos = m.end()
            if pos < len(p):
                nxt.append(p[pos:])
        pieces = nxt
    return pieces


def make_corpus():
    rnd = random.Random(1234)
    texts = list(corpus.TEXTS)
    for _ in range(400):
        n = rnd.randint(1, 40)
        texts.append("".join(rnd.choice(ALPHABET) for _ in range(n)))
    texts.append(corpus.big_text()[:20000])
    return texts


def main():
    texts = make_corpus()
    out = {
        "reference": f"Python regex {regex.__version__}",
        "made_by": "tests/oracles/tokenizer_pretok.py",
        "regexes": PRETOKENIZERS,
        "texts": texts,
        "splits": {},
    }
    for name, pats in PRETOKENIZERS.items():
        lens = []
        for t in texts:
            pieces = split_seq(pats, t)
            assert "".join(pieces) == t
            lens.append(len(pieces))
            lens.extend(len(p) for p in pieces)
        out["splits"][name] = corpus.pack_ids(lens)
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, separators=(",", ":"))
    print(OUT, os.path.getsize(OUT), "bytes")


if __name__ == "__main__":
    main()
