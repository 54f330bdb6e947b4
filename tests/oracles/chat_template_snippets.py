#!/usr/bin/env python3
"""Oracle: renders tests/chat/jinja_snippets.txt with Python jinja2 in Hugging Face's
chat-template environment and writes tests/golden/chat/jinja_snippets.json.

Usage: python3 tests/oracles/chat_template_snippets.py   (needs jinja2; see
requirements/oracle.txt). Never fed from uaii's output.
"""
import json
import os
import sys

import jinja2

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chat_template_hf_env import FIXED_EPOCH, render  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SRC = os.path.join(ROOT, "tests", "chat", "jinja_snippets.txt")
OUT = os.path.join(ROOT, "tests", "golden", "chat", "jinja_snippets.json")


def parse_cases(text):
    cases, cur = [], None
    for line in text.split("\n"):
        if line.startswith("### "):
            if cur:
                cases.append(cur)
            head = line[4:].split()
            cur = {"name": head[0], "immutable": "env=mutable" not in head[1:], "context": {}, "lines": []}
        elif cur is None:
            continue
        elif line.startswith("ctx: ") and not cur["lines"] and not cur.get("has_ctx"):
            cur["context"] = json.loads(line[5:])
            cur["has_ctx"] = True
        else:
            cur["lines"].append(line)
    if cur:
        cases.append(cur)
    out = []
    for c in cases:
        lines = c["lines"]
        while lines and lines[-1] == "" and len(lines) > 1 and c["name"] != "trailing_newline_dropped":
            lines.pop()
        template = "\n".join(lines)
        if "crlf" in c["name"]:
            template = template.replace("\n", "\r\n")
        out.append({"name": c["name"], "immutable": c["immutable"], "context": c["context"], "template": template})
    return out


def main():
    with open(SRC, encoding="utf-8") as f:
        cases = parse_cases(f.read())
    results = []
    for c in cases:
        r = dict(c)
        r.update(render(c["template"], c["context"], c["immutable"]))
        results.append(r)
    golden = {
        "reference": "jinja2 " + jinja2.__version__ + " (HF apply_chat_template environment, tests/oracles/chat_template_hf_env.py)",
        "strftime_now_epoch": FIXED_EPOCH,
        "cases": results,
    }
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(golden, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"wrote {len(results)} cases to {OUT}")


if __name__ == "__main__":
    main()
