"""The HTTP side of the OpenAI routes, without any web framework: a request body (parsed JSON)
becomes the arguments of Model.create_chat_completion / create_completion, an exception becomes
an OpenAI-shaped error body and status, and a chunk becomes a server-sent event.

uaii.serve_ray serves these over Ray Serve; keeping them framework-free keeps the mapping in one
place and testable without Ray.
"""
from __future__ import annotations

import json
from typing import Any, Mapping

from .errors import (InvalidArgumentError, InvalidStateError, NotFoundError, UaiiError,
                     UnsupportedError)

SSE_DONE = "data: [DONE]\n\n"

# Request fields passed to the SDK as keywords, with the JSON types each may have
# (bool is rejected where a number is asked for: json's true is not 1 here).
_NUMBER = (int, float)
_SAMPLING_FIELDS: dict[str, tuple] = {
    "temperature": _NUMBER, "top_p": _NUMBER, "top_k": (int,), "min_p": _NUMBER, "seed": (int,),
    "presence_penalty": _NUMBER, "frequency_penalty": _NUMBER, "repeat_penalty": _NUMBER,
    "max_tokens": (int,),
}
# Fields the OpenAI API defines that change nothing here when they have these values
# (model: one model per deployment; n: one choice; stream_options: the last chunk carries usage).
_IGNORED_FIELDS = {"model", "user", "stream_options"}
_MUST_BE = {"n": (1,), "logprobs": (None, False, 0), "echo": (None, False), "best_of": (None, 1),
            "suffix": (None, ""), "parallel_tool_calls": (None, True, False)}


class RequestError(InvalidArgumentError):
    """A request the routes refuse before calling the model; `param` names the field."""

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


def error_body(message: str, type_: str = "invalid_request_error", param: str | None = None,
               code: str | None = None) -> dict[str, Any]:
    """The error object the OpenAI API returns (and its client parses into APIError)."""
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


def error_response(exc: BaseException) -> tuple[int, dict[str, Any]]:
    """(HTTP status, OpenAI error body) for an exception raised while serving a request: the
    caller's mistakes (bad fields, a feature uaii lacks, a model without a chat template, a full
    context) are 400 invalid_request_error; anything else is the server's, 500 server_error."""
    param = getattr(exc, "param", None)
    if isinstance(exc, (InvalidArgumentError, UnsupportedError, NotFoundError, InvalidStateError,
                        TypeError, ValueError)):
        return 400, error_body(str(exc), "invalid_request_error", param)
    if isinstance(exc, UaiiError):
        return 500, error_body(str(exc), "server_error", None, exc.status)
    return 500, error_body(f"{type(exc).__name__}: {exc}", "server_error")


def parse_body(raw: bytes) -> dict[str, Any]:
    """The JSON object a POST carries (RequestError for anything else)."""
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as e:
        raise RequestError(f"the request body is not valid JSON: {e}") from None
    if not isinstance(body, dict):
        raise RequestError(f"the request body must be a JSON object, got {type(body).__name__}")
    return body


def _check_known(body: Mapping[str, Any], own: set[str]) -> None:
    for key, value in body.items():
        if key in own or key in _SAMPLING_FIELDS or key in _IGNORED_FIELDS or key == "stop":
            continue
        if key in _MUST_BE:
            # Same type and value (True is not n=1, 0.0 is not logprobs=0).
            if not any(type(value) is type(v) and value == v for v in _MUST_BE[key]):
                raise RequestError(f"{key}={json.dumps(value)} is not supported here", key)
            continue
        raise RequestError(f"Unrecognized request argument supplied: {key}", key)


def _sampling(body: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, types in _SAMPLING_FIELDS.items():
        value = body.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, types):
            kind = "an integer" if types == (int,) else "a number"
            raise RequestError(f"'{key}' must be {kind}, got {json.dumps(value)}", key)
        out[key] = value
    stop = body.get("stop")
    if stop is not None:
        if not (isinstance(stop, str) or (isinstance(stop, list) and all(isinstance(s, str) for s in stop))):
            raise RequestError("'stop' must be a string or a list of strings", "stop")
        out["stop"] = stop
    return out


def _stream(body: Mapping[str, Any]) -> bool:
    stream = body.get("stream", False)
    if stream is None:
        return False
    if not isinstance(stream, bool):
        raise RequestError("'stream' must be a boolean", "stream")
    return stream


def chat_arguments(body: Mapping[str, Any]) -> tuple[list, dict[str, Any]]:
    """(messages, keywords) of Model.create_chat_completion for a /v1/chat/completions body."""
    _check_known(body, {"messages", "tools", "tool_choice", "response_format", "stream",
                        "max_completion_tokens"})
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages or not all(isinstance(m, dict) for m in messages):
        raise RequestError("'messages' must be a non-empty list of message objects", "messages")
    kw = _sampling(body)
    # Newer OpenAI clients send max_completion_tokens (max_tokens is deprecated for chat there).
    if body.get("max_completion_tokens") is not None:
        value = body["max_completion_tokens"]
        if isinstance(value, bool) or not isinstance(value, int):
            raise RequestError("'max_completion_tokens' must be an integer", "max_completion_tokens")
        kw["max_tokens"] = value
    for key in ("tools", "tool_choice", "response_format"):
        if body.get(key) is not None:
            kw[key] = body[key]
    if "tools" in kw and not isinstance(kw["tools"], list):
        raise RequestError("'tools' must be a list of tool objects", "tools")
    kw["stream"] = _stream(body)
    return messages, kw


def completion_arguments(body: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """(prompt, keywords) of Model.create_completion for a /v1/completions body."""
    _check_known(body, {"prompt", "stream"})
    prompt = body.get("prompt")
    # The OpenAI client also sends a list of prompts; one is served (n prompts = n choices).
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], str):
        prompt = prompt[0]
    if not isinstance(prompt, str):
        raise RequestError("'prompt' must be a string (or a list of one string)", "prompt")
    kw = _sampling(body)
    kw["stream"] = _stream(body)
    return prompt, kw


def sse_event(data: Mapping[str, Any]) -> str:
    """One server-sent event carrying `data` as JSON, as OpenAI streams chunks."""
    return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"
