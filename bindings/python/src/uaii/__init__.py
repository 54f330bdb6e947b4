"""uaii: run decoder-only LLMs locally (GGUF files), through libuaii's stable C ABI.

    import uaii

    with uaii.Model() as model, uaii.Session(model) as session:   # the default model
        print(session.generate("The capital of France is", max_tokens=16))
        for event in session.generate("Once upon a time", stream=True):
            if event.kind == "text":
                print(event.text, end="", flush=True)

See docs/python.md. Errors are uaii.UaiiError subclasses carrying the engine's message.
"""
from __future__ import annotations

from .errors import (
    BackendError,
    BufferTooSmallError,
    CancelledError,
    InternalError,
    InvalidArgumentError,
    InvalidModelError,
    InvalidStateError,
    IoError,
    NotFoundError,
    OutOfMemoryError,
    UaiiError,
    UnsupportedError,
)

# Loads libuaii.so.0 (bundled next to the extension, found through its $ORIGIN RPATH)
# and checks that it speaks this package's C ABI version (ImportError otherwise).
from ._uaii import (
    CAPI_VERSION,
    Event,
    GenerateResult,
    Sampler,
    Session,
    Stream,
    Tokenizer,
    Usage,
    capi_version,
    json_schema_to_grammar,
)
from .openai_api import Model  # the extension's Model with the OpenAI-shaped calls

__version__ = "0.5.0"

__all__ = [
    "Model", "Tokenizer", "Session", "Sampler", "Stream", "Event", "GenerateResult", "Usage",
    "capi_version", "json_schema_to_grammar", "CAPI_VERSION", "__version__",
    "UaiiError", "InvalidArgumentError", "BufferTooSmallError", "InvalidStateError", "NotFoundError",
    "IoError", "OutOfMemoryError", "InvalidModelError", "UnsupportedError", "BackendError",
    "CancelledError", "InternalError",
]
