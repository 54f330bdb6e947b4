"""OpenAI-shaped calls on a uaii.Model: create_chat_completion and create_completion
return (or stream) the dictionaries the OpenAI client's types and llama-cpp-python
return, built on Session.chat / Session.generate and their event streams.

The calls run on a session the model keeps for them (created on the first call), so a
conversation that grows turn by turn reuses its KV cache as llama-cpp-python's context
does; calls on one model are serialized by a lock. For parallel work make Sessions.
"""
from __future__ import annotations

import json
import threading
import time
import uuid
from typing import Any, Iterator, Mapping, Optional, Sequence, Union

from . import _uaii
from .errors import InvalidArgumentError, UnsupportedError

# uaii stop reasons -> OpenAI finish_reason.
_FINISH = {
    "end_of_generation": "stop",
    "stop_string": "stop",
    "cancelled": "stop",
    "max_tokens": "length",
    "context_full": "length",
}

_SAMPLING_KEYS = ("temperature", "top_p", "top_k", "min_p", "repeat_penalty", "presence_penalty",
                  "frequency_penalty", "seed", "grammar")


def _sampling(max_tokens, stop, kw) -> dict[str, Any]:
    out = {k: v for k, v in kw.items() if k in _SAMPLING_KEYS and v is not None}
    if max_tokens is not None:
        out["max_tokens"] = max_tokens
    if stop is not None:
        out["stop"] = stop
    return out


def _usage(u, reasoning: bool) -> dict[str, Any]:
    d = {"prompt_tokens": u.prompt_tokens, "completion_tokens": u.completion_tokens,
         "total_tokens": u.prompt_tokens + u.completion_tokens,
         "prompt_tokens_details": {"cached_tokens": u.cached_tokens}}
    if reasoning:
        d["completion_tokens_details"] = {"reasoning_tokens": u.reasoning_tokens}
    return d


def _tool_call(call: Mapping[str, Any]) -> dict[str, Any]:
    args = call.get("arguments", {})
    return {"id": call.get("id") or f"call_{uuid.uuid4().hex[:24]}", "type": "function",
            "function": {"name": call["name"],
                         "arguments": args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)}}


def _response_format(response_format) -> dict[str, Any]:
    """The structured-output keyword for Session.chat that OpenAI's response_format asks for:
    {'type': 'text'} none; {'type': 'json_object'} any JSON object (with llama-cpp-python's
    optional 'schema' key, that schema); {'type': 'json_schema', 'json_schema': {'schema': ...}}
    that schema."""
    if response_format is None:
        return {}
    kind = response_format.get("type") if isinstance(response_format, Mapping) else None
    if kind == "text":
        return {}
    if kind == "json_object":
        return {"json_schema": response_format.get("schema") or {"type": "object"}}
    if kind == "json_schema":
        spec = response_format.get("json_schema")
        if not isinstance(spec, Mapping) or "schema" not in spec:
            raise InvalidArgumentError("response_format {'type': 'json_schema'} needs "
                                       "'json_schema': {'name': ..., 'schema': {...}}")
        return {"json_schema": spec["schema"]}
    raise InvalidArgumentError(f"response_format must be {{'type': 'text' | 'json_object' | 'json_schema', ...}}, "
                               f"got {response_format!r}")


def _check_tool_choice(tool_choice) -> None:
    if tool_choice in (None, "auto", "none"):
        return
    raise UnsupportedError(f"tool_choice {tool_choice!r}: forcing a tool call is not in the C ABI yet (uaii serve "
                           "and C++'s ChatTurnRequest::tool_choice have it); use 'auto' or 'none'")


class _Completions:
    """What one model keeps for its OpenAI-shaped calls."""

    def __init__(self, model):
        self.model = model
        self.lock = threading.Lock()
        self.session = None

    def session_for_call(self):
        if self.session is None or self.session.closed:
            self.session = _uaii.Session(self.model)
        return self.session

    def model_name(self) -> str:
        info = self.model.info
        return info.get("name") or info.get("path", "uaii")


def _completions(model) -> _Completions:
    c = model.__dict__.get("_openai_completions")
    if c is None:
        c = model.__dict__["_openai_completions"] = _Completions(model)
    return c


def create_chat_completion(model, messages: Union[str, Sequence[Mapping[str, Any]]], *,
                           tools: Optional[Sequence[Mapping[str, Any]]] = None, tool_choice=None,
                           response_format: Optional[Mapping[str, Any]] = None, stream: bool = False,
                           max_tokens: Optional[int] = None, stop: Union[str, Sequence[str], None] = None,
                           think: Optional[bool] = None, **sampling) -> Union[dict, Iterator[dict]]:
    structured = _response_format(response_format)
    _check_tool_choice(tool_choice)
    unknown = set(sampling) - set(_SAMPLING_KEYS)
    if unknown:
        raise TypeError(f"create_chat_completion() got unexpected keyword arguments {sorted(unknown)}")
    if tool_choice == "none":
        tools = None
    c = _completions(model)
    kw = {**_sampling(max_tokens, stop, sampling), **structured}
    cid, created, name = f"chatcmpl-{uuid.uuid4().hex}", int(time.time()), c.model_name()
    if stream:
        return _chat_chunks(c, messages, tools, think, kw, cid, created, name)
    content, reasoning, calls = [], [], []
    with c.lock:
        s = c.session_for_call()
        result = None
        for ev in s.chat(messages, tools, think=think, stream=True, **kw):
            if ev.kind == "text":
                content.append(ev.text)
            elif ev.kind == "thinking":
                reasoning.append(ev.text)
            elif ev.kind == "tool_call":
                calls.append(_tool_call(ev.tool_call))
            elif ev.kind == "done":
                result = ev.result
    message: dict[str, Any] = {"role": "assistant", "content": "".join(content) if content or not calls else None}
    if calls:
        message["tool_calls"] = calls
    if reasoning:
        message["reasoning_content"] = "".join(reasoning)
    finish = "tool_calls" if calls else _FINISH.get(result.stop_reason, "stop")
    return {"id": cid, "object": "chat.completion", "created": created, "model": name,
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
            "usage": _usage(result.usage, think is True)}


def _chat_chunks(c, messages, tools, think, kw, cid, created, name) -> Iterator[dict]:
    def chunk(delta, finish=None, usage=None):
        d = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": name,
             "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}
        if usage is not None:
            d["usage"] = usage
        return d

    with c.lock:
        s = c.session_for_call()
        yield chunk({"role": "assistant", "content": ""})
        n_calls = 0
        for ev in s.chat(messages, tools, think=think, stream=True, **kw):
            if ev.kind == "text":
                yield chunk({"content": ev.text})
            elif ev.kind == "thinking":
                yield chunk({"reasoning_content": ev.text})
            elif ev.kind == "tool_call":
                call = _tool_call(ev.tool_call)
                yield chunk({"tool_calls": [{"index": n_calls, **call}]})
                n_calls += 1
            elif ev.kind == "done":
                r = ev.result
                finish = "tool_calls" if n_calls else _FINISH.get(r.stop_reason, "stop")
                yield chunk({}, finish, _usage(r.usage, think is True))


def create_completion(model, prompt: str, *, max_tokens: Optional[int] = 16, stream: bool = False,
                      stop: Union[str, Sequence[str], None] = None, **sampling) -> Union[dict, Iterator[dict]]:
    unknown = set(sampling) - set(_SAMPLING_KEYS)
    if unknown:
        raise TypeError(f"create_completion() got unexpected keyword arguments {sorted(unknown)}")
    c = _completions(model)
    kw = _sampling(max_tokens, stop, sampling)
    cid, created, name = f"cmpl-{uuid.uuid4().hex}", int(time.time()), c.model_name()
    if stream:
        return _completion_chunks(c, prompt, kw, cid, created, name)
    with c.lock:
        s = c.session_for_call()
        text = s.generate(prompt, **kw)
        r = s.last_result
    return {"id": cid, "object": "text_completion", "created": created, "model": name,
            "choices": [{"text": text, "index": 0, "logprobs": None,
                         "finish_reason": _FINISH.get(r.stop_reason, "stop")}],
            "usage": _usage(r.usage, False)}


def _completion_chunks(c, prompt, kw, cid, created, name) -> Iterator[dict]:
    def chunk(text, finish=None, usage=None):
        d = {"id": cid, "object": "text_completion", "created": created, "model": name,
             "choices": [{"text": text, "index": 0, "logprobs": None, "finish_reason": finish}]}
        if usage is not None:
            d["usage"] = usage
        return d

    with c.lock:
        s = c.session_for_call()
        for ev in s.generate(prompt, stream=True, **kw):
            if ev.kind == "text":
                yield chunk(ev.text)
            elif ev.kind == "done":
                yield chunk("", _FINISH.get(ev.result.stop_reason, "stop"), _usage(ev.result.usage, False))


class Model(_uaii.Model):
    __doc__ = _uaii.Model.__doc__

    def create_chat_completion(self, messages: Union[str, Sequence[Mapping[str, Any]]], *,
                               tools: Optional[Sequence[Mapping[str, Any]]] = None,
                               tool_choice: Union[str, Mapping[str, Any], None] = None,
                               response_format: Optional[Mapping[str, Any]] = None, stream: bool = False,
                               max_tokens: Optional[int] = None, stop: Union[str, Sequence[str], None] = None,
                               think: Optional[bool] = None, **sampling: Any) -> Union[dict, Iterator[dict]]:
        """An OpenAI chat completion: `messages` (and `tools`) as the OpenAI API takes them; returns the
        `chat.completion` dictionary, or with stream=True an iterator of `chat.completion.chunk`
        dictionaries. Tool calls come back OpenAI-shaped (arguments as a JSON string, generated ids),
        reasoning as `reasoning_content`, usage with cached and (with think=True) reasoning tokens.
        Sampling keywords: temperature, top_p, top_k, min_p, repeat_penalty, presence_penalty,
        frequency_penalty, seed. response_format {'type': 'json_object'} or {'type': 'json_schema',
        'json_schema': {'schema': ...}} constrains the reply to JSON (that schema's); a forced
        tool_choice raises UnsupportedError."""
        return create_chat_completion(self, messages, tools=tools, tool_choice=tool_choice,
                                      response_format=response_format, stream=stream, max_tokens=max_tokens,
                                      stop=stop, think=think, **sampling)

    def create_completion(self, prompt: str, *, max_tokens: Optional[int] = 16, stream: bool = False,
                          stop: Union[str, Sequence[str], None] = None,
                          **sampling: Any) -> Union[dict, Iterator[dict]]:
        """An OpenAI text completion of the raw `prompt` (max_tokens 16 by default, as OpenAI's and
        llama-cpp-python's); returns the `text_completion` dictionary, or an iterator of them with
        stream=True."""
        return create_completion(self, prompt, max_tokens=max_tokens, stream=stream, stop=stop, **sampling)

    def close(self) -> None:
        c = self.__dict__.pop("_openai_completions", None)
        if c is not None and c.session is not None:
            c.session.close()
        super().close()

    def __exit__(self, *exc: Any) -> None:
        self.close()
