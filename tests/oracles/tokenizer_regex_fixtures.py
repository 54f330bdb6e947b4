#!/usr/bin/env python3
"""Oracle fixture maker: small tokenizer.json files whose Split pre-tokenizers and
Replace normalizers use regexes that are NOT among uaii's hand-written splitters,
with every SplitDelimiterBehavior and invert. Each is a byte-level BPE trained by
Hugging Face `tokenizers` on the shared corpus (so every byte has a token), saved
by `tokenizers` itself. Writes tests/data/tokenizers/<name>/tokenizer.json; then
run tokenizer_hf.py to write their ids goldens. Needs requirements/oracle.txt."""
import os
import sys

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

sys.path.insert(0, os.path.dirname(__file__))
import tokenizer_corpus as corpus  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "data", "tokenizers")

BYTES = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)


def split(pattern, behavior, invert=False):
    return pre_tokenizers.Split(pattern, behavior, invert=invert)


# name -> (normalizer or None, pre-tokenizer steps before ByteLevel)
FIXTURES = {
    # Case-insensitive words, capitalised words and short numbers, inverted.
    "regex_isolated_invert": (None, [split(Regex(r"(?i:the|and)\b|\p{Lu}\p{Ll}+|\d{1,2}"), "isolated", True)]),
    # Whitespace runs and sentence punctuation dropped.
    "regex_removed": (None, [split(Regex(r"\s+|[,.;:!?]"), "removed")]),
    # Punctuation and symbol runs stick to the word before them.
    "regex_merged_prev": (None, [split(Regex(r"[\p{P}\p{S}]+"), "merged_with_previous")]),
    # camelCase boundaries (an empty lookaround match) and single spaces start the next piece.
    "regex_merged_next": (None, [split(Regex(r"(?<=\p{Ll})(?=\p{Lu})|\s"), "merged_with_next")]),
    # Letters one at a time, merged back into runs; then digits in atomic pairs.
    "regex_contiguous": (None, [split(Regex(r"\p{L}"), "contiguous"),
                                split(Regex(r"(?>\d\d)"), "isolated")]),
    # A literal split, inverted and contiguous.
    "string_contiguous_invert": (None, [split(" ", "contiguous", True)]),
    # Replace normalizers with regexes: whitespace runs squeezed, URLs and
    # case-insensitive words rewritten; then the GPT-2 byte-level regex.
    "replace_regex": (normalizers.Sequence([
        normalizers.Replace(Regex(r"[ \t]{2,}"), " "),
        normalizers.Replace(Regex(r"https?://\S+"), "<url>"),
        normalizers.Replace(Regex(r"(?i:colou?r)"), "color"),
        normalizers.NFC(),
    ]), None),
}


def build(name, norm, steps):
    tok = Tokenizer(models.BPE())
    if norm is not None:
        tok.normalizer = norm
    if steps is None:
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    else:
        tok.pre_tokenizer = pre_tokenizers.Sequence(steps + [BYTES])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=600, show_progress=False, special_tokens=["<s>", "</s>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(list(corpus.TEXTS) + [corpus.big_text()], trainer=trainer)
    bos = tok.token_to_id("<s>")
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", bos)])
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    tok.save(os.path.join(d, "tokenizer.json"))
    print(name, os.path.getsize(os.path.join(d, "tokenizer.json")), "bytes")


def main():
    for name, (norm, steps) in FIXTURES.items():
        build(name, norm, steps)


if __name__ == "__main__":
    main()
