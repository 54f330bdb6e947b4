"""`uaii chat` end to end: scripted turns as JSON (schema-checked) and an interactive
session driven through a pseudo-terminal, checking prefix reuse across turns."""
import json
import os
import pathlib
import pty
import re
import select
import subprocess
import time

import jsonschema
import pytest

from conftest import SHARED, load_schema, run_uaii

# A minimal chat template for the tiny fixture models (they carry none).
TINY_TEMPLATE = """{{ bos_token }}{% for m in messages %}<|{{ m.role }}|>
{{ m.content }}</s>
{% endfor %}{% if add_generation_prompt %}<|assistant|>
{% endif %}"""

STATS = re.compile(rb"\[prompt (\d+) tokens: cached (\d+), prefilled (\d+) \| generated (\d+) tokens "
                   rb"\(reasoning (\d+)\), stop (\w+)")


@pytest.fixture
def tiny_chat(fixtures_dir, tmp_path):
    model = fixtures_dir / "tiny" / "tiny-llama-q8_0.gguf"
    if not model.exists():
        pytest.skip(f"{model} missing: run tests/fixtures/make_tiny_models.py {fixtures_dir}")
    template = tmp_path / "tiny.jinja"
    template.write_text(TINY_TEMPLATE)
    return model, template


def default_chat():
    """The default model (Gemma 3 270M, no template in its metadata) with Gemma 3's
    template from ../shared, or None when either is missing."""
    home = pathlib.Path(os.environ.get("UAII_HOME") or pathlib.Path.home() / ".cache" / "uaii")
    model = home / "models" / "gemma-3-270m-q4_k_m.gguf"
    template = SHARED / "data" / "tokenizers" / "gemma3" / "tokenizer_config.json"
    if not model.exists() or not template.exists():
        return None
    return model, template


def test_chat_messages_json_matches_schema(uaii_bin, tiny_chat, tmp_path):
    model, template = tiny_chat
    messages = tmp_path / "m.json"
    messages.write_text(json.dumps([{"role": "system", "content": "Be brief."},
                                    {"role": "user", "content": "tok5 tok6 hello"}]))
    p = run_uaii(uaii_bin, "chat", "--model", model, "--chat-template", template, "--messages", messages,
                 "--max-tokens", "6", "--json")
    doc = json.loads(p.stdout)
    jsonschema.validate(doc, load_schema("chat.schema.json"))
    assert doc["usage"]["completion_tokens"] == len(doc["tokens"]) <= 6
    assert doc["usage"]["cached_tokens"] == 0
    assert doc["syntax"] == {"reasoning": None, "tool_calls": "none", "starts_in_thinking": False,
                             "can_disable_thinking": False, "tools": False}
    assert doc["text"] == "".join(b["text"] for b in doc["blocks"] if b["type"] == "text")


def test_chat_prompt_flag_is_one_user_turn(uaii_bin, tiny_chat, tmp_path):
    model, template = tiny_chat
    p = run_uaii(uaii_bin, "chat", "--model", model, "--chat-template", template, "-p", "hello",
                 "--max-tokens", "4", "--json")
    doc = json.loads(p.stdout)
    jsonschema.validate(doc, load_schema("chat.schema.json"))
    messages = tmp_path / "m.json"
    messages.write_text(json.dumps([{"role": "user", "content": "hello"}]))
    q = run_uaii(uaii_bin, "chat", "--model", model, "--chat-template", template, "--messages", messages,
                 "--max-tokens", "4", "--json")
    assert json.loads(q.stdout)["tokens"] == doc["tokens"]
    assert json.loads(q.stdout)["usage"]["prompt_tokens"] == doc["usage"]["prompt_tokens"]


def test_chat_default_model_with_gemma3_template(uaii_bin, tmp_path):
    found = default_chat()
    if not found:
        pytest.skip("default model or ../shared gemma3 tokenizer_config.json missing")
    model, template = found
    p = run_uaii(uaii_bin, "chat", "--model", model, "--chat-template", template, "-p",
                 "What is the capital of France?", "--max-tokens", "16", "--json")
    doc = json.loads(p.stdout)
    jsonschema.validate(doc, load_schema("chat.schema.json"))
    assert doc["text"].strip()


def test_chat_usage_errors(uaii_bin, tiny_chat, tmp_path):
    model, template = tiny_chat
    assert run_uaii(uaii_bin, "chat", "--think", "--no-think", check=False).returncode == 2
    assert run_uaii(uaii_bin, "chat", "--json", check=False).returncode == 2
    assert run_uaii(uaii_bin, "chat", "--preset", "huge", check=False).returncode == 2
    bad = tmp_path / "bad.json"
    bad.write_text("{\"role\": \"user\"}")
    p = run_uaii(uaii_bin, "chat", "--model", model, "--chat-template", template, "--messages", bad, "--json",
                 check=False)
    assert p.returncode == 1 and "bad.json" in p.stderr and "array" in p.stderr
    p = run_uaii(uaii_bin, "chat", "--model", model, "--messages", tmp_path / "none.json", "--json", check=False)
    assert p.returncode == 1 and "none.json" in p.stderr
    # The tiny model has no template of its own: the error says how to give one.
    good = tmp_path / "m.json"
    good.write_text(json.dumps([{"role": "user", "content": "hi"}]))
    p = run_uaii(uaii_bin, "chat", "--model", model, "--messages", good, "--json", check=False)
    assert p.returncode == 1 and "--chat-template" in p.stderr


class Terminal:
    """`uaii chat` on a pseudo-terminal."""

    def __init__(self, argv):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execv(argv[0], argv)
        self.buf = b""

    def read_until(self, pattern, timeout=120):
        end = time.time() + timeout
        while time.time() < end:
            m = re.search(pattern, self.buf)
            if m:
                return m
            ready, _, _ = select.select([self.fd], [], [], 0.2)
            if ready:
                try:
                    self.buf += os.read(self.fd, 65536)
                except OSError:
                    break
        raise AssertionError(f"no {pattern!r} in the terminal; last output: {self.buf[-600:]!r}")

    def send(self, data: bytes):
        self.buf = b""
        os.write(self.fd, data)

    def close(self):
        os.write(self.fd, b"/exit\r")
        _, status = os.waitpid(self.pid, 0)
        os.close(self.fd)
        return status


def three_turns(uaii_bin, model, template, max_tokens):
    term = Terminal([str(uaii_bin), "chat", "--model", str(model), "--chat-template", str(template),
                     "--system", "Be brief.", "--max-tokens", str(max_tokens), "--threads", "2"])
    term.read_until(rb">>> ")
    turns = []
    for message in (b"hello there", b"tok5 tok6", b"and once more"):
        term.send(message + b"\r")
        stats = term.read_until(STATS)
        turns.append(tuple(int(x) for x in stats.groups()[:5]))
        term.read_until(rb">>> ")
    # /reset forgets the conversation: nothing is reused any more.
    term.send(b"/reset\r")
    term.read_until(rb"conversation cleared")
    term.read_until(rb">>> ")
    term.send(b"hello there\r")
    after_reset = tuple(int(x) for x in term.read_until(STATS).groups()[:5])
    term.read_until(rb">>> ")
    assert term.close() == 0
    return turns, after_reset


def check_prefix_reuse(turns, after_reset):
    (p1, c1, f1, _, _), (p2, c2, f2, _, _), (p3, c3, f3, _, _) = turns
    assert c1 == 0 and f1 == p1
    # Later turns reuse at least the previous prompt (it is a prefix of the new
    # one) and evaluate only the tokens after the reused prefix.
    assert c2 >= p1 and f2 == p2 - c2 and f2 < p2
    assert c3 >= p2 and f3 == p3 - c3 and f3 < p3
    assert after_reset[0] == p1 and after_reset[1] == 0


def test_chat_terminal_reuses_the_cache_across_turns(uaii_bin, tiny_chat):
    model, template = tiny_chat
    turns, after_reset = three_turns(uaii_bin, model, template, max_tokens=6)
    check_prefix_reuse(turns, after_reset)


def test_chat_terminal_default_model(uaii_bin):
    found = default_chat()
    if not found:
        pytest.skip("default model or ../shared gemma3 tokenizer_config.json missing")
    turns, after_reset = three_turns(uaii_bin, *found, max_tokens=12)
    check_prefix_reuse(turns, after_reset)


def test_chat_terminal_ctrl_c_stops_the_reply(uaii_bin, tiny_chat, fixtures_dir):
    _, template = tiny_chat
    # The tiny model with an 8192-position context: a 256-position one fills in well
    # under a tenth of a second, before an interrupt lands on a loaded machine.
    model = fixtures_dir / "tiny" / "tiny-llama-q4_0-ctx8k.gguf"
    term = Terminal([str(uaii_bin), "chat", "--model", str(model), "--chat-template", str(template),
                     "--max-tokens", "100000", "--max-context", "8192", "--threads", "1"])
    term.read_until(rb">>> ")
    # Retry with fresh conversations until one interrupt lands mid-reply.
    stops = []
    for delay in (0.02, 0.05, 0.1, 0.2):
        term.send(b"hello\r")
        time.sleep(delay)
        os.write(term.fd, b"\x03")
        stops.append(term.read_until(STATS).group(6))
        term.read_until(rb">>> ")
        if stops[-1] == b"cancelled":
            assert b"[stopped]" in term.buf
            break
        term.send(b"/reset\r")
        term.read_until(rb">>> ")
    assert b"cancelled" in stops
    # Ctrl-C at the prompt does not end the program either.
    os.write(term.fd, b"\x03")
    term.read_until(rb">>> ")
    assert term.close() == 0


def test_chat_detects_syntax_from_the_template(uaii_bin, tmp_path):
    """Qwen3's real template on the default model (the tiny ones have too short a
    context for its tool preamble): the syntax the parser uses comes from the
    template (reasoning markers, tagged-JSON calls, capabilities)."""
    found = default_chat()
    if not found:
        pytest.skip("default model or ../shared missing")
    model = found[0]
    qwen3 = SHARED / "data" / "tokenizers" / "qwen3" / "tokenizer_config.json"
    if not qwen3.exists():
        pytest.skip(f"{qwen3} missing")
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"type": "function", "function": {
        "name": "get_weather", "description": "Weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]))
    for flag in ("--think", "--no-think"):
        p = run_uaii(uaii_bin, "chat", "--model", model, "--chat-template", qwen3, "-p", "Weather in Paris?",
                     "--tools", tools, flag, "--max-tokens", "2", "--json")
        doc = json.loads(p.stdout)
        jsonschema.validate(doc, load_schema("chat.schema.json"))
        assert doc["syntax"] == {"reasoning": {"open": "<think>", "close": "</think>"}, "tool_calls": "tagged_json",
                                 "starts_in_thinking": False, "can_disable_thinking": True, "tools": True}


def test_chat_on_the_default_model_uses_the_builtin_template(uaii_bin, default_model):
    p = subprocess.run([str(uaii_bin), "chat", "--model", str(default_model), "--max-tokens", "4", "--threads", "2"],
                       input="Hello!\n", capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert ("carries no chat template; using the built-in gemma template (its vocabulary has <start_of_turn>)"
            in p.stderr)
    assert p.stderr.count("built-in gemma template") == 1
