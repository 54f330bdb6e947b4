"""Gemma 4 end to end with its real tokenizer and chat template
(tests/fixtures/make_gemma4_chat_model.py: a tiny random gemma4 model carrying every
tokenizer.* key of llama.cpp's Gemma 4 vocabulary file): the template renders through
`uaii template` exactly as jinja2 renders it (tests/golden/chat/gemma4.json); `uaii
chat` detects the syntax from it (the thought channel, Gemma 4's tool calls); and the
C ABI (through the Python SDK) streams reasoning and a tool call parsed from a reply a
grammar forces (the random weights would say nothing useful on their own)."""
import json

import jsonschema
import pytest

import uaii
from conftest import REPO, load_schema, run_uaii

GOLDEN = REPO / "tests" / "golden" / "chat" / "gemma4.json"
QUOTE = '<|"|>'


@pytest.fixture(scope="module")
def gemma4_chat(fixtures_dir):
    p = fixtures_dir / "gemma4" / "tiny-gemma4-chat-q8_0.gguf"
    if not p.exists():
        pytest.skip(f"{p} missing: tests/fixtures/make_gemma4_chat_model.py needs the llama-cpp-python sdist")
    return p


def golden_cases():
    return [c for c in json.loads(GOLDEN.read_text())["cases"] if "output" in c]


@pytest.mark.parametrize("case", golden_cases(), ids=lambda c: c["name"])
def test_template_renders_as_jinja2(uaii_bin, gemma4_chat, tmp_path, case):
    messages = tmp_path / "messages.json"
    messages.write_text(json.dumps(case["messages"]))
    args = ["template", "--model", gemma4_chat, "--messages", messages]
    if case.get("tools"):
        tools = tmp_path / "tools.json"
        tools.write_text(json.dumps(case["tools"]))
        args += ["--tools", tools]
    args.append("--think" if case.get("enable_thinking") else "--no-think")
    if not case["add_generation_prompt"]:
        args.append("--no-generation-prompt")
    p = run_uaii(uaii_bin, *args)
    assert p.stdout == case["output"]


def test_chat_detects_the_gemma4_syntax(uaii_bin, gemma4_chat, tmp_path):
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(json.loads(GOLDEN.read_text())["cases"][7]["tools"]))
    for flag in ("--think", "--no-think"):
        p = run_uaii(uaii_bin, "chat", "--model", gemma4_chat, "-p", "Weather in Paris?", "--tools", tools, flag,
                     "--max-tokens", "3", "--threads", "2", "--json")
        doc = json.loads(p.stdout)
        jsonschema.validate(doc, load_schema("chat.schema.json"))
        assert doc["syntax"] == {"reasoning": {"open": "<|channel>thought", "close": "<channel|>"},
                                 "tool_calls": "gemma4", "starts_in_thinking": False,
                                 "can_disable_thinking": True, "tools": True}


def test_chat_cli_reply_with_reasoning_and_a_tool_call(uaii_bin, gemma4_chat, tmp_path):
    """`uaii chat --json`: the thought channel becomes a thinking block, the Gemma 4 call
    a tool_call block with JSON arguments and an id (a grammar forces the reply)."""
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"type": "function", "function": {
        "name": "get_weather", "description": "Weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                       "required": ["city"]}}}]))
    grammar = tmp_path / "reply.gbnf"
    grammar.write_text(forced(f"<|channel>thought\nThe user wants the weather.<channel|>"
                              f"<|tool_call>call:get_weather{{city:{QUOTE}Paris, France{QUOTE},days:3}}<tool_call|>"))
    p = run_uaii(uaii_bin, "chat", "--model", gemma4_chat, "-p", "Weather in Paris?", "--tools", tools, "--think",
                 "--grammar", grammar, "--max-tokens", "512", "--threads", "2", "--json")
    doc = json.loads(p.stdout)
    jsonschema.validate(doc, load_schema("chat.schema.json"))
    blocks = doc["blocks"]
    assert [b["type"] for b in blocks] == ["thinking", "tool_call"]
    assert blocks[0]["text"] == "The user wants the weather."
    assert blocks[1]["name"] == "get_weather"
    assert json.loads(blocks[1]["arguments"]) == {"city": "Paris, France", "days": 3}
    assert doc["usage"]["reasoning_tokens"] > 0
    assert doc["stop_reason"] == "eos"


def forced(text):
    """A GBNF grammar whose only sentence is `text`."""
    return "root ::= " + json.dumps(text)


def test_c_abi_streams_reasoning_and_a_tool_call(gemma4_chat):
    tools = [{"type": "function", "function": {
        "name": "get_weather", "description": "Weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                       "required": ["city"]}}}]
    reply = (f"<|channel>thought\nThe user wants the weather.<channel|>"
             f"<|tool_call>call:get_weather{{city:{QUOTE}Paris, France{QUOTE},days:3}}<tool_call|>")
    with uaii.Model(str(gemma4_chat)) as model, uaii.Session(model, threads=2, max_context=1024) as s:
        events = list(s.chat([{"role": "user", "content": "Weather in Paris?"}], tools, think=True,
                             grammar=forced(reply), max_tokens=512, stream=True))
        kinds = [e.kind for e in events]
        assert "".join(e.text for e in events if e.kind == "thinking").strip() == "The user wants the weather."
        calls = [e.tool_call for e in events if e.kind == "tool_call"]
        assert [{k: c[k] for k in ("name", "arguments")} for c in calls] == [
            {"name": "get_weather", "arguments": {"city": "Paris, France", "days": 3}}]
        assert calls[0]["id"].startswith("call_")
        assert "error" not in kinds
        assert kinds[-1] == "done"
        usage = events[-1].result.usage
        assert usage.reasoning_tokens > 0
        # The second turn renders the first's call back through the template (the
        # thought channel stripped from history) and reuses the cached prefix.
        s.chat([{"role": "user", "content": "Weather in Paris?"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"id": "c1", "type": "function",
                     "function": {"name": "get_weather", "arguments": {"city": "Paris, France", "days": 3}}}]},
                {"role": "tool", "tool_call_id": "c1", "name": "get_weather", "content": "{\"sky\": \"clear\"}"}],
               tools, think=True, grammar=forced("Clear skies."), max_tokens=64)
        assert s.last_result.text == "Clear skies."
