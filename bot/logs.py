"""gpubot's log: text (the default, the lines it always had) or one JSON object per line
(GPUBOT_LOG_FORMAT=json), at GPUBOT_LOG_LEVEL, every line through the project's one redaction step.

A request's fields (request_id, channel, user, target, duration_ms) travel in a context variable set
where the request is handled (handlers.guard), so every JSON line logged while it runs carries them,
in whatever module it is logged.
"""
from __future__ import annotations

import contextlib
import contextvars
import logging
import sys
from typing import Any, Iterator, TextIO

from pythonjsonlogger.json import JsonFormatter

from playbooks.redact import redact

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"
REQUEST_FIELDS = ("request_id", "channel", "user", "target", "duration_ms")
# The names a JSON line's standard keys get: what log pipelines (Loki, CloudWatch, Elastic) look for.
JSON_RENAMES = {"asctime": "time", "levelname": "level", "name": "logger"}

_request: contextvars.ContextVar[dict[str, Any]] = contextvars.ContextVar("gpubot_request", default={})


@contextlib.contextmanager
def request_fields(**fields: Any) -> Iterator[dict[str, Any]]:
    """Lines logged inside carry ``fields`` (None values left out); the dict yielded may be added to."""
    current = {**_request.get(), **{k: v for k, v in fields.items() if v is not None}}
    token = _request.set(current)
    try:
        yield current
    finally:
        _request.reset(token)


def set_request_field(key: str, value: Any) -> None:
    """Add a field to the request being handled (nothing outside one)."""
    fields = _request.get()
    if fields:
        fields[key] = value


def current_request() -> dict[str, Any]:
    return dict(_request.get())


# The attributes every LogRecord has; anything else on a record came from `extra=` or a filter.
_RECORD_ATTRIBUTES = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


class RequestAndRedaction(logging.Filter):
    """Adds the request's fields to each record and redacts its message, fields and traceback.

    The message is formatted here (``getMessage``) so a secret in an argument is redacted too, and the
    traceback is rendered here so a secret in an exception's text never reaches a formatter."""

    def filter(self, record: logging.LogRecord) -> bool:
        for key, value in _request.get().items():
            if not hasattr(record, key):
                setattr(record, key, value)
        # Every field a JSON line would carry is redacted, not only ours: a library's `extra=` may hold
        # anything. uvicorn's `color_message` repeats the message with terminal colours: dropped.
        record.__dict__.pop("color_message", None)
        for key, value in list(record.__dict__.items()):
            if key not in _RECORD_ATTRIBUTES and isinstance(value, str):
                setattr(record, key, redact(value))
        record.msg = redact(record.getMessage())
        record.args = None
        if record.exc_info:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        return True


def json_formatter() -> logging.Formatter:
    return JsonFormatter("{asctime}{levelname}{message}{name}", style="{", rename_fields=JSON_RENAMES,
                         datefmt="%Y-%m-%dT%H:%M:%S%z")


def handler(*, fmt: str, stream: TextIO | None = None, prefix: str = "") -> logging.Handler:
    """A stream handler in ``fmt`` ("text" or "json"), redacting. ``prefix`` names a worker in text."""
    out = logging.StreamHandler(stream or sys.stderr)
    if fmt == "json":
        out.setFormatter(json_formatter())
    else:
        out.setFormatter(logging.Formatter(TEXT_FORMAT.replace("%(name)s", f"{prefix}%(name)s")))
    out.addFilter(RequestAndRedaction())
    return out


def configure_logging(settings: Any, *, worker: int | None = None, stream: TextIO | None = None) -> None:
    """The root logger for ``gpubot serve`` (and its workers): once per process, replacing any handler."""
    fmt = getattr(settings, "log_format", "text")
    level = getattr(settings, "log_level", "INFO")
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    prefix = f"worker-{worker} " if worker is not None else ""
    root.addHandler(handler(fmt=fmt, stream=stream, prefix=prefix))
    root.setLevel(level)
    if worker is not None and fmt == "json":
        logging.getLogger().handlers[0].addFilter(_Worker(worker))


class _Worker(logging.Filter):
    def __init__(self, index: int) -> None:
        super().__init__()
        self.index = index

    def filter(self, record: logging.LogRecord) -> bool:
        record.worker = self.index
        return True
