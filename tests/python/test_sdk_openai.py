"""The Python SDK's OpenAI-shaped calls, Model.create_chat_completion and
Model.create_completion: every dictionary they return or stream validates against the
OpenAI client's own types (the `openai` package's pydantic models: ChatCompletion,
ChatCompletionChunk, Completion), and the text is what Session.chat / Session.generate
give for the same request."""
import json

import pytest

try:
    import uaii
except ImportError as e:
    raise ImportError(f"the uaii Python package is not installed ({e}); run scripts/setup.sh or "
                      "UAII_PREBUILT_DIR=<build dir> python3 -m pip install ./bindings/python") from e

openai_types = pytest.importorskip("openai.types", reason="requirements/test.txt installs openai")
from openai.types import Completion  # noqa: E402
from openai.types.chat import ChatCompletion, ChatCompletionChunk  # noqa: E402

MESSAGES = [{"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Name a colour."}]


@pytest.fixture(scope="module")
def model(default_model):
    with uaii.Model(default_model) as m:
        yield m


def test_model_is_the_extension_model_with_openai_calls(model):
    assert isinstance(model, uaii._uaii.Model)
    with uaii.Session(model) as s:  # still accepted wherever a model is
        assert s.generate("Hi", max_tokens=1) is not None


@pytest.mark.parametrize("kw", [{}, {"temperature": 0.7, "seed": 3, "top_p": 0.9}])
def test_chat_completion_validates_and_equals_session_chat(model, kw):
    d = model.create_chat_completion(MESSAGES, max_tokens=12, **kw)
    c = ChatCompletion.model_validate(d)
    assert c.object == "chat.completion" and c.id.startswith("chatcmpl-") and len(c.choices) == 1
    msg = c.choices[0].message
    assert msg.role == "assistant" and c.choices[0].finish_reason in ("stop", "length")
    with uaii.Session(model) as s:
        want = s.chat(MESSAGES, max_tokens=12, **kw)
        usage = s.last_result.usage
    assert msg.content == want
    assert c.usage.completion_tokens == usage.completion_tokens
    assert c.usage.prompt_tokens == usage.prompt_tokens
    assert c.usage.total_tokens == c.usage.prompt_tokens + c.usage.completion_tokens
    json.dumps(d)  # plain JSON-serialisable data


def test_chat_completion_stream_chunks_validate_and_add_up(model):
    whole = model.create_chat_completion(MESSAGES, max_tokens=12)
    chunks = list(model.create_chat_completion(MESSAGES, max_tokens=12, stream=True))
    parsed = [ChatCompletionChunk.model_validate(ch) for ch in chunks]
    assert parsed[0].choices[0].delta.role == "assistant"
    assert len({p.id for p in parsed}) == 1 and all(p.object == "chat.completion.chunk" for p in parsed)
    text = "".join(p.choices[0].delta.content or "" for p in parsed)
    assert text == whole["choices"][0]["message"]["content"]
    assert parsed[-1].choices[0].finish_reason == whole["choices"][0]["finish_reason"]
    assert all(p.choices[0].finish_reason is None for p in parsed[:-1])
    assert parsed[-1].usage.completion_tokens == whole["usage"]["completion_tokens"]
    # The repeated conversation reused the cache.
    assert parsed[-1].usage.prompt_tokens_details.cached_tokens > 0


def test_completion_validates_and_equals_session_generate(model):
    d = model.create_completion("The capital of France is", max_tokens=6)
    c = Completion.model_validate(d)
    assert c.object == "text_completion" and c.choices[0].finish_reason == "length"
    with uaii.Session(model) as s:
        assert c.choices[0].text == s.generate("The capital of France is", max_tokens=6)
    raw = list(model.create_completion("The capital of France is", max_tokens=6, stream=True))
    # A streamed text_completion's finish_reason is null until the last chunk, as OpenAI's
    # and llama-cpp-python's streams send it (the client reads chunks without validating;
    # its Completion type would want a reason): validate each with that one field set.
    assert all(ch["choices"][0]["finish_reason"] is None for ch in raw[:-1])
    chunks = [Completion.model_validate({**ch, "choices": [{**ch["choices"][0], "finish_reason":
                                                            ch["choices"][0]["finish_reason"] or "length"}]})
              for ch in raw]
    assert "".join(ch.choices[0].text for ch in chunks) == c.choices[0].text
    assert raw[-1]["choices"][0]["finish_reason"] == "length" and chunks[-1].usage.completion_tokens == 6
    # OpenAI's default: 16 tokens.
    assert model.create_completion("Once upon a time")["usage"]["completion_tokens"] <= 16


def test_tool_calls_are_openai_shaped():
    from uaii.openai_api import _tool_call
    call = _tool_call({"name": "get_weather", "arguments": {"city": "Paris"}})
    assert call["type"] == "function" and call["id"].startswith("call_")
    assert json.loads(call["function"]["arguments"]) == {"city": "Paris"}
    assert _tool_call({"name": "f", "arguments": {}, "id": "abc"})["id"] == "abc"
    d = {"id": "chatcmpl-x", "object": "chat.completion", "created": 0, "model": "m",
         "choices": [{"index": 0, "message": {"role": "assistant", "content": None, "tool_calls": [call]},
                      "logprobs": None, "finish_reason": "tool_calls"}],
         "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
    ChatCompletion.model_validate(d)


PERSON = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 20},
                                          "age": {"type": "integer", "minimum": 0, "maximum": 120}},
          "required": ["name", "age"], "additionalProperties": False}


@pytest.mark.parametrize("response_format", [
    {"type": "json_object"},
    {"type": "json_schema", "json_schema": {"name": "person", "schema": PERSON, "strict": True}},
])
def test_response_format_gives_json_that_validates(model, response_format):
    msgs = [{"role": "user", "content": "Invent a person; answer as JSON with name and age."}]
    d = model.create_chat_completion(msgs, max_tokens=80, response_format=response_format)
    c = ChatCompletion.model_validate(d)
    assert c.choices[0].finish_reason == "stop"
    doc = json.loads(c.choices[0].message.content)
    assert isinstance(doc, dict)
    if response_format["type"] == "json_schema":
        assert set(doc) == {"name", "age"} and isinstance(doc["age"], int) and 0 <= doc["age"] <= 120
    # Streamed: the chunks' content joins into the same document.
    chunks = list(model.create_chat_completion(msgs, max_tokens=80, response_format=response_format, stream=True))
    text = "".join(ChatCompletionChunk.model_validate(ch).choices[0].delta.content or "" for ch in chunks)
    assert json.loads(text) == doc


def test_refusals_are_named(model):
    with pytest.raises(uaii.InvalidArgumentError, match="json_schema"):
        model.create_chat_completion(MESSAGES, response_format={"type": "json_schema", "json_schema": {}})
    with pytest.raises(uaii.UnsupportedError, match="tool_choice"):
        model.create_chat_completion(MESSAGES, tool_choice="required")
    with pytest.raises(uaii.InvalidArgumentError, match="response_format"):
        model.create_chat_completion(MESSAGES, response_format="json")
    with pytest.raises(TypeError, match="logit_bias"):
        model.create_chat_completion(MESSAGES, logit_bias={})
    with pytest.raises(TypeError, match="best_of"):
        model.create_completion("x", best_of=2)
    # response_format text and tool_choice none/auto are accepted.
    d = model.create_chat_completion(MESSAGES, max_tokens=2, response_format={"type": "text"}, tool_choice="none")
    ChatCompletion.model_validate(d)
