"""The Python SDK's chat: the model's own template (error path on models without one),
a templated tiny fixture (tests/fixtures/make_sdk_fixtures.py) for the success path,
rendering checked against jinja2, streaming and prefix reuse across turns."""
import json
import sys

import pytest

try:
    import uaii
except ImportError as e:
    raise ImportError(f"the uaii Python package is not installed ({e}); run scripts/setup.sh or "
                      "UAII_PREBUILT_DIR=<build dir> python3 -m pip install ./bindings/python") from e

from conftest import REPO

sys.path.insert(0, str(REPO / "tests" / "fixtures"))
from make_sdk_fixtures import CHAT_TEMPLATE  # noqa: E402  (the fixture's template)


@pytest.fixture(scope="module")
def chat_model(fixtures_dir):
    p = fixtures_dir / "sdk" / "tiny-llama-chat.gguf"
    if not p.exists():
        pytest.fail(f"{p} missing: run python3 tests/fixtures/make_sdk_fixtures.py {fixtures_dir}")
    with uaii.Model(p) as m:
        yield m


def render(messages, add_generation_prompt=True):
    """The reference rendering of the fixture's template: jinja2, as transformers does it."""
    jinja2 = pytest.importorskip("jinja2")
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)
    return env.from_string(CHAT_TEMPLATE).render(messages=messages, bos_token="<s>", eos_token="</s>",
                                                 add_generation_prompt=add_generation_prompt)


def test_model_without_template_is_not_found(fixtures_dir):
    # The tiny vocabulary has no turn markers, so no built-in template stands in.
    path = fixtures_dir / "tiny" / "tiny-llama-q8_0.gguf"
    with uaii.Model(path) as m, uaii.Session(m) as s:
        with pytest.raises(uaii.NotFoundError) as e:
            s.chat([{"role": "user", "content": "Hello"}])
        assert e.value.status == "not_found" and "has no chat template" in str(e.value)
        assert path.name in str(e.value)
        with pytest.raises(uaii.NotFoundError, match="has no chat template"):
            next(s.chat([{"role": "user", "content": "Hello"}], stream=True))
        assert s.generate("Hi", max_tokens=1) is not None  # the session is unharmed


def test_default_model_chats_with_the_builtin_template(default_model):
    # The Gemma 3 GGUF carries no template: the built-in Gemma one (its own HF template) stands in.
    with uaii.Model(default_model) as m, uaii.Session(m) as s:
        s.chat([{"role": "user", "content": "Hello"}], max_tokens=4)
        r = s.last_result
        assert r.usage.prompt_tokens == len(m.tokenizer.encode(
            "<bos><start_of_turn>user\nHello<end_of_turn>\n<start_of_turn>model\n", add_special=False,
            parse_special=True))
        assert 0 < r.usage.completion_tokens <= 4


def test_chat_renders_the_template_and_replies(chat_model):
    msgs = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi there"}]
    with uaii.Session(chat_model) as s:
        reply = s.chat(msgs, max_tokens=8)
        r = s.last_result
    assert isinstance(reply, str) and r.text == reply
    assert r.stop_reason in ("max_tokens", "end_of_generation")
    assert 0 < r.usage.completion_tokens <= 8 and r.usage.reasoning_tokens == 0
    expected = chat_model.tokenizer.encode(render(msgs), add_special=False, parse_special=True)
    assert r.usage.prompt_tokens == len(expected), (render(msgs), expected)


def test_chat_accepts_json_strings_and_tools(chat_model):
    msgs = [{"role": "user", "content": "hi"}]
    tools = [{"type": "function", "function": {"name": "get_time", "description": "the time",
                                               "parameters": {"type": "object", "properties": {}}}}]
    with uaii.Session(chat_model) as s:
        a = s.chat(json.dumps(msgs), max_tokens=6)
        s.reset()
        b = s.chat(msgs, max_tokens=6)
        assert a == b
        s.reset()
        assert s.chat(msgs, tools=tools, think=False, max_tokens=6) == a  # this template ignores both


def test_chat_stream_and_prefix_reuse_across_turns(chat_model):
    turn1 = [{"role": "user", "content": "hello"}]
    turn2 = turn1 + [{"role": "assistant", "content": "tok5 tok6"}, {"role": "user", "content": "again"}]
    with uaii.Session(chat_model) as s:
        s.chat(turn1, max_tokens=4)
        events = list(s.chat(turn2, max_tokens=6, stream=True, temperature=0.7, seed=5))
        assert events[-1].kind == "done"
        assert {e.kind for e in events[:-1]} <= {"text", "thinking", "tool_call", "error"}
        r = events[-1].result
        assert r.usage.completion_tokens <= 6
        # The rendered first turn is a prefix of the second: its tokens came from the cache.
        assert r.usage.cached_tokens > 0
        assert r.usage.prompt_tokens == len(
            chat_model.tokenizer.encode(render(turn2), add_special=False, parse_special=True))
        s.reset()
        again = "".join(e.text for e in s.chat(turn2, max_tokens=6, stream=True, temperature=0.7, seed=5))
        assert again == r.text  # the same seed, without the cache, gives the same reply


def test_chat_bad_messages(chat_model):
    with uaii.Session(chat_model) as s:
        with pytest.raises(uaii.InvalidArgumentError, match="messages cannot be written as JSON"):
            s.chat([{"role": "user", "content": object()}])
        with pytest.raises(uaii.UaiiError) as e:
            s.chat("this is not JSON")
        assert e.value.status in ("invalid_argument", "invalid_state")
        with pytest.raises(uaii.InvalidArgumentError):
            s.chat([{"role": "user", "content": "hi"}], max_tokens=-2)
        assert s.chat([{"role": "user", "content": "hi"}], max_tokens=2) is not None
