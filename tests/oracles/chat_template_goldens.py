#!/usr/bin/env python3
"""Oracle: renders the chat templates in /work/shared/data/tokenizers/*/tokenizer_config.json
with Python jinja2 in Hugging Face's apply_chat_template environment and writes one
golden per template to tests/golden/chat/<model>.json.

The context is built as transformers' render_jinja_template builds it, with the
variables the product fixes (lib/chat/chat_template.h): messages, tools only when the
request declares at least one tool (else not passed: undefined), documents (None),
add_generation_prompt, the tokenizer's bos_token / eos_token when set, enable_thinking
and thinking (False unless the case enables thinking) and preserve_thinking (False). Where jinja2 raises (a template refusing a role), the golden
records the exception class and message instead of an output.

Usage: python3 tests/oracles/chat_template_goldens.py [SHARED_TOKENIZERS_DIR]
(needs jinja2; see requirements/oracle.txt). Never fed from uaii's output.
"""
import copy
import hashlib
import json
import os
import sys

import jinja2

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chat_template_hf_env import FIXED_EPOCH, render  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT_DIR = os.path.join(ROOT, "tests", "golden", "chat")

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the current weather for a city",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "City name, e.g. Paris"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                },
                "required": ["city"],
            },
        },
    }
]

SYSTEM = {"role": "system", "content": "You are a concise assistant."}
USER1 = {"role": "user", "content": "Hello! Who are you?"}
ASSISTANT1 = {"role": "assistant", "content": "I am a helpful assistant."}
USER2 = {"role": "user", "content": "  What is 2 + 2?  "}
TOOL_CALL = {
    "role": "assistant",
    "content": "",
    "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}}
    ],
}
TOOL_RESULT = {"role": "tool", "tool_call_id": "call_1", "name": "get_weather", "content": "{\"temperature\": 18, \"sky\": \"clear\"}"}
WEATHER_Q = {"role": "user", "content": "What's the weather in Paris?"}

CASES = [
    {"name": "plain_turn", "messages": [USER1]},
    {"name": "system_prompt", "messages": [SYSTEM, USER1]},
    {"name": "multi_turn", "messages": [SYSTEM, USER1, ASSISTANT1, USER2]},
    {"name": "no_generation_prompt", "messages": [USER1, ASSISTANT1], "add_generation_prompt": False},
    {"name": "thinking_on", "messages": [USER1], "enable_thinking": True},
    {"name": "thinking_off", "messages": [USER1], "enable_thinking": False},
    {
        "name": "thinking_history",
        "messages": [USER1, {"role": "assistant", "content": "<think>\nThe user greets me.\n</think>\n\nHi there!"}, USER2],
        "enable_thinking": True,
    },
    {"name": "tools_declared", "messages": [SYSTEM, WEATHER_Q], "tools": TOOLS},
    {"name": "tools_empty", "messages": [SYSTEM, WEATHER_Q], "tools": []},
    {"name": "tool_call_and_result", "messages": [WEATHER_Q, TOOL_CALL, TOOL_RESULT], "tools": TOOLS},
    {"name": "unicode_content", "messages": [{"role": "user", "content": "héllo wörld 😀 — \"quotes\" and 'apostrophes'\n\tnext line"}]},
    {"name": "roles_not_alternating", "messages": [USER1, {"role": "user", "content": "Second user turn"}]},
]


def special(config, key):
    v = config.get(key)
    if isinstance(v, dict):
        v = v.get("content")
    return v


def context_for(case, config):
    ctx = {
        "messages": copy.deepcopy(case["messages"]),
        "documents": None,
        "add_generation_prompt": case.get("add_generation_prompt", True),
    }
    if case.get("tools"):
        ctx["tools"] = copy.deepcopy(case["tools"])
    for key in ("bos_token", "eos_token"):
        v = special(config, key)
        if v is not None:
            ctx[key] = v
    thinking = case.get("enable_thinking", False)
    ctx["enable_thinking"] = thinking
    ctx["thinking"] = thinking
    ctx["preserve_thinking"] = False
    return ctx


def pick_template(config, has_tools):
    t = config.get("chat_template")
    if isinstance(t, list):
        named = {x["name"]: x["template"] for x in t}
        if has_tools and "tool_use" in named:
            return named["tool_use"]
        return named["default"]
    return t


# The built-in templates (lib/chat/templates/*.jinja) with the special-token strings
# of the vocabularies that choose them.
BUILTIN_TOKENS = {
    "gemma": ("<bos>", "<eos>"),
    "llama3": ("<|begin_of_text|>", "<|eot_id|>"),
    "chatml": (None, "<|im_end|>"),
}


def render_cases(config, template_for):
    """Every case rendered with template_for(has_tools), the golden's case records."""
    results = []
    for case in CASES:
        template = template_for(bool(case.get("tools")))
        r = {"name": case["name"], "messages": case["messages"],
             "add_generation_prompt": case.get("add_generation_prompt", True)}
        if "tools" in case:
            r["tools"] = case["tools"]
        if "enable_thinking" in case:
            r["enable_thinking"] = case["enable_thinking"]
        r.update(render(template, context_for(case, config)))
        results.append(r)
    return results


def write_golden(stem, template_file, template_sha256, bos, eos, results):
    golden = {
        "reference": "jinja2 " + jinja2.__version__ + " (HF apply_chat_template environment, tests/oracles/chat_template_hf_env.py)",
        "model": stem,
        "template_file": template_file,
        "template_sha256": template_sha256,
        "bos_token": bos,
        "eos_token": eos,
        "strftime_now_epoch": FIXED_EPOCH,
        "cases": results,
    }
    out = os.path.join(OUT_DIR, f"{stem}.json")
    with open(out, "w", encoding="utf-8") as f:
        json.dump(golden, f, ensure_ascii=False, indent=1)
        f.write("\n")
    errors = sum("error" in r for r in results)
    print(f"{stem}: {len(results)} cases ({errors} raise) -> {out}")


def write_builtin_goldens():
    tdir = os.path.join(ROOT, "lib", "chat", "templates")
    for name, (bos, eos) in BUILTIN_TOKENS.items():
        with open(os.path.join(tdir, f"{name}.jinja"), encoding="utf-8") as f:
            template = f.read()
        results = render_cases({"bos_token": bos, "eos_token": eos}, lambda has_tools: template)
        write_golden(f"builtin_{name}", f"lib/chat/templates/{name}.jinja",
                     hashlib.sha256(template.encode("utf-8")).hexdigest(), bos, eos, results)


# Templates that ship inside GGUF files rather than a tokenizer_config.json: llama.cpp's
# vocabulary files (tests/fixtures/make_llama_vocabs.py extracts them from the
# llama-cpp-python sdist into <fixture_dir>/llama-vocab/). stem -> file name.
GGUF_TEMPLATES = {"gemma4": "ggml-vocab-gemma-4.gguf"}


def write_gguf_goldens(vocab_dir):
    import gguf

    for stem, name in GGUF_TEMPLATES.items():
        path = os.path.join(vocab_dir, name)
        if not os.path.exists(path):
            print(f"{stem}: {path} is absent (run tests/fixtures/make_llama_vocabs.py), skipped")
            continue
        r = gguf.GGUFReader(path)
        f = r.fields

        def text(field):
            return bytes(field.parts[field.data[0]]).decode("utf-8")

        def piece(key):
            tokens = f["tokenizer.ggml.tokens"]
            i = int(f[key].parts[-1][0])
            return bytes(tokens.parts[tokens.data[i]]).decode("utf-8")

        template = text(f["tokenizer.chat_template"])
        bos, eos = piece("tokenizer.ggml.bos_token_id"), piece("tokenizer.ggml.eos_token_id")
        results = render_cases({"bos_token": bos, "eos_token": eos}, lambda has_tools: template)
        write_golden(stem, f"llama-vocab/{name} (tokenizer.chat_template)",
                     hashlib.sha256(template.encode("utf-8")).hexdigest(), bos, eos, results)


def main():
    write_builtin_goldens()
    vocab_dir = os.environ.get("UAII_LLAMA_VOCAB_DIR", os.path.join(ROOT, "build", "fixtures", "llama-vocab"))
    write_gguf_goldens(vocab_dir)
    shared = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "..", "shared", "data", "tokenizers")
    for model in sorted(os.listdir(shared)):
        path = os.path.join(shared, model, "tokenizer_config.json")
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as f:
            config = json.load(f)
        if not config.get("chat_template"):
            print(f"{model}: no chat_template, skipped")
            continue
        results = render_cases(config, lambda has_tools: pick_template(config, has_tools))
        raw = json.dumps(config.get("chat_template"), ensure_ascii=False)
        write_golden(model, f"data/tokenizers/{model}/tokenizer_config.json",
                     hashlib.sha256(raw.encode("utf-8")).hexdigest(), special(config, "bos_token"),
                     special(config, "eos_token"), results)


if __name__ == "__main__":
    main()
