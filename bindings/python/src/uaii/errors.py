"""Exceptions raised by uaii: one class per C ABI status, all subclasses of UaiiError.

Each carries the engine's message (``str(e)``, also ``e.message``), the status name
(``e.status``, e.g. ``"not_found"``) and its numeric code (``e.code``, the
``uaii_status`` value of capi/uaii.h).
"""
from __future__ import annotations


class UaiiError(Exception):
    """A call into libuaii failed. ``status`` names the kind, ``str(e)`` the cause."""

    status: str = "internal"
    code: int = 900

    def __init__(self, message: str, status: str | None = None, code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status
        if code is not None:
            self.code = code


class InvalidArgumentError(UaiiError, ValueError):
    """A bad argument or option value (also a ValueError)."""
    status, code = "invalid_argument", 100


class BufferTooSmallError(UaiiError):
    """A caller buffer was too small (the SDK retries for you; seen only on a bug)."""
    status, code = "buffer_too_small", 101


class InvalidStateError(UaiiError):
    """The object cannot do that now: it is closed, busy, or the session is full."""
    status, code = "invalid_state", 102


class NotFoundError(UaiiError):
    """A file or directory that does not exist, or a model without a chat template."""
    status, code = "not_found", 200


class IoError(UaiiError):
    """A read failed."""
    status, code = "io", 201


class OutOfMemoryError(UaiiError):
    """Out of memory, including a memory budget that cannot hold the minimum."""
    status, code = "out_of_memory", 202


class InvalidModelError(UaiiError):
    """A malformed or inconsistent model file."""
    status, code = "invalid_model", 300


class UnsupportedError(UaiiError):
    """An architecture, dtype, device or feature uaii lacks."""
    status, code = "unsupported", 301


class BackendError(UaiiError):
    """A device could not run the model."""
    status, code = "backend", 400


class CancelledError(UaiiError):
    """A callback asked to stop."""
    status, code = "cancelled", 500


class InternalError(UaiiError):
    """A bug in uaii; please report it with the message."""
    status, code = "internal", 900


_BY_CODE = {cls.code: cls for cls in (
    InvalidArgumentError, BufferTooSmallError, InvalidStateError, NotFoundError, IoError,
    OutOfMemoryError, InvalidModelError, UnsupportedError, BackendError, CancelledError,
    InternalError)}


def _from_status(code: int, message: str) -> UaiiError:
    """The exception for a uaii_status code (unknown codes: UaiiError with that code)."""
    cls = _BY_CODE.get(code)
    if cls is None:
        return UaiiError(message, status=f"status_{code}", code=code)
    return cls(message)


__all__ = [
    "UaiiError", "InvalidArgumentError", "BufferTooSmallError", "InvalidStateError", "NotFoundError",
    "IoError", "OutOfMemoryError", "InvalidModelError", "UnsupportedError", "BackendError",
    "CancelledError", "InternalError",
]
