"""Type stubs of the uaii extension module (import them from `uaii`)."""
from __future__ import annotations

import os
from array import array
from types import TracebackType
from typing import Any, Iterable, Iterator, Literal, Mapping, Optional, Sequence, Union, overload

StrPath = Union[str, "os.PathLike[str]"]
EventKind = Literal["text", "thinking", "tool_call", "error", "done"]
StopReason = Literal["end_of_generation", "max_tokens", "stop_string", "cancelled", "context_full"]
Preset = Literal["none", "off", "laptop", "desktop", "server", "phone"]
Messages = Union[str, Sequence[Mapping[str, Any]]]
JsonSchema = Union[str, bool, Mapping[str, Any]]  # a JSON Schema, or its JSON text

CAPI_VERSION: str
"""The C ABI version this extension was compiled against, e.g. '0.3.0'."""

def capi_version() -> str:
    """The version of the loaded libuaii's C ABI, e.g. '0.3.0'."""

def _check_abi(version: int) -> None: ...

class Usage:
    """Token counts, speeds and memory of one generation."""
    @property
    def prompt_tokens(self) -> int: ...
    @property
    def completion_tokens(self) -> int: ...
    @property
    def cached_tokens(self) -> int:
        """Prompt tokens reused from the session's KV cache."""
    @property
    def reasoning_tokens(self) -> int: ...
    @property
    def prefill_tokens_per_s(self) -> float: ...
    @property
    def decode_tokens_per_s(self) -> float: ...
    @property
    def peak_rss_bytes(self) -> int: ...
    @property
    def draft_tokens(self) -> int:
        """Speculative decoding: tokens the drafter proposed (0 without one)."""
    @property
    def draft_accepted_tokens(self) -> int:
        """Of the drafter's proposals, the ones the acceptance rule kept."""
    @property
    def draft_acceptance_rate(self) -> float:
        """draft_accepted_tokens / draft_tokens (0 without proposals)."""
    def to_dict(self) -> dict[str, Union[int, float]]: ...

class GenerateResult:
    """The outcome of one generate or chat call."""
    @property
    def text(self) -> str: ...
    @property
    def stop_reason(self) -> StopReason: ...
    @property
    def usage(self) -> Usage: ...
    def to_dict(self) -> dict[str, Any]: ...

class Event:
    """One piece of a streamed reply."""
    @property
    def kind(self) -> EventKind: ...
    @property
    def text(self) -> str: ...
    @property
    def result(self) -> Optional[GenerateResult]:
        """Set on the 'done' event."""
    @property
    def tool_call(self) -> Optional[dict[str, Any]]:
        """For a 'tool_call' event: {'name': ..., 'arguments': {...}}."""

class Stream(Iterator[Event]):
    """Events of a streamed call; leaving the loop early cancels the generation."""
    def __iter__(self) -> Stream: ...
    def __next__(self) -> Event: ...
    def close(self) -> None: ...
    def __enter__(self) -> Stream: ...
    def __exit__(self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None: ...

class Tokenizer:
    """Text to token ids and back; safe to share between threads."""
    def __init__(self, path: StrPath) -> None: ...
    def encode(self, text: str, add_special: bool = True, parse_special: bool = False) -> list[int]: ...
    def decode(self, ids: Iterable[int], skip_special: bool = False) -> str: ...
    @property
    def vocab_size(self) -> int: ...
    @property
    def closed(self) -> bool: ...
    def close(self) -> None: ...
    def __enter__(self) -> Tokenizer: ...
    def __exit__(self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None: ...

class Model:
    """A model file; None opens $UAII_MODEL, then the default model."""
    def __init__(self, path: Optional[StrPath] = None) -> None: ...
    @property
    def info(self) -> dict[str, Any]:
        """The `uaii inspect --json` document."""
    def plan(self, *, preset: Optional[Preset] = None, ram_gb: Optional[float] = None,
             kv_window: Optional[int] = None, threads: Optional[int] = None, device: str = "cpu",
             max_context: Optional[int] = None, moe_top_k: Optional[int] = None,
             moe_prefetch: bool = False, device_memory_bytes: Optional[int] = None) -> dict[str, Any]:
        """The `uaii generate --dry-run --json` document for a Session with these options."""
    @property
    def tokenizer(self) -> Tokenizer: ...
    @property
    def closed(self) -> bool: ...
    def close(self) -> None: ...
    def __enter__(self) -> Model: ...
    def __exit__(self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None: ...

class Sampler:
    """The engine's sampling chain over any logits; one thread at a time."""
    def __init__(self, *, temperature: Optional[float] = None, top_k: Optional[int] = None,
                 top_p: Optional[float] = None, min_p: Optional[float] = None,
                 repeat_penalty: Optional[float] = None, presence_penalty: Optional[float] = None,
                 frequency_penalty: Optional[float] = None, seed: Optional[int] = None,
                 grammar: Optional[str] = None, json_schema: Optional[JsonSchema] = None,
                 vocabulary: Union[Model, Tokenizer, None] = None) -> None: ...
    def sample(self, logits: Union[Sequence[float], Any]) -> int: ...
    def accept(self, token: int) -> None: ...
    def reset(self) -> None: ...
    @property
    def grammar_complete(self) -> bool: ...

def json_schema_to_grammar(schema: JsonSchema) -> str: ...

class Session:
    """A conversation with a model; one thread at a time."""
    def __init__(self, model: Model, preset: Optional[Preset] = None, ram_gb: Optional[float] = None,
                 kv_window: Optional[int] = None, threads: Optional[int] = None, device: str = "cpu",
                 max_context: Optional[int] = None, moe_top_k: Optional[int] = None, moe_prefetch: bool = False,
                 learn_calibration: bool = False, draft: Union[Model, str, None] = None,
                 draft_max: Optional[int] = None, draft_min: Optional[int] = None,
                 draft_p_min: Optional[float] = None, draft_rule: Optional[str] = None,
                 device_memory_bytes: Optional[int] = None, draft_model: Optional[Model] = None,
                 n_draft: Optional[int] = None) -> None: ...
    @overload
    def generate(self, prompt: str, *, max_tokens: Optional[int] = None, temperature: Optional[float] = None,
                 top_k: Optional[int] = None, top_p: Optional[float] = None, min_p: Optional[float] = None,
                 repeat_penalty: Optional[float] = None, presence_penalty: Optional[float] = None,
                 frequency_penalty: Optional[float] = None, seed: Optional[int] = None,
                 stop: Union[str, Sequence[str], None] = None, grammar: Optional[str] = None,
                 json_schema: Optional[JsonSchema] = None, stream: Literal[False] = False) -> str: ...
    @overload
    def generate(self, prompt: str, *, max_tokens: Optional[int] = None, temperature: Optional[float] = None,
                 top_k: Optional[int] = None, top_p: Optional[float] = None, min_p: Optional[float] = None,
                 repeat_penalty: Optional[float] = None, presence_penalty: Optional[float] = None,
                 frequency_penalty: Optional[float] = None, seed: Optional[int] = None,
                 stop: Union[str, Sequence[str], None] = None, grammar: Optional[str] = None,
                 json_schema: Optional[JsonSchema] = None, stream: Literal[True]) -> Stream: ...
    @overload
    def chat(self, messages: Messages, tools: Union[str, Sequence[Mapping[str, Any]], None] = None, *,
             think: Optional[bool] = None, max_tokens: Optional[int] = None, temperature: Optional[float] = None,
             top_k: Optional[int] = None, top_p: Optional[float] = None, min_p: Optional[float] = None,
             repeat_penalty: Optional[float] = None, presence_penalty: Optional[float] = None,
             frequency_penalty: Optional[float] = None, seed: Optional[int] = None,
             stop: Union[str, Sequence[str], None] = None, grammar: Optional[str] = None,
             json_schema: Optional[JsonSchema] = None, stream: Literal[False] = False) -> str: ...
    @overload
    def chat(self, messages: Messages, tools: Union[str, Sequence[Mapping[str, Any]], None] = None, *,
             think: Optional[bool] = None, max_tokens: Optional[int] = None, temperature: Optional[float] = None,
             top_k: Optional[int] = None, top_p: Optional[float] = None, min_p: Optional[float] = None,
             repeat_penalty: Optional[float] = None, presence_penalty: Optional[float] = None,
             frequency_penalty: Optional[float] = None, seed: Optional[int] = None,
             stop: Union[str, Sequence[str], None] = None, grammar: Optional[str] = None,
             json_schema: Optional[JsonSchema] = None, stream: Literal[True]) -> Stream: ...
    def reset(self) -> None: ...
    def eval(self, tokens: Iterable[int], all_logits: bool = False) -> array[float]: ...
    @property
    def n_past(self) -> int: ...
    @property
    def max_context(self) -> int: ...
    @property
    def device_stats(self) -> dict[str, Any]:
        """Where the weights live: device, budget_bytes, resident_bytes, host_bytes, staging_bytes,
        requantized_weights (all zero on the CPU)."""
    def truncate(self, n: int) -> None: ...
    def step(self, sampler: Sampler) -> tuple[int, Optional[Literal["end_of_generation", "context_full"]]]: ...
    @property
    def last_result(self) -> Optional[GenerateResult]: ...
    @property
    def closed(self) -> bool: ...
    def close(self) -> None: ...
    def __enter__(self) -> Session: ...
    def __exit__(self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None: ...
