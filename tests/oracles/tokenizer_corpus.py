"""Shared corpus for the tokenizer oracles: the texts every golden covers, and the
deterministic ~100 KB text (tests/tokenizers rebuilds it from the same word list,
seed and LCG, so the big text itself is never committed)."""

BIG_SEED = 20240607
BIG_MIN_BYTES = 100_000
# Pieces the big text is made of (mixed scripts, whitespace, code, numbers).
BIG_WORDS = [
    "the", " quick", " brown", " fox", "jumps", " over", " lazy", " dog", ".", ",", "\n", "\n\n",
    "  ", "\t", "\r\n", " 12", "345", "2024", " 3.14159", "1000000", " naïve", " café", "Übermäßig",
    " 日本語", "の", "テキスト", " 中文", "汉字", " 한국어", " مرحبا", " بالعالم", " नमस्ते", " दुनिया",
    " Привет", " мир", " Ελληνικά", " 😀", "👍🏽", "👨‍👩‍👧", " 🇫🇷", " def", " foo(x):", " return",
    " x+1", "{", "}", "[]", "()", " ==", " !=", "->", " //", " #", " '", "'s", "'LL", " don't",
    " I'm", " HELLO", "World", " camelCase", "snake_case", "   ", "\u00a0", " e\u0301", "ﬁ",
]

TEXTS = [
    "",
    " ",
    "  ",
    "\t",
    "\n",
    "\n\n\n",
    "Hello world",
    " Hello world",
    "Hello  world",
    "hello\tworld\t\tagain",
    "line one\r\nline two\r\n\r\nline four",
    "trailing spaces   ",
    "   leading spaces",
    "mixed \t \n \r\n  whitespace\n\t\n",
    "The quick brown fox jumps over the lazy dog.",
    "It's a test; they're here, we've done it, I'm sure you'll see, he'd know.",
    "IT'S LOUD, THEY'RE LOUD, I'M LOUD",
    "don't won't can't shouldn't y'all",
    "1", "12", "123", "1234", "12345", "123456", "1234567", "12345678", "123456789",
    "1234567890", "12345678901", "123456789012", "1234567890123456789",
    "3.14159 2.71828 -42 +7 1e10 0x1F 1,000,000",
    "Version 2.0.1-beta (build 20240115)",
    "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n",
    "for (int i = 0; i < 10; ++i) { sum += a[i] * b[i]; }",
    "#include <stdio.h>\nint main(void) { printf(\"%d\\n\", 42); return 0; }",
    "<html><body><div class=\"x\">Hi &amp; bye</div></body></html>",
    "SELECT id, name FROM users WHERE age >= 18 ORDER BY name;",
    "{\"key\": [1, 2, 3], \"nested\": {\"a\": null, \"b\": true}}",
    "日本語のテキストです。東京は大きい都市です。",
    "中文文本测试，包括标点符号。",
    "한국어 텍스트를 테스트합니다.",
    "مرحبا بالعالم، هذا نص عربي.",
    "नमस्ते दुनिया, यह हिंदी पाठ है।",
    "Привет, мир! Это русский текст.",
    "Ελληνικά γράμματα και λέξεις.",
    "ไทยภาษา ทดสอบ",
    "Emoji: 😀 😃 😄 👍🏽 👩🏿‍💻 👨‍👩‍👧‍👦 🇯🇵 ❤️ ✨",
    "café naïve résumé coöperate Übermäßig façade",
    "e\u0301 vs \u00e9, A\u030a vs \u00c5",
    "ﬁ ﬂ ① ² ½ Ⅻ",
    "\u00a0non-breaking\u00a0spaces\u2003em\u2009thin",
    "zero\u200bwidth\u200cjoiners\u200d",
    "a" * 50,
    "ab" * 40,
    "!!!???...,,,;;;",
    "--- *** ___ === +++ ~~~",
    "    indented four\n        indented eight",
    "\n\nparagraph\n\n\nparagraph\n",
    "Mixed CASE camelCase PascalCase snake_case kebab-case SCREAMING_CASE",
    "HTTPServer XMLHttpRequest iOS macOS",
    "email@example.com https://example.org/path?q=1&r=2#frag",
    "<s>Hello</s> <s> world",
    "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>",
    "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHi<|im_end|>",
    "<bos><start_of_turn>user\nHello<end_of_turn>\n<start_of_turn>model\n",
    "text with <|endoftext|> inside and <unk> too",
    "   <|im_start|>   spaced   <|im_end|>   ",
    "Ünïcödé ŝtrïng wïth ăccents ąnd ŀigatures",
    "tab\tseparated\tvalues\n1\t2\t3",
    "CRLF\r\n\r\n\r\nend",
    "A sentence with a very long word: pneumonoultramicroscopicsilicovolcanoconiosis.",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝕞𝕒𝕥𝕙 𝒜𝒷𝒸 and 𐍈 gothic",
]


def big_text():
    """~100 KB deterministic text: a 31-bit LCG picks words until the size is reached."""
    x = BIG_SEED
    parts = []
    size = 0
    while size < BIG_MIN_BYTES:
        x = (x * 1103515245 + 12345) % (1 << 31)
        w = BIG_WORDS[(x >> 16) % len(BIG_WORDS)]
        parts.append(w)
        size += len(w.encode("utf-8"))
    return "".join(parts)


def pack_ids(ids):
    """Compact id list: LEB128 varints, base64 (about 4 characters per id)."""
    import base64
    out = bytearray()
    for v in ids:
        while True:
            b = v & 0x7F
            v >>= 7
            out.append(b | (0x80 if v else 0))
            if not v:
                break
    return base64.b64encode(bytes(out)).decode("ascii")
